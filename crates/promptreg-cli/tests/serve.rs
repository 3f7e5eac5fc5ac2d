//! `promptreg serve` as a process: it logs each request as JSON with its
//! request id, and SIGTERM stops it gracefully (exit 0). A `kill -9`
//! during a release leaves the release whole or absent.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use insta_cmd::get_cargo_bin;
use support::serve;

/// One HTTP/1.1 request, the whole response as text.
fn request(addr: &str, head: &str, body: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "{head} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

#[test]
fn the_log_has_no_colour_in_a_pipe_and_the_first_line_names_the_api_and_the_page() {
    let served = serve(&[]);
    assert!(!served.started.contains('\x1b'), "{:?}", served.started);
    let base = format!("http://{}", served.addr);
    assert!(
        served.started.contains(&format!("{base}/v1 ")),
        "{}",
        served.started
    );
    assert!(
        served.started.contains(&format!("the web page at {base}/")),
        "{}",
        served.started
    );
}

#[test]
fn the_server_logs_json_with_request_ids_and_stops_on_sigterm() {
    let mut served = serve(&["--log-format", "json"]);
    let response = request(&served.addr, "GET /healthz", "");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let id = response
        .lines()
        .find_map(|l| l.strip_prefix("x-request-id: "))
        .expect("a request id")
        .trim()
        .to_owned();
    let pid = served.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = served.child.wait().unwrap();
    assert!(status.success(), "SIGTERM is a clean stop: {status:?}");
    let mut log = String::new();
    served.stderr.read_to_string(&mut log).unwrap();
    let logged: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(
        logged
            .iter()
            .any(|l| l["span"]["request_id"] == id.as_str()),
        "the request's log names its id {id}:\n{log}"
    );
}

#[test]
fn a_kill_during_a_release_leaves_it_whole_or_absent() {
    for attempt in 0..5 {
        let mut served = serve(&[]);
        // Connect and send before the kill: a connection refused because the
        // kill came first would test nothing. The answer may never come.
        let addr = served.addr.clone();
        let mut stream = TcpStream::connect(&addr).unwrap();
        let body = r#"{"from":"latest","to":"production"}"#;
        write!(
            stream,
            "POST /v1/packs/goal-agent/releases HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(attempt * 3));
        served.child.kill().unwrap();
        served.child.wait().unwrap();
        drop(stream);
        let history = Command::new(get_cargo_bin("promptreg"))
            .current_dir(served.dir.path())
            .args(["store", "history", "--json"])
            .output()
            .unwrap();
        assert!(history.status.success(), "{history:?}");
        let moves: Vec<serde_json::Value> = serde_json::from_slice(&history.stdout).unwrap();
        let count = |label: &str| moves.iter().filter(|m| m["label"] == label).count();
        let (released, all) = (count("production"), count("latest"));
        assert!(
            released == 0 || released == all,
            "attempt {attempt}: {released} of {all} prompts released"
        );
        // And its revision with it: none, or one holding every move.
        let revisions = Command::new(get_cargo_bin("promptreg"))
            .current_dir(served.dir.path())
            .args(["store", "revisions", "production", "--json"])
            .output()
            .unwrap();
        if released == 0 {
            assert!(
                !revisions.status.success(),
                "attempt {attempt}: a revision without its moves"
            );
        } else {
            let listed: serde_json::Value = serde_json::from_slice(&revisions.stdout).unwrap();
            let listed = listed["revisions"].as_array().unwrap();
            assert_eq!(listed.len(), 1, "attempt {attempt}: {listed:?}");
            assert_eq!(listed[0]["entries"].as_object().unwrap().len(), all);
        }
    }
}
