//! A fleet: 1,000 followers in several processes report to one server
//! over SQLite, then to two servers sharing a PostgreSQL database (half
//! the followers on each). Measured: the time from a label move until the
//! fleet view shows every follower on the new revision (p50, p99), the
//! server's memory per reporting instance, and a follower's render p99
//! while it reports against the same without reports. See BENCHMARKS.md.
//!
//! ```sh
//! cargo run --release -p promptreg-server --example fleet-convergence [FOLLOWERS [PROCESSES [MOVES]]]
//! # two servers on PostgreSQL too: a server this example may create databases on
//! PROMPTREG_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres cargo run --release ...
//! ```
//!
//! The servers and the followers are processes of this same binary
//! (`serve DB ADDR` and `follow N SERVER...`); this process moves the label
//! through the first server's API and reads the fleet view from the store.

mod support;

use promptreg::prelude::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

use promptreg::PromptRegistry;
use promptreg::remote::Remote;
use promptreg_store::Store;
use support::fleet::{self, FleetView, Served};
use support::{Bench, LABEL, PACK, PROMPT, ms, quantile, summary};

/// The longest a move may take to converge before the run gives up.
const GIVE_UP: Duration = Duration::from_secs(60);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => fleet::serve(&args[1], &args[2]),
        Some("follow") => fleet::follow(&args[1..]),
        _ => drive(&args),
    }
}

fn drive(args: &[String]) {
    let number = |i: usize, default: usize| {
        args.get(i)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let (followers, processes, moves) = (number(0, 1000), number(1, 4), number(2, 20));
    println!("load before: {}", support::load());
    let dir = tempfile::tempdir().expect("a temporary folder");
    let sqlite = dir.path().join("fleet.db").to_string_lossy().into_owned();
    run(
        "one server, SQLite",
        &sqlite,
        1,
        followers,
        processes,
        moves,
    );
    match std::env::var("PROMPTREG_BENCH_DATABASE_URL") {
        Ok(url) => {
            let database = fleet::fresh_postgres(&url, "fleet_bench");
            run(
                "two servers, one PostgreSQL",
                &database,
                2,
                followers,
                processes,
                moves,
            );
        }
        Err(_) => println!("two servers: skipped (PROMPTREG_BENCH_DATABASE_URL is not set)"),
    }
    render_cost();
    println!("load after: {}", support::load());
}

/// One run: `servers` over `database`, `followers` in `processes`.
fn run(
    what: &str,
    database: &str,
    servers: usize,
    followers: usize,
    processes: usize,
    moves: usize,
) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let store = runtime.block_on(async {
        let store = Store::open(database).await.expect("the store");
        support::publish(&store, moves as u64 + 1).await;
        store
    });
    let view = FleetView {
        runtime: &runtime,
        store: &store,
    };
    let mut served: Vec<Served> = (0..servers)
        .map(|_| Served::start(database, "127.0.0.1:0"))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let idle: Vec<u64> = served.iter().map(Served::rss_kib).collect();
    let addrs: Vec<String> = served.iter().map(|s| s.base.clone()).collect();
    let started = Instant::now();
    let children = fleet::Followers::spawn(followers, processes, &addrs);
    if let Err(seen) = view.wait_for_all(followers, view.newest(), GIVE_UP) {
        panic!("{what}: the followers did not all report: {seen:?}");
    }
    println!(
        "{what}: {followers} followers in {processes} processes reporting after {:.1} s",
        started.elapsed().as_secs_f64()
    );
    std::thread::sleep(Duration::from_secs(1));
    let busy: Vec<u64> = served.iter().map(Served::rss_kib).collect();
    let client = reqwest::Client::new();
    let mut times = Vec::with_capacity(moves);
    for version in 2..=moves as u64 + 1 {
        runtime.block_on(support::move_label(&client, &addrs[0], version));
        let moved = Instant::now();
        let revision = view.newest();
        match view.wait_for_all(followers, revision, GIVE_UP) {
            Ok(_) => times.push(moved.elapsed()),
            Err((all, on)) => panic!("{what}: revision {revision} did not converge: {on} of {all}"),
        }
    }
    println!(
        "{what}: {}",
        summary("move -> every follower on the new revision", &mut times)
    );
    for (n, (idle, busy)) in idle.iter().zip(&busy).enumerate() {
        let instances = followers / servers;
        let per = (*busy as f64 - *idle as f64) / instances as f64;
        println!(
            "{what}: server {n}: RSS {idle} KiB idle, {busy} KiB with {instances} instances reporting: {per:.1} KiB per instance"
        );
    }
    let (renders, failed) = children.stop();
    println!("{what}: {renders} renders on the followers, {failed} failed");
    for server in &mut served {
        server.kill();
    }
}

/// A follower's render p99 while it reports every 100 ms (the shortest
/// interval) against one that does not report, in blocks that alternate
/// so that both see the same machine.
fn render_cost() {
    let bench = Bench::start(1);
    let registries: Vec<(PromptRegistry, _)> = [true, false]
        .into_iter()
        .map(|reports| {
            let registry = PromptRegistry::new();
            let mut remote = Remote::new(bench.base.as_str())
                .pack(PACK)
                .label(LABEL)
                .without_disk_cache();
            remote = match reports {
                true => remote.report_interval(Duration::from_millis(100)),
                false => remote.without_reports(),
            };
            let follower = registry.follow(remote).expect("a follower");
            assert!(follower.wait_for_first_sync(Duration::from_secs(10)));
            (registry, follower)
        })
        .collect();
    const BLOCK: usize = 200_000;
    let mut samples = [Vec::new(), Vec::new()];
    for _ in 0..5 {
        for (which, (registry, _)) in registries.iter().enumerate() {
            for _ in 0..BLOCK {
                let start = Instant::now();
                black_box(registry.render_plain(PROMPT).expect("a render"));
                samples[which].push(start.elapsed());
            }
        }
    }
    let p99 = |s: &mut Vec<Duration>| {
        s.sort();
        quantile(s, 0.99)
    };
    let (with, without) = (p99(&mut samples[0]), p99(&mut samples[1]));
    println!(
        "render p99 while reporting every 100 ms: {:.2} µs; without reports: {:.2} µs; ratio {:.3}",
        ms(with) * 1e3,
        ms(without) * 1e3,
        with.as_secs_f64() / without.as_secs_f64()
    );
}
