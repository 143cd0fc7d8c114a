//! The HTTP front door: one axum `Router` serving discovery and the resource
//! API of a [`Store`], in-process to `kube::Client` or over loopback.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::response::Response;
use http::{HeaderValue, Method, StatusCode, header};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::api_error::ApiError;
use crate::serving::discovery;
use crate::serving::openapi;
use crate::serving::options;
use crate::serving::query::Query;
use crate::serving::table;
use crate::simulators::fault::Faults;
use crate::storage::journal::{Journal, JournalEntry};
use crate::storage::patch::PatchKind;
use crate::storage::registry::{Gvr, ResourceInfo};
use crate::storage::selector::{FieldSelector, LabelSelector};
use crate::storage::store::{
    DeleteOptions, DeleteOutcome, Entry, ListOptions, Propagation, Store, WriteOptions, meta_str,
};
use crate::storage::watch::{EventType, Subscription, WatchOptions};
use crate::validation::field_validation::{self, FieldValidation, Warnings};

/// Tunables of the HTTP front door.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// How often a watch that allows bookmarks gets one.
    pub bookmark_interval: Duration,
    /// Largest accepted request body: kube-apiserver's `MaxRequestBodyBytes`, 3 MiB by
    /// default. A larger body gets `413 Request entity too large: limit is …`.
    pub max_body_bytes: usize,
    /// Without authentication: authorize requests that impersonate a user
    /// (`Impersonate-User`, `Impersonate-Group` headers) as that user against the RBAC
    /// objects in the store, answering 403 as kube-apiserver does; requests without
    /// impersonation are always allowed. With authentication
    /// ([`FakeClusterBuilder::authentication`](crate::FakeClusterBuilder::authentication))
    /// every request is authorized and impersonation needs the `impersonate` verb.
    pub enforce_impersonation: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            bookmark_interval: Duration::from_secs(5),
            max_body_bytes: crate::storage::limits::MAX_REQUEST_BODY_BYTES,
            enforce_impersonation: false,
        }
    }
}

/// Everything a request handler needs: the store, the journal and the fault rules.
#[derive(Debug)]
pub struct ServerState {
    /// The cluster's objects.
    pub store: Arc<Store>,
    /// Every request served.
    pub journal: Arc<Journal>,
    /// Active fault rules.
    pub faults: Arc<Faults>,
    /// Tunables.
    pub options: ServerOptions,
    /// Authentication, when it is on (see [`crate::validation::auth`]).
    pub(crate) auth: Option<Arc<crate::validation::auth::Authn>>,
}

/// Build the Router that serves `state`.
pub fn router(state: Arc<ServerState>) -> axum::Router {
    axum::Router::new().fallback(handle).with_state(state)
}

/// What a request path names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Version,
    CoreVersions,
    Groups,
    Group(String),
    ResourceList {
        group: String,
        version: String,
    },
    Resource {
        gvr: Gvr,
        namespace: Option<String>,
        name: Option<String>,
        sub: Option<String>,
    },
    OpenApiV2,
    OpenApiRoot,
    OpenApi(String),
    Health,
    /// A path under a group version that names no resource request.
    UnknownIn {
        group: String,
        version: String,
    },
    Unknown,
}

fn parse_path(path: &str) -> Target {
    let segs: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let resource = |group: &str, version: &str, rest: &[&str]| -> Target {
        let (namespace, rest) = match rest {
            ["namespaces", ns, res, tail @ ..] if *res != "status" && *res != "finalize" => {
                (Some(ns.to_string()), {
                    let mut v = vec![*res];
                    v.extend_from_slice(tail);
                    v
                })
            }
            other => (None, other.to_vec()),
        };
        if rest.is_empty() || rest.len() > 3 {
            return Target::UnknownIn {
                group: group.to_string(),
                version: version.to_string(),
            };
        }
        Target::Resource {
            gvr: Gvr::new(group, version, rest[0]),
            namespace,
            name: rest.get(1).map(|s| s.to_string()),
            sub: rest.get(2).map(|s| s.to_string()),
        }
    };
    match segs.as_slice() {
        ["version"] => Target::Version,
        ["healthz" | "readyz" | "livez", ..] => Target::Health,
        ["openapi", "v2"] => Target::OpenApiV2,
        ["openapi", "v3"] => Target::OpenApiRoot,
        ["openapi", "v3", rest @ ..] => Target::OpenApi(rest.join("/")),
        ["api"] => Target::CoreVersions,
        ["api", v] => Target::ResourceList {
            group: String::new(),
            version: v.to_string(),
        },
        ["api", v, rest @ ..] => resource("", v, rest),
        ["apis"] => Target::Groups,
        ["apis", g] => Target::Group(g.to_string()),
        ["apis", g, v] => Target::ResourceList {
            group: g.to_string(),
            version: v.to_string(),
        },
        ["apis", g, v, rest @ ..] => resource(g, v, rest),
        _ => Target::Unknown,
    }
}

fn verb_for(method: &Method, target: &Target, q: &Query) -> String {
    let Target::Resource { name, .. } = target else {
        return method.as_str().to_ascii_lowercase();
    };
    match (method.as_str(), name.is_some()) {
        ("GET", true) => "get",
        ("GET", false) if q.flag("watch") => "watch",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        (m, _) => return m.to_ascii_lowercase(),
    }
    .to_string()
}

/// Whether any resource is served in a group version.
fn serves(registry: &crate::storage::registry::Registry, group: &str, version: &str) -> bool {
    registry
        .iter()
        .any(|i| i.group == group && i.versions.iter().any(|v| v == version))
}

/// What kube-apiserver's mux answers for a path outside every served group version: Go's
/// plain-text `404 page not found`, not a Status.
fn page_not_found() -> Response {
    let mut r = Response::new(Body::from("404 page not found\n"));
    *r.status_mut() = StatusCode::NOT_FOUND;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r.headers_mut().insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    r
}

