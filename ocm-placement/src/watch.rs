//! Watch caches of the hub controllers, and how they run on the SDK's one round loop
//! ([`ocm_api::rounds`]). The caches and lists read
//! objects one at a time ([`RawObject`]), so one object that does not decode never stops a
//! controller.

use std::future::Future;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use kube::api::{Api, ListParams};
use kube::core::ApiResource;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, reflector as reflect, watcher};
use kube::{Client, Resource};
use ocm_api::k8s::object::{DecodeFailure, RawObject};
use ocm_api::repeats::LastSaid;
use ocm_api::rounds::RoundLoop;

use crate::Error;

/// A watch cache of every `K` on the cluster, whose objects are read one at a time: an object
/// that does not decode (a field of a newer release, a number out of range, JSON nested past
/// `serde_json`'s limit) is one failure, logged once per version of it and reported by
/// [`Cache::read`], while every other object is cached as usual. A typed watch would fail as a
/// whole instead, and with it every object of the kind.
pub(crate) struct Cache<K> {
    raw: Store<RawObject>,
    kind: String,
    /// Each object decoded once per resource version.
    decoded: Mutex<HashMap<(String, String), Decoded<K>>>,
}

struct Decoded<K> {
    version: Option<String>,
    result: Result<Arc<K>, DecodeFailure>,
}

impl<K> Cache<K>
where
    K: Resource<DynamicType = ()> + serde::de::DeserializeOwned,
{
    /// Waits until the first list has filled the cache.
    pub(crate) async fn wait_until_ready(&self) {
        let _ = self.raw.wait_until_ready().await;
    }

    /// The cached objects that decode.
    pub(crate) fn state(&self) -> Vec<Arc<K>> {
        self.read().0
    }

    /// The cached objects that decode, and the failures of those that do not.
    pub(crate) fn read(&self) -> (Vec<Arc<K>>, Vec<DecodeFailure>) {
        let raw = self.raw.state();
        let mut decoded = self.decoded.lock().unwrap_or_else(|e| e.into_inner());
        let mut keep = std::collections::HashSet::with_capacity(raw.len());
        let mut objects = Vec::with_capacity(raw.len());
        let mut failures = Vec::new();
        for object in raw {
            let meta = object.meta();
            let key = (
                meta.namespace.clone().unwrap_or_default(),
                meta.name.clone().unwrap_or_default(),
            );
            let version = meta.resource_version.clone();
            let entry = decoded.entry(key.clone()).or_insert_with(|| Decoded {
                version: None,
                result: Err(DecodeFailure::new("", "", "")),
            });
            if entry.version != version || entry.version.is_none() {
                entry.result = decode_one(&self.kind, &object).map(Arc::new);
                entry.version = version;
            }
            match &entry.result {
                Ok(k) => objects.push(k.clone()),
                Err(f) => failures.push(f.clone()),
            }
            keep.insert(key);
        }
        decoded.retain(|k, _| keep.contains(k));
        (objects, failures)
    }
}

/// Decodes one object, logging (at WARN) why it does not.
fn decode_one<K: serde::de::DeserializeOwned>(
    kind: &str,
    object: &RawObject,
) -> Result<K, DecodeFailure> {
    object.decode::<K>().map_err(|error| {
        let failure = DecodeFailure::of(object, error);
        tracing::warn!(
            kind,
            object = %failure.object(),
            error = %failure.error,
            "skipping an object that cannot be decoded"
        );
        failure
    })
}

