//! The HTTP endpoints of a binary: `/healthz` (and `/livez`), `/readyz` and `/metrics`, on one
//! address (plain HTTP/1.1; put TLS in front, or keep the port inside the cluster).
//!
//! `/metrics` answers in the Prometheus text format (version 0.0.4), or in OpenMetrics when
//! the scraper asks for `application/openmetrics-text`.
//!
//! ```no_run
//! # async fn demo() -> ocm_work::Result<()> {
//! use ocm_work::runtime::{health::Health, metrics::Metrics, server::EndpointServer};
//! use ocm_work::runtime::shutdown::Shutdown;
//!
//! let (health, metrics) = (Health::new(), Metrics::new());
//! let server = EndpointServer::bind("0.0.0.0:8080".parse().unwrap(), health, metrics).await?;
//! let shutdown = Shutdown::on_signals();
//! tokio::spawn(server.run(shutdown.cancelled()));
//! # Ok(())
//! # }
//! ```

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::runtime::health::{Health, Report};
use crate::runtime::metrics::Metrics;
use crate::{Error, Result};

/// The content type of the Prometheus text format.
pub const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
/// The content type of the OpenMetrics text format.
pub const OPENMETRICS_TEXT: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A bound endpoint server.
#[derive(Debug)]
pub struct EndpointServer {
    listener: TcpListener,
    health: Health,
    metrics: Metrics,
}

impl EndpointServer {
    /// Binds `addr` (port 0 picks a free port; see [`EndpointServer::local_addr`]).
    pub async fn bind(addr: SocketAddr, health: Health, metrics: Metrics) -> Result<Self> {
        let listener = TcpListener::bind(addr).await.map_err(|source| Error::Io {
            what: format!("bind the health and metrics endpoints to {addr}"),
            source,
        })?;
        Ok(Self {
            listener,
            health,
            metrics,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> Result<SocketAddr> {
        self.listener.local_addr().map_err(|source| Error::Io {
            what: "read the endpoints' address".into(),
            source,
        })
    }

    /// Serves until `shutdown` completes (connections under way are dropped then).
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) {
        tokio::pin!(shutdown);
        loop {
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                () = &mut shutdown => return,
            };
            let stream = match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::debug!(%error, "endpoint connection not accepted");
                    continue;
                }
            };
            let (health, metrics) = (self.health.clone(), self.metrics.clone());
            let service = service_fn(move |request: Request<Incoming>| {
                let response = answer(&request, &health, &metrics);
                async move { Ok::<_, Infallible>(response) }
            });
            tokio::spawn(async move {
                if let Err(error) = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await
                {
                    tracing::debug!(%error, "endpoint connection ended");
                }
            });
        }
    }
}

fn text(status: StatusCode, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = header::HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

fn report(report: Report) -> Response<Full<Bytes>> {
    let status = if report.ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    text(status, "text/plain; charset=utf-8", report.text)
}

/// The answer to one request.
pub(crate) fn answer<B>(
    request: &Request<B>,
    health: &Health,
    metrics: &Metrics,
) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return text(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain; charset=utf-8",
            "method not allowed\n".into(),
        );
    }
    match request.uri().path() {
        "/healthz" | "/livez" => report(health.live()),
        "/readyz" => report(health.ready()),
        "/metrics" => {
            let openmetrics = request
                .headers()
                .get(header::ACCEPT)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.contains("application/openmetrics-text"));
            if openmetrics {
                text(
                    StatusCode::OK,
                    OPENMETRICS_TEXT,
                    metrics.encode_openmetrics(),
                )
            } else {
                text(StatusCode::OK, PROMETHEUS_TEXT, metrics.encode())
            }
        }
        _ => text(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "404 page not found\n".into(),
        ),
    }
}
