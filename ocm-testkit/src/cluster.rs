//! `FakeCluster`: one store with its three front doors (in-process client,
//! loopback HTTP, direct Rust access).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Result};
use crate::serving::http::{ServerOptions, ServerState, router};
use crate::simulators::fault::{FaultRule, Faults};
use crate::storage::journal::Journal;
use crate::storage::registry::Gvr;
use crate::storage::store::{Store, StoreConfig, WriteOptions};
use crate::validation::auth::{Authn, Identity};
use crate::validation::field_validation::FieldValidation;

/// Configures a [`FakeCluster`].
#[derive(Debug, Clone, Default)]
pub struct FakeClusterBuilder {
    name: Option<String>,
    store: StoreConfig,
    server: ServerOptions,
    journal_capacity: Option<usize>,
    identities: Option<Vec<Identity>>,
}

impl FakeClusterBuilder {
    /// Use this clock for every timestamp the cluster writes.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.store.clock = clock;
        self
    }

    /// Seed the uid and generateName generator, for the same uids and generated names on
    /// every run. Without a seed it is seeded at random, so that no two servers (nor one
    /// server started again, its state lost or not) hand out the same uid, as with
    /// kube-apiserver.
    pub fn uid_seed(mut self, seed: u64) -> Self {
        self.store.uid_seed = seed;
        self
    }

    /// Keep this many change events per resource (all namespaces) for resuming watches;
    /// older resourceVersions get `410 Gone`. Default
    /// [`DEFAULT_WATCH_HISTORY`](crate::DEFAULT_WATCH_HISTORY).
    pub fn watch_history(mut self, events: usize) -> Self {
        self.store.watch_history = events.max(1);
        self
    }

    /// Keep change events for resuming watches only this long (by the cluster's
    /// clock), besides the [`watch_history`](Self::watch_history) count; older
    /// resourceVersions get `410 Gone`.
    pub fn watch_history_age(mut self, age: Duration) -> Self {
        self.store.watch_history_age = Some(age);
        self
    }

    /// Answer a plain watch from a resourceVersion this cluster has not issued yet as
    /// kube-apiserver does: keep it open and silent until the cluster reaches that version
    /// (off by default: `410 Gone`, see [`crate::storage::watch`]). What a client sees after its API
    /// server lost its state and counts again from lower versions.
    pub fn future_watches_wait(mut self, wait: bool) -> Self {
        self.store.future_watches_wait = wait;
        self
    }

    /// Run the OCM hub's admission webhooks (see [`crate::validation::webhook`]); off by default, on for
    /// [`FakeHub`](crate::FakeHub)'s hub.
    pub fn hub_admission(
        mut self,
        admission: Option<crate::validation::webhook::HubAdmission>,
    ) -> Self {
        self.store.hub_admission = admission;
        self
    }

    pub(crate) fn hub_admission_settings(
        &self,
    ) -> Option<crate::validation::webhook::HubAdmission> {
        self.store.hub_admission.clone()
    }

    /// Refuse namespaced objects in namespaces that do not exist (off by default).
    pub fn strict_namespaces(mut self, strict: bool) -> Self {
        self.store.strict_namespaces = strict;
        self
    }

    /// How often watches that allow bookmarks get one.
    pub fn bookmark_interval(mut self, every: Duration) -> Self {
        self.server.bookmark_interval = every;
        self
    }

    /// Authorize impersonated requests against the RBAC objects in the store (see
    /// [`ServerOptions::enforce_impersonation`](crate::serving::http::ServerOptions::enforce_impersonation)).
    pub fn enforce_impersonation(mut self, enforce: bool) -> Self {
        self.server.enforce_impersonation = enforce;
        self
    }

    /// Authenticate and authorize every request as kube-apiserver does with token
    /// authentication and RBAC (see [`crate::validation::auth`]); off by default, when every request is
    /// served as a cluster administrator.
    ///
    /// The cluster gets the administrator [`Identity::admin`] (used by [`FakeCluster::client`]
    /// and the loopback server's default kubeconfig, so existing callers keep working) and
    /// kube-apiserver's bootstrap RBAC for discovery. Add users with
    /// [`identity`](Self::identity); act as them with [`FakeCluster::client_as`] and
    /// [`LoopbackServer::kubeconfig_yaml_as`].
    pub fn authentication(mut self, on: bool) -> Self {
        self.identities = if on {
            Some(self.identities.unwrap_or_default())
        } else {
            None
        };
        self
    }

    /// A user the cluster authenticates (turns [`authentication`](Self::authentication) on).
    pub fn identity(mut self, identity: Identity) -> Self {
        self.identities.get_or_insert_with(Vec::new).push(identity);
        self
    }

    /// The cluster's name: its kubeconfigs name their cluster and context after it
    /// (`ocm-testkit` by default; [`FakeHub`](crate::FakeHub) names its clusters `hub`,
    /// `cluster1`, …).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Keep at most this many journal entries (0 turns the journal off).
    pub fn journal_capacity(mut self, entries: usize) -> Self {
        self.journal_capacity = Some(entries);
        self
    }

    /// Build the cluster.
    pub fn build(self) -> FakeCluster {
        let store = Arc::new(Store::new(self.store));
        let auth = self.identities.map(|ids| {
            for (gvr, obj) in crate::validation::auth::bootstrap_rbac() {
                if let Err(e) =
                    store.create(&gvr, "", obj, &WriteOptions::manager("kube-apiserver"))
                {
                    tracing::error!("ocm-testkit: bootstrap RBAC object refused: {e}");
                }
            }
            Arc::new(Authn::new(ids))
        });
        let state = Arc::new(ServerState {
            auth,
            store,
            journal: Arc::new(Journal::with_capacity(
                self.journal_capacity
                    .unwrap_or(crate::storage::journal::DEFAULT_JOURNAL_CAPACITY),
            )),
            faults: Arc::new(Faults::default()),
            options: self.server,
        });
        FakeCluster {
            name: Arc::from(self.name.as_deref().unwrap_or(DEFAULT_NAME)),
            router: router(state.clone()),
            state,
        }
    }
}