fn json_bytes(status: StatusCode, bytes: Vec<u8>, content_type: &'static str) -> Response {
    let mut r = Response::new(Body::from(bytes));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn json_response(status: StatusCode, v: &Value) -> Response {
    json_bytes(
        status,
        serde_json::to_vec(v).unwrap_or_default(),
        "application/json",
    )
}

fn error_response(e: &ApiError) -> Response {
    let status = StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut r = json_response(status, &e.to_status());
    if let Some(s) = e.retry_after_seconds
        && let Ok(h) = HeaderValue::from_str(&s.to_string())
    {
        r.headers_mut().insert(header::RETRY_AFTER, h);
    }
    r
}

/// The JSON of a stored object as seen through `version` of `info`.
fn encode(entry: &Entry, info: &ResourceInfo, version: &str) -> Bytes {
    let mut buf = Vec::new();
    encode_into(&mut buf, entry, info, version);
    Bytes::from(buf)
}

/// Writes the JSON of a stored object as seen through `version` of `info` to `buf` (straight
/// from the stored form when it was stored in that version).
fn encode_into(buf: &mut Vec<u8>, entry: &Entry, info: &ResourceInfo, version: &str) {
    match entry
        .obj
        .get("apiVersion")
        .and_then(crate::storage::frozen::Frozen::as_str)
    {
        Some(av) if av != info.api_version(version) => {
            let obj = entry.value();
            let _ = serde_json::to_writer(buf, &*versioned(&obj, info, version));
        }
        _ => {
            let _ = serde_json::to_writer(buf, &entry.obj);
        }
    }
}

fn json_body(status: StatusCode, bytes: Bytes) -> Response {
    let mut r = Response::new(Body::from(bytes));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// The object as seen through `version` (multi-version CRDs share storage; see
/// [`crate::storage::conversion`]).
fn versioned<'a>(obj: &'a Value, info: &ResourceInfo, version: &str) -> Cow<'a, Value> {
    crate::storage::conversion::convert_for_read(info, obj, version)
}

/// Objects as a Table shows them: converted to the requested version, except Events, whose
/// printer reads the stored (core) form of both Event APIs.
fn table_objects(info: &ResourceInfo, version: &str, objects: Vec<Arc<Value>>) -> Vec<Arc<Value>> {
    if info.kind == "Event" {
        return objects;
    }
    objects
        .into_iter()
        .map(|o| {
            let converted = match versioned(&o, info, version) {
                Cow::Owned(v) => Some(v),
                Cow::Borrowed(_) => None,
            };
            converted.map_or(o, Arc::new)
        })
        .collect()
}

/// What a request asks, for the authorizer (kube's `RequestInfo`: a namespace's own path
/// is in that namespace).
fn auth_request(target: &Target, verb: &str, path: &str) -> crate::validation::auth::Request {
    let resource = match target {
        Target::Resource {
            gvr,
            namespace,
            name,
            sub,
        } => Some(crate::validation::auth::ResourceRequest {
            gvr: gvr.clone(),
            subresource: sub.clone().unwrap_or_default(),
            namespace: match (gvr.group.as_str(), gvr.resource.as_str(), name) {
                ("", "namespaces", Some(n)) => n.clone(),
                _ => namespace.clone().unwrap_or_default(),
            },
            name: name.clone().unwrap_or_default(),
        }),
        _ => None,
    };
    crate::validation::auth::Request {
        verb: verb.to_string(),
        resource,
        path: path.to_string(),
    }
}

/// With impersonation enforced (and authentication off): the 403 for an impersonated
/// request the RBAC objects do not allow, worded as kube-apiserver words it.
fn impersonation_denied(
    st: &ServerState,
    headers: &axum::http::HeaderMap,
    target: &Target,
    verb: &str,
    path: &str,
) -> Option<ApiError> {
    let user = headers.get("impersonate-user")?.to_str().ok()?.to_string();
    if !matches!(target, Target::Resource { .. }) {
        return None;
    }
    let groups: Vec<String> = headers
        .get_all("impersonate-group")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect();
    let user = crate::validation::auth::UserInfo::new(user, groups);
    let req = auth_request(target, verb, path);
    (!st.store.allows(&user, &req)).then(|| req.forbidden(&user))
}

/// Serve one request: parse it, note it for the journal, apply any fault rule, decide
/// who asks and whether they may, then answer it (or the refusal) and journal the status.
async fn handle(State(st): State<Arc<ServerState>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let raw_query = match parts.extensions.get::<crate::serving::serve::LongQuery>() {
        Some(long) => long.0.clone(),
        None => parts.uri.query().unwrap_or_default().to_string(),
    };
    let query = Query::parse(Some(&raw_query));
    let target = parse_path(&path);
    let verb = verb_for(&parts.method, &target, &query);
    let journaling = st.journal.is_enabled();
    let mut entry = journal_entry(&verb, &parts.method, &path, &raw_query, &target);
    let fault = st.faults.check(
        &verb,
        entry.resource.as_deref(),
        entry.namespace.as_deref(),
        entry.name.as_deref(),
    );
    if let Some(f) = &fault
        && let Some(d) = f.delay
    {
        tokio::time::sleep(d).await;
    }
    let (user, denied) = requester(&st, &parts.headers, &target, &verb, &path);
    let drop_watch_after = fault.as_ref().and_then(|f| f.drop_watch_after);
    let response = match fault.and_then(|f| f.error).or(denied) {
        Some(e) => error_response(&e),
        None => match read_body(body, st.options.max_body_bytes).await {
            (Err(e), close) => {
                let mut r = error_response(&e);
                if close {
                    r.extensions_mut()
                        .insert(crate::serving::serve::DropConnection);
                }
                r
            }
            (Ok(bytes), _) => {
                let header = |name| header_text(&parts.headers, name);
                let ctx = Ctx {
                    user: user.as_ref(),
                    st: &st,
                    query: &query,
                    accept: &header(header::ACCEPT),
                    if_none_match: &header(header::IF_NONE_MATCH),
                    content_type: &header(header::CONTENT_TYPE),
                    user_agent: &header(header::USER_AGENT),
                    body: &bytes,
                    drop_watch_after,
                };
                dispatch_on_stack(&ctx, &parts.method, &target, &verb)
            }
        },
    };
    if journaling {
        entry.status = response.status().as_u16();
        st.journal.record(entry);
    }
    response
}

/// The value of the request header `name` as text (empty when missing or not text).
fn header_text(headers: &http::HeaderMap, name: header::HeaderName) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

/// The journal's record of a request, its status still to be filled in.
fn journal_entry(
    verb: &str,
    method: &Method,
    path: &str,
    raw_query: &str,
    target: &Target,
) -> JournalEntry {
    let mut entry = JournalEntry {
        verb: verb.to_string(),
        method: method.as_str().to_string(),
        path: path.to_string(),
        query: raw_query.to_string(),
        group: String::new(),
        resource: None,
        subresource: None,
        namespace: None,
        name: None,
        status: 0,
    };
    if let Target::Resource {
        gvr,
        namespace,
        name,
        sub,
    } = target
    {
        entry.group = gvr.group.clone();
        entry.resource = Some(gvr.resource.clone());
        entry.namespace = namespace.clone();
        entry.name = name.clone();
        entry.subresource = sub.clone();
    }
    entry
}

