//! Issue #29: nesting as kube-apiserver takes it, over the running HTTP server. Custom
//! resources nest up to 10,000 levels and are stored, listed, watched and read back; deeper
//! bodies (30,000 and 100,000 levels, JSON and YAML, creates and patches) get Go's decoder
//! error; and the server (every cluster of the process) keeps serving throughout.

use std::time::Duration;

use ocm_testkit::FakeHub;

const MW: &str = "/apis/work.open-cluster-management.io/v1/namespaces/cluster1/manifestworks";
const CM: &str = "/api/v1/namespaces/default/configmaps";

fn nest(depth: usize) -> String {
    format!("{}\"x\"{}", "{\"a\":".repeat(depth), "}".repeat(depth))
}

/// A ManifestWork whose one manifest nests `depth` levels under `extra` (the work itself adds
/// five levels above it).
fn work(name: &str, depth: usize) -> String {
    format!(
        r#"{{"apiVersion":"work.open-cluster-management.io/v1","kind":"ManifestWork","metadata":{{"name":"{name}"}},"spec":{{"workload":{{"manifests":[{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"default"}},"extra":{}}}]}}}}}}"#,
        nest(depth)
    )
}

/// A tiny HTTP/1.1 client over a TCP socket: what a client in any language sends.
mod reqwest_like {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    pub struct Client {
        pub addr: std::net::SocketAddr,
    }

    impl Client {
        pub async fn send(
            &self,
            method: &str,
            path: &str,
            content_type: &str,
            body: String,
        ) -> (u16, String) {
            let mut stream = tokio::net::TcpStream::connect(self.addr).await.unwrap();
            let head = format!(
                "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await.unwrap();
            stream.write_all(body.as_bytes()).await.unwrap();
            let mut response = Vec::new();
            stream.read_to_end(&mut response).await.unwrap();
            let text = String::from_utf8_lossy(&response).into_owned();
            let status = text
                .split(' ')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let body = text
                .split("\r\n\r\n")
                .nth(1)
                .unwrap_or_default()
                .to_string();
            (status, body)
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_nest_as_kube_apiserver_takes_them_and_never_crash_the_server() {
    let hub = FakeHub::new(1).unwrap();
    let server = hub.hub().serve_loopback().await.unwrap();
    let client = reqwest_like::Client {
        addr: server.addr(),
    };

    // The deepest work the API server takes is stored, listed and read back.
    let (status, _) = client
        .send("POST", MW, "application/json", work("deepest", 9_995))
        .await;
    assert_eq!(status, 201);
    let (status, list) = client.send("GET", MW, "", String::new()).await;
    assert_eq!(status, 200);
    assert_eq!(ocm_api::k8s::json::nesting_depth(list.as_bytes()), 10_002);
    let (status, one) = client
        .send("GET", &format!("{MW}/deepest"), "", String::new())
        .await;
    assert_eq!(status, 200);
    assert!(one.contains("\"name\":\"deepest\""));

    // One level more, and far more, is Go's decoder error; the server keeps answering.
    for depth in [9_996, 30_000, 100_000] {
        let (status, answer) = client
            .send("POST", MW, "application/json", work("over", depth))
            .await;
        assert_eq!(status, 400, "{depth}: {}", &answer[..answer.len().min(200)]);
        assert!(
            answer.contains("json parse error: invalid character '{' exceeded max depth"),
            "{depth}: {}",
            &answer[..answer.len().min(300)]
        );
    }
    for depth in [30_000, 100_000] {
        // A ConfigMap label nested that deep.
        let body = format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"deep","labels":{}}}}}"#,
            nest(depth)
        );
        let (status, _) = client.send("POST", CM, "application/json", body).await;
        assert_eq!(status, 400, "{depth}");
        // A merge patch and a JSON patch of the deep work, nested that deep.
        let (status, _) = client
            .send(
                "PATCH",
                &format!("{MW}/deepest"),
                "application/merge-patch+json",
                format!(r#"{{"metadata":{{"labels":{}}}}}"#, nest(depth)),
            )
            .await;
        assert_eq!(status, 400, "merge patch {depth}");
        let (status, _) = client
            .send(
                "PATCH",
                &format!("{MW}/deepest"),
                "application/json-patch+json",
                format!(
                    r#"[{{"op":"add","path":"/metadata/annotations","value":{}}}]"#,
                    nest(depth)
                ),
            )
            .await;
        assert_eq!(status, 400, "json patch {depth}");
        // YAML, in flow style.
        let yaml = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: yaml-deep}}\ndata: {}{}\n",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let (status, _) = client.send("POST", CM, "application/yaml", yaml).await;
        assert_eq!(status, 400, "yaml {depth}");
    }

    // A shallow write to the deep work (its status) goes through, and a watch from the
    // beginning sends it whole.
    let (status, _) = client
        .send(
            "PATCH",
            &format!("{MW}/deepest"),
            "application/merge-patch+json",
            r#"{"metadata":{"labels":{"checked":"yes"}}}"#.into(),
        )
        .await;
    assert_eq!(status, 200);
    let (status, events) = client
        .send(
            "GET",
            &format!("{MW}?watch=1&resourceVersion=0&timeoutSeconds=1"),
            "",
            String::new(),
        )
        .await;
    assert_eq!(status, 200);
    assert!(events.contains("\"checked\":\"yes\""));

    // Deleting it drops a deep object without a deep stack.
    let (status, _) = client
        .send("DELETE", &format!("{MW}/deepest"), "", String::new())
        .await;
    assert_eq!(status, 200);
    let (status, _) = tokio::time::timeout(
        Duration::from_secs(10),
        client.send("GET", "/version", "", String::new()),
    )
    .await
    .expect("the server still answers");
    assert_eq!(status, 200);
}
