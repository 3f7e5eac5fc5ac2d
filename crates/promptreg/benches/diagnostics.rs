//! Diagnostics against parsing: a settings file just under the 1 MiB limit
//! with 10,000 errors (an invalid mode in each of 10,000 blocks), beside
//! the same-size file without errors (every mode valid), in two layouts:
//! one block per line, and minified on one line. Locating the errors must
//! not make a check quadratic: the goal is within 5x of the clean parse.
//!
//! Run with `cargo bench -p promptreg --bench diagnostics`; BENCHMARKS.md
//! has the figures.

use divan::{Bencher, black_box};
use promptreg::config::{ConfigSpec, check_settings};

const BLOCKS: usize = 10_000;
/// Just under the default 1 MiB limit of a settings file.
const FILE_SIZE: usize = 1_000_000;

fn main() {
    divan::main();
}

fn spec() -> ConfigSpec {
    ConfigSpec::builder("bench")
        .key_pattern("tool-*")
        .prompts_dir(".app/prompts")
        .build()
        .unwrap()
}

/// A settings file of `FILE_SIZE` bytes with `BLOCKS` prompt blocks whose
/// mode is `mode`, each block on its own line or all on one.
fn settings(mode: &str, one_line: bool) -> String {
    let separator = if one_line { "" } else { "\n" };
    let block = |i: usize, pad: usize| {
        format!(
            r#"{separator}"tool-{i:05}": {{ "mode": "{mode}", "inline": "{}" }},"#,
            "x".repeat(pad)
        )
    };
    let bare = block(0, 0).len();
    let pad = (FILE_SIZE - 20) / BLOCKS - bare;
    let mut text = String::with_capacity(FILE_SIZE);
    text.push_str(r#"{ "prompts": {"#);
    for i in 0..BLOCKS {
        text.push_str(&block(i, pad));
    }
    text.push_str(&format!("{separator}}} }}"));
    while text.len() < FILE_SIZE {
        text.insert(2, ' ');
    }
    text
}

fn check(bencher: Bencher, mode: &str, one_line: bool, errors: usize) {
    let spec = spec();
    let text = settings(mode, one_line);
    assert_eq!(text.len(), FILE_SIZE);
    let reported = check_settings(&spec, "settings.json", &text);
    // The first 100, then one that counts the rest.
    assert_eq!(reported.len(), errors.min(100) + usize::from(errors > 100));
    bencher.bench(|| check_settings(black_box(&spec), "settings.json", black_box(&text)));
}

mod lines {
    use super::*;

    #[divan::bench]
    fn clean(bencher: Bencher) {
        check(bencher, "append", false, 0);
    }

    #[divan::bench]
    fn errors_10000(bencher: Bencher) {
        check(bencher, "apend", false, super::BLOCKS);
    }
}

mod one_line {
    use super::*;

    #[divan::bench]
    fn clean(bencher: Bencher) {
        check(bencher, "append", true, 0);
    }

    #[divan::bench]
    fn errors_10000(bencher: Bencher) {
        check(bencher, "apend", true, super::BLOCKS);
    }
}
