//! Signed releases, measured. (1) What trusting a key adds when a new
//! bundle arrives: the digest of the files received, the signatures read
//! and one verified, against the loopback fetch of the bundle itself, for
//! the goal-agent example pack. (2) Start-up to the first render from a
//! baked bundle of 1,000 prompts (2,000 files), against start-up from the
//! disk cache of the same bundle, with and without trusted keys. See
//! BENCHMARKS.md.
//!
//! ```sh
//! cargo run --release -p promptreg-server --example signed-bundle [SAMPLES]
//! ```

mod support;

use promptreg::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use promptreg::PromptRegistry;
use promptreg::remote::Remote;
use promptreg::signing::{
    Signature, SigningKey, Statement, TrustedKeys, files_digest, state_digest,
};
use promptreg_server::Config;
use promptreg_store::{Actor, Label, PackFiles, Permission, Store};
use support::{Bench, ms, summary};

fn main() {
    let samples: usize = std::env::args()
        .nth(1)
        .map_or(200, |n| n.parse().expect("a number of samples"));
    println!("load before: {}", support::load());
    let key = promptreg_store::test_support::signing_key(1);
    let trusted = promptreg_store::test_support::trusting(1);
    verify_against_fetch(&key, &trusted, samples);
    start_up(&key, &trusted, samples / 4);
    println!("load after: {}", support::load());
}

/// A server holding `files` as pack `pack`, released to `production` by
/// `key`'s holder.
fn serving(files: PackFiles, key: &SigningKey) -> Bench {
    let releaser = Actor::new("bench", [Permission::Write]).signing_with(key.clone());
    Bench::serving(Config::default(), move |store: Store| async move {
        store
            .push(&files, &releaser, "first")
            .await
            .expect("the push");
        store
            .release(
                files.to_pack("").unwrap().name(),
                &Label::latest(),
                &Label::new("production").unwrap(),
                None,
                &releaser,
                "",
            )
            .await
            .expect("the signed release");
    })
}

#[derive(serde::Deserialize)]
struct Document {
    entries: Vec<Entry>,
}

#[derive(serde::Deserialize)]
struct Entry {
    id: String,
    files: BTreeMap<String, String>,
}

/// The state's digest, from its files, as a follower computes it.
fn digest_of(document: &Document) -> String {
    let each: Vec<(&str, String)> = document
        .entries
        .iter()
        .map(|e| {
            let files = e.files.iter().map(|(p, t)| (p.as_str(), t.as_bytes()));
            (e.id.as_str(), files_digest(files))
        })
        .collect();
    state_digest(each.iter().map(|(id, d)| (*id, d.as_str())))
}