/// Who makes the request (when authenticated or impersonated by the administrator), and
/// the error refusing it when authentication fails or the user may not do it.
fn requester(
    st: &ServerState,
    headers: &http::HeaderMap,
    target: &Target,
    verb: &str,
    path: &str,
) -> (Option<crate::validation::auth::UserInfo>, Option<ApiError>) {
    match &st.auth {
        Some(authn) => match authn.authenticate(headers).and_then(|requester| {
            crate::validation::auth::impersonate(requester, headers, |u, r| st.store.allows(u, r))
        }) {
            Err(e) => (None, Some(e)),
            Ok(u) => {
                let req = auth_request(target, verb, path);
                let denied = (!st.store.allows(&u, &req)).then(|| req.forbidden(&u));
                (Some(u), denied)
            }
        },
        None => {
            // The administrator may impersonate anyone: the request then acts as that user
            // (for SelfSubjectAccessReviews and admission), and with enforcement on it is
            // authorized as that user too.
            let mut user = None;
            if let Ok(u) = crate::validation::auth::impersonate(
                crate::validation::auth::UserInfo::new(
                    "admin",
                    vec![crate::validation::auth::SYSTEM_MASTERS.into()],
                ),
                headers,
                |_, _| true,
            ) && headers.contains_key("impersonate-user")
            {
                user = Some(u);
            }
            let denied = if st.options.enforce_impersonation {
                impersonation_denied(st, headers, target, verb, path)
            } else {
                None
            };
            (user, denied)
        }
    }
}

/// Dispatch the request on a stack deep enough for its body and the deepest stored
/// object (kube-apiserver takes 10,000 levels of nesting), answering errors as Status.
fn dispatch_on_stack(ctx: &Ctx<'_>, method: &Method, target: &Target, verb: &str) -> Response {
    let depth = ocm_api::k8s::json::nesting_depth(ctx.body).max(ctx.st.store.deepest());
    ocm_api::k8s::json::with_stack(depth, || match dispatch(ctx, method, target, verb) {
        Ok(r) => r,
        Err(e) => error_response(&e),
    })
}

/// How much of a refused body Go's HTTP server still reads after the handler, to keep the
/// connection (`maxPostHandlerReadBytes`); past it, the connection is closed.
const MAX_POST_HANDLER_READ_BYTES: usize = 256 << 10;

/// Read a request body of at most `limit` bytes, as kube-apiserver's `limitedReadBody`:
/// one byte more is `413 RequestEntityTooLarge`. As Go's server then does, the rest of a body
/// up to [`MAX_POST_HANDLER_READ_BYTES`] is read and dropped so the connection stays usable;
/// past that the rest is left unread and the connection closed (the second value says so): a
/// client still sending sees the connection reset, as kube-apiserver's clients do, and the
/// in-process client gets the `413`.
async fn read_body(body: Body, limit: usize) -> (Result<Bytes, ApiError>, bool) {
    use http_body_util::BodyExt;
    let mut body = body;
    let mut out = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let data = match frame {
            Ok(f) => match f.into_data() {
                Ok(d) => d,
                Err(_) => continue,
            },
            Err(e) => {
                return (
                    Err(ApiError::bad_request(format!(
                        "reading the request body failed: {e}"
                    ))),
                    true,
                );
            }
        };
        seen += data.len();
        if seen <= limit {
            out.extend_from_slice(&data);
        } else if seen > limit + MAX_POST_HANDLER_READ_BYTES {
            return (
                Err(crate::storage::limits::request_too_large(&format!(
                    "limit is {limit}"
                ))),
                true,
            );
        }
    }
    if seen > limit {
        return (
            Err(crate::storage::limits::request_too_large(&format!(
                "limit is {limit}"
            ))),
            false,
        );
    }
    (Ok(Bytes::from(out)), false)
}

struct Ctx<'a> {
    /// The authenticated (or impersonated) user: with authentication on, or when the
    /// administrator impersonates someone.
    user: Option<&'a crate::validation::auth::UserInfo>,
    st: &'a Arc<ServerState>,
    query: &'a Query,
    accept: &'a str,
    if_none_match: &'a str,
    content_type: &'a str,
    user_agent: &'a str,
    body: &'a Bytes,
    drop_watch_after: Option<usize>,
}

