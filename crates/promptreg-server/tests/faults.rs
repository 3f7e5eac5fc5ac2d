//! The database going away and coming back: requests fail with 503 and
//! recover by themselves, without a restart. PostgreSQL goes away behind a
//! proxy that is cut; a SQLite file goes away when another process holds
//! its write lock (reads never wait in WAL mode). A request past the time
//! limit is a 503. A client that stops reading a response is cut off after
//! the write timeout.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::{SseClient, TestServer, config, json, published, writer};
use promptreg_store::PackFiles;
use serde_json::json;
use sqlx::Connection;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::JoinHandle;

/// A TCP proxy to PostgreSQL that can be cut (every connection dropped,
/// no new one accepted) and restored on the same port.
struct Proxy {
    addr: SocketAddr,
    upstream: SocketAddr,
    task: Option<JoinHandle<()>>,
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut proxy = Proxy {
            addr,
            upstream,
            task: None,
        };
        proxy.serve(listener);
        proxy
    }

    fn serve(&mut self, listener: TcpListener) {
        let upstream = self.upstream;
        self.task = Some(tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                connections.spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        }));
    }

    /// Drops every connection and refuses new ones.
    async fn cut(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
    }

    async fn restore(&mut self) {
        let listener = TcpListener::bind(self.addr).await.unwrap();
        self.serve(listener);
    }
}

