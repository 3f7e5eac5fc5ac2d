//! Failures in a fleet of followers, measured. See BENCHMARKS.md.
//!
//! 1. **A reconnect storm.** FOLLOWERS (5,000) follow one server over
//!    SQLite. The server is killed (SIGKILL), the label moves in the store
//!    while it is down, and the server starts again on its address: the
//!    time until each follower has put the moved bundle in force,
//!    the peak request rate the server sees meanwhile (its metrics, read
//!    every 100 ms), its 5xx answers by status besides the documented
//!    overload answers, whether it answered `/healthz` within a second
//!    throughout, and whether any follower's render failed (each renders
//!    every 100 ms, the whole run).
//! 2. **Three servers on one PostgreSQL** (with `PROMPTREG_BENCH_DATABASE_URL`,
//!    a server this example may create a database on), the followers
//!    reaching them through two load balancers (processes of this
//!    example) as one URL each: MOVES label moves, each through the next
//!    server, and the time until each follower has the new bundle in
//!    force; then one server is killed and the label moved through
//!    another.
//!
//! Each follower process prints the wall-clock time at which each of its
//! followers put a bundle from a server in force; all processes run on one
//! machine and read one clock.
//!
//! ```sh
//! cargo run --release -p promptreg-server --example fleet-failover [FOLLOWERS [PROCESSES [MOVES]]]
//! PROMPTREG_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres cargo run --release -p promptreg-server --example fleet-failover
//! ```
//!
//! Servers, balancers and followers are processes of this binary, so that
//! each stays within its file descriptor limit.

mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use promptreg_store::{Actor, Label, Permission, Store};
use support::fleet::{self, Followers, Served};
use support::{LABEL, PACK, PROMPT, ms, summary};

/// The longest the followers may take to be on a new bundle before the
/// run gives up.
const GIVE_UP: Duration = Duration::from_secs(180);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => fleet::serve(&args[1], &args[2]),
        Some("follow") => fleet::follow(&args[1..]),
        Some("balance") => balance(&args[1..]),
        _ => drive(&args),
    }
}

fn drive(args: &[String]) {
    let number = |i: usize, default: usize| {
        args.get(i)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let (followers, processes, moves) = (number(0, 5_000), number(1, 4), number(2, 10));
    println!("load before: {}", support::load());
    storm(followers, processes);
    match std::env::var("PROMPTREG_BENCH_DATABASE_URL") {
        Ok(url) => failover(&url, followers, processes, moves),
        Err(_) => println!("three servers: skipped (PROMPTREG_BENCH_DATABASE_URL is not set)"),
    }
    println!("load after: {}", support::load());
}

fn storm(followers: usize, processes: usize) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let database = dir.path().join("storm.db").to_string_lossy().into_owned();
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let store = runtime.block_on(async {
        let store = Store::open(&database).await.expect("the store");
        support::publish(&store, 2).await;
        store
    });
    let mut server = Served::start(&database, "127.0.0.1:0");
    let started = Instant::now();
    let fleet = Followers::spawn(followers, processes, &[server.base.clone()]);
    let _ = fleet.updates(followers, GIVE_UP);
    println!(
        "storm: {followers} followers in {processes} processes on the server's bundle after {:.1} s",
        started.elapsed().as_secs_f64()
    );

    server.kill();
    fleet.forget();
    let actor = Actor::new("bench", [Permission::Write]);
    let production = Label::new(LABEL).expect("a label");
    runtime
        .block_on(store.move_label(PACK, PROMPT, &production, 2, Some(1), &actor, "while down"))
        .expect("the move while the server is down");
    // Down long enough for every follower to notice and back off.
    std::thread::sleep(Duration::from_secs(3));
    let (restarting, clock) = (fleet::wall_clock(), Instant::now());
    let server_addr = server.addr.to_string();
    let mut server = Served::start(&database, &server_addr);
    let listening = clock.elapsed();
    let sampler = Sampler::start(&server.base);
    let mut resumed = since(restarting, fleet.updates(followers, GIVE_UP).0);
    let samples = sampler.stop();
    println!(
        "storm: the server listened {:.0} ms after its restart began; from then to each follower's bundle of the move made while it was down: {}",
        ms(listening),
        summary("", &mut resumed).trim_start_matches(": ")
    );
    samples.print("storm");
    let (renders, failed) = fleet.stop();
    println!("storm: {renders} renders on the followers during the run, {failed} failed");
    server.kill();
}

