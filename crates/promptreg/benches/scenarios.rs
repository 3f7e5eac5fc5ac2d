//! Whole scenarios, each printed beside its baseline from the same run:
//!
//! 4. loading and reloading a configuration of 10,000 prompt files and a
//!    settings file; render latency (p50, p99) while another thread reloads
//!    in a loop, against the idle latency;
//! 5. render throughput on one and on two threads sharing a registry;
//! 6. the memory a loaded 10,000-prompt configuration holds, against the
//!    bytes of its prompt texts.
//!
//! Run with `cargo bench -p promptreg --bench scenarios`. Timings are wall
//! clock on a shared machine: run it twice and compare; BENCHMARKS.md has
//! the figures.

use promptreg::prelude::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use promptreg::config::{ConfigSpec, LoadOptions};
use promptreg::{Locale, PromptRegistry};

/// Counts the bytes alive on the heap, only while `COUNTING` is on: a
/// shared counter would otherwise make the threads of the throughput
/// scenario contend on it.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);

fn count(bytes: isize) {
    if COUNTING.load(Ordering::Relaxed) {
        LIVE.fetch_add(bytes, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const FILES: usize = 10_000;
const DIR: &str = ".app/prompts";
const SETTINGS: &str = ".app/settings.json";

fn spec() -> ConfigSpec {
    ConfigSpec::builder("scenarios")
        .key("auditor")
        .key_pattern("tool-*")
        .prompts_dir(DIR)
        .settings_file(SETTINGS)
        .build()
        .unwrap()
}

/// 10,000 prompt files of 400 to 800 bytes and a settings file configuring
/// a tenth of them. Returns the bytes of prompt text.
fn write_configuration(cwd: &Path) -> usize {
    let dir = cwd.join(DIR);
    std::fs::create_dir_all(&dir).unwrap();
    let mut text_bytes = 0;
    let mut settings = String::from("{\n  // generated\n  \"prompts\": {\n");
    for n in 0..FILES {
        let sentence = format!(
            "Tool {n}: describe what the call does, what it returns and when not to use it. "
        );
        let text = sentence.repeat(4 + n % 5);
        text_bytes += text.trim().len();
        std::fs::write(dir.join(format!("tool-{n:05}.md")), &text).unwrap();
        if n % 10 == 0 {
            settings.push_str(&format!(
                "    \"tool-{n:05}\": {{ \"mode\": \"append\" }},\n"
            ));
        }
    }
    settings.push_str("  }\n}\n");
    std::fs::write(cwd.join(SETTINGS), settings).unwrap();
    text_bytes
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    samples[((samples.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn ns(d: Duration) -> String {
    format!("{} ns", d.as_nanos())
}

/// Calls `work` in a loop on `threads` threads for two seconds; returns the
/// calls per second, all threads together. Each thread passes `work` its own
/// running count, offset by its number.
fn per_second(threads: usize, work: impl Fn(usize) + Sync) -> f64 {
    let stop = AtomicBool::new(false);
    let done = AtomicU64::new(0);
    let window = Duration::from_secs(2);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (stop, done, work) = (&stop, &done, &work);
            s.spawn(move || {
                let mut calls = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    work(t + calls as usize);
                    calls += 1;
                }
                done.fetch_add(calls, Ordering::Relaxed);
            });
        }
        std::thread::sleep(window);
        stop.store(true, Ordering::Relaxed);
    });
    done.load(Ordering::Relaxed) as f64 / window.as_secs_f64()
}

fn main() {
    let root = tempfile::tempdir().unwrap();
    let (home, cwd) = (root.path().join("home"), root.path().join("project"));
    std::fs::create_dir_all(&home).unwrap();
    let text_bytes = write_configuration(&cwd);
    let options = LoadOptions::new(&home, &cwd);
    let registry = PromptRegistry::new();
    for n in 0..FILES {
        registry
            .register_default(&format!("tool-{n:05}"), "Default tool description.")
            .unwrap();
    }

    println!("BENCHMARKS 1.7: load and reload of {FILES} prompt files and a settings file");
    let loads: Vec<Duration> = (0..7)
        .map(|_| {
            let fresh = PromptRegistry::new();
            let start = Instant::now();
            fresh.load_config(spec(), options.clone()).unwrap();
            start.elapsed()
        })
        .collect();
    registry.load_config(spec(), options.clone()).unwrap();
    let reloads: Vec<Duration> = (0..7)
        .map(|_| {
            let start = Instant::now();
            registry.reload().unwrap();
            start.elapsed()
        })
        .collect();
    println!("  load   median {} (target < 150 ms)", ms(median(loads)));
    println!("  reload median {} (target < 150 ms)", ms(median(reloads)));

    let locale = Locale::parse("en").unwrap();
    let ids: Vec<String> = (0..FILES)
        .step_by(97)
        .map(|n| format!("tool-{n:05}"))
        .collect();
    // Renders until `until` says stop, timing each.
    let render_latencies = |until: &dyn Fn(usize) -> bool| -> Vec<Duration> {
        let mut latencies = Vec::with_capacity(1 << 20);
        let mut i = 0;
        while !until(i) {
            let id = &ids[i % ids.len()];
            let start = Instant::now();
            std::hint::black_box(registry.render_in(id, &(), &locale).unwrap());
            latencies.push(start.elapsed());
            i += 1;
        }
        latencies
    };
    let mut idle = render_latencies(&|i| i >= 500_000);
    let reload_count = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let mut busy = std::thread::scope(|s| {
        let reloader = s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                registry.reload().unwrap();
                reload_count.fetch_add(1, Ordering::Relaxed);
            }
        });
        // Long enough for a good number of whole reloads.
        let latencies =
            render_latencies(&|i| i >= 500_000 && reload_count.load(Ordering::Relaxed) >= 20);
        stop.store(true, Ordering::Relaxed);
        let _ = reloader.join();
        latencies
    });
    let (idle_p50, idle_p99) = (percentile(&mut idle, 0.5), percentile(&mut idle, 0.99));
    let (busy_p50, busy_p99) = (percentile(&mut busy, 0.5), percentile(&mut busy, 0.99));
    println!(
        "  render idle:              p50 {}, p99 {}",
        ns(idle_p50),
        ns(idle_p99)
    );
    println!(
        "  render during reload loop: p50 {}, p99 {} ({} renders, {} reloads meanwhile); p99 ratio {:.2} (target <= 5)",
        ns(busy_p50),
        ns(busy_p99),
        busy.len(),
        reload_count.load(Ordering::Relaxed),
        busy_p99.as_secs_f64() / idle_p99.as_secs_f64()
    );

    println!("BENCHMARKS 1.2: render throughput on one and two threads");
    // The baseline: the same amount of copying with nothing shared, to tell
    // the machine's scaling from the registry's.
    let text = registry.render_in(&ids[0], &(), &locale).unwrap();
    let floor = |threads: usize| {
        per_second(threads, |_| {
            std::hint::black_box(String::from(std::hint::black_box(text.as_str())));
        })
    };
    let throughput = |threads: usize| {
        per_second(threads, |i| {
            std::hint::black_box(
                registry
                    .render_in(&ids[i % ids.len()], &(), &locale)
                    .unwrap(),
            );
        })
    };
    let one = throughput(1);
    let two = throughput(2);
    let (floor_one, floor_two) = (floor(1), floor(2));
    println!("  1 thread:  {:.2} M renders/s", one / 1e6);
    println!(
        "  2 threads: {:.2} M renders/s; ratio {:.2} (target >= 1.8)",
        two / 1e6,
        two / one
    );
    println!(
        "  baseline, copying the same text with nothing shared: {:.2} M/s and {:.2} M/s; ratio {:.2}",
        floor_one / 1e6,
        floor_two / 1e6,
        floor_two / floor_one
    );

    println!("BENCHMARKS 1.3: memory of a loaded {FILES}-prompt configuration");
    let fresh = PromptRegistry::new();
    COUNTING.store(true, Ordering::Relaxed);
    fresh.load_config(spec(), options).unwrap();
    let held = LIVE.load(Ordering::Relaxed);
    COUNTING.store(false, Ordering::Relaxed);
    println!(
        "  held {:.2} MB for {:.2} MB of prompt text: {:.2}x, {} bytes per file beyond the text (target: <= 2x text + fixed overhead)",
        held as f64 / 1e6,
        text_bytes as f64 / 1e6,
        held as f64 / text_bytes as f64,
        (held - text_bytes as isize) / FILES as isize
    );
    drop(fresh);
}
