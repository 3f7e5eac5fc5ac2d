//! Ten thousand event streams on one server: its memory per connected
//! stream, the CPU it spends while they idle (keep-alive comments every
//! 15 s), and the time from a label move until every client has the
//! event (p50, p99). See BENCHMARKS.md.
//!
//! ```sh
//! cargo run --release -p promptreg-server --example stream-fleet [STREAMS [PROCESSES [MOVES [IDLE_SECONDS]]]]
//! ```
//!
//! The server runs in this process (two worker threads, a fresh SQLite
//! store); the streams are opened by PROCESSES (4) copies of this example
//! started with `--streams`, so that each process stays within its file
//! descriptor limit (`ulimit -n`: the server needs one per stream, and so
//! does each client). A client reports the wall-clock time at which each
//! `label_moved` event reached it; all processes run on one machine and
//! read one clock.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::Child;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use promptreg_server::Config;
use support::{Bench, LABEL, ms, quantile, summary};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--streams") {
        let addr = args.get(1).expect("--streams ADDR N");
        let count = args
            .get(2)
            .and_then(|n| n.parse().ok())
            .expect("--streams ADDR N");
        return follow(addr, count);
    }
    let number = |at: usize, default: u64| -> u64 {
        args.get(at)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let streams = number(0, 10_000) as usize;
    let processes = number(1, 4).max(1) as usize;
    let moves = number(2, 20) as usize;
    let idle = Duration::from_secs(number(3, 30));
    let config = Config {
        max_connections: streams + 1_000,
        max_streams: streams + 500,
        ..Config::default()
    };
    let bench = Bench::start_with(2, config);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("the mover's runtime");
    println!("load before: {}", support::load());
    // The first request builds the label's view: not a stream's cost.
    runtime.block_on(bench.move_label(2));
    std::thread::sleep(Duration::from_millis(500));
    let rss_before = rss_kib();

    let addr = bench.base.trim_start_matches("http://").to_owned();
    let (seen, mut inbox) = mpsc::unbounded_channel::<u128>();
    let started = Instant::now();
    let children: Vec<Child> = (0..processes)
        .map(|n| {
            let share = streams / processes + usize::from(n < streams % processes);
            spawn_clients(&addr, share, seen.clone())
        })
        .collect();
    runtime.block_on(async {
        for _ in 0..processes {
            assert_eq!(inbox.recv().await, Some(0), "a client process is ready");
        }
    });
    println!(
        "{streams} streams open in {:.1} s ({processes} client processes)",
        started.elapsed().as_secs_f64()
    );
    std::thread::sleep(Duration::from_secs(2));
    let rss_after = rss_kib();
    println!(
        "server process RSS: {rss_before} KiB before, {rss_after} KiB with the streams: {:.1} KiB per stream",
        (rss_after.saturating_sub(rss_before)) as f64 / streams as f64
    );

    let cpu_before = cpu_ticks();
    std::thread::sleep(idle);
    let cpu = cpu_ticks().saturating_sub(cpu_before);
    // `/proc` counts in ticks of 10 ms (USER_HZ, 100 on Linux).
    println!(
        "idle for {} s: the server process used {:.2} s of CPU ({:.2} % of one core)",
        idle.as_secs(),
        cpu as f64 / 100.0,
        cpu as f64 / idle.as_secs_f64()
    );

    let mut delivery = Vec::with_capacity(streams * moves);
    let mut last = Vec::with_capacity(moves);
    let mut requests = Vec::with_capacity(moves);
    for n in 0..moves {
        let version = if n % 2 == 0 { 1 } else { 2 };
        let start = since_epoch(SystemTime::now());
        let request = runtime.block_on(bench.move_label(version));
        requests.push(request);
        let times: Vec<Duration> = runtime.block_on(async {
            let mut times = Vec::with_capacity(streams);
            while times.len() < streams {
                let at = tokio::time::timeout(Duration::from_secs(30), inbox.recv())
                    .await
                    .expect("every stream sees the move within 30 s")
                    .expect("the client processes are running");
                times.push(Duration::from_nanos(at.saturating_sub(start) as u64));
            }
            times
        });
        last.push(*times.iter().max().expect("streams"));
        delivery.extend(times);
        std::thread::sleep(Duration::from_millis(200));
    }
    println!("{streams} streams, {moves} moves of `{LABEL}` through the API");
    println!("{}", summary("delivery to each stream", &mut delivery));
    println!(
        "{}",
        summary("delivery to the last stream of a move", &mut last)
    );
    println!(
        "{}",
        summary("baseline: the move request's round trip", &mut requests)
    );
    println!(
        "p99 delivery: {:.1} ms (goal: under 1,000 ms)",
        ms(quantile(&delivery, 0.99))
    );
    println!("load after: {}", support::load());
    for mut child in children {
        drop(child.stdin.take());
        let _ = child.wait();
    }
}

