//! A network link between a `kube::Client` and a fake cluster that tests can cut and re-point.
//!
//! [`Link::client`] talks to whichever [`FakeCluster`] the link currently serves, in-process
//! like `FakeCluster::client`. [`Link::down`] is an outage as a client sees one: every new
//! request fails with a connection error and every open response (watch streams included) ends
//! with a connection-reset error. [`Link::up`] serves a cluster again: the same one (the hub
//! came back), or another one at the same address (a hub restarted with lost state).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use axum::body::Body;
use futures::StreamExt;
use http::{Request, Response};
use ocm_testkit::FakeCluster;
use tower::ServiceExt;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

struct State {
    target: Option<FakeCluster>,
    /// Bumped at every cut; responses opened under an older value end.
    epoch: tokio::sync::watch::Sender<u64>,
}

/// A switchable link to a fake cluster. Cheap to clone (clones share the link).
#[derive(Clone)]
pub struct Link {
    state: Arc<Mutex<State>>,
}

impl Link {
    /// A link serving `cluster`.
    pub fn new(cluster: &FakeCluster) -> Self {
        let (epoch, _) = tokio::sync::watch::channel(0);
        Self {
            state: Arc::new(Mutex::new(State {
                target: Some(cluster.clone()),
                epoch,
            })),
        }
    }

    /// A client going through this link (default namespace `default`).
    pub fn client(&self) -> kube::Client {
        kube::Client::new(
            LinkService {
                state: self.state.clone(),
            },
            "default",
        )
    }

    /// Cuts the link: open responses end with a connection error, new requests are refused.
    pub fn down(&self) {
        let mut state = self.state.lock().unwrap();
        state.target = None;
        state.epoch.send_modify(|e| *e += 1);
    }

    /// Serves `cluster` from now on (cutting open responses if another one was served).
    pub fn up(&self, cluster: &FakeCluster) {
        let mut state = self.state.lock().unwrap();
        state.target = Some(cluster.clone());
        state.epoch.send_modify(|e| *e += 1);
    }
}

#[derive(Clone)]
struct LinkService {
    state: Arc<Mutex<State>>,
}

impl tower::Service<Request<kube::client::Body>> for LinkService {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<kube::client::Body>) -> Self::Future {
        let (target, epoch, opened) = {
            let state = self.state.lock().unwrap();
            let epoch = state.epoch.subscribe();
            let opened = *epoch.borrow();
            (state.target.clone(), epoch, opened)
        };
        Box::pin(async move {
            let Some(cluster) = target else {
                return Err(Box::new(std::io::Error::new(
                    std::io::ErrorKind::ConnectionRefused,
                    "connection refused (link down)",
                )) as BoxError);
            };
            let response = cluster.router().oneshot(request).await?;
            let (parts, body) = response.into_parts();
            // Each chunk races the cut: a cut ends the body with a connection reset, as a
            // dropped connection does; a body that ends by itself ends cleanly.
            let data = futures::stream::unfold(
                Some((body.into_data_stream(), epoch)),
                move |state| async move {
                    let (mut body, mut epoch) = state?;
                    let cut = tokio::select! {
                        chunk = body.next() => Some(chunk?),
                        _ = epoch.wait_for(|e| *e != opened) => None,
                    };
                    match cut {
                        Some(chunk) => Some((
                            chunk.map_err(|e| Box::new(e) as BoxError),
                            Some((body, epoch)),
                        )),
                        None => Some((
                            Err(Box::new(std::io::Error::new(
                                std::io::ErrorKind::ConnectionReset,
                                "connection reset (link cut)",
                            )) as BoxError),
                            None,
                        )),
                    }
                },
            );
            Ok(Response::from_parts(parts, Body::from_stream(data)))
        })
    }
}