impl Ctx<'_> {
    fn body_json(&self) -> Result<Value, ApiError> {
        if self.body.is_empty() {
            return Ok(Value::Null);
        }
        // kubectl's typed writes (`create <kind>` generators, `run`, `expose`) send protobuf.
        if self
            .content_type
            .starts_with(crate::serving::protobuf::CONTENT_TYPE)
        {
            return crate::serving::protobuf::decode(self.body).map_err(|e| {
                let message = e.to_string();
                if message.contains("not supported") {
                    ApiError::new(415, "UnsupportedMediaType", message)
                } else {
                    ApiError::bad_request(format!(
                        "the protobuf request body is invalid: {message}"
                    ))
                }
            });
        }
        // Bodies nest as deep as Go's decoder lets them (10,000 levels), no deeper.
        let parsed = match crate::validation::decode::go_scan(self.body) {
            Ok(_) => field_validation::parse_json(self.body).map(|(v, _)| v),
            Err(e) => Err(serde::de::Error::custom(e)),
        };
        match parsed {
            Ok(v) => Ok(v),
            Err(json_err) => {
                let text = std::str::from_utf8(self.body)
                    .map_err(|_| ApiError::bad_request("the request body is not UTF-8"))?;
                crate::validation::decode::yaml_value(text).map_err(|_| {
                    ApiError::bad_request(format!(
                        "the request body is not valid JSON or YAML: {json_err}"
                    ))
                })
            }
        }
    }

    /// A create or update body, decoded as kube-apiserver decodes it for an endpoint of
    /// `kind`: its media type must be one of JSON, YAML and protobuf (`415` otherwise, with
    /// kube-apiserver's message), and a JSON body that does not parse is refused with Go's
    /// syntax error. Returns the object and the paths of keys a JSON body names twice.
    fn check_media_type(&self) -> Result<(), ApiError> {
        match media_type(self.content_type).as_str() {
            ""
            | "application/json"
            | "application/yaml"
            | crate::serving::protobuf::CONTENT_TYPE => Ok(()),
            _ => Err(ApiError::new(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            )),
        }
    }

    fn object_body(&self, kind: &str) -> Result<(Value, Vec<String>), ApiError> {
        self.object_body_as(kind, None)
            .map(|(v, dups, _)| (v, dups))
    }

    /// [`object_body`](Self::object_body) of a built-in kind whose model node is `root`: a
    /// JSON body also loses the fields the kind lacks, returned third in the order the body
    /// names them.
    fn object_body_as(
        &self,
        kind: &str,
        root: Option<crate::serving::openapi::model::NodeId>,
    ) -> Result<(Value, Vec<String>, Vec<String>), ApiError> {
        self.check_media_type()?;
        let media = media_type(self.content_type);
        match media.as_str() {
            "" | "application/json" => {
                if let Some(e) = crate::validation::decode::go_syntax_error(self.body) {
                    return Err(ApiError::bad_request(format!(
                        "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: {e} ({})",
                        crate::validation::decode::summarize(self.body)
                    )));
                }
                field_validation::parse_json_as(
                    &crate::validation::decode::go_utf8(self.body),
                    root,
                )
                .map_err(|e| ApiError::bad_request(format!("json parse error: {e}")))
            }
            "application/yaml" => crate::validation::decode::yaml_body(kind, self.body)
                .map(|v| (v, Vec::new(), Vec::new())),
            crate::serving::protobuf::CONTENT_TYPE => crate::serving::protobuf::decode(self.body)
                .map(|v| (v, Vec::new(), Vec::new()))
                .map_err(|e| {
                    let message = e.to_string();
                    if message.contains("not supported") {
                        ApiError::new(415, "UnsupportedMediaType", message)
                    } else {
                        crate::validation::decode::unrecognized(kind, &message, self.body)
                    }
                }),
            _ => self.body_json().map(|v| (v, Vec::new(), Vec::new())),
        }
    }

    /// The options of a write, validated as kube-apiserver validates them (`422` naming
    /// `CreateOptions`, `UpdateOptions` or `PatchOptions`).
    fn write_options(
        &self,
        sub: Option<&String>,
        write: options::Write,
    ) -> Result<WriteOptions, ApiError> {
        options::validate_write(self.query, write)?;
        let directive = self.query.get("fieldValidation").unwrap_or_default();
        let mut opts =
            self.write_options_with(sub, FieldValidation::parse(directive).unwrap_or_default());
        opts.dry_run = !self.query.get_all("dryRun").is_empty();
        Ok(opts)
    }

    fn write_options_with(
        &self,
        sub: Option<&String>,
        field_validation: FieldValidation,
    ) -> WriteOptions {
        let manager = self
            .query
            .get("fieldManager")
            .filter(|m| !m.is_empty())
            .map(str::to_string)
            .or_else(|| {
                let ua = self.user_agent.split('/').next().unwrap_or_default();
                (!ua.is_empty()).then(|| ua.to_string())
            });
        WriteOptions {
            field_manager: manager,
            dry_run: self.query.get("dryRun") == Some("All"),
            force: self.query.flag("force"),
            subresource: sub.cloned(),
            field_validation,
            duplicate_fields: Vec::new(),
            unknown_fields: Vec::new(),
            warnings: Warnings::default(),
            user: self.user.cloned(),
        }
    }

    /// The options of a list or a watch of `info`, decoded and checked in kube-apiserver's
    /// order: parameters that do not decode (`400`), `ValidateListOptions` (`422`), fields the
    /// resource cannot be selected by (`400`), then a `resourceVersion` that is no version
    /// (`400` for a list; `500` for a watch, where the storage layer's error surfaces).
    fn list_options(
        &self,
        info: &ResourceInfo,
        version: &str,
        watch: bool,
    ) -> Result<ListOptions, ApiError> {
        let label_selector =
            LabelSelector::parse(self.query.get("labelSelector").unwrap_or_default())?;
        let field_selector =
            FieldSelector::parse(self.query.get("fieldSelector").unwrap_or_default())?;
        // kube-apiserver decodes every ListOptions integer, timeoutSeconds included.
        self.query.int("timeoutSeconds")?;
        let limit = self.query.int("limit")?.unwrap_or(0).max(0) as usize;
        options::validate_list(self.query, watch)?;
        field_selector.check_fields(info, &self.st.store.crd_selectable_fields(info, version))?;
        let resource_version = self.query.get("resourceVersion");
        if watch {
            options::read_resource_version(resource_version)?;
        } else {
            options::list_resource_version(resource_version)?;
        }
        Ok(ListOptions {
            label_selector,
            field_selector,
            limit,
            continue_token: self.query.get("continue").map(str::to_string),
            resource_version: resource_version.map(str::to_string),
        })
    }
}

/// Route a parsed request to its answer: version, health, discovery, OpenAPI, a
/// resource, or kube's answers for paths it does not serve.
fn dispatch(
    ctx: &Ctx<'_>,
    method: &Method,
    target: &Target,
    verb: &str,
) -> Result<Response, ApiError> {
    let store = &ctx.st.store;
    let get_only = |v: Value| -> Result<Response, ApiError> {
        if method != Method::GET {
            return Err(ApiError::method_not_allowed(
                "the server does not allow this method on the requested resource",
            ));
        }
        Ok(json_response(StatusCode::OK, &v))
    };
    match target {
        Target::Version => get_only(discovery::version()),
        Target::Health => Ok(json_bytes(StatusCode::OK, b"ok".to_vec(), "text/plain")),
        Target::CoreVersions => {
            if discovery::wants_aggregated(ctx.accept) {
                return Ok(aggregated_discovery(store, true));
            }
            get_only(discovery::core_versions())
        }
        Target::Groups => {
            if discovery::wants_aggregated(ctx.accept) {
                return Ok(aggregated_discovery(store, false));
            }
            get_only(discovery::group_list(&store.registry()))
        }
        Target::Group(g) => match discovery::group(&store.registry(), g) {
            Some(doc) => get_only(doc),
            None => Ok(page_not_found()),
        },
        Target::ResourceList { group, version } => {
            match discovery::resource_list(&store.registry(), group, version) {
                Some(doc) => get_only(doc),
                None => Ok(page_not_found()),
            }
        }
        Target::OpenApiV2 | Target::OpenApiRoot | Target::OpenApi(_) => {
            if method != Method::GET {
                return get_only(Value::Null);
            }
            openapi_document(ctx, target)
        }
        Target::Unknown => Ok(page_not_found()),
        // Under a served group version, the API's router answers with a Status.
        Target::UnknownIn { group, version } if serves(&store.registry(), group, version) => {
            Err(not_found())
        }
        Target::UnknownIn { .. } => Ok(page_not_found()),
        Target::Resource {
            gvr,
            namespace,
            name,
            sub,
        } => resource_target(ctx, gvr, namespace.as_deref(), name.as_deref(), sub, verb),
    }
}