/// A fake Kubernetes API server: one store, served in-process and over loopback.
///
/// Cloning is cheap and shares the cluster.
#[derive(Debug, Clone)]
pub struct FakeCluster {
    name: Arc<str>,
    state: Arc<ServerState>,
    /// The one router of the cluster, shared by its clients and servers (cloning a router is
    /// cheap; building one is not).
    router: axum::Router,
}

/// The name of a cluster built without [`FakeClusterBuilder::name`].
const DEFAULT_NAME: &str = "ocm-testkit";

impl Default for FakeCluster {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeCluster {
    /// A cluster with default settings (wall clock, fixed uid seed).
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// Configure a cluster.
    pub fn builder() -> FakeClusterBuilder {
        FakeClusterBuilder {
            name: None,
            store: StoreConfig {
                clock: Arc::new(SystemClock),
                ..StoreConfig::default()
            },
            server: ServerOptions::default(),
            journal_capacity: None,
            identities: None,
        }
    }

    /// Direct access to the objects.
    pub fn store(&self) -> &Arc<Store> {
        &self.state.store
    }

    /// Every request served so far.
    pub fn journal(&self) -> &Journal {
        &self.state.journal
    }

    /// The fault rules.
    pub fn faults(&self) -> &Faults {
        &self.state.faults
    }

    /// Shorthand for `self.faults().add(rule)`.
    pub fn inject(&self, rule: FaultRule) {
        self.state.faults.add(rule);
    }

    /// The axum Router serving this cluster (a `tower::Service`).
    pub fn router(&self) -> axum::Router {
        self.router.clone()
    }

