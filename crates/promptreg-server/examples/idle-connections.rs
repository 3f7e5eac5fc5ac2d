//! Health checks and cached reads while thousands of idle connections are
//! held open: the latency of `/healthz` and of a cached `GET` of a prompt,
//! first with the server otherwise idle, then with CONNECTIONS (10,000)
//! connections open that send nothing. See BENCHMARKS.md.
//!
//! ```sh
//! cargo run --release -p promptreg-server --example idle-connections [CONNECTIONS [REQUESTS]]
//! ```
//!
//! The idle connections are held by a second process (this example,
//! started again with `--hold`), so that each process stays within its
//! file descriptor limit; the server's timeouts are raised so that it
//! keeps them for the whole run.

mod support;

use std::io::Write;
use std::time::{Duration, Instant};

use promptreg_server::Config;
use support::{Bench, PACK, PROMPT, summary};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--hold") {
        let addr = args.get(1).expect("--hold ADDR N");
        let count = args
            .get(2)
            .and_then(|n| n.parse().ok())
            .expect("--hold ADDR N");
        hold(addr, count);
        return;
    }
    let connections: usize = args
        .first()
        .map_or(10_000, |a| a.parse().expect("CONNECTIONS: a number"));
    let requests: usize = args
        .get(1)
        .map_or(2_000, |a| a.parse().expect("REQUESTS: a number"));
    let config = Config {
        max_connections: connections + 1_000,
        header_timeout: Duration::from_secs(3_600),
        idle_timeout: Duration::from_secs(3_600),
        ..Config::default()
    };
    let bench = Bench::start_with(1, config);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("the clients' runtime");
    println!("load before: {}", support::load());
    let (mut health_idle, mut read_idle) = runtime.block_on(measure(&bench, requests));

    let addr = bench.base.trim_start_matches("http://").to_owned();
    let mut holder = support::spawn_self(
        &["--hold", &addr, &connections.to_string()],
        "the process holding the connections",
    );
    println!("{}", support::first_line(&mut holder));

    let (mut health_held, mut read_held) = runtime.block_on(measure(&bench, requests));
    println!("{}", summary("/healthz, idle server", &mut health_idle));
    println!(
        "{}",
        summary(
            &format!("/healthz, {connections} idle connections"),
            &mut health_held
        )
    );
    println!("{}", summary("cached GET, idle server", &mut read_idle));
    println!(
        "{}",
        summary(
            &format!("cached GET, {connections} idle connections"),
            &mut read_held
        )
    );
    for (what, idle, held) in [
        ("/healthz", &health_idle, &health_held),
        ("cached GET", &read_idle, &read_held),
    ] {
        let ratio = |q: f64| {
            support::quantile(held, q).as_secs_f64() / support::quantile(idle, q).as_secs_f64()
        };
        println!(
            "{what}: held/idle p50 {:.2}x, p99 {:.2}x",
            ratio(0.5),
            ratio(0.99)
        );
    }
    println!("load after: {}", support::load());
    // Closing its input ends the holder.
    drop(holder.stdin.take());
    let _ = holder.wait();
}

/// `requests` sequential requests of each kind on one kept-alive client.
async fn measure(bench: &Bench, requests: usize) -> (Vec<Duration>, Vec<Duration>) {
    let prompt = format!("{}/v1/packs/{PACK}/prompts/{PROMPT}", bench.base);
    let health = format!("{}/healthz", bench.base);
    // Warm: the connection and the cache.
    for url in [&health, &prompt] {
        bench
            .client
            .get(url)
            .send()
            .await
            .expect("a warm-up request");
    }
    let mut samples = (Vec::with_capacity(requests), Vec::with_capacity(requests));
    for _ in 0..requests {
        for (url, into) in [(&health, &mut samples.0), (&prompt, &mut samples.1)] {
            let started = Instant::now();
            let response = bench.client.get(url).send().await.expect("a request");
            assert!(
                response.status().is_success(),
                "{url}: {}",
                response.status()
            );
            response.bytes().await.expect("its body");
            into.push(started.elapsed());
        }
    }
    samples
}

/// Opens `count` connections to `addr` that send nothing, says so, and
/// holds them until its standard input closes.
fn hold(addr: &str, count: usize) {
    let mut held = Vec::with_capacity(count);
    for n in 0..count {
        match std::net::TcpStream::connect(addr) {
            Ok(stream) => held.push(stream),
            Err(e) => panic!("connection {n}: {e} (raise `ulimit -n`)"),
        }
    }
    let mut out = std::io::stdout();
    let _ = writeln!(out, "holding {} idle connections", held.len());
    let _ = out.flush();
    let _ = std::io::stdin().read_line(&mut String::new());
}
