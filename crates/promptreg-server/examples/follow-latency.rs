//! Followers: 50 registries in this process follow `production` on one
//! server (the library's `remote` feature). Measured: the time from a
//! label move to the moment each follower renders the new text (p50,
//! p99 over 20 moves), and the registry's render latency during a burst
//! of 100 label moves against the same while idle. See BENCHMARKS.md.
//!
//! ```sh
//! cargo run --release -p promptreg-server --example follow-latency [FOLLOWERS [MOVES]]
//! ```
//!
//! The server runs in this process on a runtime of its own over a fresh
//! SQLite store. Each follower reports its updates through `on_change`,
//! which renders the prompt there and then: the time taken is the time
//! the new text became what `render` returns.

mod support;

use promptreg::prelude::*;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use promptreg::PromptRegistry;
use promptreg::remote::{Change, Follower, Remote};
use support::{Bench, LABEL, PACK, PROMPT, ms, quantile, summary, text};

/// How many label moves make the burst.
const BURST: u64 = 100;
/// How long renders are timed while nothing moves.
const IDLE: Duration = Duration::from_secs(1);

/// A follower rendered `text` at `at`.
struct Rendered {
    follower: usize,
    text: String,
    at: Instant,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let count: usize = args
        .next()
        .map_or(50, |a| a.parse().expect("FOLLOWERS: a number"));
    let moves: u64 = args
        .next()
        .map_or(20, |a| a.parse().expect("MOVES: a number"));
    // Version 1 is in force at start; the moves go to 2, 3, ... moves + 1.
    let bench = Bench::start(moves + 1);
    let api = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("the API client's runtime");
    let cache = tempfile::tempdir().expect("a temporary folder");
    println!("load before: {}", support::load());

    let (rendered, inbox) = channel();
    let (registries, followers): (Vec<_>, Vec<_>) = (0..count)
        .map(|i| {
            follow(
                &bench,
                &cache.path().join(i.to_string()),
                i,
                rendered.clone(),
            )
        })
        .unzip();
    wait_until_following(&followers);
    while inbox.try_recv().is_ok() {}

    let mut each = Vec::with_capacity(count * moves as usize);
    let mut every = Vec::with_capacity(moves as usize);
    for version in 2..=moves + 1 {
        let start = Instant::now();
        api.block_on(bench.move_label(version));
        let times = until_rendered(&inbox, count, &text(version), start);
        every.push(*times.iter().max().expect("followers"));
        each.extend(times);
        std::thread::sleep(Duration::from_millis(50));
    }
    println!("{count} followers of `{PACK}` at `{LABEL}`, {moves} label moves through the API");
    println!("{}", summary("move to render, each follower", &mut each));
    println!("{}", summary("move to render, every follower", &mut every));

    let registry = &registries[0];
    let idle = time_renders(registry, || std::thread::sleep(IDLE));
    while inbox.try_recv().is_ok() {}
    let mut converged = Duration::ZERO;
    let burst = time_renders(registry, || {
        // Back and forth between 1 and 2, then 3, which nothing else
        // moves to here: when every follower renders it, the burst is in.
        let mut last_move = Instant::now();
        for k in 0..BURST {
            let version = if k == BURST - 1 { 3 } else { 1 + k % 2 };
            last_move = Instant::now();
            api.block_on(bench.move_label(version));
        }
        let times = until_rendered(&inbox, count, &text(3), last_move);
        converged = times.into_iter().max().unwrap_or_default();
    });
    println!(
        "render of `{PROMPT}` on one follower, idle {:.1} s vs a burst of {BURST} moves:",
        IDLE.as_secs_f64()
    );
    let (idle_p99, burst_p99) = (quantile(&idle, 0.99), quantile(&burst, 0.99));
    println!("{}", render_line("idle", &idle));
    println!("{}", render_line("burst", &burst));
    println!(
        "render p99 during the burst / idle: {:.2}x",
        burst_p99 as f64 / idle_p99.max(1) as f64
    );
    println!(
        "the burst's last move to every follower rendering it: {:.2} ms",
        ms(converged)
    );
    println!("load after: {}", support::load());
    drop(followers);
}

/// A registry following the server, reporting each render of a new
/// bundle.
fn follow(
    bench: &Bench,
    cache: &std::path::Path,
    follower: usize,
    rendered: Sender<Rendered>,
) -> (Arc<PromptRegistry>, Follower) {
    let registry = Arc::new(PromptRegistry::new());
    let renders = Arc::clone(&registry);
    let remote = Remote::new(&bench.base)
        .pack(PACK)
        .label(LABEL)
        .cache_dir(cache)
        .on_change(move |change| {
            if let Change::Updated { .. } = change
                && let Ok(text) = renders.render_plain(PROMPT)
            {
                let at = Instant::now();
                let _ = rendered.send(Rendered { follower, text, at });
            }
        });
    let following = registry.follow(remote).expect("following the server");
    (registry, following)
}

/// Waits until every follower has synced once and has its stream open.
fn wait_until_following(followers: &[Follower]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    for follower in followers {
        assert!(
            follower.wait_for_first_sync(Duration::from_secs(30)),
            "a first sync"
        );
        while !follower.status().connected {
            assert!(Instant::now() < deadline, "streams connected within 30 s");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Waits until every follower has rendered `expected`; each one's time
/// since `start`.
fn until_rendered(
    inbox: &Receiver<Rendered>,
    count: usize,
    expected: &str,
    start: Instant,
) -> Vec<Duration> {
    let mut times = vec![None; count];
    let mut missing = count;
    while missing > 0 {
        let seen = inbox
            .recv_timeout(Duration::from_secs(10))
            .expect("every follower renders the move within 10 s");
        if seen.text == expected && times[seen.follower].replace(seen.at - start).is_none() {
            missing -= 1;
        }
    }
    times.into_iter().flatten().collect()
}

/// Renders in a loop on a thread of its own while `during` runs; each
/// render's time in nanoseconds, sorted.
fn time_renders(registry: &PromptRegistry, during: impl FnOnce()) -> Vec<u64> {
    let stop = AtomicBool::new(false);
    let mut times = std::thread::scope(|scope| {
        let renders = scope.spawn(|| {
            let mut times = Vec::with_capacity(1 << 22);
            while !stop.load(Ordering::Relaxed) {
                let start = Instant::now();
                black_box(registry.render_plain(PROMPT).expect("a render"));
                times.push(start.elapsed().as_nanos() as u64);
            }
            times
        });
        during();
        stop.store(true, Ordering::Relaxed);
        renders.join().expect("the render thread")
    });
    times.sort_unstable();
    times
}

fn render_line(what: &str, sorted: &[u64]) -> String {
    format!(
        "  {what}: n = {}, p50 {} ns, p99 {} ns, p99.9 {} ns, max {:.2} ms",
        sorted.len(),
        quantile(sorted, 0.50),
        quantile(sorted, 0.99),
        quantile(sorted, 0.999),
        sorted[sorted.len() - 1] as f64 / 1e6,
    )
}