/// The Status kube-apiserver answers for a path it routes but finds nothing at.
fn not_found() -> ApiError {
    ApiError::new(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}

/// The aggregated discovery document of the core group (`core`) or of the named groups.
fn aggregated_discovery(store: &Store, core: bool) -> Response {
    let doc = discovery::aggregated(&store.registry(), core);
    json_bytes(
        StatusCode::OK,
        serde_json::to_vec(&doc).unwrap_or_default(),
        discovery::AGGREGATED_CONTENT_TYPE,
    )
}

/// A GET of an OpenAPI document: v2, the v3 index, or one group version's v3.
fn openapi_document(ctx: &Ctx<'_>, target: &Target) -> Result<Response, ApiError> {
    let req = openapi::Request {
        accept: ctx.accept,
        if_none_match: ctx.if_none_match,
        hash: ctx.query.get("hash"),
    };
    let reg = ctx.st.store.registry();
    match target {
        Target::OpenApiV2 => Ok(openapi::serve_v2(&reg, &req)),
        Target::OpenApiRoot => Ok(openapi::serve_v3_root(&reg, &req)),
        Target::OpenApi(gv) => openapi::serve_v3(&reg, gv, &req).ok_or_else(not_found),
        _ => Err(not_found()),
    }
}

/// A request under a resource path: 404 unless its group version is served, its
/// namespace fits the resource's scope and its subresource exists; then answer it.
fn resource_target(
    ctx: &Ctx<'_>,
    gvr: &Gvr,
    namespace: Option<&str>,
    name: Option<&str>,
    sub: &Option<String>,
    verb: &str,
) -> Result<Response, ApiError> {
    let store = &ctx.st.store;
    if !serves(&store.registry(), &gvr.group, &gvr.version) {
        return Ok(page_not_found());
    }
    let info = store.resolve(gvr)?;
    if namespace.is_some() && !info.namespaced {
        return Err(not_found());
    }
    if let Some(s) = sub {
        let known = s == "status" && info.status_subresource
            || s == "scale" && info.scale.is_some()
            || s == "finalize" && info.plural == "namespaces";
        if !known {
            return Err(not_found());
        }
    }
    let ns = namespace.unwrap_or_default();
    resource_request(ctx, &info, gvr, ns, name, sub.as_ref(), verb)
}

/// Answer a request for the resource `info` (at `gvr`, in namespace `ns` or all of them
/// when empty): the scale subresource has its own handler, the rest go by verb.
fn resource_request(
    ctx: &Ctx<'_>,
    info: &Arc<ResourceInfo>,
    gvr: &Gvr,
    ns: &str,
    name: Option<&str>,
    sub: Option<&String>,
    verb: &str,
) -> Result<Response, ApiError> {
    let sub = sub.filter(|s| s.as_str() != "finalize");
    if let (Some("scale"), Some(sc), Some(name)) = (sub.map(String::as_str), &info.scale, name) {
        return scale_request(ctx, info, sc, gvr, ns, name, verb);
    }
    match (verb, name) {
        ("get", Some(name)) => get_object(ctx, info, gvr, ns, name),
        ("list", None) => list_objects(ctx, info, gvr, ns),
        ("watch", None) => watch_objects(ctx, info, gvr, ns),
        ("create", None) => create_object(ctx, info, gvr, ns),
        ("update", Some(name)) => update_object(ctx, info, gvr, ns, name, sub),
        ("patch", Some(name)) => patch_object(ctx, info, gvr, ns, name, sub),
        ("delete", Some(name)) => delete_object(ctx, info, gvr, ns, name),
        ("deletecollection", None) => delete_collection(ctx, info, gvr, ns),
        _ => Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        )),
    }
}

/// GET of one object, as JSON or (when asked for) as a Table.
fn get_object(
    ctx: &Ctx<'_>,
    info: &Arc<ResourceInfo>,
    gvr: &Gvr,
    ns: &str,
    name: &str,
) -> Result<Response, ApiError> {
    let store = &ctx.st.store;
    options::read_resource_version(ctx.query.get("resourceVersion"))?;
    let entry = store.get_entry(gvr, ns, name)?;
    if table::wants_table(ctx.accept) {
        let obj = entry.value();
        let rv = meta_str(&obj, "resourceVersion")
            .and_then(|r| r.parse().ok())
            .unwrap_or(0);
        let columns = store.crd_columns(info, &gvr.version);
        let t = table::table(
            info,
            columns.as_deref(),
            &table_objects(info, &gvr.version, vec![obj]),
            rv,
            None,
            ctx.query.get("includeObject").unwrap_or("Metadata"),
            store.now(),
        );
        return Ok(json_response(StatusCode::OK, &t));
    }
    Ok(json_body(
        StatusCode::OK,
        encode(&entry, info, &gvr.version),
    ))
}

/// A list of the objects (in `ns`, or all when empty), as a List or (when asked for) a
/// Table; the List's items are written straight into the body.
fn list_objects(
    ctx: &Ctx<'_>,
    info: &Arc<ResourceInfo>,
    gvr: &Gvr,
    ns: &str,
) -> Result<Response, ApiError> {
    let store = &ctx.st.store;
    let api_version = gvr.api_version();
    let opts = ctx.list_options(info, &gvr.version, false)?;
    let list = store.list_entries(gvr, (!ns.is_empty()).then_some(ns), &opts)?;
    if table::wants_table(ctx.accept) {
        let objs: Vec<Arc<Value>> = list.entries.iter().map(Entry::value).collect();
        let columns = store.crd_columns(info, &gvr.version);
        let t = table::table(
            info,
            columns.as_deref(),
            &table_objects(info, &gvr.version, objs),
            list.resource_version,
            list.continue_token.as_deref(),
            ctx.query.get("includeObject").unwrap_or("Metadata"),
            store.now(),
        );
        return Ok(json_response(StatusCode::OK, &t));
    }
    let mut meta = json!({"resourceVersion": list.resource_version.to_string()});
    if let Some(c) = &list.continue_token {
        meta["continue"] = json!(c);
    }
    if let Some(n) = list.remaining_item_count {
        meta["remainingItemCount"] = json!(n);
    }
    let mut buf = Vec::with_capacity(256);
    buf.extend_from_slice(b"{\"kind\":");
    let _ = serde_json::to_writer(&mut buf, &format!("{}List", info.kind));
    buf.extend_from_slice(b",\"apiVersion\":");
    let _ = serde_json::to_writer(&mut buf, &api_version);
    buf.extend_from_slice(b",\"metadata\":");
    let _ = serde_json::to_writer(&mut buf, &meta);
    buf.extend_from_slice(b",\"items\":[");
    // Each item is written straight into the body (no copy of it on the side).
    for (i, entry) in list.entries.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        encode_into(&mut buf, entry, info, &gvr.version);
    }
    buf.extend_from_slice(b"]}");
    Ok(json_bytes(StatusCode::OK, buf, "application/json"))
}

