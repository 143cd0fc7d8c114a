//! Watch caches and the reconcile loop shared by the hub controllers.

use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use kube::api::{Api, ListParams};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, reflector as reflect, watcher};
use kube::{Client, Resource};

use crate::Error;

/// A watch cache of every `K` on the cluster, and the stream that keeps it filled (one item per
/// change).
pub(crate) fn cache<K>(client: &Client) -> (Store<K>, BoxStream<'static, ()>)
where
    K: Resource<DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let (store, writer) = reflector::store::<K>();
    let changes = reflect(
        writer,
        watcher(Api::all(client.clone()), watcher::Config::default()),
    )
    .default_backoff()
    .map(|_| ())
    .boxed();
    (store, changes)
}

/// Lists every `K` on the cluster.
pub(crate) async fn list_all<K>(client: &Client) -> Result<Vec<K>, Error>
where
    K: Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    Api::<K>::all(client.clone())
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .map_err(|source| Error::Kube {
            action: format!("list {}", K::plural(&())),
            source,
        })
}

/// What one reconcile round asks of the loop.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Round {
    /// Run again after this long at the latest.
    pub(crate) requeue_after: Option<Duration>,
    /// The round failed or asked for a retry: run again with exponential backoff.
    pub(crate) retry: bool,
}

/// Runs `round` once the caches are `ready`, then again whenever `changes` report something
/// (bursts are coalesced), when a round asks for it, and at least every `resync`, until
/// `shutdown` completes.
pub(crate) async fn run_loop<F, Fut>(
    changes: Vec<BoxStream<'static, ()>>,
    ready: impl Future<Output = ()>,
    shutdown: impl Future<Output = ()>,
    resync: Duration,
    mut round: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = Round>,
{
    let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(1);
    let mut changes = futures::stream::select_all(changes);
    let pump = tokio::spawn(async move {
        while changes.next().await.is_some() {
            let _ = tx.try_send(());
        }
    });
    let mut shutdown = std::pin::pin!(shutdown);
    tokio::select! {
        _ = ready => {}
        _ = &mut shutdown => { pump.abort(); return; }
    }
    let mut backoff = Duration::from_millis(100);
    loop {
        let outcome = round().await;
        let mut wait = resync;
        if let Some(after) = outcome.requeue_after {
            wait = wait.min(after + Duration::from_millis(10));
        }
        if outcome.retry {
            wait = wait.min(backoff);
            backoff = (backoff * 2).min(Duration::from_secs(60));
        } else {
            backoff = Duration::from_millis(100);
        }
        tokio::select! {
            _ = rx.recv() => {
                // Let a burst of changes settle, then reconcile once.
                tokio::time::sleep(Duration::from_millis(20)).await;
                while rx.try_recv().is_ok() {}
            }
            _ = tokio::time::sleep(wait) => {}
            _ = &mut shutdown => break,
        }
    }
    pump.abort();
}
