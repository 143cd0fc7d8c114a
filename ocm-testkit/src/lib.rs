//! Fake Kubernetes API servers for fast, faithful tests.
//!
//! A [`FakeCluster`] is one in-memory object [`Store`] with three front doors:
//!
//! 1. **in-process**: [`FakeCluster::client`] returns a `kube::Client` whose
//!    requests go straight into an axum `Router` — no sockets, microseconds per
//!    request, many clusters per test process;
//! 2. **loopback HTTP**: [`FakeCluster::serve_loopback`] serves the same Router on
//!    `127.0.0.1` with a kubeconfig, for `kubectl` and clients in any language;
//! 3. **direct Rust access**: [`FakeCluster::store`] (and the typed helpers
//!    [`FakeCluster::create`], [`FakeCluster::get`], [`FakeCluster::list`]) for
//!    fixtures and assertions, with the same rules as the API.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, Patch, PatchParams, PostParams};
//! use ocm_testkit::FakeCluster;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let cluster = FakeCluster::new();
//! let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
//!
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! api.create(&PostParams::default(), &cm).await?;
//!
//! // Server-side apply with field ownership, as kube-apiserver does it.
//! let applied = serde_json::json!({
//!     "apiVersion": "v1", "kind": "ConfigMap",
//!     "metadata": {"name": "settings"}, "data": {"mode": "fast"}
//! });
//! api.patch("settings", &PatchParams::apply("my-controller"), &Patch::Apply(&applied)).await?;
//!
//! // The same store, read directly; and the request journal.
//! let stored: ConfigMap = cluster.get("default", "settings")?;
//! assert_eq!(stored.data.unwrap()["mode"], "fast");
//! assert!(stored.metadata.uid.is_some());
//! assert_eq!(cluster.journal().writes(), 2);
//! # Ok(())
//! # }
//! ```
//!
//! Around the three front doors:
//!
//! - [`FakeHub`]: a hub serving every OCM CRD (`ocm_api::crds()`) with N
//!   registered, available managed clusters, each its own [`FakeCluster`] with the CRDs a
//!   managed cluster needs;
//! - [`Fleet`]: a fake hub, its managed clusters, workload simulators, an agent per cluster
//!   and the hub controllers in one call, with one shutdown handle and a readiness wait;
//! - [`FakeCluster::apply_yaml`]: load YAML fixtures (CRDs and objects, several
//!   documents per file);
//! - [`FakeCluster::simulate_workloads`]: Deployments, StatefulSets, DaemonSets
//!   and Jobs report healthy status, as their controllers would;
//!   [`FakeCluster::simulate_workloads_with_pods`] also runs Deployments' Pods through
//!   ReplicaSets (for `kubectl get pod`);
//! - [`FakeCluster::journal`] records every request, [`FakeCluster::inject`] adds
//!   [`FaultRule`]s (status code, count, delay per verb/resource/namespace/name);
//! - [`ManualClock`] and a uid seed make timestamps and uids deterministic;
//! - bearer tokens are random per identity, kubeconfigs and saved state are written readable by
//!   their owner only ([`files`]);
//! - [`wait`] polls for what controllers do in the background, and [`logs`] shows the SDK's
//!   logs in a test (`ocm_testkit::logs::show()`) or captures them to assert on.
//!
//! # Fidelity
//!
//! Behaviour follows kube-apiserver 1.36 unless noted; the recorded answers of a real
//! kube-apiserver v1.36 to a corpus of tricky requests (`shared/conformance/`) are replayed
//! against the loopback server in this crate's tests, and all are matched:
//!
//! - **Metadata**: uid (random; the same on every run with [`FakeClusterBuilder::uid_seed`]),
//!   creationTimestamp from an injectable
//!   [`Clock`] ([`ManualClock`] for tests), generateName, one global monotonic
//!   resourceVersion, `generation` bumped only by changes outside metadata and status,
//!   no-op writes keep their resourceVersion.
//! - **Errors** are `metav1.Status` bodies worded like kube-apiserver's
//!   (`AlreadyExists`, `Conflict`, `NotFound`, `Invalid` with causes, `Gone`).
//! - **Status subresource** from the CRD (and a built-in table for core kinds):
//!   main writes keep the stored status, `/status` writes change only status.
//! - **Patches**: JSON patch, merge patch, strategic merge patch (built-in merge keys;
//!   415 for custom resources, as upstream) and **server-side apply** with
//!   `managedFields`, conflicts (real message and causes), `force`, removal of
//!   dropped fields, create-by-apply, list-map/set semantics from CRD schemas and
//!   built-in tables, `dryRun=All`.
//! - **Request bodies** in JSON, YAML, or Kubernetes protobuf for built-in kinds
//!   ([`protobuf`]: what `kubectl create <kind>`, `kubectl run` and `kubectl expose`
//!   send); responses are JSON. Any other media type is refused with 415 and
//!   kube-apiserver's list of accepted types (the patch types for PATCH, without strategic
//!   merge patch for custom resources).
//! - **Decoding as kube-apiserver decodes**: built-in kinds are decoded into their real
//!   types (k8s-openapi's), custom resources have their `metadata` decoded as `ObjectMeta`,
//!   and a value of the wrong JSON type is refused with Go's `encoding/json` error in
//!   kube-apiserver's wrapping (`ConfigMap in version "v1" cannot be handled as a
//!   ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type
//!   string`; invalid base64 and malformed quantities likewise), on create, update, patch
//!   (`422` naming the patched object) and server-side apply (the field manager's typed
//!   conversion error). A missing `kind`/`apiVersion` of a built-in kind is filled in from
//!   the URL (as kube-apiserver's serializer does), another one is refused with the
//!   scheme's error; a custom resource must name its `kind` (`Object 'Kind' is missing in
//!   …`) and the URL's `apiVersion`. JSON syntax errors carry Go's scanner messages. The
//!   object in a patch error is our JSON (keys sorted, not in Go's field order), and a
//!   list or map field of the wrong type stops the search for a later fatal error (Go would
//!   keep going); time strings are not parsed.
//! - **Size limits** ([`limits`]): request bodies over 3 MiB get `413 Request entity too
//!   large: limit is 3145728`; a write whose object is over etcd's 1.5 MiB gets kube-apiserver's
//!   `500 etcdserver: request is too large` (measured on our JSON; etcd sees protobuf for
//!   built-in kinds); JSON patches of more than 10 000 operations get `413`, and `copy`
//!   operations adding up to more than 3 MiB stop with `422` (`Unable to complete the copy,
//!   the accumulated size increase of copy is …`) before the copy is made.
//! - **Options** are validated as kube-apiserver's handlers validate `CreateOptions`,
//!   `UpdateOptions`, `PatchOptions`, `DeleteOptions` and `ListOptions` (`422` naming them):
//!   `dryRun` values other than `All` (`Unsupported value: ["foo"]: supported values: "All"`,
//!   nothing applied), `fieldValidation`, `fieldManager` (at most 128 bytes, printable;
//!   required for apply), `force` only for apply, `propagationPolicy` and its conflict with
//!   `orphanDependents`, and `resourceVersionMatch` / `sendInitialEvents` with the WatchList
//!   defaulting; integer query parameters (`limit`, `timeoutSeconds`, `gracePeriodSeconds`)
//!   that do not parse are `400` with Go's `strconv.ParseInt` error, a `resourceVersion`
//!   that is no number is the storage layer's `strconv.ParseUint` error (`400 invalid
//!   resource version: …` for a list, `500` for a get or a watch); booleans read as kube
//!   reads them (anything but `0`/`false` is true); a watch without `timeoutSeconds` ends
//!   after a random 30–60 minutes (kube-apiserver's `--min-request-timeout` rule) and a
//!   negative one at once. `continue` tokens are kube-apiserver's (base64 of
//!   `{"v":"meta.k8s.io/v1","rv":…,"start":…}`) and a bad one gets its storage layer's error.
//! - **Nesting**: JSON bodies nest up to 10,000 levels (Go's decoder limit; one more is
//!   `invalid character '{' exceeded max depth`), so custom resources that deep are stored,
//!   listed, watched and read back; YAML bodies are converted up to the same limit (alias
//!   bombs get go-yaml's `document contains excessive aliasing`). Nothing on any path
//!   recurses without a bound: deep values are handled on stacks that grow
//!   (`ocm_api::k8s::json`), so no request, however deep, can overflow a thread's stack.
//! - **HTTP**: the loopback server reads request heads as Go's server does (up to 1 MiB:
//!   long URLs, many or large headers), answers paths outside every served group version
//!   with Go's plain-text `404 page not found`, and closes the connection of a body far
//!   over the 3 MiB limit without reading it, as kube-apiserver's clients see it.
//! - **`scale` subresource**: `autoscaling/v1` `Scale` for Deployments, ReplicaSets and
//!   StatefulSets and for custom resources with `subresources.scale` (spec/status replicas
//!   paths, label selector path), GET/PUT/PATCH with resourceVersion preconditions, in
//!   discovery, so `kubectl scale` works.
//! - **`fieldValidation`**: unknown fields at any depth (built-in kinds against their
//!   published schemas, custom resources by CRD pruning, `metadata` as `ObjectMeta`) and
//!   keys a JSON body names twice are reported in `Warning: 299 - "…"` headers (`Warn`, the
//!   default), refused (`Strict`, kubectl's default) with kube-apiserver's words for a body
//!   (400 `strict decoding error: unknown field "spec.template.spec.containers[0].imagee"`)
//!   or a patch (422 on `patch`), or dropped silently (`Ignore`). A server-side apply with
//!   an unknown field fails as on a real server (500 `failed to create typed patch object
//!   …: field not declared in schema`); [`FakeCluster::apply_yaml`] drops such fields from
//!   fixtures and logs them at `WARN` ([`FakeCluster::apply_yaml_with`] can refuse them).
//! - **Lists and watches**: label selectors parsed as apimachinery's `labels.Parse` parses
//!   them (its grammar, key and value checks and messages), field selectors as
//!   `fields.ParseSelector` with each kind's field allow-list (`field label not supported:
//!   …`, or `"…" is not a known field selector: only "metadata.name", "metadata.namespace"`,
//!   plus a CRD's `selectableFields`), `limit`/`continue`, watch from a resourceVersion with a history per
//!   resource (like kube-apiserver's watch cache) bounded by count
//!   ([`DEFAULT_WATCH_HISTORY`] events unless set) and optionally by age (`410 Gone` past it,
//!   so a kube-runtime watcher lists again), bookmarks, WatchList (`sendInitialEvents` with
//!   the `k8s.io/initial-events-end` bookmark), `timeoutSeconds`, and selector-aware
//!   transitions (an object that stops matching is sent as `DELETED`).
//! - **CRDs** created through the API are served at once (discovery, OpenAPI,
//!   CRUD, `Table` printer columns), with schema defaulting, pruning and validation.
//! - **Multi-version CRDs** share one store in the storage version; OCM's addon kinds are
//!   converted between `v1alpha1` and `v1beta1` as upstream's conversion webhook does
//!   with `ocm_api::addon::conversion`, the others by rewriting `apiVersion`.
//! - **Tables** (`kubectl get`): CRD printer columns are evaluated with the Kubernetes
//!   JSONPath of `ocm-feedback` (filters, `[*]`), typed as kube-apiserver types them (the
//!   first value, lists and maps as JSON in `string` columns, ages for `date`); a CRD with
//!   columns of its own gets no extra Age column. Built-in kinds a work agent applies
//!   (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, Pod, Service, ConfigMap, Secret,
//!   ServiceAccount, Namespace, Event) print kube-apiserver's columns (READY, UP-TO-DATE, …,
//!   `-o wide` ones at priority 1). Watches send the column definitions with their first
//!   Table only.
//! - **Events**: core `v1` and `events.k8s.io/v1` Events are one store, each readable,
//!   watchable and writable through both APIs (`kubectl describe` finds the Events a
//!   controller records with `events.k8s.io/v1`).
//! - **Hub admission** ([`webhook`]): [`FakeHub`]'s hub runs the OCM hub's admission
//!   webhooks (ManagedCluster taint `timeAdded` and default cluster set, accept/join checks,
//!   ManagedClusterSetBinding bind checks, ManifestWork validation and `execute-as`), with
//!   upstream's webhook names and messages.
//! - **Names**: each cluster's kubeconfigs name their cluster, context and user after the
//!   cluster ([`FakeClusterBuilder::name`]; `hub`, `cluster1`, … for [`FakeHub`]).
//! - **Persistence** (our addition): [`Store::snapshot`]/[`Store::restore`] and
//!   [`Store::save`]/[`Store::load`] keep a cluster's objects across processes.
//! - **Built-in kinds** are defaulted, prepared and validated as kube-apiserver does on
//!   every create, update, patch and apply, with its messages and field paths: the defaults
//!   decoding fills in (a Deployment's `replicas`, `strategy` and `revisionHistoryLimit`, a
//!   container's `imagePullPolicy` and `terminationMessagePath`, a Service's `type`, …),
//!   what each registry fills in before validating (a Service's cluster IP and node ports,
//!   a Job's selector, a DaemonSet's `templateGeneration`), and the validation of
//!   Deployments, StatefulSets, DaemonSets, ReplicaSets and their Pod templates, Pods,
//!   Services, ConfigMaps, Secrets, ServiceAccounts, Namespaces, PersistentVolumeClaims,
//!   Jobs, CronJobs (cron syntax), the RBAC kinds, Ingresses and NetworkPolicies. Object
//!   metadata (names, labels, annotations, finalizers, ownerReferences, managedFields) is
//!   validated for every kind, custom resources included. A Deployment without a selector,
//!   or a Service on port 70000, is `422 Invalid` here as on a real cluster.
//! - **Jobs** (`batch/v1`): defaults (including the pod template's), the generated
//!   `batch.kubernetes.io/controller-uid` selector and pod labels, and 422 `Invalid`
//!   for changes to `spec.selector`, `spec.template`, `spec.completions` and the
//!   other immutable fields, worded as kube-apiserver words them (the template
//!   value is shown as JSON where kube-apiserver dumps a Go struct).
//! - **Authorization**: SubjectAccessReviews answered from RBAC objects.
//! - **Authentication and RBAC** (opt-in, [`FakeClusterBuilder::authentication`], see
//!   [`auth`]): bearer tokens per [`Identity`] (`401 Unauthorized` for unknown ones, the
//!   anonymous user without one), impersonation checked against the `impersonate` verb,
//!   every request authorized from the RBAC objects with kube-apiserver's `403` message
//!   (`system:masters` always allowed), RBAC escalation prevention on Roles, ClusterRoles and
//!   bindings (`escalate`/`bind`, else `user "…" (groups=[…]) is attempting to grant RBAC
//!   permissions not currently held:` and the missing rules), and the bootstrap ClusterRoles
//!   for discovery. The default in-process client and loopback kubeconfig act as the
//!   administrator, so nothing that worked without authentication breaks; the loopback
//!   server then speaks HTTPS with a fixed test certificate (client-go sends credentials
//!   over TLS only). [`FakeHub`] gives each managed cluster's agent upstream's identity and
//!   hub RBAC (ManifestWorks in its own namespace). Client certificates, service account
//!   tokens and the aggregated `admin`/`edit`/`view` roles are not emulated.
//! - **Deletion**: finalizers and deletionTimestamp, ownerReference garbage
//!   collection (Background, Foreground, Orphan), namespace termination.
//! - **Discovery**: legacy and aggregated (`apidiscovery.k8s.io/v2`), `/version`;
//!   enough for `kubectl get/apply/delete`.
//! - **OpenAPI**: `/openapi/v2` (JSON, and the gnostic protobuf kubectl asks for) and
//!   `/openapi/v3` (per group version, with hashed URLs) with the real schemas of the
//!   built-in kinds (k8s-openapi's, descriptions included, with kube-apiserver's list, map
//!   and patch extensions) and of every CRD, each tagged with its
//!   `x-kubernetes-group-version-kind`: `kubectl explain`, client-side validation (a `v1`
//!   `List` with `--validate=strict`) and client-side apply's strategic merge patches work.
//!   `ETag`/`If-None-Match` and `Accept` are honoured (406 for a form not offered; the
//!   OpenAPI 3 protobuf form is not). List semantics come from a table of what
//!   kube-apiserver v1.28 publishes (and a few later fields): lists added since publish none.
//!
//! Differences that are deliberate (our additions or simplifications):
//!
//! - garbage collection and namespace cleanup run synchronously inside the delete
//!   (or the write that clears the last finalizer), so tests need no polling;
//! - `continue` tokens page through the current state rather than a snapshot;
//! - a watch from a resourceVersion newer than the store's (one it never issued, as after a
//!   restart with lost state) gets `410 Gone` at once, where kube-apiserver keeps it waiting
//!   for that version; lists and initial-events watches from such a version get
//!   kube-apiserver's `504 Too large resource version` without its 3 s wait (see [`watch`]);
//! - namespaces need not exist unless [`FakeClusterBuilder::strict_namespaces`] is on;
//! - without authentication (the default) every request is served as a cluster
//!   administrator and `SelfSubjectAccessReview` is always allowed, except for requests that
//!   impersonate a user (`kubectl --as`), which act as that user (reviews and admission);
//!   `SubjectAccessReview`/`LocalSubjectAccessReview` are decided from the RBAC
//!   objects (with ClusterRole aggregation), and `system:masters` is always allowed;
//! - CRD schema validation covers types, `required`, `enum`, `nullable`,
//!   `pattern`, the string `format`s kube-openapi checks, lengths, bounds,
//!   `multipleOf`, item and property counts, and `x-kubernetes-validations`
//!   CEL rules (the environment of `ocm_api::cel`: the standard library, the strings, lists
//!   and math extensions and Kubernetes' CEL libraries; its own evaluation limits rather than
//!   kube-apiserver's cost estimates); unchanged values are not validated again on update
//!   (ratcheting).
//!
//! # Where things are
//!
//! For a change to how the fake answers, open the folder of its concern; each folder's
//! front page (`mod.rs`) maps its files:
//!
//! | concern | folder | what is in it |
//! |---|---|---|
//! | HTTP serving | `serving/` | routes and status codes ([`http`]), the loopback server, TLS, request options, discovery, OpenAPI, tables, [`protobuf`] |
//! | the store | `storage/` | [`store`], [`watch`], deletion and garbage collection, [`patch`] and server-side apply, [`selector`], the served resources ([`registry`], built-in kinds, CRDs), [`journal`], [`limits`], persistence |
//! | what is checked on the way in | `validation/` | body decoding, admission, built-in kinds (`kinds/`), CRD schemas and CEL rules, [`field_validation`], the hub's [`webhook`]s, [`auth`] and RBAC |
//! | OCM fixtures and test helpers | `fixtures/` | [`FakeHub`], [`fleet`], [`files`], [`wait`], [`logs`] |
//! | simulators | `simulators/` | workload controllers ([`simulate`]) and failures ([`fault`]) |
//!
//! At the top: `cluster.rs` ([`FakeCluster`], one store behind its three front doors),
//! [`api_error`] and [`error`] (errors as the API server and as the crate report them) and
//! [`clock`].
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod api_error;
pub mod clock;
mod cluster;
pub mod error;
mod fixtures;
mod serving;
mod simulators;
mod storage;
mod validation;