/// A watch cache of every `K` on the cluster (see [`Cache`]), and the stream that keeps it
/// filled (one item per change).
pub(crate) fn cache<K>(client: &Client) -> (Cache<K>, BoxStream<'static, ()>)
where
    K: Resource<DynamicType = ()> + serde::de::DeserializeOwned,
{
    let resource = ApiResource::erase::<K>(&());
    let writer = reflector::store::Writer::<RawObject>::new(resource.clone());
    let raw = writer.as_reader();
    let changes = reflect(
        writer,
        watcher(
            Api::<RawObject>::all_with(client.clone(), &resource),
            watcher::Config::default(),
        ),
    )
    .default_backoff()
    .map(|_| ())
    .boxed();
    let cache = Cache {
        raw,
        kind: resource.kind,
        decoded: Mutex::new(HashMap::new()),
    };
    (cache, changes)
}

/// Lists every `K` on the cluster, one object at a time: the objects that decode, and the
/// failures of those that do not (each logged at WARN).
pub(crate) async fn list_all<K>(client: &Client) -> Result<(Vec<K>, Vec<DecodeFailure>), Error>
where
    K: Resource<DynamicType = ()> + serde::de::DeserializeOwned,
{
    let resource = ApiResource::erase::<K>(&());
    let list = Api::<RawObject>::all_with(client.clone(), &resource)
        .list(&ListParams::default())
        .await
        .map_err(|source| Error::Kube {
            action: format!("list {}", K::plural(&())),
            source,
        })?;
    let mut objects = Vec::with_capacity(list.items.len());
    let mut failures = Vec::new();
    for object in &list.items {
        match decode_one(&resource.kind, object) {
            Ok(k) => objects.push(k),
            Err(f) => failures.push(f),
        }
    }
    Ok((objects, failures))
}

pub(crate) use ocm_api::rounds::Round;

/// How long a burst of changes settles before the next round.
const SETTLE: Duration = Duration::from_millis(20);

/// Runs `round` on the SDK's one round loop ([`ocm_api::rounds`]) once the caches are `ready`
/// (then sets `synced`, for a readiness probe), again whenever `changes` report something
/// (bursts are coalesced), when a round asks for it (a little after the time it names, so
/// that what it waits for has happened) or failed, and at least every `resync`, until
/// `shutdown` completes. The caches are fed by a task of their own, so they stay current while
/// a round runs.
pub(crate) async fn run_loop<F, Fut>(
    changes: Vec<BoxStream<'static, ()>>,
    ready: impl Future<Output = ()>,
    synced: Option<&AtomicBool>,
    shutdown: impl Future<Output = ()>,
    resync: Duration,
    mut round: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = Round>,
{
    let (tx, rx) = tokio::sync::mpsc::channel::<()>(1);
    let mut changes = futures::stream::select_all(changes);
    let pump = tokio::spawn(async move {
        while changes.next().await.is_some() {
            let _ = tx.try_send(());
        }
    });
    let mut shutdown = std::pin::pin!(shutdown);
    tokio::select! {
        () = ready => {}
        () = &mut shutdown => { pump.abort(); return; }
    }
    if let Some(flag) = synced {
        flag.store(true, Ordering::SeqCst);
    }
    // The pump ends only when aborted: the loop ends with the shutdown.
    let pumped = futures::stream::unfold(
        rx,
        |mut rx| async move { rx.recv().await.map(|()| ((), rx)) },
    )
    .chain(futures::stream::pending())
    .boxed();
    RoundLoop::new()
        .settle(SETTLE)
        .resync(resync)
        .run(vec![pumped], shutdown, move || {
            round().map(|r| {
                Round::requeue(
                    r.requeue_after
                        .map(|after| after + Duration::from_millis(10)),
                )
                .retry(r.retry)
            })
        })
        .await;
    pump.abort();
}

/// The round that a reconcile's `result` makes: `ok` of its outcome, or a failed round. A
/// failure is logged as `"<what> reconcile failed"` at WARN when its message changed since the
/// last round (in `said`), at DEBUG when it repeats.
pub(crate) fn round_of<T>(
    said: &LastSaid,
    what: &str,
    result: Result<T, Error>,
    ok: impl FnOnce(T) -> Round,
) -> Round {
    match result {
        Ok(outcome) => {
            said.forget("reconcile");
            ok(outcome)
        }
        Err(error) => {
            if said.changed("reconcile", &error.to_string()) {
                tracing::warn!(%error, "{what} reconcile failed");
            } else {
                tracing::debug!(%error, "{what} reconcile failed again");
            }
            Round::failed()
        }
    }
}