fn verify_against_fetch(key: &SigningKey, trusted: &TrustedKeys, samples: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/goal-agent");
    let bench = serving(PackFiles::read(&root).expect("the example pack"), key);
    let url = format!("{}/v1/packs/goal-agent/labels/production", bench.base);
    let agent = ureq::Agent::new_with_defaults();
    let fetch = || {
        let mut response = agent.get(&url).call().expect("the bundle");
        let header = |name: &str| -> Vec<String> {
            response
                .headers()
                .get_all(name)
                .iter()
                .filter_map(|v| v.to_str().ok().map(str::to_owned))
                .collect()
        };
        let (revision, signatures) = (header("promptreg-revision"), header("promptreg-signature"));
        let body = response.body_mut().read_to_vec().expect("the body");
        (body, revision[0].parse::<u64>().unwrap(), signatures)
    };
    let (body, revision, signatures) = fetch();
    println!(
        "goal-agent's bundle: {} bytes, {} signature(s)",
        body.len(),
        signatures.len()
    );
    let mut fetches = Vec::with_capacity(samples);
    for _ in 0..samples {
        let start = Instant::now();
        std::hint::black_box(fetch());
        fetches.push(start.elapsed());
    }
    // What trusting a key adds to accepting it: the digest of the files
    // (parsing the document is done to load it anyway), the signatures
    // read, and the verification.
    let document: Document = serde_json::from_slice(&body).unwrap();
    let mut checks = Vec::with_capacity(samples);
    for _ in 0..samples {
        let start = Instant::now();
        let digest = digest_of(&document);
        let read: Vec<Signature> = signatures
            .iter()
            .map(|s| Signature::from_header(s).unwrap())
            .collect();
        let statement = Statement::revision("goal-agent", "production", revision, &digest);
        std::hint::black_box(trusted.verify(&statement, &read).expect("verified"));
        checks.push(start.elapsed());
    }
    // Its parts, and the load a follower does with every new bundle
    // whether it trusts keys or not.
    let (mut digests, mut verifies, mut loads) = (Vec::new(), Vec::new(), Vec::new());
    let read: Vec<Signature> = signatures
        .iter()
        .map(|s| Signature::from_header(s).unwrap())
        .collect();
    for _ in 0..samples {
        let start = Instant::now();
        let digest = digest_of(&document);
        digests.push(start.elapsed());
        let statement = Statement::revision("goal-agent", "production", revision, &digest);
        let start = Instant::now();
        std::hint::black_box(trusted.verify(&statement, &read).expect("verified"));
        verifies.push(start.elapsed());
        let start = Instant::now();
        let files = document.entries.iter().flat_map(|e| e.files.iter());
        std::hint::black_box(promptreg::pack::Pack::from_files("bench", files).expect("loads"));
        loads.push(start.elapsed());
    }
    println!("{}", summary("loopback fetch of the bundle", &mut fetches));
    println!("{}", summary("digest + signature checked", &mut checks));
    println!(
        "{}",
        summary("  of which the digest of the files", &mut digests)
    );
    println!(
        "{}",
        summary("  of which the Ed25519 verification", &mut verifies)
    );
    println!(
        "{}",
        summary(
            "loading it as a pack (done with or without keys)",
            &mut loads
        )
    );
    println!(
        "ratio of the medians (check / (fetch + load)): {:.3}",
        ms(checks[checks.len() / 2])
            / (ms(fetches[fetches.len() / 2]) + ms(loads[loads.len() / 2]))
    );
    println!(
        "ratio of the medians (check / fetch): {:.3}",
        ms(checks[checks.len() / 2]) / ms(fetches[fetches.len() / 2])
    );
}

fn start_up(key: &SigningKey, trusted: &TrustedKeys, samples: usize) {
    let files = promptreg_store::test_support::big_pack(1000, 0, "");
    let bench = serving(files, key);
    let dir = tempfile::tempdir().unwrap();
    let (cache, baked) = (dir.path().join("cache"), dir.path().join("big.bundle"));
    {
        let registry = PromptRegistry::new();
        let follower = registry
            .follow(
                Remote::new(&bench.base)
                    .pack("big")
                    .cache_dir(&cache)
                    .without_reports(),
            )
            .unwrap();
        assert!(follower.wait_for_first_sync(Duration::from_secs(30)));
        follower.write_bundle(&baked).unwrap();
    }
    let base = bench.base.clone();
    drop(bench);
    println!(
        "baked bundle of 1,000 prompts: {} bytes",
        std::fs::metadata(&baked).unwrap().len()
    );
    // The server is gone: a start renders what it starts from.
    let start = |baked_file: bool, trust: bool| {
        let mut remote = Remote::new(&base)
            .pack("big")
            .without_reports()
            .reconnect(Duration::from_secs(60), Duration::from_secs(60));
        remote = match baked_file {
            true => remote.without_disk_cache().start_from_bundle(&baked),
            false => remote.cache_dir(&cache),
        };
        if trust {
            remote = remote.trust_keys(trusted.clone());
        }
        let begin = Instant::now();
        let registry = PromptRegistry::new();
        let follower = registry.follow(remote).unwrap();
        let text = registry.render_plain("p0999").expect("the first render");
        let took = begin.elapsed();
        assert!(text.starts_with("You are assistant 999."), "{text}");
        drop(follower);
        took
    };
    for trust in [false, true] {
        let (mut cached, mut baked_runs) = (Vec::new(), Vec::new());
        for _ in 0..samples.max(5) {
            cached.push(start(false, trust));
            baked_runs.push(start(true, trust));
        }
        let what = if trust { "trusted keys" } else { "no keys" };
        println!(
            "{}",
            summary(&format!("start from the disk cache, {what}"), &mut cached)
        );
        println!(
            "{}",
            summary(
                &format!("start from the baked bundle, {what}"),
                &mut baked_runs
            )
        );
        println!(
            "ratio of the medians (baked / cache), {what}: {:.3}",
            ms(baked_runs[baked_runs.len() / 2]) / ms(cached[cached.len() / 2])
        );
    }
}
