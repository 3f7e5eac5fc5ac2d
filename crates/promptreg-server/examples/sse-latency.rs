//! Event delivery latency: 100 clients on `GET /v1/events`, a label moved
//! through the API, and the time from just before the move request to
//! each client receiving the `label_moved` event (p50, p99). See
//! BENCHMARKS.md.
//!
//! ```sh
//! cargo run --release -p promptreg-server --example sse-latency [CLIENTS [MOVES]]
//! ```
//!
//! The server runs in this process on a runtime of its own (two worker
//! threads) over a fresh SQLite store; the clients (reqwest streams) run
//! on another. The move request's own round trip is printed beside the
//! delivery times as the baseline.

mod support;

use std::time::{Duration, Instant};

use support::{Bench, LABEL, Moves, PROMPT, Seen, measure_moves, ms, quantile, summary};
use tokio::sync::mpsc;

fn main() {
    let mut args = std::env::args().skip(1);
    let clients: usize = args
        .next()
        .map_or(100, |a| a.parse().expect("CLIENTS: a number"));
    let moves: usize = args
        .next()
        .map_or(20, |a| a.parse().expect("MOVES: a number"));
    let bench = Bench::start(2);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("the clients' runtime");
    runtime.block_on(run(&bench, clients, moves));
}

async fn run(bench: &Bench, clients: usize, moves: usize) {
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
    // The streams subscribe when they answer: give the last ones time to
    // reach their first read.
    tokio::time::sleep(Duration::from_millis(200)).await;

    let Moves {
        each: mut delivery,
        last: mut slowest,
        mut requests,
    } = measure_moves(bench, clients, moves, &mut inbox).await;
    println!(
        "{clients} SSE clients, {moves} label moves of `{PROMPT}` at `{LABEL}` through the API"
    );
    println!("{}", summary("delivery to each client", &mut delivery));
    println!(
        "{}",
        summary("delivery to the last client of a move", &mut slowest)
    );
    println!(
        "{}",
        summary("baseline: the move request's round trip", &mut requests)
    );
    println!(
        "p99 delivery / p50 move request: {:.1}x",
        ms(quantile(&delivery, 0.99)) / ms(quantile(&requests, 0.50))
    );
    println!("load after: {}", support::load());
}

/// Reads one stream; reports each `label_moved` event of the label the
/// moment its last byte arrives.
async fn listen(client: usize, mut response: reqwest::Response, seen: mpsc::UnboundedSender<Seen>) {
    let mut buffer = String::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let at = Instant::now();
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let moved = block
                .lines()
                .any(|l| l.strip_prefix("event:").map(str::trim) == Some("label_moved"))
                && block.contains(&format!("\"label\":\"{LABEL}\""));
            if moved && seen.send((client, at)).is_err() {
                return;
            }
        }
    }
}
