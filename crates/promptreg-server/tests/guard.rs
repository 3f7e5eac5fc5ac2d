//! What the server refuses before any handler: a host it does not answer
//! to (DNS rebinding), writes from another origin, a body declared too
//! large, a request past the limit of those being answered; and the
//! headers every response carries.

mod common;

use std::time::Duration;

use common::{TestServer, config, json, published};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const VERSIONS: &str = "/v1/packs/demo/prompts/greeting/versions";

fn new_version() -> serde_json::Value {
    json!({ "files": { "defaults/greeting.md": "Changed.\n" } })
}

async fn versions(server: &TestServer) -> usize {
    server.store.log("demo", "greeting").await.unwrap().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyless_loopback_server_answers_no_host_name_but_its_own() {
    let db = common::sqlite();
    let mut allowing = config();
    allowing.allowed_hosts = vec!["prompts.internal".to_owned()];
    let server = TestServer::start(published(&db).await, allowing).await;
    let with_host = |host: &str| {
        server
            .client
            .get(server.url("/v1/packs"))
            .header("host", host)
            .send()
    };
    // A page on evil.example, its name resolved to 127.0.0.1 (DNS rebinding).
    let refused = json(with_host("evil.example:7878").await.unwrap(), 421).await;
    assert_eq!(refused["code"], "host-not-allowed");
    let detail = refused["detail"].as_str().unwrap();
    assert!(detail.contains("--allowed-host evil.example"), "{detail}");
    let write = server
        .client
        .post(server.url(VERSIONS))
        .header("host", "evil.example")
        .json(&new_version())
        .send()
        .await
        .unwrap();
    json(write, 421).await;
    assert_eq!(versions(&server).await, 1, "nothing was written");
    // Its own address, localhost and the names allowed are answered.
    let port = server.addr.port();
    for host in [
        server.addr.to_string(),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
        format!("PROMPTS.internal:{port}"),
    ] {
        json(with_host(&host).await.unwrap(), 200).await;
    }
    // A name echoed in an error is bounded.
    let long = "a".repeat(5000);
    let refused = json(with_host(&long).await.unwrap(), 421).await;
    assert!(refused["detail"].as_str().unwrap().len() < 600);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_from_another_origin_are_refused_and_reads_and_same_origin_writes_are_not() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    let post = |headers: &[(&str, String)]| {
        let mut request = server
            .client
            .post(server.url(VERSIONS))
            .json(&new_version());
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        request.send()
    };
    for headers in [
        vec![("origin", "http://evil.example".to_owned())],
        vec![("origin", "null".to_owned())],
        vec![("sec-fetch-site", "cross-site".to_owned())],
        vec![("sec-fetch-site", "same-site".to_owned())],
    ] {
        let refused = json(post(&headers).await.unwrap(), 403).await;
        assert_eq!(refused["code"], "cross-origin-write", "{headers:?}");
    }
    assert_eq!(versions(&server).await, 1, "nothing was written");
    // A read from anywhere is answered: the browser keeps it from the page.
    let read = server
        .client
        .get(server.url("/v1/packs"))
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    json(read, 200).await;
    // The server's own page, and clients that are not browsers, write.
    let own = vec![
        ("origin", format!("http://{}", server.addr)),
        ("sec-fetch-site", "same-origin".to_owned()),
    ];
    json(post(&own).await.unwrap(), 201).await;
    let again = server
        .client
        .post(server.url(VERSIONS))
        .json(&json!({ "files": { "defaults/greeting.md": "Changed again.\n" } }))
        .send()
        .await
        .unwrap();
    json(again, 201).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_declared_larger_than_the_limit_is_refused_before_it_is_sent() {
    let db = common::sqlite();
    let mut small = config();
    small.body_limit = 1024;
    let server = TestServer::start(published(&db).await, small).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST {VERSIONS} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n",
        server.addr
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // No byte of the body is sent: the answer comes anyway (the request
    // time limit, 30 s, is far beyond this bound).
    let mut buf = vec![0u8; 8192];
    let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
        .await
        .expect("an answer without the body")
        .unwrap();
    let answer = String::from_utf8_lossy(&buf[..n]);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("body-too-large"), "{answer}");
    let metrics = server.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("promptreg_store_errors_total 0"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_response_carries_the_security_headers() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    for path in ["/", "/v1/packs", "/v1/nope", "/assets/playground.js"] {
        let response = server.get(path).await;
        let headers = response.headers();
        let policy = headers["content-security-policy"].to_str().unwrap();
        assert!(policy.contains("script-src 'self'"), "{path}: {policy}");
        assert!(!policy.contains("unsafe-inline"), "{path}: {policy}");
        assert!(
            policy.contains("frame-ancestors 'none'"),
            "{path}: {policy}"
        );
        assert_eq!(headers["x-frame-options"], "DENY", "{path}");
        assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(headers["referrer-policy"], "same-origin", "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_cookies_are_secure_behind_tls_only() {
    for behind_tls in [false, true] {
        let db = common::sqlite();
        let mut tls = config();
        tls.behind_tls = behind_tls;
        let server = TestServer::start(published(&db).await, tls).await;
        let page = server.get("/").await;
        let cookies: Vec<&str> = page
            .headers()
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect();
        assert!(!cookies.is_empty());
        for cookie in cookies {
            assert_eq!(cookie.ends_with("; Secure"), behind_tls, "{cookie}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_its_limit_of_requests_the_server_answers_overloaded_at_once_and_health_checks_still_pass()
 {
    let db = common::sqlite();
    let mut limited = config();
    limited.max_requests = 1;
    let server = TestServer::start(published(&db).await, limited).await;
    // A stalled write holds the only place once the server reads it.
    let (stalled, refused) = common::hold_the_only_place(&server).await;
    assert_eq!(refused.headers()["retry-after"], "1");
    let refused = json(refused, 503).await;
    assert_eq!(refused["code"], "overloaded", "{refused}");
    let detail = refused["detail"].as_str().unwrap();
    assert!(detail.contains("1 requests already"), "{detail}");
    // Health checks, fleet reports and the event stream are outside the
    // limit.
    json(server.get("/healthz").await, 200).await;
    let report = json!({
        "instance": "0123456789abcdef",
        "library": "promptreg-rust/test",
        "source": "server",
        "revision": null,
        "interval_ms": 2000,
    });
    let reported = server
        .post("/v1/packs/demo/labels/production/fleet", report)
        .await;
    assert!(reported.status().is_success(), "{}", reported.status());
    let stream = server.get("/v1/events").await;
    assert_eq!(stream.status(), 200);
    drop(stream);
    let metrics = server.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("promptreg_overloaded_total{limit=\"requests\"}"),
        "{metrics}"
    );
    // Once the stalled write's connection is gone, its place is free.
    drop(stalled);
    common::eventually(|| async { (server.get("/v1/packs").await.status() == 200).then_some(()) })
        .await;
}
