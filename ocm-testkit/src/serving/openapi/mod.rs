//! The OpenAPI documents: `/openapi/v2` (Swagger 2.0, in JSON and in gnostic's protobuf form)
//! and `/openapi/v3` (an index, then one OpenAPI 3.0 document per group version), as
//! kube-apiserver serves them.
//!
//! kubectl reads them for client-side validation (`--validate=strict` where server-side field
//! validation is not available, as for a `v1` `List`), for `kubectl explain`, for deciding
//! whether a kind takes `fieldValidation`, and for the strategic merge patches of client-side
//! `kubectl apply`. Built-in kinds get their real schemas ([`definitions`]), custom resources
//! their CRD's schema ([`crd`]), and every kind its `x-kubernetes-group-version-kind`.
//!
//! Serving follows kube-apiserver: `Accept` picks the form (the first acceptable media type
//! of the client's list, by preference; `406` when none is), responses carry an `ETag` and
//! answer `If-None-Match` with `304`, and `/openapi/v3` lists each group version's URL with a
//! `hash` of its document (a stale hash is redirected to the current one; the current one is
//! marked immutable). The documents are built on first request and kept for as long as the
//! registry's set of resources stays the same (fake clusters with the same CRDs share them),
//! so neither building a cluster nor serving a document again costs anything.

pub(crate) mod crd;
pub(crate) mod definitions;
pub(crate) mod gnostic;
pub(crate) mod model;
mod paths;
mod semantics;
mod v2;
mod v3;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use axum::body::{Body, Bytes};
use axum::response::Response;
use http::{HeaderValue, StatusCode, header};
use serde_json::{Map, json};

use crate::storage::registry::{Registry, RegistryIdentity};

/// A serialized document and its entity tag.
#[derive(Debug)]
struct Doc {
    bytes: Bytes,
    etag: String,
}

impl Doc {
    fn new(bytes: Vec<u8>) -> Self {
        let etag = entity_tag(&bytes);
        Self {
            bytes: Bytes::from(bytes),
            etag,
        }
    }
}

/// An entity tag for `bytes` (hex digits of two 64-bit hashes).
fn entity_tag(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(32);
    for salt in [0u8, 1] {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        salt.hash(&mut h);
        bytes.hash(&mut h);
        out.push_str(&format!("{:016X}", h.finish()));
    }
    out
}

#[derive(Debug)]
struct V2 {
    json: Doc,
    protobuf: Bytes,
}

#[derive(Debug)]
struct V3 {
    root: Doc,
    groups: HashMap<String, Doc>,
}

/// The documents of one set of resources.
#[derive(Debug)]
struct Documents {
    registry: RegistryIdentity,
    v2: OnceLock<V2>,
    v3: OnceLock<V3>,
}

/// The documents of `reg`'s resources (built on first use of each form).
fn documents(reg: &Registry) -> Arc<Documents> {
    static CACHE: Mutex<Vec<Arc<Documents>>> = Mutex::new(Vec::new());
    let mut cache = match CACHE.lock() {
        Ok(c) => c,
        Err(poisoned) => poisoned.into_inner(),
    };
    if let Some(d) = cache.iter().find(|d| d.registry.is(reg)) {
        return d.clone();
    }
    cache.retain(|d| d.registry.alive());
    let d = Arc::new(Documents {
        registry: reg.identity(),
        v2: OnceLock::new(),
        v3: OnceLock::new(),
    });
    cache.push(d.clone());
    d
}

impl Documents {
    fn v2(&self, reg: &Registry) -> &V2 {
        self.v2.get_or_init(|| {
            let doc = v2::document(reg);
            V2 {
                json: Doc::new(serde_json::to_vec(&doc).unwrap_or_default()),
                protobuf: Bytes::from(gnostic::document(&doc)),
            }
        })
    }

