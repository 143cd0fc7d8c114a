//! HTTPS for the loopback server when authentication is on.
//!
//! client-go (kubectl) sends a kubeconfig's credentials only over TLS, so a loopback server
//! that authenticates must speak HTTPS. It uses a fixed test certificate for `127.0.0.1`,
//! `::1` and `localhost` (valid 2000–2125), issued by a fixed test CA that the server's
//! kubeconfigs and clients trust. Both are public test material: they protect nothing and
//! must never be used outside a test on the loopback interface.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// The test CA's certificate (PEM).
const CA_PEM: &[u8] = include_bytes!("tls/ca.pem");
/// The test CA's certificate (DER).
const CA_DER: &[u8] = include_bytes!("tls/ca.der");
/// The server certificate (DER), for 127.0.0.1, ::1 and localhost.
const SERVER_DER: &[u8] = include_bytes!("tls/server.der");
/// The server's private key (PKCS#8 DER).
const SERVER_KEY_DER: &[u8] = include_bytes!("tls/server.key.der");

/// The CA certificate clients trust, as DER.
pub(crate) fn ca_der() -> Vec<u8> {
    CA_DER.to_vec()
}

/// The CA certificate as a kubeconfig's `certificate-authority-data` (base64 of the PEM).
pub(crate) fn ca_data() -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(CA_PEM)
}

fn acceptor() -> std::io::Result<TlsAcceptor> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(SERVER_DER.to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(SERVER_KEY_DER.to_vec())),
        )
        .map_err(std::io::Error::other)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// A listener that hands out TLS connections; handshakes run in their own tasks, so a
/// client that stalls holds up no other.
pub(crate) struct TlsListener {
    addr: SocketAddr,
    rx: mpsc::Receiver<(TlsStream<tokio::net::TcpStream>, SocketAddr)>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TlsListener {
    pub(crate) fn new(tcp: TcpListener) -> std::io::Result<Self> {
        let addr = tcp.local_addr()?;
        let acceptor = acceptor()?;
        let (tx, rx) = mpsc::channel(64);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, peer)) = tcp.accept().await else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    let handshake = acceptor.accept(stream);
                    match tokio::time::timeout(Duration::from_secs(10), handshake).await {
                        Ok(Ok(tls)) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!("ocm-testkit TLS handshake failed: {e}"),
                        Err(_) => tracing::debug!("ocm-testkit TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(Self { addr, rx, task })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<tokio::net::TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.rx.recv().await {
            Some(conn) => conn,
            // The accepting task is gone only when the listener is dropped.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ca_data_is_the_base64_of_the_pem() {
        let data = super::ca_data();
        assert!(data.starts_with("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t"));
        assert_eq!(data.len() % 4, 0);
    }
}