    /// A `kube::Client` talking to this cluster in-process, with `default` as
    /// its default namespace. No sockets are involved.
    ///
    /// Must be called inside a Tokio runtime (kube spawns its request buffer).
    ///
    /// With [authentication](FakeClusterBuilder::authentication) on, the client acts as the
    /// administrator [`Identity::admin`].
    pub fn client(&self) -> kube::Client {
        match self.state.auth.as_ref().and_then(|a| a.find_user("admin")) {
            Some(admin) => self.client_with_token(&admin.token),
            None => kube::Client::new(self.router(), "default"),
        }
    }

    /// A `kube::Client` talking to this cluster in-process as `user`, one of its
    /// [identities](FakeClusterBuilder::identity); an error when authentication is off or the
    /// user is unknown.
    pub fn client_as(&self, user: &str) -> Result<kube::Client> {
        let id = self.identity(user)?;
        Ok(self.client_with_token(&id.token))
    }

    /// An in-process client (with `token`, if any) that sets `watched` once it opens a
    /// watch (in `namespace`, when given).
    pub(crate) fn client_watching(
        &self,
        token: Option<&str>,
        namespace: Option<&str>,
        watched: Arc<std::sync::atomic::AtomicBool>,
    ) -> kube::Client {
        let scope = namespace.map(|ns| format!("/namespaces/{ns}/"));
        self.client_on_watch(token, move |path| {
            if scope.as_deref().is_none_or(|s| path.contains(s)) {
                watched.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        })
    }

    /// An in-process client without credentials, shared by several users that each watch in
    /// their own namespace: the flag of a namespace is set once a watch in it is opened.
    pub(crate) fn client_watching_namespaces(
        &self,
        watched: std::collections::HashMap<String, Arc<std::sync::atomic::AtomicBool>>,
    ) -> kube::Client {
        self.client_on_watch(None, move |path| {
            let namespace = path
                .split_once("/namespaces/")
                .and_then(|(_, rest)| rest.split('/').next());
            if let Some(flag) = namespace.and_then(|ns| watched.get(ns)) {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        })
    }

    /// An in-process client (with `token`, if any) that calls `on_watch` with the path of
    /// every watch it opens.
    fn client_on_watch(
        &self,
        token: Option<&str>,
        on_watch: impl Fn(&str) + Clone + Send + Sync + 'static,
    ) -> kube::Client {
        let value = token.and_then(|t| http::HeaderValue::from_str(&format!("Bearer {t}")).ok());
        let service = tower::ServiceBuilder::new()
            .map_request(move |mut req: http::Request<kube::client::Body>| {
                if let Some(v) = &value {
                    req.headers_mut()
                        .entry(http::header::AUTHORIZATION)
                        .or_insert(v.clone());
                }
                let query = req.uri().query().unwrap_or_default();
                let watch = query
                    .split('&')
                    .any(|p| p == "watch=true" || p == "watch=1");
                if watch {
                    on_watch(req.uri().path());
                }
                req
            })
            .service(self.router());
        kube::Client::new(service, "default")
    }

    fn client_with_token(&self, token: &str) -> kube::Client {
        let value = http::HeaderValue::from_str(&format!("Bearer {token}")).ok();
        let service = tower::ServiceBuilder::new()
            .map_request(move |mut req: http::Request<kube::client::Body>| {
                if let Some(v) = &value {
                    req.headers_mut()
                        .entry(http::header::AUTHORIZATION)
                        .or_insert(v.clone());
                }
                req
            })
            .service(self.router());
        kube::Client::new(service, "default")
    }

    /// Add a user the cluster authenticates (replacing one of the same name); an error when
    /// authentication is off.
    pub fn add_identity(&self, identity: Identity) -> Result<()> {
        self.auth()?.add(identity);
        Ok(())
    }

    /// The identity of `user`; an error when authentication is off or the user is unknown.
    pub fn identity(&self, user: &str) -> Result<Identity> {
        self.auth()?
            .find_user(user)
            .ok_or_else(|| Error::Identity(format!("the cluster has no identity \"{user}\"")))
    }

    /// Every identity the cluster authenticates (empty with authentication off).
    pub fn identities(&self) -> Vec<Identity> {
        self.state
            .auth
            .as_ref()
            .map(|a| a.all())
            .unwrap_or_default()
    }

    fn auth(&self) -> Result<&Arc<Authn>> {
        self.state
            .auth
            .as_ref()
            .ok_or_else(|| Error::Identity("authentication is off on this cluster".to_string()))
    }

    /// Serve this cluster on `127.0.0.1` (a free port) until the returned
    /// handle is dropped.
    pub async fn serve_loopback(&self) -> Result<LoopbackServer> {
        self.serve_loopback_on(0).await
    }

    /// The cluster's name (see [`FakeClusterBuilder::name`]).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Like [`serve_loopback`](Self::serve_loopback), on a chosen port of 127.0.0.1 (0 picks
    /// a free one).
    pub async fn serve_loopback_on(&self, port: u16) -> Result<LoopbackServer> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let app = self.router();
        // With authentication the server speaks HTTPS: client-go sends credentials only
        // over TLS.
        let tls = self.state.auth.is_some();
        let task = if tls {
            let listener = crate::serving::tls::TlsListener::new(listener)?;
            tokio::spawn(crate::serving::serve::serve(listener, app))
        } else {
            tokio::spawn(crate::serving::serve::serve(listener, app))
        };
        Ok(LoopbackServer {
            context: self.name.to_string(),
            addr,
            task,
            auth: self.state.auth.clone(),
        })
    }

    /// Start simulating workload controllers (Deployments, StatefulSets,
    /// DaemonSets, Jobs report healthy status) until the handle is dropped.
    /// Must be called inside a Tokio runtime.
    pub fn simulate_workloads(&self) -> crate::simulators::simulate::WorkloadSimulator {
        crate::simulators::simulate::WorkloadSimulator::start(self.state.store.clone())
    }

    /// [`simulate_workloads`](Self::simulate_workloads), and also run each Deployment's
    /// Pods through a ReplicaSet as kube's controllers do, so that `kubectl get pod` and
    /// `kubectl get replicaset` list them (see [`crate::simulators::simulate`]).
    pub fn simulate_workloads_with_pods(&self) -> crate::simulators::simulate::WorkloadSimulator {
        crate::simulators::simulate::WorkloadSimulator::start_with_pods(self.state.store.clone())
    }

    /// Load objects from YAML (several documents allowed, lists expanded) or JSON, as forced
    /// server-side applies by the manager `ocm-testkit`. Documents and lists are read as
    /// [`ocm_api::k8s::yaml`] says; a document that is not an object is an error naming it.
    ///
    /// CRDs take effect at once, so a CRD and its objects can share one file.
    /// Namespaced objects without a namespace go to `default`.
    ///
    /// A field the server does not know (anywhere in a built-in object, or outside a custom
    /// resource's schema) would fail a real server-side apply. Fixtures are loaded leniently
    /// instead: such a field is dropped and logged at `WARN` (through `tracing`), naming the
    /// document and the field, so that a typo in a fixture is seen without breaking the load.
    /// To fail on it instead, or to get the dropped fields back, use
    /// [`apply_yaml_with`](Self::apply_yaml_with).
    pub fn apply_yaml(&self, text: &str) -> Result<Vec<serde_json::Value>> {
        Ok(self.apply_yaml_with(text, FieldValidation::Warn)?.objects)
    }

    /// [`apply_yaml`](Self::apply_yaml), choosing what a field the server does not know does:
    ///
    /// - [`FieldValidation::Strict`]: the call fails with [`Error::UnknownFields`] naming the
    ///   document and every such field of it, before that document is applied (earlier
    ///   documents stay applied);
    /// - [`FieldValidation::Warn`]: the field is dropped and logged at `WARN`;
    /// - [`FieldValidation::Ignore`]: the field is dropped without a log.
    ///
    /// Without `Strict`, the dropped fields are returned with the stored objects.
    ///
    /// ```
    /// use ocm_testkit::{Error, FakeCluster, FieldValidation};
    ///
    /// let cluster = FakeCluster::new();
    /// let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndta: {k: v}\n";
    /// let loaded = cluster.apply_yaml_with(yaml, FieldValidation::Warn)?;
    /// assert_eq!(loaded.unknown_fields[0].path, "dta");
    /// let err = cluster.apply_yaml_with(yaml, FieldValidation::Strict).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "document 1 (ConfigMap default/c): unknown field \"dta\""
    /// );
    /// # Ok::<(), Error>(())
    /// ```
    pub fn apply_yaml_with(
        &self,
        text: &str,
        unknown_fields: FieldValidation,
    ) -> Result<AppliedYaml> {
        let objects: Vec<serde_json::Value> = ocm_api::k8s::yaml::objects(text)
            .map_err(|e| Error::Api(crate::ApiError::bad_request(format!("invalid YAML: {e}"))))?
            .into_iter()
            .map(serde_json::Value::Object)
            .collect();
        let store = self.store();
        let mut out = AppliedYaml::default();
        for (i, mut obj) in objects.into_iter().enumerate() {
            let api_version = obj
                .get("apiVersion")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_string();
            let kind = obj
                .get("kind")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_string();
            let (group, version) = api_version
                .rsplit_once('/')
                .unwrap_or(("", api_version.as_str()));
            let info = store
                .registry()
                .by_kind(group, &kind)
                .cloned()
                .ok_or_else(|| {
                    crate::ApiError::new(
                        404,
                        "NotFound",
                        format!("no matches for kind \"{kind}\" in version \"{api_version}\""),
                    )
                })?;
            let gvr = Gvr::new(group, version, info.plural.clone());
            let ns = match obj
                .pointer("/metadata/namespace")
                .and_then(serde_json::Value::as_str)
            {
                Some(ns) if info.namespaced => ns.to_string(),
                _ if info.namespaced => "default".to_string(),
                _ => String::new(),
            };
            let name = obj
                .pointer("/metadata/name")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_string();
            let schema = info.schema(version).cloned();
            let dropped = crate::validation::field_validation::unknown::drop_undeclared(
                &info,
                version,
                schema.as_deref(),
                &mut obj,
            );
            if !dropped.is_empty() {
                let fields: Vec<UnknownField> = dropped
                    .into_iter()
                    .map(|path| UnknownField {
                        document: i + 1,
                        kind: kind.clone(),
                        namespace: ns.clone(),
                        name: name.clone(),
                        path,
                    })
                    .collect();
                match unknown_fields {
                    FieldValidation::Strict => return Err(Error::UnknownFields(fields)),
                    FieldValidation::Warn => {
                        for f in &fields {
                            tracing::warn!("ocm-testkit apply_yaml dropped a field: {f}");
                        }
                    }
                    FieldValidation::Ignore => {}
                }
                out.unknown_fields.extend(fields);
            }
            let opts = WriteOptions {
                force: true,
                ..WriteOptions::manager("ocm-testkit")
            };
            let stored = if name.is_empty() {
                store.create(&gvr, &ns, obj, &opts)?
            } else {
                store
                    .patch(&gvr, &ns, &name, crate::PatchKind::Apply, &obj, &opts)?
                    .0
            };
            out.objects.push(stored);
        }
        Ok(out)
    }

    /// Create a typed object directly in the store (no HTTP), as manager `ocm-testkit`.
    pub fn create<K>(&self, obj: &K) -> Result<K>
    where
        K: kube::Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        let ns = obj
            .meta()
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        // Objects may nest deep (a ManifestWork's manifests): the copies made on the way are
        // made and dropped on a stack with room for them.
        let store = &self.state.store;
        store.on_stack(0, || {
            let v = serde_json::to_value(obj)?;
            let depth = ocm_api::k8s::json::value_depth(&v);
            store.on_stack(depth, || {
                let out = store.create(
                    &Gvr::of::<K>(),
                    &ns,
                    v,
                    &WriteOptions::manager("ocm-testkit"),
                )?;
                Ok(serde_json::from_value(out)?)
            })
        })
    }