pub use fixtures::{files, fleet, logs, wait};
pub use serving::{http, protobuf};
pub use simulators::{fault, simulate};
pub use storage::{journal, limits, patch, registry, selector, store, watch};
pub use validation::{auth, field_validation, webhook};

pub use api_error::{ApiError, ApiStatus, Cause};
pub use auth::{Identity, UserInfo};
pub use clock::{Clock, ManualClock, SystemClock};
pub use cluster::{AppliedYaml, FakeCluster, FakeClusterBuilder, LoopbackServer, UnknownField};
pub use error::{Error, Result};
pub use fault::FaultRule;
pub use field_validation::{FieldValidation, Warnings};
pub use fixtures::ocm::{
    FakeHub, MANAGED_CLUSTER_KINDS, install_crds, install_extended_crds,
    install_managed_cluster_crds,
};
pub use fleet::{Fleet, FleetBuilder, FleetCluster, Shutdown};
pub use journal::{Journal, JournalEntry};
pub use patch::PatchKind;
pub use registry::ScaleSubresource;
pub use registry::{GroupResource, Gvr, PrinterColumn, Registry, ResourceInfo};
pub use selector::{FieldSelector, LabelSelector};
pub use simulate::{WorkloadSimulator, settle_workloads};
pub use storage::deletion::GarbageCollection;
pub use store::{
    DEFAULT_WATCH_HISTORY, DeleteOptions, DeleteOutcome, ListOptions, ObjectKey, ObjectList,
    Propagation, Store, StoreConfig, WriteOptions,
};
pub use watch::{EventType, StoredEvent, Subscription, WatchOptions};
pub use webhook::HubAdmission;
