//! A server on loopback over each test database (SQLite, and PostgreSQL
//! when `PROMPTREG_TEST_DATABASE_URL` is set), and an HTTP client.
#![allow(dead_code, unused_imports)]

use std::net::SocketAddr;
use std::time::Duration;

use promptreg_server::{Config, Server};
pub use promptreg_store::test_support::{
    MANIFEST, TestDb, admin, big_pack, databases, demo, postgres, postgres_only, sqlite, writer,
};
use promptreg_store::{Label, Store};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

promptreg_store::postgres_half!();

/// The configuration tests use: any free port, keys checked every time.
pub fn config() -> Config {
    Config {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        key_cache: Duration::ZERO,
        keep_alive: Duration::from_millis(200),
        ..Config::default()
    }
}

/// A running server.
pub struct TestServer {
    pub base: String,
    pub addr: SocketAddr,
    pub store: Store,
    pub client: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<Result<(), promptreg_server::ServeError>>>,
}

impl TestServer {
    pub async fn start(store: Store, config: Config) -> TestServer {
        let server = Server::bind(store.clone(), config).await.unwrap();
        let addr = server.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let handle = tokio::spawn(server.run(async move {
            let _ = stopped.await;
        }));
        TestServer {
            base: format!("http://{addr}"),
            addr,
            store,
            client: reqwest::Client::new(),
            stop: Some(stop),
            handle: Some(handle),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client.get(self.url(path)).send().await.unwrap()
    }

    pub async fn post(&self, path: &str, body: serde_json::Value) -> reqwest::Response {
        self.client
            .post(self.url(path))
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    pub async fn put(&self, path: &str, body: serde_json::Value) -> reqwest::Response {
        self.client
            .put(self.url(path))
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    /// The server's metrics, in Prometheus' text format.
    pub async fn metrics(&self) -> String {
        self.get("/metrics").await.text().await.unwrap()
    }

    /// Waits until the metrics hold `line` (a connection's end is counted
    /// just after the client sees it); panics after 10 s with the metrics.
    pub async fn wait_for_metric(&self, line: &str) {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let metrics = self.metrics().await;
            if metrics.lines().any(|l| l == line) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no `{line}` in the metrics within 10 s:\n{metrics}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// How many clients follow `/v1/events` now, from `/metrics`.
    pub async fn events_clients(&self) -> usize {
        self.metrics()
            .await
            .lines()
            .find_map(|l| l.strip_prefix("promptreg_sse_clients "))
            .and_then(|n| n.trim().parse().ok())
            .expect("the promptreg_sse_clients metric")
    }

    /// Stops it gracefully and waits until it has.
    pub async fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(handle) = self.handle.take() {
            handle.await.unwrap().unwrap();
        }
    }
}

/// A store holding the demo pack, with `production` on version 1 of
/// everything.
pub async fn published(db: &TestDb) -> Store {
    let store = db.open().await;
    store.push(&demo(), &writer(), "first").await.unwrap();
    let production = Label::new("production").unwrap();
    for id in ["@pack", "greeting", "farewell"] {
        store
            .move_label("demo", id, &production, 1, None, &writer(), "ship")
            .await
            .unwrap();
    }
    store
}

/// The `Content-Length` of a raw HTTP response's head.
pub fn content_length(head: &str) -> Option<usize> {
    head.lines().find_map(|l| {
        l.to_ascii_lowercase()
            .strip_prefix("content-length: ")
            .and_then(|v| v.trim().parse().ok())
    })
}

/// The JSON of a response, after checking its status.
pub async fn json(response: reqwest::Response, status: u16) -> serde_json::Value {
    let got = response.status().as_u16();
    let text = response.text().await.unwrap();
    assert_eq!(got, status, "{text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// One server-sent event as a client sees it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sse {
    pub id: Option<u64>,
    pub event: String,
    pub data: serde_json::Value,
}

/// A client of `/v1/events`, reading at its own pace.
pub struct SseClient {
    response: reqwest::Response,
    buffer: String,
    /// Keep-alive comments seen.
    pub comments: usize,
}

impl SseClient {
    pub async fn connect(server: &TestServer, last_event_id: Option<u64>) -> SseClient {
        SseClient::open(server.client.get(server.url("/v1/events")), last_event_id).await
    }

    /// A client holding the API key `secret`.
    pub async fn connect_as(server: &TestServer, secret: &str) -> SseClient {
        let request = server.client.get(server.url("/v1/events"));
        SseClient::open(request.bearer_auth(secret), None).await
    }

    async fn open(mut request: reqwest::RequestBuilder, last_event_id: Option<u64>) -> SseClient {
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id.to_string());
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        SseClient {
            response,
            buffer: String::new(),
            comments: 0,
        }
    }

    /// The next event, or `None` when the stream ends; panics after 30 s.
    pub async fn next(&mut self) -> Option<Sse> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = Sse::default();
                let mut data = String::new();
                let mut comment = false;
                for line in block.lines() {
                    match line.split_once(':') {
                        Some(("", _)) => comment = true,
                        Some(("id", v)) => event.id = v.trim().parse().ok(),
                        Some(("event", v)) => event.event = v.trim().to_owned(),
                        Some(("data", v)) => data.push_str(v.strip_prefix(' ').unwrap_or(v)),
                        _ => {}
                    }
                }
                if comment && data.is_empty() {
                    self.comments += 1;
                    continue;
                }
                event.data = serde_json::from_str(&data).unwrap_or(serde_json::Value::String(data));
                return Some(event);
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.response.chunk())
                .await
                .expect("an event within 30 s")
                .ok()??;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// The next `n` events.
    pub async fn take(&mut self, n: usize) -> Vec<Sse> {
        let mut events = Vec::with_capacity(n);
        while events.len() < n {
            events.push(self.next().await.expect("the stream ended early"));
        }
        events
    }
}

/// How the follower tests follow `production` of `demo` on a test server:
/// quick polls and reconnects, the disk cache in `cache`.
pub fn follow_demo(base: &str, cache: &std::path::Path) -> promptreg::remote::Remote {
    promptreg::remote::Remote::new(base)
        .pack("demo")
        .label("production")
        .cache_dir(cache)
        .poll_interval(Duration::from_millis(200))
        .reconnect(Duration::from_millis(50), Duration::from_millis(300))
        .timeout(Duration::from_secs(5))
}

/// The first `Some` of `attempt`, tried every 20 ms for at most 10 s.
pub async fn eventually<T, F: std::future::Future<Output = Option<T>>>(
    mut attempt: impl FnMut() -> F,
) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(done) = attempt().await {
            return done;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not done within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A write whose body stops half way: the server is answering it until
/// the connection closes, holding one of its places for requests.
pub async fn stalled_write(server: &TestServer) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /v1/packs/demo/prompts/greeting/versions HTTP/1.1\r\nHost: {}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"files\"",
        server.addr
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// A stalled write ([`stalled_write`]) holding the only place of a server
/// started with `max_requests = 1`, and a request refused for it. A probe
/// may hold the place at the moment the server reads the write, which is
/// then refused instead: the write is made again.
pub async fn hold_the_only_place(
    server: &TestServer,
) -> (tokio::net::TcpStream, reqwest::Response) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let stalled = stalled_write(server).await;
        for _ in 0..25 {
            let probe = server.get("/v1/packs").await;
            if probe.status() == 503 {
                return (stalled, probe);
            }
            // Refused: its answer (or its end) is there to read.
            if stalled.try_read(&mut [0u8; 1]).is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no write held the only place within 10 s"
        );
    }
}
