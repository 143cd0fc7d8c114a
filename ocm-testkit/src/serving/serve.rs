//! Serving a fake cluster's router on loopback connections, with the limits of Go's HTTP
//! server (and so kube-apiserver's) rather than hyper's.
//!
//! Go reads a request head of up to 1 MiB (plus 4 KiB of slack) whatever its shape: a 100 KB
//! URL (a long label selector), hundreds of headers, one header of a megabyte. hyper refuses
//! some of these by default (more than 100 headers), and a request line over 64 KiB always
//! (`414 URI Too Long`, not configurable). So each connection's first request head is read
//! here: a head hyper can parse goes to hyper with the bytes already read put back in front
//! (the connection then keeps hyper's keep-alive handling); a head whose URL is longer than
//! hyper takes is parsed here, its one request answered through the same router, and the
//! connection closed. A head longer than Go's limit is left to hyper, which answers
//! `431 Request Header Fields Too Large` as Go does.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use http_body_util::BodyExt as _;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, ReadBuf};
use tower::ServiceExt as _;

/// The most bytes of request line and headers a request may have: Go's
/// `DefaultMaxHeaderBytes` (1 MiB) and the 4 KiB it reads beyond it.
pub(crate) const MAX_HEAD_BYTES: usize = (1 << 20) + 4096;

/// The most header lines hyper reads per request (Go counts only bytes; a thousand headers is
/// far beyond what clients send, and hyper reserves room for all of them on each request).
const MAX_HEADERS: usize = 1024;

/// Marks a response whose connection is closed instead of answered: a body far over the size
/// limit, which kube-apiserver leaves unread while its client is still sending (the client
/// sees the connection reset, never an answer).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DropConnection;

impl std::fmt::Display for DropConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body was far over the limit; the connection is closed")
    }
}

impl std::error::Error for DropConnection {}

/// The query of a request whose URL is longer than `http::Uri` takes, carried beside its
/// path (the router reads it from here when it is there).
#[derive(Clone, Debug)]
pub(crate) struct LongQuery(pub(crate) String);

/// The longest request target hyper parses.
const HYPER_MAX_URI: usize = u16::MAX as usize - 1;

/// Serves `app` on every connection `listener` accepts, until the task is dropped.
pub(crate) async fn serve<L>(mut listener: L, app: axum::Router)
where
    L: axum::serve::Listener,
{
    loop {
        let (io, _) = listener.accept().await;
        let app = app.clone();
        tokio::spawn(async move {
            if let Err(e) = connection(io, app).await {
                tracing::trace!("ocm-testkit loopback connection ended: {e}");
            }
        });
    }
}

/// Where the head of a request ends in `buf` (just after its blank line), if it is all there.
fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

async fn connection<IO>(mut io: IO, app: axum::Router) -> Result<(), String>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut buf = Vec::with_capacity(8192);
    let mut long_uri = None;
    loop {
        if let Some(end) = head_end(&buf) {
            let target_len = buf[..end]
                .split(|b| *b == b'\n')
                .next()
                .and_then(|line| line.split(|b| *b == b' ').nth(1))
                .map_or(0, <[u8]>::len);
            if target_len > HYPER_MAX_URI {
                long_uri = Some(end);
            }
            break;
        }
        if buf.len() > MAX_HEAD_BYTES {
            break;
        }
        let mut chunk = [0u8; 16 * 1024];
        let n = io.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 {
            if buf.is_empty() {
                return Ok(());
            }
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    match long_uri {
        Some(end) => answer_one(io, buf, end, app).await,
        None => {
            let service =
                hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let app = app.clone();
                    async move {
                        let response = app
                            .oneshot(req.map(Body::new))
                            .await
                            .unwrap_or_else(|e| match e {});
                        match response.extensions().get::<DropConnection>() {
                            Some(drop) => Err(*drop),
                            None => Ok(response),
                        }
                    }
                });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .max_buf_size(MAX_HEAD_BYTES)
                .max_headers(MAX_HEADERS);
            builder
                .serve_connection(
                    TokioIo::new(Replay {
                        read: buf,
                        at: 0,
                        io,
                    }),
                    service,
                )
                .with_upgrades()
                .await
                .map_err(|e| e.to_string())
        }
    }
}

/// A connection whose first bytes were already read: they are read again, then the rest.
struct Replay<IO> {
    read: Vec<u8>,
    at: usize,
    io: IO,
}