    fn v3(&self, reg: &Registry) -> &V3 {
        self.v3.get_or_init(|| {
            let mut groups = HashMap::new();
            let mut index = Map::new();
            for (key, group, version) in v3::group_versions(reg) {
                let Some(doc) = v3::document(reg, &group, &version) else {
                    continue;
                };
                let doc = Doc::new(serde_json::to_vec(&doc).unwrap_or_default());
                index.insert(
                    key.clone(),
                    json!({"serverRelativeURL": format!("/openapi/v3/{key}?hash={}", doc.etag)}),
                );
                groups.insert(key, doc);
            }
            let root = Doc::new(serde_json::to_vec(&json!({"paths": index})).unwrap_or_default());
            V3 { root, groups }
        })
    }
}

/// What an OpenAPI request asks for, besides its path.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Request<'a> {
    /// The `Accept` header.
    pub(crate) accept: &'a str,
    /// The `If-None-Match` header.
    pub(crate) if_none_match: &'a str,
    /// The `hash` query parameter of a group version's document.
    pub(crate) hash: Option<&'a str>,
}

/// One media range of an `Accept` header.
struct Clause<'a> {
    ty: &'a str,
    subtype: &'a str,
    q: f32,
}

/// The clauses of an `Accept` header, preferred first, as kube-apiserver's negotiation reads
/// them (an empty header accepts anything; `q=0` clauses are kept, as it keeps them).
fn clauses(accept: &str) -> Vec<Clause<'_>> {
    let accept = if accept.trim().is_empty() {
        "*/*"
    } else {
        accept
    };
    let mut out = Vec::new();
    for part in accept.split(',') {
        let mut params = part.trim().split(';');
        let range = params.next().unwrap_or_default();
        let (ty, subtype) = match range.split_once('/') {
            Some((t, s)) if !s.contains('/') => (t.trim(), s.trim()),
            None if range.trim() == "*" => ("*", "*"),
            _ => continue,
        };
        let mut q = 1.0;
        for p in params {
            if let Some((k, v)) = p.split_once('=')
                && k.trim() == "q"
            {
                q = v.trim().parse().unwrap_or(0.0);
            }
        }
        out.push(Clause { ty, subtype, q });
    }
    // Higher quality first, then concrete types before wildcards; otherwise as listed.
    out.sort_by(|a, b| {
        b.q.partial_cmp(&a.q)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| (a.ty == "*").cmp(&(b.ty == "*")))
            .then_with(|| (a.subtype == "*").cmp(&(b.subtype == "*")))
    });
    out
}

/// The first of `offered` (subtypes of `application/`) that the request accepts.
fn negotiate<'o>(accept: &str, offered: &[&'o str]) -> Option<&'o str> {
    for c in clauses(accept) {
        if c.ty != "application" && c.ty != "*" {
            continue;
        }
        if let Some(o) = offered
            .iter()
            .find(|o| c.subtype == "*" || c.subtype == **o)
        {
            return Some(o);
        }
    }
    None
}

fn etag_matches(if_none_match: &str, etag: &str) -> bool {
    if_none_match.split(',').any(|t| {
        let t = t.trim();
        let t = t.strip_prefix("W/").unwrap_or(t);
        t == "*" || t.trim_matches('"') == etag
    })
}

fn status_only(status: StatusCode) -> Response {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = status;
    r
}

