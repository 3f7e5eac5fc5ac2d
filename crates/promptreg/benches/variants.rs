//! Installing one prompt's locale variants: 1,000, 4,000 and 16,000
//! variants (`en-US-v00000`, ... all of one language and script, so the
//! same-script index holds every one of them). The time per variant must
//! stay about constant as the count grows (within 2x from 1k to 16k):
//! a pack's load and install may not be quadratic in its variants.
//!
//! - `install`: `Pack::install` of a pack built once, into a new registry;
//! - `load_and_install`: `Pack::from_files` then `Pack::install`, what a
//!   server does with a label's bundle.
//!
//! Run with `cargo bench -p promptreg --bench variants`; BENCHMARKS.md has
//! the figures (divan's throughput column is variants per second).

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use promptreg::PromptRegistry;
use promptreg::pack::Pack;

const SIZES: [usize; 3] = [1_000, 4_000, 16_000];

fn main() {
    divan::main();
}

/// A pack of one prompt, `greeting`, with `variants` locale variants.
fn files(variants: usize) -> Vec<(String, String)> {
    let manifest = "name = \"bench\"\nkeys = [\"greeting\"]\n[user]\nprompts_dir = \".bench\"\n";
    let mut files = vec![
        ("promptreg.toml".to_owned(), manifest.to_owned()),
        ("defaults/greeting.md".to_owned(), "Hello.".to_owned()),
    ];
    files.extend((0..variants).map(|n| {
        let path = format!("defaults/greeting.en-US-v{n:05}.md");
        (path, format!("Hello, variant {n}."))
    }));
    files
}

fn pack(variants: usize) -> Pack {
    Pack::from_files("bench", files(variants)).unwrap()
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn install(bencher: Bencher, variants: usize) {
    let pack = pack(variants);
    bencher.counter(ItemsCount::new(variants)).bench(|| {
        let registry = PromptRegistry::new();
        black_box(&pack).install(&registry).unwrap();
        registry
    });
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn load_and_install(bencher: Bencher, variants: usize) {
    let files = files(variants);
    bencher.counter(ItemsCount::new(variants)).bench(|| {
        let pack =
            Pack::from_files("bench", black_box(&files).iter().map(|(p, t)| (p, t))).unwrap();
        let registry = PromptRegistry::new();
        pack.install(&registry).unwrap();
        registry
    });
}