impl<IO: AsyncRead + Unpin> AsyncRead for Replay<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.at < self.read.len() {
            let n = out.remaining().min(self.read.len() - self.at);
            let at = self.at;
            out.put_slice(&self.read[at..at + n]);
            self.at += n;
            if self.at == self.read.len() {
                self.read = Vec::new();
                self.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.io).poll_read(cx, out)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Replay<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// Reads a chunked body (RFC 9112 §7.1) of at most `limit` bytes from what was read and the
/// connection; `None` when it is malformed.
async fn read_chunked<IO: AsyncRead + Unpin>(
    io: &mut IO,
    mut pending: Vec<u8>,
    limit: usize,
) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        while !pending.windows(2).any(|w| w == b"\r\n") {
            let mut chunk = [0u8; 8192];
            let n = io.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            pending.extend_from_slice(&chunk[..n]);
        }
        let line_end = pending.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&pending[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        pending.drain(..line_end + 2);
        if size == 0 {
            return Some(body);
        }
        while pending.len() < size + 2 {
            let mut chunk = [0u8; 8192];
            let n = io.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            pending.extend_from_slice(&chunk[..n]);
        }
        body.extend_from_slice(&pending[..size]);
        pending.drain(..size + 2);
        if body.len() > limit {
            return Some(body);
        }
    }
}

/// Answers the one request whose head ends at `end` in `buf` through `app`, then closes.
async fn answer_one<IO>(
    mut io: IO,
    mut buf: Vec<u8>,
    end: usize,
    app: axum::Router,
) -> Result<(), String>
where
    IO: AsyncRead + AsyncWrite + Unpin,
{
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let rest = buf.split_off(end);
    let (request, framing) = request_head(&head);
    let body = read_request_body(&mut io, rest, framing).await?;
    let response = match request.body(Body::from(body)) {
        Ok(req) => app.oneshot(req).await.unwrap_or_else(|e| match e {}),
        Err(e) => {
            let mut r = http::Response::new(Body::from(format!("400 Bad Request: {e}")));
            *r.status_mut() = http::StatusCode::BAD_REQUEST;
            r
        }
    };
    if response.extensions().get::<DropConnection>().is_some() {
        return Err(DropConnection.to_string());
    }
    write_chunked_response(&mut io, response).await
}

/// How a request's body is framed: chunked, or by its `Content-Length` (none: empty).
struct BodyFraming {
    length: Option<usize>,
    chunked: bool,
}

/// The request a head (request line and header lines) describes, still without its
/// body, and how that body is framed.
fn request_head(head: &str) -> (http::request::Builder, BodyFraming) {
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let (method, target) = (
        request_line.next().unwrap_or_default(),
        request_line.next().unwrap_or_default(),
    );
    // `http::Uri` takes no more than hyper does: a long query travels beside the URI.
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut request = http::Request::builder()
        .method(method)
        .uri(path)
        .extension(LongQuery(query.to_string()));
    let mut framing = BodyFraming {
        length: None,
        chunked: false,
    };
    for line in lines.filter(|l| !l.is_empty()) {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            framing.length = value.parse::<usize>().ok();
        }
        if name.eq_ignore_ascii_case("transfer-encoding") && value.eq_ignore_ascii_case("chunked") {
            framing.chunked = true;
        }
        request = request.header(name.trim(), value);
    }
    (request, framing)
}

/// Read the request body after the `rest` already read with its head, up to one byte
/// past the API server's body limit (enough for the router to refuse it).
async fn read_request_body<IO>(
    io: &mut IO,
    rest: Vec<u8>,
    framing: BodyFraming,
) -> Result<Vec<u8>, String>
where
    IO: AsyncRead + Unpin,
{
    let limit = crate::storage::limits::MAX_REQUEST_BODY_BYTES + 1;
    if framing.chunked {
        return Ok(read_chunked(io, rest, limit)
            .await
            .ok_or("a malformed chunked body")?);
    }
    let want = framing.length.unwrap_or(0).min(limit);
    let mut body = rest;
    while body.len() < want {
        let mut chunk = vec![0u8; (want - body.len()).min(64 * 1024)];
        let n = io.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(want);
    Ok(body)
}

/// Write `response` as HTTP/1.1 with a chunked body, then shut the connection down.
async fn write_chunked_response<IO>(
    io: &mut IO,
    response: http::Response<Body>,
) -> Result<(), String>
where
    IO: AsyncWrite + Unpin,
{
    let (parts, mut body) = response.into_parts();
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        parts.status.as_u16(),
        parts.status.canonical_reason().unwrap_or("")
    );
    for (name, value) in &parts.headers {
        if name == http::header::CONTENT_LENGTH || name == http::header::TRANSFER_ENCODING {
            continue;
        }
        head.push_str(&format!(
            "{name}: {}\r\n",
            String::from_utf8_lossy(value.as_bytes())
        ));
    }
    head.push_str("transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    io.write_all(head.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(|e| e.to_string())?.into_data() else {
            continue;
        };
        if data.is_empty() {
            continue;
        }
        io.write_all(format!("{:x}\r\n", data.len()).as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        io.write_all(&data).await.map_err(|e| e.to_string())?;
        io.write_all(b"\r\n").await.map_err(|e| e.to_string())?;
    }
    io.write_all(b"0\r\n\r\n")
        .await
        .map_err(|e| e.to_string())?;
    io.shutdown().await.map_err(|e| e.to_string())
}