/// Starts a process opening `count` streams; forwards each time one of
/// them saw a move (nanoseconds since the epoch), and 0 once all are open.
fn spawn_clients(addr: &str, count: usize, seen: mpsc::UnboundedSender<u128>) -> Child {
    let mut child =
        support::spawn_self(&["--streams", addr, &count.to_string()], "a client process");
    let out = BufReader::new(child.stdout.take().expect("its output"));
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            let at = match line.strip_prefix("seen ") {
                Some(at) => at.parse().expect("a time"),
                None if line == "ready" => 0,
                None => continue,
            };
            if seen.send(at).is_err() {
                return;
            }
        }
    });
    child
}

/// The `--streams` process: opens `count` event streams to `addr`, prints
/// `ready`, then `seen NANOS` for each `label_moved` event each stream
/// receives, until its standard input closes.
fn follow(addr: &str, count: usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("the clients' runtime");
    runtime.block_on(async {
        let (seen, mut times) = mpsc::unbounded_channel::<u128>();
        for n in 0..count {
            let mut stream = tokio::net::TcpStream::connect(addr)
                .await
                .unwrap_or_else(|e| panic!("stream {n}: {e} (raise `ulimit -n`)"));
            let request = format!(
                "GET /v1/events HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
            );
            stream
                .write_all(request.as_bytes())
                .await
                .expect("the request");
            let mut head = [0u8; 12];
            stream.read_exact(&mut head).await.expect("the answer");
            assert_eq!(&head, b"HTTP/1.1 200", "stream {n}");
            tokio::spawn(read_events(stream, seen.clone()));
        }
        let mut out = std::io::stdout().lock();
        writeln!(out, "ready").expect("stdout");
        out.flush().expect("stdout");
        drop(out);
        // Ends when standard input closes.
        let (close, mut closed) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let _ = std::io::stdin().read_line(&mut String::new());
            let _ = close.send(());
        });
        loop {
            tokio::select! {
                _ = &mut closed => return,
                Some(at) = times.recv() => {
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "seen {at}").expect("stdout");
                    let _ = out.flush();
                }
            }
        }
    });
}

/// Reads one stream; sends the time each `label_moved` event arrived.
async fn read_events(mut stream: tokio::net::TcpStream, seen: mpsc::UnboundedSender<u128>) {
    const MOVED: &[u8] = b"event: label_moved";
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n @ 1..) = stream.read(&mut chunk).await {
        let at = since_epoch(SystemTime::now());
        buffer.extend_from_slice(&chunk[..n]);
        while let Some(found) = buffer.windows(MOVED.len()).position(|w| w == MOVED) {
            buffer.drain(..found + MOVED.len());
            if seen.send(at).is_err() {
                return;
            }
        }
        // Keep what may be the start of the next event's name.
        let keep = buffer.len().min(MOVED.len());
        buffer.drain(..buffer.len() - keep);
    }
}

fn since_epoch(at: SystemTime) -> u128 {
    at.duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos()
}

/// This process's resident memory, in KiB (Linux).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// The CPU time this process used, user and system, in ticks (Linux).
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
    // utime and stime are fields 14 and 15, the 12th and 13th after it.
    let field = |n: usize| {
        fields
            .get(n)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}