/// A watch of the objects (in `ns`, or all when empty), streamed as JSON events or as
/// Table rows.
fn watch_objects(
    ctx: &Ctx<'_>,
    info: &Arc<ResourceInfo>,
    gvr: &Gvr,
    ns: &str,
) -> Result<Response, ApiError> {
    let store = &ctx.st.store;
    let api_version = gvr.api_version();
    let lo = ctx.list_options(info, &gvr.version, true)?;
    let opts = WatchOptions {
        label_selector: lo.label_selector,
        field_selector: lo.field_selector,
        resource_version: ctx.query.get("resourceVersion").map(str::to_string),
        send_initial_events: ctx.query.flag("sendInitialEvents"),
    };
    let sub = store.watch(gvr, (!ns.is_empty()).then_some(ns), opts)?;
    let timeout = watch_timeout(ctx.query.int("timeoutSeconds")?);
    let render = Render {
        api_version,
        version: gvr.version.clone(),
        info: info.clone(),
        table: table::wants_table(ctx.accept).then(|| TableRender {
            info: info.clone(),
            columns: ctx.st.store.crd_columns(info, &gvr.version),
            include: ctx
                .query
                .get("includeObject")
                .unwrap_or("Metadata")
                .to_string(),
            store: ctx.st.store.clone(),
            headers_sent: std::sync::atomic::AtomicBool::new(false),
        }),
    };
    Ok(watch_response(
        ctx.st.store.clone(),
        sub,
        info,
        render,
        timeout,
        ctx.query.flag("allowWatchBookmarks"),
        ctx.st.options.bookmark_interval,
        ctx.drop_watch_after,
    ))
}

/// POST of a new object (an access review is answered, not stored).
fn create_object(
    ctx: &Ctx<'_>,
    info: &Arc<ResourceInfo>,
    gvr: &Gvr,
    ns: &str,
) -> Result<Response, ApiError> {
    let store = &ctx.st.store;
    if info.group == "authorization.k8s.io" {
        let out = store.review_as(gvr, ns, ctx.body_json()?, ctx.user)?;
        return Ok(json_response(StatusCode::CREATED, &out));
    }
    ctx.check_media_type()?;
    let mut opts = ctx.write_options(None, options::Write::Create)?;
    let root = field_validation::unknown::builtin_root(info, &gvr.version);
    let (body, dups, unknown) = ctx.object_body_as(&info.kind, root)?;
    opts.duplicate_fields = dups;
    opts.unknown_fields = unknown;
    let out = store.create_decoded(gvr, ns, body, &opts, Some(ctx.body))?;
    Ok(with_warnings(
        json_response(StatusCode::CREATED, &out),
        &opts.warnings,
    ))
}

/// PUT of an object, or of its `sub`resource.
fn update_object(
    ctx: &Ctx<'_>,
    info: &Arc<ResourceInfo>,
    gvr: &Gvr,
    ns: &str,
    name: &str,
    sub: Option<&String>,
) -> Result<Response, ApiError> {
    ctx.check_media_type()?;
    let mut opts = ctx.write_options(sub, options::Write::Update)?;
    let root =
        field_validation::unknown::builtin_root(info, &gvr.version).filter(|_| sub.is_none());
    let (body, dups, unknown) = ctx.object_body_as(&info.kind, root)?;
    opts.duplicate_fields = dups;
    opts.unknown_fields = unknown;
    let out = ctx
        .st
        .store
        .update_decoded(gvr, ns, name, body, &opts, Some(ctx.body))?;
    Ok(with_warnings(
        json_response(StatusCode::OK, &out),
        &opts.warnings,
    ))
}

/// PATCH of an object, or of its `sub`resource, of the patch type its content type names
/// (201 when a server-side apply creates it).
fn patch_object(
    ctx: &Ctx<'_>,
    info: &Arc<ResourceInfo>,
    gvr: &Gvr,
    ns: &str,
    name: &str,
    sub: Option<&String>,
) -> Result<Response, ApiError> {
    // The route takes the patch types only (go-restful answers anything else); the
    // handler then refuses strategic merge patches of custom resources.
    let kind = PatchKind::from_content_type(ctx.content_type)
        .ok_or_else(|| ApiError::new(415, "UnsupportedMediaType", "415: Unsupported Media Type"))?;
    if kind == PatchKind::Strategic && info.crd_name.is_some() {
        return Err(ApiError::unsupported_patch_type(false));
    }
    let write = if kind == PatchKind::Apply {
        options::Write::Apply
    } else {
        options::Write::Patch
    };
    let mut opts = ctx.write_options(sub, write)?;
    let body = match kind {
        PatchKind::Apply => ctx.body_json()?,
        // The other patch types are JSON, refused as each patcher words it.
        _ => {
            if let Err(e) = crate::validation::decode::go_scan(ctx.body) {
                return Err(ApiError::bad_request(match kind {
                    PatchKind::Json => format!("error decoding patch: {e}"),
                    PatchKind::Merge => "Invalid JSON Patch".to_string(),
                    _ => e,
                }));
            }
            let (body, dups) =
                field_validation::parse_json(&crate::validation::decode::go_utf8(ctx.body))
                    .map_err(|e| ApiError::bad_request(e.to_string()))?;
            opts.duplicate_fields = dups;
            body
        }
    };
    let (out, created) = ctx.st.store.patch(gvr, ns, name, kind, &body, &opts)?;
    let code = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(with_warnings(json_response(code, &out), &opts.warnings))
}

/// DELETE of an object: the object while finalizers hold it, else a Success Status.
fn delete_object(
    ctx: &Ctx<'_>,
    info: &Arc<ResourceInfo>,
    gvr: &Gvr,
    ns: &str,
    name: &str,
) -> Result<Response, ApiError> {
    let opts = delete_options(ctx)?;
    match ctx.st.store.delete(gvr, ns, name, &opts)? {
        DeleteOutcome::Pending(obj) => Ok(json_response(StatusCode::OK, &obj)),
        DeleteOutcome::Deleted(obj) => {
            let gr = info.group_resource();
            let mut details = json!({"name": name, "kind": gr.resource});
            if !gr.group.is_empty() {
                details["group"] = json!(gr.group);
            }
            if let Some(uid) = meta_str(&obj, "uid") {
                details["uid"] = json!(uid);
            }
            Ok(json_response(
                StatusCode::OK,
                &json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                        "status": "Success", "details": details}),
            ))
        }
    }
}

