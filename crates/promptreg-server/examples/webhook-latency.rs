//! Webhook delivery: a label moved through the API, and the time from
//! just before the move request to each subscription's receiver getting
//! the signed `label.moved` message (p50, p99), with 1 and with 100
//! subscriptions; then how many deliveries a second one server makes to
//! receivers that answer at once. See BENCHMARKS.md.
//!
//! ```sh
//! cargo run --release -p promptreg-server --example webhook-latency [MOVES [MESSAGES]]
//! ```
//!
//! The server runs in this process on a runtime of its own (two worker
//! threads) over a fresh SQLite store, its webhook worker with the
//! defaults (64 deliveries in flight, 4 per webhook); the receivers (one
//! axum server, a path per subscription) run on another runtime. The
//! move request's own round trip is printed beside the delivery times as
//! the baseline.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::post;
use promptreg_server::Config;
use promptreg_store::{Actor, Permission, Store, WebhookSpec};
use support::{Bench, LABEL, Moves, Seen, measure_moves, ms, publish, quantile, summary};
use tokio::sync::mpsc;

fn main() {
    let mut args = std::env::args().skip(1);
    let moves: usize = args
        .next()
        .map_or(20, |a| a.parse().expect("MOVES: a number"));
    let messages: usize = args
        .next()
        .map_or(2000, |a| a.parse().expect("MESSAGES: a number"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("the receivers' runtime");
    println!("load before: {}", support::load());
    for subscriptions in [1, 100] {
        let (url, inbox) = runtime.block_on(receivers());
        let bench = Bench::serving(config(), |store| async move {
            publish(&store, 2).await;
            for n in 0..subscriptions {
                subscribe(&store, &url, n, &["label.moved"]).await;
            }
        });
        runtime.block_on(latency(&bench, inbox, subscriptions, moves));
    }
    for webhooks in [1, 100] {
        let (url, inbox) = runtime.block_on(receivers());
        // Queued before the server starts: its worker finds them all due.
        let _bench = Bench::serving(config(), |store| async move {
            for n in 0..webhooks {
                subscribe(&store, &url, n, &[]).await;
            }
            for m in 0..messages {
                store
                    .queue_test_delivery(&format!("hook-{}", m % webhooks), &admin())
                    .await
                    .expect("a test message");
            }
        });
        runtime.block_on(throughput(inbox, webhooks, messages));
    }
    println!("load after: {}", support::load());
}

fn admin() -> Actor {
    Actor::new("bench", [Permission::Admin])
}

fn config() -> Config {
    Config {
        webhooks_allow_private: true,
        ..Config::default()
    }
}

/// Receivers on one port, `/hook/{n}` for subscription `n`: each request
/// is reported with its arrival time, then answered 204.
async fn receivers() -> (String, mpsc::UnboundedReceiver<Seen>) {
    let (seen, inbox) = mpsc::unbounded_channel::<Seen>();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr = listener.local_addr().expect("its address");
    let app = Router::new()
        .route(
            "/hook/{n}",
            post(
                |State(seen): State<Arc<mpsc::UnboundedSender<Seen>>>, Path(n): Path<usize>| async move {
                    let _ = seen.send((n, Instant::now()));
                    StatusCode::NO_CONTENT
                },
            ),
        )
        .with_state(Arc::new(seen));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/hook"), inbox)
}

async fn subscribe(store: &Store, receivers: &str, n: usize, events: &[&str]) {
    let spec = WebhookSpec {
        name: format!("hook-{n}"),
        url: format!("{receivers}/{n}"),
        events: events.iter().map(|e| e.to_string()).collect(),
        ..WebhookSpec::default()
    };
    store
        .create_webhook(&spec, &admin())
        .await
        .expect("a webhook");
}

async fn latency(
    bench: &Bench,
    mut inbox: mpsc::UnboundedReceiver<Seen>,
    subscriptions: usize,
    moves: usize,
) {
    let Moves {
        each: mut delivery,
        last: mut slowest,
        mut requests,
    } = measure_moves(bench, subscriptions, moves, &mut inbox).await;
    println!("{subscriptions} subscriptions, {moves} moves of `{LABEL}` through the API");
    println!("{}", summary("  delivery to each receiver", &mut delivery));
    println!(
        "{}",
        summary("  delivery to the last receiver of a move", &mut slowest)
    );
    println!(
        "{}",
        summary("  baseline: the move request's round trip", &mut requests)
    );
    println!(
        "  p50 delivery / p50 move request: {:.1}x",
        ms(quantile(&delivery, 0.50)) / ms(quantile(&requests, 0.50))
    );
}

/// Deliveries a second of `messages` test messages across `webhooks`,
/// from the first arrival to the last.
async fn throughput(mut inbox: mpsc::UnboundedReceiver<Seen>, webhooks: usize, messages: usize) {
    let mut arrivals = Vec::with_capacity(messages);
    while arrivals.len() < messages {
        let (_, at) = tokio::time::timeout(Duration::from_secs(60), inbox.recv())
            .await
            .expect("every message within 60 s")
            .expect("the receivers are running");
        arrivals.push(at);
    }
    let first = arrivals.iter().min().expect("messages");
    let last = arrivals.iter().max().expect("messages");
    let took = last.duration_since(*first);
    println!(
        "{messages} messages to {webhooks} webhooks answering at once: {:.0} deliveries/s ({:.2} s from the first to the last)",
        messages as f64 / took.as_secs_f64(),
        took.as_secs_f64()
    );
}