    /// Read a typed object directly from the store (use `""` as namespace for cluster-scoped kinds).
    pub fn get<K>(&self, namespace: &str, name: &str) -> Result<K>
    where
        K: kube::Resource<DynamicType = ()> + DeserializeOwned,
    {
        let store = &self.state.store;
        store.on_stack(0, || {
            let v = store.get(&Gvr::of::<K>(), namespace, name)?;
            Ok(serde_json::from_value(v.as_ref().clone())?)
        })
    }

    /// List typed objects directly from the store (`None` = all namespaces).
    pub fn list<K>(&self, namespace: Option<&str>) -> Result<Vec<K>>
    where
        K: kube::Resource<DynamicType = ()> + DeserializeOwned,
    {
        let store = &self.state.store;
        store.on_stack(0, || {
            let list = store.list(&Gvr::of::<K>(), namespace, &Default::default())?;
            list.items
                .iter()
                .map(|v| serde_json::from_value(v.as_ref().clone()).map_err(Error::from))
                .collect()
        })
    }
}

/// What [`FakeCluster::apply_yaml_with`] did.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct AppliedYaml {
    /// The stored objects, in document order.
    pub objects: Vec<serde_json::Value>,
    /// The fields the server does not know, dropped from the documents before they were
    /// applied.
    pub unknown_fields: Vec<UnknownField>,
}