/// DELETE of the selected objects (in `ns`, or all when empty), answering their list.
fn delete_collection(
    ctx: &Ctx<'_>,
    info: &Arc<ResourceInfo>,
    gvr: &Gvr,
    ns: &str,
) -> Result<Response, ApiError> {
    let store = &ctx.st.store;
    let lo = ctx.list_options(info, &gvr.version, false)?;
    let opts = delete_options(ctx)?;
    let items = store.delete_collection(gvr, (!ns.is_empty()).then_some(ns), &lo, &opts)?;
    Ok(json_response(
        StatusCode::OK,
        &json!({
            "kind": format!("{}List", info.kind),
            "apiVersion": gvr.api_version(),
            "metadata": {"resourceVersion": store.resource_version().to_string()},
            "items": items,
        }),
    ))
}

/// The media type of a `Content-Type` header, without parameters, lower-cased.
fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// How long a watch lasts, as kube-apiserver decides it: `timeoutSeconds` when it is given
/// and not zero (a negative one ends the watch at once), otherwise a random time between
/// one and two `--min-request-timeout`s (1800 s by default), so no watch lasts forever.
fn watch_timeout(seconds: Option<i64>) -> Option<Duration> {
    match seconds {
        Some(s) if s < 0 => Some(Duration::ZERO),
        Some(s) if s > 0 => Some(Duration::from_secs(s.unsigned_abs())),
        _ => {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or_default();
            Some(Duration::from_secs(1800 + u64::from(nanos % 1800)))
        }
    }
}

/// GET, PUT or PATCH of a workload's `scale` subresource.
fn scale_request(
    ctx: &Ctx<'_>,
    info: &Arc<ResourceInfo>,
    sc: &crate::storage::registry::ScaleSubresource,
    gvr: &Gvr,
    ns: &str,
    name: &str,
    verb: &str,
) -> Result<Response, ApiError> {
    use crate::storage::scale;
    let store = &ctx.st.store;
    let current = store.get(gvr, ns, name)?;
    let current_scale = scale::scale_of(info, sc, &current);
    let wanted = match verb {
        "get" => return Ok(json_response(StatusCode::OK, &current_scale)),
        "update" => {
            let scale_info = scale::scale_info();
            let scale_gvr = Gvr::new("autoscaling", "v1", "scales");
            let (body, _) = ctx.object_body("Scale")?;
            crate::validation::decode::type_meta(
                &scale_info,
                &scale_gvr,
                &body,
                ctx.body,
                |g, v, k| g == "autoscaling" && v == "v1" && k == "Scale",
            )?;
            body
        }
        "patch" => {
            let kind = PatchKind::from_content_type(ctx.content_type)
                .ok_or_else(|| ApiError::unsupported_patch_type(true))?;
            let body = ctx.body_json()?;
            match kind {
                PatchKind::Json => crate::storage::patch::json_patch(&current_scale, &body)?,
                PatchKind::Merge | PatchKind::Apply => {
                    crate::storage::patch::merge_patch(&current_scale, &body)
                }
                PatchKind::Strategic => crate::storage::patch::strategic_merge(
                    &current_scale,
                    &body,
                    &crate::storage::schema::Shape::root(None),
                )?,
            }
        }
        _ => {
            return Err(ApiError::method_not_allowed(
                "the server does not allow this method on the requested resource",
            ));
        }
    };
    if let Some(e) =
        crate::validation::decode::type_error(&crate::storage::scale::scale_info(), &wanted)
    {
        return Err(crate::validation::decode::cannot_handle(
            "Scale", "v1", "Scale", &e.go,
        ));
    }
    if let Some(n) = wanted
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty() && *n != name)
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({name})"
        )));
    }
    let replicas = scale::desired_replicas(name, &wanted)?;
    if let Some(rv) = wanted
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
        && Some(rv) != meta_str(&current, "resourceVersion")
    {
        return Err(ApiError::conflict(&info.group_resource(), name));
    }
    let opts = ctx.write_options(
        None,
        if verb == "patch" {
            options::Write::Patch
        } else {
            options::Write::Update
        },
    )?;
    let updated = store.update(
        gvr,
        ns,
        name,
        scale::with_replicas(sc, &current, replicas),
        &opts,
    )?;
    Ok(json_response(
        StatusCode::OK,
        &scale::scale_of(info, sc, &updated),
    ))
}

/// Add one `Warning` header per warning a write produced.
fn with_warnings(mut r: Response, warnings: &Warnings) -> Response {
    for w in warnings.take() {
        if let Ok(v) = HeaderValue::from_str(&field_validation::warning_header(&w)) {
            r.headers_mut().append(header::WARNING, v);
        }
    }
    r
}

fn delete_options(ctx: &Ctx<'_>) -> Result<DeleteOptions, ApiError> {
    // The query's options decode first (`gracePeriodSeconds=abc` is Go's `ParseInt` error),
    // then the body's DeleteOptions, which win where they say something.
    ctx.query.int("gracePeriodSeconds")?;
    let body = ctx.body_json()?;
    let policy = body
        .get("propagationPolicy")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| ctx.query.get("propagationPolicy").map(str::to_string));
    let orphan_dependents = body
        .get("orphanDependents")
        .and_then(Value::as_bool)
        .or_else(|| {
            ctx.query
                .get("orphanDependents")
                .map(|_| ctx.query.flag("orphanDependents"))
        });
    let dry_run: Vec<&str> = match body.get("dryRun").and_then(Value::as_array) {
        Some(a) => a.iter().map(|x| x.as_str().unwrap_or_default()).collect(),
        None => ctx.query.get_all("dryRun"),
    };
    options::validate_delete(policy.as_deref(), orphan_dependents, &dry_run)?;
    let propagation = match policy.as_deref() {
        Some("Background") => Some(Propagation::Background),
        Some("Foreground") => Some(Propagation::Foreground),
        Some("Orphan") => Some(Propagation::Orphan),
        _ if orphan_dependents == Some(true) => Some(Propagation::Orphan),
        _ => None,
    };
    Ok(DeleteOptions {
        propagation,
        precondition_uid: body
            .pointer("/preconditions/uid")
            .and_then(Value::as_str)
            .map(str::to_string),
        precondition_resource_version: body
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_string),
        dry_run: !dry_run.is_empty(),
    })
}

fn event_line(t: EventType, obj: &Value) -> Bytes {
    let mut buf = Vec::with_capacity(256);
    buf.extend_from_slice(b"{\"type\":\"");
    buf.extend_from_slice(t.as_str().as_bytes());
    buf.extend_from_slice(b"\",\"object\":");
    let _ = serde_json::to_writer(&mut buf, &ocm_api::k8s::json::Deep(obj));
    buf.extend_from_slice(b"}\n");
    Bytes::from(buf)
}