/// `url` with its host and port replaced by `addr`.
fn through(url: &str, addr: SocketAddr) -> (String, SocketAddr) {
    let start = url.find('@').unwrap() + 1;
    let end = start + url[start..].find('/').unwrap();
    let upstream: SocketAddr = url[start..end].parse().unwrap();
    (format!("{}{addr}{}", &url[..start], &url[end..]), upstream)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_going_away_gives_503_and_the_server_recovers_by_itself() {
    let Some(db) = common::postgres_only("server_away").await else {
        return;
    };
    published(&db).await;
    let (_, upstream) = through(&db.url, "127.0.0.1:1".parse().unwrap());
    let mut proxy = Proxy::start(upstream).await;
    let (url, _) = through(&db.url, proxy.addr);
    let store = promptreg_store::Store::open(&url).await.unwrap();
    let server = TestServer::start(store, config()).await;
    json(server.get("/readyz").await, 200).await;
    // Warm: reads come from memory.
    json(server.get("/v1/packs/demo/prompts/greeting").await, 200).await;

    proxy.cut().await;
    assert_unavailable(&server).await;

    proxy.restore().await;
    assert_recovered(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_store_locked_by_another_process_gives_503_and_the_server_recovers_by_itself() {
    let db = common::sqlite();
    published(&db).await;
    let server = TestServer::start(db.open().await, config()).await;
    json(server.get("/readyz").await, 200).await;
    json(server.get("/v1/packs/demo/prompts/greeting").await, 200).await;

    // Another process (SQLite locks across connections as across
    // processes) takes the write lock and keeps it beyond every wait.
    let mut other = sqlx::SqliteConnection::connect(&format!("sqlite:{}", db.url))
        .await
        .unwrap();
    let lock = other.begin_with("BEGIN IMMEDIATE").await.unwrap();
    let not_ready = assert_unavailable(&server).await;
    assert!(
        not_ready["detail"]
            .as_str()
            .is_some_and(|d| d.contains("locked")),
        "{not_ready}"
    );

    lock.rollback().await.unwrap();
    assert_recovered(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_past_the_time_limit_is_a_503_problem_and_is_counted() {
    let db = common::sqlite();
    published(&db).await;
    let mut quick = config();
    quick.request_timeout = Duration::from_millis(300);
    let server = TestServer::start(db.open().await, quick).await;
    let mut events = SseClient::connect(&server, None).await;
    let mut other = sqlx::SqliteConnection::connect(&format!("sqlite:{}", db.url))
        .await
        .unwrap();
    let lock = other.begin_with("BEGIN IMMEDIATE").await.unwrap();

    // The write waits for the lock far longer than the limit allows.
    let write = server
        .post(
            "/v1/packs/demo/prompts/farewell/versions",
            json!({ "files": { "defaults/farewell.md": "Bye.\n" } }),
        )
        .await;
    assert_eq!(write.headers()["content-type"], "application/problem+json");
    let problem = json(write, 503).await;
    assert_eq!(problem["code"], "timeout", "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("0.3 s"),
        "{problem}"
    );
    // Reads from memory answer at once.
    json(server.get("/v1/packs/demo/prompts/greeting").await, 200).await;
    lock.rollback().await.unwrap();

    // The event stream has no limit: open longer than it, it still carries
    // the next change.
    let write = server
        .post(
            "/v1/packs/demo/prompts/farewell/versions",
            json!({ "files": { "defaults/farewell.md": "So long.\n" } }),
        )
        .await;
    assert!(write.status().is_success(), "{}", write.status());
    let event = events.next().await.expect("the stream is still open");
    assert_eq!(event.event, "version_created", "{event:?}");

    let metrics = server.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains(
            r#"promptreg_http_requests_total{method="POST",route="/v1/packs/{pack}/prompts/{id}/versions",status="503"} 1"#
        ),
        "{metrics}"
    );
    assert!(
        metrics.contains("promptreg_store_errors_total 1"),
        "{metrics}"
    );
}

/// The store is away: `/readyz` says so, a write is refused with a 503
/// problem, and what the cache holds is still served. The body of
/// `/readyz`.
async fn assert_unavailable(server: &TestServer) -> serde_json::Value {
    let not_ready = json(server.get("/readyz").await, 503).await;
    assert_eq!(not_ready["status"], "unavailable");
    let write = server
        .post(
            "/v1/packs/demo/prompts/farewell/versions",
            json!({ "files": { "defaults/farewell.md": "Bye.\n" } }),
        )
        .await;
    assert_eq!(write.headers()["content-type"], "application/problem+json");
    assert_eq!(json(write, 503).await["code"], "store-unavailable");
    json(server.get("/v1/packs/demo/prompts/greeting").await, 200).await;
    not_ready
}

/// The store is back: ready again with no restart, a write succeeds, and
/// the metrics counted the failures.
async fn assert_recovered(server: &TestServer) {
    let mut ready = false;
    for _ in 0..100 {
        if server.get("/readyz").await.status() == 200 {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ready, "ready again once the database is back");
    let write = server
        .post(
            "/v1/packs/demo/prompts/farewell/versions",
            json!({ "files": { "defaults/farewell.md": "Bye.\n" } }),
        )
        .await;
    assert_eq!(json(write, 201).await["version"], 2);
    let metrics = server.get("/metrics").await.text().await.unwrap();
    assert!(
        !metrics.contains("promptreg_store_errors_total 0"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_a_large_response_is_cut_off_after_the_write_timeout() {
    let db = common::sqlite();
    let mut small = config();
    small.send_buffer = Some(4096);
    small.write_timeout = Duration::from_millis(300);
    let server = TestServer::start(published(&db).await, small).await;
    // A version far larger than every buffer between the server and a client.
    let mut files = PackFiles::default();
    files.insert("defaults/farewell.md", "Bye. ".repeat(400_000));
    server
        .store
        .push_prompt("demo", "farewell", &files, &writer(), "")
        .await
        .unwrap();

    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut client = socket.connect(server.addr).await.unwrap();
    let request = format!(
        "GET /v1/packs/demo/prompts/farewell?version=2 HTTP/1.1\r\nHost: {}\r\n\r\n",
        server.addr
    );
    client.write_all(request.as_bytes()).await.unwrap();
    // The client reads nothing for longer than the timeout...
    tokio::time::sleep(Duration::from_secs(2)).await;
    // ...and then finds the response cut short and the connection closed
    // (without the timeout it would get every byte, then wait on a
    // connection kept alive).
    let mut received = Vec::new();
    let mut buf = vec![0u8; 65536];
    loop {
        let read = tokio::time::timeout(Duration::from_secs(30), client.read(&mut buf))
            .await
            .expect("the server closes the connection");
        match read {
            Ok(0) | Err(_) => break,
            Ok(n) => received.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&received);
    assert!(
        text.starts_with("HTTP/1.1 200"),
        "{}",
        &text[..text.len().min(200)]
    );
    let length = common::content_length(&text).expect("a content-length");
    let body = text.split_once("\r\n\r\n").map_or(0, |(_, b)| b.len());
    assert!(body < length, "the whole body arrived: {body} bytes");

    // Other clients are served as before.
    json(server.get("/v1/packs/demo/prompts/greeting").await, 200).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_database_away_cached_reads_with_a_key_do_not_wait_for_it() {
    let Some(db) = common::postgres_only("server_away_keyed").await else {
        return;
    };
    let store = published(&db).await;
    let (_, secret) = store
        .create_key("app", None, promptreg_store::Scope::Read, &common::admin())
        .await
        .unwrap();
    let (_, upstream) = through(&db.url, "127.0.0.1:1".parse().unwrap());
    let mut proxy = Proxy::start(upstream).await;
    let (url, _) = through(&db.url, proxy.addr);
    let store = promptreg_store::Store::open(&url).await.unwrap();
    // Keys checked on every request: only the outage rule keeps them.
    let server = TestServer::start(store, config()).await;
    let read = |timeout: Option<Duration>| {
        let mut request = server
            .client
            .get(server.url("/v1/packs/demo/prompts/greeting"))
            .bearer_auth(&secret);
        if let Some(timeout) = timeout {
            request = request.timeout(timeout);
        }
        request.send()
    };
    json(read(None).await.unwrap(), 200).await;

    proxy.cut().await;
    // The first request finds the store away (and may wait for it once).
    json(read(None).await.unwrap(), 200).await;
    // Later ones do not wait: the store would make each wait its
    // connection timeout (5 s), far beyond this bound.
    for _ in 0..20 {
        let response = read(Some(Duration::from_secs(2)))
            .await
            .expect("a cached read answers without waiting for the store");
        json(response, 200).await;
    }
    // A key never checked is not trusted meanwhile, and says why at once.
    let unknown = server
        .client
        .get(server.url("/v1/packs/demo/prompts/greeting"))
        .bearer_auth("prk_never_seen")
        .timeout(Duration::from_secs(2))
        .send()
        .await
        .expect("an unknown key is answered without waiting for the store");
    assert_eq!(json(unknown, 503).await["code"], "store-unavailable");

    // Once the store is back, keys are checked by it again.
    proxy.restore().await;
    let mut checked = false;
    for _ in 0..100 {
        let response = server
            .client
            .get(server.url("/v1/packs"))
            .bearer_auth("prk_never_seen")
            .send()
            .await
            .unwrap();
        if response.status() == 401 {
            checked = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(checked, "keys are checked again once the store is back");
    json(read(None).await.unwrap(), 200).await;
}