/// A field of a loaded document that the server does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnknownField {
    /// The document's position among the loaded objects, from 1 (a `List`'s items count one
    /// each).
    pub document: usize,
    /// The document's kind.
    pub kind: String,
    /// The namespace it was applied in (empty for cluster-scoped kinds).
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// The field, as kube-apiserver names it in its warnings
    /// (`spec.template.spec.containers[0].imagee`).
    pub path: String,
}

impl std::fmt::Display for UnknownField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let object = if self.namespace.is_empty() {
            self.name.clone()
        } else {
            format!("{}/{}", self.namespace, self.name)
        };
        write!(
            f,
            "document {} ({} {object}): unknown field {}",
            self.document,
            self.kind,
            ocm_api::k8s::gojson::quote(&self.path)
        )
    }
}

/// A running loopback server; it stops when dropped.
#[derive(Debug)]
#[must_use = "the loopback server stops when dropped"]
pub struct LoopbackServer {
    context: String,
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
    auth: Option<Arc<Authn>>,
}

impl Drop for LoopbackServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl LoopbackServer {
    /// The name of the cluster and context in this server's kubeconfigs: the cluster's
    /// [name](FakeCluster::name) unless [`set_context_name`](Self::set_context_name) changed
    /// it.
    pub fn context_name(&self) -> &str {
        &self.context
    }