fn header_value(s: &str) -> HeaderValue {
    HeaderValue::from_str(s).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The response for a document: `304` when the client has it already.
fn document_response(req: &Request<'_>, content_type: &str, body: &Bytes, etag: &str) -> Response {
    let quoted = format!("\"{etag}\"");
    let mut r = if etag_matches(req.if_none_match, etag) {
        status_only(StatusCode::NOT_MODIFIED)
    } else {
        let mut r = Response::new(Body::from(body.clone()));
        r.headers_mut()
            .insert(header::CONTENT_TYPE, header_value(content_type));
        r
    };
    let h = r.headers_mut();
    h.insert(header::ETAG, header_value(&quoted));
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    r
}

/// `GET /openapi/v2`.
pub(crate) fn serve_v2(reg: &Registry, req: &Request<'_>) -> Response {
    let Some(form) = negotiate(
        req.accept,
        &["json", gnostic::MEDIA_TYPE_REQUESTED, gnostic::MEDIA_TYPE],
    ) else {
        let mut r = status_only(StatusCode::NOT_ACCEPTABLE);
        r.headers_mut()
            .insert(header::VARY, HeaderValue::from_static("Accept"));
        return r;
    };
    let docs = documents(reg);
    let v2 = docs.v2(reg);
    if form == "json" {
        document_response(req, "application/json", &v2.json.bytes, &v2.json.etag)
    } else {
        // The protobuf form shares the JSON form's entity tag (responses vary by Accept).
        document_response(
            req,
            &format!("application/{}", gnostic::MEDIA_TYPE),
            &v2.protobuf,
            &v2.json.etag,
        )
    }
}

/// `GET /openapi/v3`.
pub(crate) fn serve_v3_root(reg: &Registry, req: &Request<'_>) -> Response {
    let docs = documents(reg);
    let root = &docs.v3(reg).root;
    document_response(req, "application/json", &root.bytes, &root.etag)
}

/// `GET /openapi/v3/{api/v1 | apis/<group>/<version>}`; `None` for a group version the
/// cluster does not serve.
pub(crate) fn serve_v3(reg: &Registry, key: &str, req: &Request<'_>) -> Option<Response> {
    let docs = documents(reg);
    let doc = docs.v3(reg).groups.get(key)?;
    // Only JSON: the protobuf form of OpenAPI 3 is not offered.
    if negotiate(req.accept, &["json"]).is_none() {
        let mut r = status_only(StatusCode::NOT_ACCEPTABLE);
        r.headers_mut()
            .insert(header::VARY, HeaderValue::from_static("Accept"));
        return Some(r);
    }
    if let Some(hash) = req.hash.filter(|h| !h.is_empty()) {
        if hash != doc.etag {
            let mut r = status_only(StatusCode::MOVED_PERMANENTLY);
            r.headers_mut().insert(
                header::LOCATION,
                header_value(&format!("/openapi/v3/{key}?hash={}", doc.etag)),
            );
            return Some(r);
        }
        let mut r = document_response(req, "application/json", &doc.bytes, &doc.etag);
        let h = r.headers_mut();
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, immutable"),
        );
        if let Ok(expires) = jiff::Zoned::now()
            .with_time_zone(jiff::tz::TimeZone::UTC)
            .checked_add(jiff::Span::new().years(1))
        {
            h.insert(
                header::EXPIRES,
                header_value(&expires.strftime("%a, %d %b %Y %H:%M:%S UTC").to_string()),
            );
        }
        return Some(r);
    }
    Some(document_response(
        req,
        "application/json",
        &doc.bytes,
        &doc.etag,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_headers_are_read_as_kube_apiserver_reads_them() {
        let offered = ["json", gnostic::MEDIA_TYPE_REQUESTED, gnostic::MEDIA_TYPE];
        assert_eq!(negotiate("", &offered), Some("json"));
        assert_eq!(
            negotiate(
                "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
                &offered
            ),
            Some(gnostic::MEDIA_TYPE_REQUESTED)
        );
        assert_eq!(
            negotiate(
                "application/json;q=0.5, application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
                &offered
            ),
            Some(gnostic::MEDIA_TYPE)
        );
        assert_eq!(negotiate("*/*, application/json", &offered), Some("json"));
        assert_eq!(negotiate("text/html", &offered), None);
        assert_eq!(negotiate("application/*", &offered), Some("json"));
    }

    #[test]
    fn entity_tags_match_quoted_weak_and_wildcard_forms() {
        assert!(etag_matches("\"AB\"", "AB"));
        assert!(etag_matches("W/\"AB\", \"CD\"", "CD"));
        assert!(etag_matches("*", "AB"));
        assert!(!etag_matches("\"AB\"", "CD"));
        assert!(!etag_matches("", "CD"));
        assert_eq!(entity_tag(b"x"), entity_tag(b"x"));
        assert_ne!(entity_tag(b"x"), entity_tag(b"y"));
    }
}
