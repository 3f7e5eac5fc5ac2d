//! MCP over Streamable HTTP, measured on one server: `prompts/get` of an
//! example prompt against `POST …/render` of the same prompt with the
//! same context (interleaved, one request at a time), then the time from
//! a label move to `notifications/prompts/list_changed` reaching each of
//! 100 sessions. See BENCHMARKS.md.
//!
//! ```sh
//! cargo run --release -p promptreg-server --example mcp-latency [REQUESTS [SESSIONS [MOVES]]]
//! ```
//!
//! The server runs in this process on a runtime of its own (two worker
//! threads) over a fresh SQLite store holding the web-agent example
//! (released to `production`) and the one-prompt bench pack; the clients
//! (reqwest) run on another.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use promptreg_server::Config;
use promptreg_store::{Actor, Label, PackFiles, Permission};
use serde_json::{Value, json};
use support::{Bench, Moves, Seen, measure_moves, ms, quantile, summary};
use tokio::sync::mpsc;

const NARRATOR: &str = "webagent-narrator.system";

fn main() {
    let mut args = std::env::args().skip(1);
    let mut next = |default: usize| {
        args.next()
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let (requests, sessions, moves) = (next(2_000), next(100), next(20));
    let bench = Bench::serving(Config::default(), |store| async move {
        support::publish(&store, 2).await;
        let files =
            PackFiles::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/web-agent"))
                .expect("the web-agent example");
        let actor = Actor::new("bench", [Permission::Write]);
        store.push(&files, &actor, "v1").await.expect("the push");
        let production = Label::new("production").expect("a label");
        store
            .release("web-agent", &Label::latest(), &production, None, &actor, "")
            .await
            .expect("the release");
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("the clients' runtime");
    runtime.block_on(async {
        println!("load before: {}", support::load());
        get_against_render(&bench, requests).await;
        list_changed(&bench, sessions, moves).await;
        println!("load after: {}", support::load());
    });
}

/// An MCP session on the bench server, spoken as JSON-RPC over POSTs.
struct Session {
    url: String,
    id: String,
}

impl Session {
    async fn open(bench: &Bench, query: &str) -> Session {
        let url = format!("{}/mcp{query}", bench.base);
        let response = post(
            bench,
            &url,
            None,
            json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "bench", "version": "0" } },
            }),
        )
        .await;
        let id = response.headers()["mcp-session-id"]
            .to_str()
            .expect("a session id")
            .to_owned();
        response.bytes().await.expect("the initialize answer");
        let session = Session { url, id };
        let done = post(
            bench,
            &session.url,
            Some(&session.id),
            json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        )
        .await;
        assert_eq!(done.status(), 202);
        session
    }
}

async fn post(bench: &Bench, url: &str, session: Option<&str>, body: Value) -> reqwest::Response {
    let mut request = bench
        .client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    let response = request.send().await.expect("the request");
    assert!(
        response.status().is_success(),
        "{url}: {}",
        response.status()
    );
    response
}

async fn get_against_render(bench: &Bench, requests: usize) {
    let session = Session::open(bench, "?pack=web-agent").await;
    let render_url = format!(
        "{}/v1/packs/web-agent/prompts/{NARRATOR}/render",
        bench.base
    );
    let get = json!({ "jsonrpc": "2.0", "id": 1, "method": "prompts/get",
        "params": { "name": NARRATOR, "arguments": { "brand": "Acme" } } });
    let render = json!({ "label": "production", "context": { "brand": "Acme" } });
    let ping = json!({ "jsonrpc": "2.0", "id": 2, "method": "ping" });
    let (mut gets, mut renders, mut pings) = (Vec::new(), Vec::new(), Vec::new());
    for n in 0..requests + 100 {
        let start = Instant::now();
        post(bench, &session.url, Some(&session.id), ping.clone())
            .await
            .bytes()
            .await
            .expect("the answer");
        let pinged = start.elapsed();
        let start = Instant::now();
        let body = post(bench, &session.url, Some(&session.id), get.clone())
            .await
            .text()
            .await
            .expect("the answer");
        let got = start.elapsed();
        assert!(body.contains("\"messages\""), "{body}");
        let start = Instant::now();
        let body = post(bench, &render_url, None, render.clone())
            .await
            .text()
            .await
            .expect("the answer");
        let rendered = start.elapsed();
        assert!(body.contains("\"messages\""), "{body}");
        // The first hundred of each warm connections and caches.
        if n >= 100 {
            gets.push(got);
            renders.push(rendered);
            pings.push(pinged);
        }
    }
    println!("{requests} requests of each, interleaved, one at a time");
    println!("{}", summary("MCP prompts/get", &mut gets));
    println!("{}", summary("POST …/render (baseline)", &mut renders));
    println!("{}", summary("MCP ping (the transport alone)", &mut pings));
    println!(
        "prompts/get / render: p50 {:.2}x, p99 {:.2}x",
        ms(quantile(&gets, 0.50)) / ms(quantile(&renders, 0.50)),
        ms(quantile(&gets, 0.99)) / ms(quantile(&renders, 0.99)),
    );
}

async fn list_changed(bench: &Bench, sessions: usize, moves: usize) {
    let (heard, mut inbox) = mpsc::unbounded_channel::<Seen>();
    for n in 0..sessions {
        let session = Session::open(bench, &format!("?pack={}", support::PACK)).await;
        let stream = bench
            .client
            .get(&session.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session.id)
            .send()
            .await
            .expect("the session's stream");
        assert_eq!(stream.status(), 200);
        tokio::spawn(listen(n, stream, heard.clone()));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let Moves {
        mut each,
        mut last,
        mut requests,
    } = measure_moves(bench, sessions, moves, &mut inbox).await;
    println!("{sessions} MCP sessions, {moves} label moves through the API");
    println!("{}", summary("list_changed at each session", &mut each));
    println!(
        "{}",
        summary("list_changed at the last session of a move", &mut last)
    );
    println!(
        "{}",
        summary("baseline: the move request's round trip", &mut requests)
    );
}

async fn listen(session: usize, mut stream: reqwest::Response, heard: mpsc::UnboundedSender<Seen>) {
    while let Ok(Some(chunk)) = stream.chunk().await {
        let at = Instant::now();
        if String::from_utf8_lossy(&chunk).contains("notifications/prompts/list_changed")
            && heard.send((session, at)).is_err()
        {
            return;
        }
    }
}