fn bookmark(kind: &str, api_version: &str, rv: u64, initial_end: bool) -> Bytes {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    event_line(
        EventType::Bookmark,
        &json!({"kind": kind, "apiVersion": api_version, "metadata": meta}),
    )
}

/// How watch event objects are rendered: as objects of the requested version,
/// or as one-row Tables for `kubectl get -w`.
struct Render {
    api_version: String,
    version: String,
    info: Arc<ResourceInfo>,
    table: Option<TableRender>,
}

struct TableRender {
    info: Arc<ResourceInfo>,
    /// The requested version's printer columns, for custom resources.
    columns: Option<Vec<crate::storage::registry::PrinterColumn>>,
    include: String,
    store: Arc<Store>,
    /// kube-apiserver sends the column definitions with the first Table of a watch only
    /// (`NoHeaders` afterwards, `columnDefinitions: null`).
    headers_sent: std::sync::atomic::AtomicBool,
}

impl Render {
    fn line(&self, t: EventType, obj: &Arc<Value>) -> Bytes {
        match &self.table {
            Some(tr) => {
                let rv = meta_str(obj, "resourceVersion")
                    .and_then(|r| r.parse().ok())
                    .unwrap_or(0);
                let mut tbl = table::table(
                    &tr.info,
                    tr.columns.as_deref(),
                    &table_objects(&tr.info, &self.version, vec![obj.clone()]),
                    rv,
                    None,
                    &tr.include,
                    tr.store.now(),
                );
                if tr
                    .headers_sent
                    .swap(true, std::sync::atomic::Ordering::Relaxed)
                {
                    tbl["columnDefinitions"] = Value::Null;
                }
                event_line(t, &tbl)
            }
            None => event_line(t, &versioned(obj, &self.info, &self.version)),
        }
    }
}

struct WatchState {
    sub: Subscription,
    /// Events left before an injected fault closes the connection.
    remaining: Option<usize>,
    queued: VecDeque<Bytes>,
    deadline: Option<Instant>,
    bookmarks: bool,
    bookmark_every: Duration,
    next_bookmark: Instant,
    last_rv: u64,
    kind: String,
    render: Render,
}

#[allow(clippy::too_many_arguments)]
fn watch_response(
    store: Arc<Store>,
    mut sub: Subscription,
    info: &ResourceInfo,
    render: Render,
    timeout: Option<Duration>,
    bookmarks: bool,
    bookmark_every: Duration,
    drop_after: Option<usize>,
) -> Response {
    let mut queued = VecDeque::new();
    if let Some(e) = sub.expired.take() {
        queued.push_back(event_line(EventType::Error, &e.to_status()));
        let stream = futures::stream::iter(queued.into_iter().map(Ok::<_, Infallible>));
        return watch_body(Body::from_stream(stream));
    }
    let mut last_rv = sub.start_resource_version;
    for (t, o) in std::mem::take(&mut sub.initial) {
        if let Some(rv) = meta_str(&o, "resourceVersion").and_then(|r| r.parse::<u64>().ok())
            && (t != EventType::Added || sub.initial_events_end.is_none())
        {
            last_rv = last_rv.max(rv);
        }
        queued.push_back(render.line(t, &o));
    }
    if let Some(rv) = sub.initial_events_end {
        queued.push_back(bookmark(&info.kind, &render.api_version, rv, true));
        last_rv = rv;
    }
    let now = Instant::now();
    let state = WatchState {
        sub,
        remaining: drop_after,
        queued,
        deadline: timeout.map(|t| now + t),
        bookmarks,
        bookmark_every,
        next_bookmark: now + bookmark_every,
        last_rv,
        kind: info.kind.clone(),
        render,
    };
    let stream = futures::stream::unfold(state, |mut st| async move {
        if st.remaining == Some(0) {
            return None;
        }
        if let Some(n) = st.remaining.as_mut() {
            *n -= 1;
        }
        if let Some(b) = st.queued.pop_front() {
            return Some((Ok::<_, Infallible>(b), st));
        }
        loop {
            let wake = match st.deadline {
                Some(d) if !st.bookmarks || d < st.next_bookmark => d,
                _ if st.bookmarks => st.next_bookmark,
                _ => Instant::now() + Duration::from_secs(3600),
            };
            tokio::select! {
                ev = st.sub.rx.recv() => {
                    let ev = ev?;
                    if st.sub.wait_until.is_some_and(|w| ev.resource_version <= w) {
                        continue;
                    }
                    if let Some((t, o)) = st.sub.translate(&ev) {
                        st.last_rv = ev.resource_version;
                        let line = st.render.line(t, &o);
                        return Some((Ok(line), st));
                    }
                }
                _ = tokio::time::sleep_until(wake) => {
                    if st.deadline.is_some_and(|d| Instant::now() >= d) {
                        return None;
                    }
                    let waiting = st.sub.wait_until.is_some_and(|w| st.last_rv <= w);
                    if st.bookmarks && !waiting && Instant::now() >= st.next_bookmark {
                        st.next_bookmark = Instant::now() + st.bookmark_every;
                        let b = bookmark(&st.kind, &st.render.api_version, st.last_rv, false);
                        return Some((Ok(b), st));
                    }
                }
            }
        }
    });
    watch_body(Body::from_stream(OnStoreStack {
        inner: Box::pin(stream),
        store,
    }))
}

/// A watch's stream of lines, polled with enough stack for the deepest object its store held
/// (see [`Store::on_stack`]): rendering an event copies and serialises its object.
struct OnStoreStack<S> {
    inner: std::pin::Pin<Box<S>>,
    store: Arc<Store>,
}

impl<S: futures::Stream> futures::Stream for OnStoreStack<S> {
    type Item = S::Item;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<S::Item>> {
        let this = &mut *self;
        this.store.on_stack(0, || this.inner.as_mut().poll_next(cx))
    }
}

fn watch_body(body: Body) -> Response {
    let mut r = Response::new(body);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(
            parse_path("/api/v1/namespaces/default/configmaps/x"),
            Target::Resource {
                gvr: Gvr::new("", "v1", "configmaps"),
                namespace: Some("default".into()),
                name: Some("x".into()),
                sub: None
            }
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/foo/status"),
            Target::Resource {
                gvr: Gvr::new("", "v1", "namespaces"),
                namespace: None,
                name: Some("foo".into()),
                sub: Some("status".into())
            }
        );
        assert_eq!(
            parse_path("/apis/apps/v1/deployments"),
            Target::Resource {
                gvr: Gvr::new("apps", "v1", "deployments"),
                namespace: None,
                name: None,
                sub: None
            }
        );
        assert_eq!(parse_path("/apis/apps"), Target::Group("apps".into()));
    }
}