fn failover(url: &str, followers: usize, processes: usize, moves: usize) {
    let database = fleet::fresh_postgres(url, "failover_bench");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let store = Store::open(&database).await.expect("the store");
        support::publish(&store, moves as u64 + 2).await;
    });
    let mut servers: Vec<Served> = (0..3)
        .map(|_| Served::start(&database, "127.0.0.1:0"))
        .collect();
    let backends: Vec<String> = servers.iter().map(|s| s.addr.to_string()).collect();
    let mut balancers: Vec<Balancer> = (0..2).map(|_| Balancer::start(&backends)).collect();
    let urls: Vec<String> = balancers.iter().map(|b| b.base.clone()).collect();
    let started = Instant::now();
    let fleet = Followers::spawn(followers, processes, &urls);
    let _ = fleet.updates(followers, GIVE_UP);
    println!(
        "three servers: {followers} followers through 2 balancers on the bundle after {:.1} s; streams per server: {:?}",
        started.elapsed().as_secs_f64(),
        runtime.block_on(streams_per_server(&servers)),
    );
    let client = reqwest::Client::new();
    let (mut delivery, mut last, mut events) = (Vec::new(), Vec::new(), Vec::new());
    for (n, version) in (2..=moves as u64 + 1).enumerate() {
        let through = &servers[n % servers.len()].base;
        fleet.forget();
        let start = fleet::wall_clock();
        runtime.block_on(support::move_label(&client, through, version));
        let (updated, moved) = fleet.updates(followers, GIVE_UP);
        let times = since(start, updated);
        last.push(*times.iter().max().expect("followers"));
        delivery.extend(times);
        events.extend(since(start, moved));
    }
    println!(
        "three servers: a move through each server in turn, {}",
        summary("the event on each follower's stream", &mut events)
    );
    println!(
        "three servers: a move through each server in turn, {}",
        summary("the new bundle in force on each follower", &mut delivery)
    );
    println!(
        "three servers: {}",
        summary("to the last follower of a move", &mut last)
    );

    let mut killed = servers.remove(1);
    let killed_addr = killed.addr.to_string();
    killed.kill();
    for balancer in &mut balancers {
        balancer.fail(&killed_addr);
    }
    fleet.forget();
    let start = fleet::wall_clock();
    runtime.block_on(support::move_label(
        &client,
        &servers[0].base,
        moves as u64 + 2,
    ));
    let mut after = since(start, fleet.updates(followers, GIVE_UP).0);
    println!(
        "three servers: one killed, the label moved right after: {}; streams per server left: {:?}",
        summary("to each follower", &mut after),
        runtime.block_on(streams_per_server(&servers)),
    );
    let (renders, failed) = fleet.stop();
    println!("three servers: {renders} renders on the followers during the run, {failed} failed");
    drop(balancers);
    for server in &mut servers {
        server.kill();
    }
}

/// Each time as the duration since `start` (wall-clock nanoseconds).
fn since(start: u128, times: Vec<u128>) -> Vec<Duration> {
    times
        .into_iter()
        .map(|at| Duration::from_nanos(at.saturating_sub(start) as u64))
        .collect()
}

/// The event streams each server holds, from its metrics.
async fn streams_per_server(servers: &[Served]) -> Vec<u64> {
    let client = reqwest::Client::new();
    let mut counts = Vec::new();
    for server in servers {
        let text = client
            .get(format!("{}/metrics", server.base))
            .send()
            .await
            .expect("the metrics")
            .text()
            .await
            .expect("their text");
        counts.push(metric(&text, "promptreg_sse_clients").values().sum::<u64>());
    }
    counts
}

/// The values of a metric's series, by their labels.
fn metric(text: &str, name: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix(name)?;
            let (labels, value) = rest.rsplit_once(' ')?;
            if !(labels.is_empty() || labels.starts_with('{')) {
                return None;
            }
            Some((labels.to_owned(), value.trim().parse::<f64>().ok()? as u64))
        })
        .collect()
}

