//! The watches of the crate's whole-round controllers, and the loop they run on
//! ([`ocm_api::rounds`], shared with ocm-placement's controllers).
//!
//! Most controllers of this crate reconcile one object per key through kube-runtime's
//! `Controller` (the ManifestWorkReplicaSet controller, the work agent). Some reconcile a
//! whole set of objects in each round instead, as their upstream counterparts do from one
//! informer cache: the addon manager ([`crate::addon::manager`]), a fan-out
//! ([`crate::fanout`]) and the ClusterClaim reporter ([`crate::registration`]). They watch
//! through kube-runtime ([`changes`]: a `watcher` with kube-runtime's default backoff, so a
//! watch that fails is retried with a growing delay instead of at once) and are driven by
//! [`ocm_api::rounds::run_rounds`]. The watches read raw objects, which they never decode: an object that does
//! not decode (or nests deeper than `serde_json`'s 128 levels) is a change like any other, and
//! the round reads each object on its own (`crate::read`).

use futures::StreamExt;
use futures::stream::BoxStream;
use kube::Api;
use kube::runtime::{WatchStreamExt, watcher};
use ocm_api::k8s::object::RawObject;

/// One item per change of the objects `api` and `config` select, from a kube-runtime
/// `watcher` of raw objects (see the [module docs](self)) restarted with its default backoff
/// after an error.
pub(crate) fn changes(api: Api<RawObject>, config: watcher::Config) -> BoxStream<'static, ()> {
    watcher(api, config).default_backoff().map(|_| ()).boxed()
}
