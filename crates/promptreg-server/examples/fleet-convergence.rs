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
//! (`serve DB` and `follow N SERVER...`); this process moves the label
//! through the first server's API and reads the fleet view from the store.

mod support;

use std::hint::black_box;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use promptreg::PromptRegistry;
use promptreg::remote::Remote;
use promptreg_server::{Config, Server};
use promptreg_store::{FleetQuery, Label, Store};
use support::{Bench, LABEL, PACK, PROMPT, ms, quantile, summary};

/// How often the driver reads the fleet view while waiting.
const POLL: Duration = Duration::from_millis(5);
/// The longest a move may take to converge before the run gives up.
const GIVE_UP: Duration = Duration::from_secs(60);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => serve(&args[1]),
        Some("follow") => follow(&args[1..]),
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
            let database = fresh_postgres(&url);
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
    let mut served: Vec<Served> = (0..servers).map(|_| Served::start(database)).collect();
    std::thread::sleep(Duration::from_millis(500));
    let idle: Vec<u64> = served.iter().map(Served::rss_kib).collect();
    let addrs: Vec<String> = served.iter().map(|s| s.base.clone()).collect();
    let started = Instant::now();
    let mut children: Vec<Child> = (0..processes)
        .map(|p| {
            let share = followers / processes + usize::from(p < followers % processes);
            Command::new(std::env::current_exe().expect("this binary"))
                .arg("follow")
                .arg(share.to_string())
                .args(&addrs)
                .stdout(Stdio::null())
                .spawn()
                .expect("a follower process")
        })
        .collect();
    let production = Label::new(LABEL).expect("a label");
    let reporting = |revision: u64| {
        runtime.block_on(async {
            let query = FleetQuery {
                limit: 1,
                ..FleetQuery::now()
            };
            let fleet = store
                .fleet(PACK, &production, &query)
                .await
                .expect("the view");
            (fleet.reporting, fleet.reporting_on(revision))
        })
    };
    let newest = || {
        runtime
            .block_on(store.newest_revision(PACK, &production))
            .expect("the revision")
            .expect("a revision")
            .0
    };
    let first = newest();
    while reporting(first) != (followers as u64, followers as u64) {
        assert!(
            started.elapsed() < GIVE_UP,
            "{what}: the followers did not all report: {:?}",
            reporting(first)
        );
        std::thread::sleep(Duration::from_millis(50));
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
        let revision = newest();
        loop {
            let (all, on) = reporting(revision);
            if all == followers as u64 && on == all {
                break;
            }
            assert!(
                moved.elapsed() < GIVE_UP,
                "{what}: revision {revision} did not converge: {on} of {all}"
            );
            std::thread::sleep(POLL);
        }
        times.push(moved.elapsed());
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
    for child in &mut children {
        let _ = child.kill();
        let _ = child.wait();
    }
    for server in &mut served {
        server.stop();
    }
}

/// A database of its own on the server `url` names.
fn fresh_postgres(url: &str) -> String {
    let name = format!("fleet_bench_{}", std::process::id());
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        use sqlx::Connection;
        let mut admin = sqlx::PgConnection::connect(url).await.expect("PostgreSQL");
        sqlx::raw_sql(&format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .await
            .expect("a database");
    });
    let (server, _) = url.rsplit_once('/').expect("a URL ending in /DATABASE");
    format!("{server}/{name}")
}

/// A server process of this binary.
struct Served {
    child: Child,
    base: String,
}

impl Served {
    fn start(database: &str) -> Served {
        let mut child = Command::new(std::env::current_exe().expect("this binary"))
            .args(["serve", database])
            .stdout(Stdio::piped())
            .spawn()
            .expect("a server process");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("its output"))
            .read_line(&mut line)
            .expect("its address");
        Served {
            child,
            base: line.trim().to_owned(),
        }
    }

    /// Its resident memory, from /proc (Linux).
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `serve DB`: a server over the store at DB on a free port; prints its
/// address, then serves until killed.
fn serve(database: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("the server's runtime");
    runtime.block_on(async {
        let store = Store::open(database).await.expect("the store");
        let config = Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            ..Config::default()
        };
        let server = Server::bind(store, config).await.expect("the server");
        println!("http://{}", server.local_addr());
        server.run(std::future::pending()).await.expect("serving");
    });
}

/// `follow N SERVER...`: N followers, spread over the servers, each with
/// no disk cache, reporting every 30 s (and on each change), until
/// killed.
fn follow(args: &[String]) {
    let count: usize = args[0].parse().expect("a number of followers");
    let servers = &args[1..];
    let keep: Vec<_> = (0..count)
        .map(|i| {
            let registry = PromptRegistry::new();
            let remote = Remote::new(servers[i % servers.len()].as_str())
                .pack(PACK)
                .label(LABEL)
                .without_disk_cache();
            let follower = registry.follow(remote).expect("a follower");
            (registry, follower)
        })
        .collect();
    loop {
        std::thread::sleep(Duration::from_secs(3600));
        black_box(&keep);
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