/// What the restarted server's metrics and `/healthz` said, every 100 ms.
struct Sampler {
    samples: Arc<Mutex<Samples>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

#[derive(Default)]
struct Samples {
    /// The largest number of requests answered in one 100 ms window.
    peak: u64,
    /// Requests answered in all, by status.
    statuses: BTreeMap<String, u64>,
    /// Requests and streams refused past a limit (503 `overloaded`,
    /// `too-many-streams`).
    overloaded: u64,
    /// `/healthz` not answered 200 within a second.
    health_failures: u64,
    health_checks: u64,
}

impl Sampler {
    fn start(base: &str) -> Sampler {
        let samples = Arc::new(Mutex::new(Samples::default()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (base, into, stopping) = (base.to_owned(), Arc::clone(&samples), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("the sampler's runtime");
            let client = reqwest::Client::builder()
                .timeout(Duration::from_secs(1))
                .build()
                .expect("a client");
            let mut previous = 0;
            while !stopping.load(std::sync::atomic::Ordering::Relaxed) {
                let tick = Instant::now();
                let health =
                    runtime.block_on(async { client.get(format!("{base}/healthz")).send().await });
                let metrics = runtime.block_on(async {
                    client
                        .get(format!("{base}/metrics"))
                        .send()
                        .await
                        .ok()?
                        .text()
                        .await
                        .ok()
                });
                let mut samples = into.lock().expect("the samples");
                samples.health_checks += 1;
                if !health.is_ok_and(|r| r.status() == 200) {
                    samples.health_failures += 1;
                }
                if let Some(text) = metrics {
                    let mut statuses = BTreeMap::new();
                    for (labels, n) in metric(&text, "promptreg_http_requests_total") {
                        let status = labels
                            .split("status=\"")
                            .nth(1)
                            .and_then(|s| s.split('"').next())
                            .unwrap_or("?")
                            .to_owned();
                        *statuses.entry(status).or_default() += n;
                    }
                    // Requests refused as overloaded are among the 503s;
                    // connections refused are not requests answered.
                    let sum = |name: &str| metric(&text, name).values().sum::<u64>();
                    let overloaded = sum("promptreg_overloaded_total");
                    let total =
                        statuses.values().sum::<u64>() + sum("promptreg_connections_refused_total");
                    samples.peak = samples.peak.max(total.saturating_sub(previous));
                    previous = total;
                    samples.statuses = statuses;
                    samples.overloaded = overloaded;
                }
                drop(samples);
                std::thread::sleep(Duration::from_millis(100).saturating_sub(tick.elapsed()));
            }
        });
        Sampler {
            samples,
            stop,
            thread,
        }
    }

    fn stop(self) -> Samples {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = self.thread.join();
        Arc::try_unwrap(self.samples)
            .ok()
            .expect("the sampler ended")
            .into_inner()
            .expect("the samples")
    }
}

impl Samples {
    fn print(&self, what: &str) {
        let errors: u64 = self
            .statuses
            .iter()
            .filter(|(status, _)| status.starts_with('5'))
            .map(|(_, n)| n)
            .sum();
        println!(
            "{what}: peak {} requests in 100 ms ({} per second); answered by status {:?}; 503 as overloaded {}; other 5xx {}; /healthz {} of {} checks not answered within 1 s",
            self.peak,
            self.peak * 10,
            self.statuses,
            self.overloaded,
            errors.saturating_sub(self.overloaded),
            self.health_failures,
            self.health_checks
        );
    }
}

/// A load balancer process of this binary.
struct Balancer {
    child: Child,
    input: ChildStdin,
    base: String,
}

impl Balancer {
    fn start(backends: &[String]) -> Balancer {
        let args: Vec<&str> = std::iter::once("balance")
            .chain(backends.iter().map(String::as_str))
            .collect();
        let mut child = support::spawn_self(&args, "a balancer process");
        let base = support::first_line(&mut child);
        Balancer {
            input: child.stdin.take().expect("its input"),
            child,
            base,
        }
    }

    /// Takes `backend` out of service, cutting its connections.
    fn fail(&mut self, backend: &str) {
        writeln!(self.input, "{backend}").expect("the balancer");
        self.input.flush().expect("the balancer");
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server in service and the connections relayed to it.
type Backend = (SocketAddr, Vec<tokio::task::AbortHandle>);

/// `balance BACKEND...`: a TCP load balancer on a free port, printing its
/// address: each connection goes to the next backend in service, in turn.
/// Each line of standard input names a backend to take out of service,
/// cutting its connections, as its crash would.
fn balance(backends: &[String]) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("the balancer's runtime");
    let backends: Arc<Mutex<Vec<Backend>>> = Arc::new(Mutex::new(
        backends
            .iter()
            .map(|b| (b.parse().expect("an address"), Vec::new()))
            .collect(),
    ));
    let routing = Arc::clone(&backends);
    runtime.spawn(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        println!("http://{}", listener.local_addr().expect("its address"));
        let mut turn = 0usize;
        while let Ok((mut inbound, _)) = listener.accept().await {
            let backend = {
                let backends = routing.lock().expect("the backends");
                turn += 1;
                match backends.len() {
                    0 => continue,
                    n => backends[turn % n].0,
                }
            };
            let relays = Arc::clone(&routing);
            let relay = tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(backend).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
            let mut backends = relays.lock().expect("the backends");
            match backends.iter_mut().find(|(addr, _)| *addr == backend) {
                Some((_, relays)) => {
                    relays.retain(|r| !r.is_finished());
                    relays.push(relay.abort_handle());
                }
                None => relay.abort(),
            }
        }
    });
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let failed: SocketAddr = line.trim().parse().expect("an address");
        let mut backends = backends.lock().expect("the backends");
        backends.retain(|(addr, relays)| {
            let out = *addr == failed;
            if out {
                relays.iter().for_each(tokio::task::AbortHandle::abort);
            }
            !out
        });
    }
}