    /// Name the cluster and context of this server's kubeconfigs `name` (for example
    /// `kind-cluster1`, as upstream's walkthroughs name theirs).
    pub fn set_context_name(&mut self, name: impl Into<String>) {
        self.context = name.into();
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server URL, `http://127.0.0.1:PORT` (`https://` with authentication on: the
    /// server then uses a fixed test certificate, which its kubeconfigs and clients trust).
    pub fn url(&self) -> String {
        let scheme = if self.auth.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// A kubeconfig (YAML) whose current context points at this server (as the
    /// administrator [`Identity::admin`] when authentication is on).
    pub fn kubeconfig_yaml(&self) -> String {
        let token = self
            .auth
            .as_ref()
            .and_then(|a| a.find_user("admin"))
            .map(|i| i.token);
        self.kubeconfig_with(&self.context, token.as_deref())
    }

    /// A kubeconfig (YAML) that authenticates as `user`, one of the cluster's
    /// [identities](FakeClusterBuilder::identity), with its bearer token.
    pub fn kubeconfig_yaml_as(&self, user: &str) -> Result<String> {
        let id = self.identity(user)?;
        let context = format!("{}@{}", id.user, self.context);
        Ok(self.kubeconfig_with(&context, Some(&id.token)))
    }

    /// Write [`kubeconfig_yaml_as`](Self::kubeconfig_yaml_as) to `path`, readable and writable
    /// by its owner only.
    pub fn write_kubeconfig_as(&self, user: &str, path: impl AsRef<std::path::Path>) -> Result<()> {
        crate::fixtures::files::write_private(path, self.kubeconfig_yaml_as(user)?)?;
        Ok(())
    }

    /// A `kube::Client` that talks to this server over HTTP as `user`.
    pub fn client_as(&self, user: &str) -> Result<kube::Client> {
        let id = self.identity(user)?;
        self.client_with(Some(&id.token))
    }

    fn identity(&self, user: &str) -> Result<Identity> {
        self.auth
            .as_ref()
            .ok_or_else(|| Error::Identity("authentication is off on this cluster".into()))?
            .find_user(user)
            .ok_or_else(|| Error::Identity(format!("the cluster has no identity \"{user}\"")))
    }

    fn kubeconfig_with(&self, context: &str, token: Option<&str>) -> String {
        let user_doc = match token {
            Some(t) => format!(
                "\n    token: {}",
                serde_json::to_string(t).unwrap_or_default()
            ),
            None => " {}".to_string(),
        };
        let ca = if self.auth.is_some() {
            format!(
                "    certificate-authority-data: {}\n",
                crate::serving::tls::ca_data()
            )
        } else {
            String::new()
        };
        let cluster = serde_json::to_string(&self.context).unwrap_or_default();
        let context = serde_json::to_string(context).unwrap_or_default();
        // The user entry is named after the context, so that kubeconfigs of several clusters
        // merge (`KUBECONFIG=a:b`) without their users colliding.
        let user_name = context.clone();
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: {cluster}\n  cluster:\n{ca}    server: {}\n\
             contexts:\n- name: {context}\n  context:\n    cluster: {cluster}\n    user: {user_name}\n    namespace: default\n\
             current-context: {context}\nusers:\n- name: {user_name}\n  user:{user_doc}\npreferences: {{}}\n",
            self.url()
        )
    }

    /// The kubeconfig as kube's type.
    pub fn kubeconfig(&self) -> Result<kube::config::Kubeconfig> {
        kube::config::Kubeconfig::from_yaml(&self.kubeconfig_yaml())
            .map_err(|e| Error::Kubeconfig(e.to_string()))
    }

    /// Write the kubeconfig to `path`, readable and writable by its owner only (it holds the
    /// credentials, as `kubectl` keeps kubeconfigs).
    pub fn write_kubeconfig(&self, path: impl AsRef<std::path::Path>) -> Result<()> {
        crate::fixtures::files::write_private(path, self.kubeconfig_yaml())?;
        Ok(())
    }

    /// A `kube::Client` that talks to this server over HTTP.
    pub fn client(&self) -> Result<kube::Client> {
        let token = self
            .auth
            .as_ref()
            .and_then(|a| a.find_user("admin"))
            .map(|i| i.token);
        self.client_with(token.as_deref())
    }

    fn client_with(&self, token: Option<&str>) -> Result<kube::Client> {
        let url = self
            .url()
            .parse()
            .map_err(|e: http::uri::InvalidUri| Error::Kubeconfig(e.to_string()))?;
        let mut config = kube::Config::new(url);
        config.default_namespace = "default".into();
        if self.auth.is_some() {
            config.root_cert = Some(vec![crate::serving::tls::ca_der()]);
        }
        if let Some(t) = token {
            let v = http::HeaderValue::from_str(&format!("Bearer {t}"))
                .map_err(|e| Error::Kubeconfig(e.to_string()))?;
            config.headers.push((http::header::AUTHORIZATION, v));
        }
        Ok(kube::Client::try_from(config)?)
    }
}
