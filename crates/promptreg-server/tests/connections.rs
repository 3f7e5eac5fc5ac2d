//! Connections that send nothing, send slowly, stay idle or come in
//! too great a number: each is closed or refused in bounded time, and
//! the server keeps answering everyone else.

mod common;

use std::time::Duration;

use common::{TestServer, config, content_length, json, published};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The longest any test here waits for the server to close a connection:
/// a guard against hanging, far above the timeouts configured.
const GUARD: Duration = Duration::from_secs(20);

/// Reads until the server closes the connection; returns what it sent.
async fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let read = tokio::time::timeout(GUARD, stream.read(&mut buf))
            .await
            .expect("the server closes the connection");
        match read {
            Ok(0) | Err(_) => return received,
            Ok(n) => received.extend_from_slice(&buf[..n]),
        }
    }
}

/// Sends `GET path` on a kept-alive connection and reads one response.
async fn get(stream: &mut TcpStream, host: &str, path: &str) -> String {
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(GUARD, stream.read(&mut buf))
            .await
            .expect("a response")
            .unwrap();
        assert!(n > 0, "closed before a whole response");
        received.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&received);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = content_length(head).expect("a content-length");
            if body.len() >= length {
                return text.into_owned();
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_connections_that_send_nothing_are_closed_and_health_checks_still_answer() {
    let db = common::sqlite();
    let mut short = config();
    short.header_timeout = Duration::from_millis(500);
    let server = TestServer::start(published(&db).await, short).await;
    let mut silent = Vec::new();
    for _ in 0..300 {
        silent.push(TcpStream::connect(server.addr).await.unwrap());
    }
    // While they hold their sockets, everyone else is served.
    json(server.get("/healthz").await, 200).await;
    json(server.get("/v1/packs/demo/prompts/greeting").await, 200).await;
    // Each is closed by the server without an answer.
    for stream in &mut silent {
        let received = read_until_closed(stream).await;
        assert!(
            received.is_empty(),
            "{}",
            String::from_utf8_lossy(&received)
        );
    }
    let metrics = server.metrics().await;
    assert!(
        metrics.contains("promptreg_connections_timed_out_total{reason=\"header\"} 300"),
        "{metrics}"
    );
    // Only the connection asking is left.
    server.wait_for_metric("promptreg_connections_open 1").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_sending_its_head_a_line_at_a_time_is_closed_at_the_header_timeout() {
    let db = common::sqlite();
    let mut short = config();
    short.header_timeout = Duration::from_millis(500);
    let server = TestServer::start(published(&db).await, short).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\n")
        .await
        .unwrap();
    // Each line comes well within the timeout; the whole head never would:
    // 100 lines take ten times the timeout.
    let mut sent = 0;
    for n in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let line = format!("x-slow-{n}: y\r\n");
        if stream.write_all(line.as_bytes()).await.is_err() {
            break;
        }
        sent += 1;
    }
    let received = read_until_closed(&mut stream).await;
    assert!(
        received.is_empty(),
        "{}",
        String::from_utf8_lossy(&received)
    );
    assert!(sent < 100, "the server waited for the whole head");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_alive_connection_is_closed_once_idle_and_kept_while_used() {
    let db = common::sqlite();
    let mut short = config();
    short.idle_timeout = Duration::from_millis(600);
    let server = TestServer::start(published(&db).await, short).await;
    let host = server.addr.to_string();
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    // Used every 100 ms for ten times the idle timeout, it stays open...
    for _ in 0..60 {
        let response = get(&mut stream, &host, "/healthz").await;
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // ...and once left alone, it is closed.
    assert!(read_until_closed(&mut stream).await.is_empty());
    let metrics = server.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("promptreg_connections_timed_out_total{reason=\"idle\"} 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_idle_timeout_runs_from_the_end_of_the_last_request_whatever_the_header_timeout() {
    // A request's start and end wake nobody; the connection's timer must
    // still close it at the idle timeout after the request, not at the
    // header timeout its head began (far later here) nor any later.
    let db = common::sqlite();
    let mut timeouts = config();
    timeouts.idle_timeout = Duration::from_millis(300);
    timeouts.header_timeout = Duration::from_secs(60);
    let server = TestServer::start(published(&db).await, timeouts).await;
    let host = server.addr.to_string();
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let response = get(&mut stream, &host, "/healthz").await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    // `read_until_closed` gives up after GUARD (20 s), well before the
    // header timeout's 60 s.
    assert!(read_until_closed(&mut stream).await.is_empty());
    let metrics = server.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("promptreg_connections_timed_out_total{reason=\"idle\"} 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beyond_the_connection_cap_new_connections_get_503_and_established_ones_keep_working() {
    let db = common::sqlite();
    let mut capped = config();
    capped.max_connections = 20;
    let server = TestServer::start(published(&db).await, capped).await;
    let host = server.addr.to_string();
    let mut established = TcpStream::connect(server.addr).await.unwrap();
    assert!(
        get(&mut established, &host, "/healthz")
            .await
            .starts_with("HTTP/1.1 200")
    );
    let mut idle = Vec::new();
    for _ in 0..19 {
        idle.push(TcpStream::connect(server.addr).await.unwrap());
    }
    // The 21st is told to come back, and closed.
    let mut over = TcpStream::connect(server.addr).await.unwrap();
    let answer = String::from_utf8(read_until_closed(&mut over).await).unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("retry-after: 1"), "{answer}");
    let body = answer.split_once("\r\n\r\n").unwrap().1;
    let problem: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(problem["code"], "too-many-connections");
    // An established client is served as before.
    assert!(
        get(&mut established, &host, "/healthz")
            .await
            .starts_with("HTTP/1.1 200")
    );
    // Once connections close, new ones are accepted again.
    drop(idle);
    let mut accepted = false;
    for _ in 0..200 {
        let mut next = TcpStream::connect(server.addr).await.unwrap();
        let request = format!("GET /healthz HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        next.write_all(request.as_bytes()).await.unwrap();
        let answer = read_until_closed(&mut next).await;
        if answer.starts_with(b"HTTP/1.1 200") {
            accepted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        accepted,
        "no connection accepted after the idle ones closed"
    );
    let metrics = server.get("/metrics").await.text().await.unwrap();
    assert!(
        !metrics.contains("promptreg_connections_refused_total 0"),
        "{metrics}"
    );
}
