//! A large release on the event stream: a pack of 3,000 prompts released
//! through the API to a new label, with 10 clients on `GET /v1/events`;
//! the time from just before the release request to each client holding
//! the whole `released` event, and how many clients were dropped (a
//! `reconnect` event). See BENCHMARKS.md.
//!
//! ```sh
//! cargo run --release -p promptreg-server --example release-fanout [PROMPTS [CLIENTS [RELEASES]]]
//! ```
//!
//! The server runs in this process on a runtime of its own (two worker
//! threads) over a fresh SQLite store, with the default stream buffer;
//! the clients (reqwest streams) run on another.

mod support;

use std::time::{Duration, Instant};

use promptreg_store::{Actor, PackFiles, Permission, Store};
use support::{Bench, ms, summary};
use tokio::sync::mpsc;

const PACK: &str = "big";

/// What a client saw: which client, and when it held a release (or was
/// told to reconnect: `None`).
type Seen = (usize, Option<Instant>);

fn main() {
    let mut args = std::env::args().skip(1);
    let mut number = |default: usize, what: &str| {
        args.next().map_or(default, |a| {
            a.parse().unwrap_or_else(|_| panic!("{what}: a number"))
        })
    };
    let prompts = number(3000, "PROMPTS");
    let clients = number(10, "CLIENTS");
    let releases = number(5, "RELEASES");
    let bench = Bench::serving(
        promptreg_server::Config::default(),
        move |store| async move { fill(&store, prompts).await },
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("the clients' runtime");
    runtime.block_on(run(&bench, prompts, clients, releases));
}

/// A pack of `prompts` prompts, each with an English and a Japanese file.
async fn fill(store: &Store, prompts: usize) {
    let ids: Vec<String> = (0..prompts).map(|i| format!("\"p{i:04}\"")).collect();
    let mut files = PackFiles::default();
    files.insert(
        "promptreg.toml",
        format!(
            "name = \"{PACK}\"\nkeys = [{}]\n[user]\nprompts_dir = \".{PACK}/prompts\"\n",
            ids.join(", ")
        ),
    );
    for i in 0..prompts {
        files.insert(
            format!("defaults/p{i:04}.md"),
            format!("You are assistant {i}. Answer in one paragraph.\n"),
        );
        files.insert(
            format!("defaults/p{i:04}.ja.md"),
            format!("あなたはアシスタント{i}です。\n"),
        );
    }
    let actor = Actor::new("bench", [Permission::Write]);
    store.push(&files, &actor, "v1").await.expect("the push");
}

async fn run(bench: &Bench, prompts: usize, clients: usize, releases: usize) {
    println!("load before: {}", support::load());
    let (seen, mut inbox) = mpsc::unbounded_channel::<Seen>();
    for client in 0..clients {
        let response = bench
            .client
            .get(format!("{}/v1/events", bench.base))
            .send()
            .await
            .expect("the event stream");
        assert_eq!(response.status(), 200, "the event stream");
        tokio::spawn(listen(client, response, seen.clone()));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;

    let (mut delivery, mut requests, mut dropped) = (Vec::new(), Vec::new(), 0);
    for n in 0..releases {
        let start = Instant::now();
        release(bench, &format!("release-{n}")).await;
        requests.push(start.elapsed());
        for _ in 0..clients {
            let (_, at) = tokio::time::timeout(Duration::from_secs(60), inbox.recv())
                .await
                .expect("every client sees the release within 60 s")
                .expect("the clients are running");
            match at {
                Some(at) => delivery.push(at - start),
                None => dropped += 1,
            }
        }
    }
    println!(
        "{clients} SSE clients, {releases} releases of {} entries ({prompts} prompts and the manifest) through the API",
        prompts + 1
    );
    println!("{}", summary("delivery to each client", &mut delivery));
    println!(
        "{}",
        summary("baseline: the release request's round trip", &mut requests)
    );
    println!(
        "max delivery / p50 release request: {:.2}x",
        ms(delivery[delivery.len() - 1]) / ms(requests[requests.len() / 2])
    );
    println!("clients dropped (reconnect events): {dropped}");
    println!("load after: {}", support::load());
}

/// Releases `latest` to the new label `to`: every entry moves.
async fn release(bench: &Bench, to: &str) {
    let response = bench
        .client
        .post(format!("{}/v1/packs/{PACK}/releases", bench.base))
        .json(&serde_json::json!({ "from": "latest", "to": to }))
        .send()
        .await
        .expect("the release request");
    let status = response.status();
    assert!(status.is_success(), "release to {to}: {status}");
}

/// Reads one stream; reports each `released` event the moment its last
/// byte arrives, and a `reconnect` (after which the stream ends).
async fn listen(client: usize, mut response: reqwest::Response, seen: mpsc::UnboundedSender<Seen>) {
    let mut buffer = String::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let at = Instant::now();
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let kind = block
                .lines()
                .find_map(|l| l.strip_prefix("event:").map(str::trim));
            let report = match kind {
                Some("released") => Some(at),
                Some("reconnect") => None,
                _ => continue,
            };
            if seen.send((client, report)).is_err() || report.is_none() {
                return;
            }
        }
    }
}
