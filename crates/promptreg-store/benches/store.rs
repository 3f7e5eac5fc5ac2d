//! The store, each beside a baseline measured in the same run:
//!
//! 1. `load_label/*`: installing the `latest` label of a 1,000-prompt pack
//!    (two files each) into a registry from SQLite and PostgreSQL, against
//!    `Pack::load` + `install` of the same pack folder;
//! 2. `push_ten_changed/*`: pushing that pack with 10 prompts changed
//!    (read, check, compare, write 10 versions and move `latest`), against
//!    reading and checking the pack alone;
//! 3. `label_moves/*`: 10,000 label moves, each its own transaction with
//!    its history row (throughput per backend);
//! 4. `releases/*`: a release and a pack rollback of 1,000 prompts against
//!    the same 2,000 moves one by one;
//! 5. `gates/*`: a release and a pack rollback of each example pack on
//!    SQLite, `production` gated and not, against the pack's tests run
//!    twice as `promptreg test` runs them (and as the gate runs them,
//!    `test_state`);
//! 6. `beside_a_gate/*`: a release to another label and a fleet report on
//!    SQLite while a gated release of the same pack runs its tests (a
//!    run of several seconds), against the same with no gate running.
//!
//! PostgreSQL runs when `PROMPTREG_TEST_DATABASE_URL` is set (see
//! `scripts/postgres-for-tests.sh`). Run with
//! `cargo bench -p promptreg-store --bench store`; BENCHMARKS.md has the
//! figures.

use std::path::Path;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

use divan::{Bencher, black_box};
use promptreg::PromptRegistry;
use promptreg::pack::Pack;
use promptreg_store::{Actor, Label, PackFiles, Permission, Store};
use tempfile::TempDir;

const PROMPTS: usize = 1000;
const MOVES: u64 = 10_000;

fn main() {
    divan::main();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn writer() -> Actor {
    Actor::new("bench", [Permission::Write])
}

/// The 1,000-prompt pack folder, written once.
static PACK: LazyLock<TempDir> = LazyLock::new(|| {
    let dir = tempfile::tempdir().unwrap();
    write_pack(dir.path());
    dir
});

fn write_pack(dir: &Path) {
    std::fs::create_dir_all(dir.join("defaults")).unwrap();
    let keys: Vec<String> = (0..PROMPTS).map(|i| format!("\"p{i:04}\"")).collect();
    let manifest = format!(
        "name = \"big\"\nkeys = [{}]\n[user]\nprompts_dir = \".big/prompts\"\n",
        keys.join(", ")
    );
    std::fs::write(dir.join("promptreg.toml"), manifest).unwrap();
    for i in 0..PROMPTS {
        let en = format!(
            "---\ndescription: prompt {i}\ntemplate: true\nvariables:\n  user:\n---\nYou are assistant {i} for {{{{ user }}}}. Answer in one paragraph and cite your sources.\n"
        );
        let ja = format!(
            "---\ntemplate: true\n---\nあなたは{{{{ user }}}}さんのアシスタント{i}です。\n"
        );
        std::fs::write(dir.join(format!("defaults/p{i:04}.md")), en).unwrap();
        std::fs::write(dir.join(format!("defaults/p{i:04}.ja.md")), ja).unwrap();
    }
}

/// A store on each backend with the pack pushed; the SQLite one keeps its
/// folder alive.
struct Backend {
    store: Store,
    _dir: Option<TempDir>,
}

fn sqlite(rt: &tokio::runtime::Runtime) -> Backend {
    let dir = tempfile::tempdir().unwrap();
    let url = dir.path().join("promptreg.db");
    let store = rt.block_on(Store::open(url.to_str().unwrap())).unwrap();
    seed(rt, &store);
    Backend {
        store,
        _dir: Some(dir),
    }
}

fn postgres(rt: &tokio::runtime::Runtime, name: &str) -> Option<Backend> {
    let Ok(base) = std::env::var("PROMPTREG_TEST_DATABASE_URL") else {
        eprintln!("{name}: PostgreSQL skipped (PROMPTREG_TEST_DATABASE_URL is not set)");
        return None;
    };
    let schema = format!("bench_{name}_{}", std::process::id());
    rt.block_on(async {
        let pool = sqlx::PgPool::connect(&base).await.unwrap();
        let sql = format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}");
        sqlx::raw_sql(&sql).execute(&pool).await.unwrap();
        pool.close().await;
    });
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options[search_path]={schema}");
    let store = rt.block_on(Store::open(&url)).unwrap();
    seed(rt, &store);
    Some(Backend { store, _dir: None })
}

fn seed(rt: &tokio::runtime::Runtime, store: &Store) {
    let files = PackFiles::read(PACK.path()).unwrap();
    rt.block_on(store.push(&files, &writer(), "seed")).unwrap();
}

mod load_label {
    use super::*;

    #[divan::bench]
    fn from_files(bencher: Bencher) {
        bencher.bench(|| {
            let registry = PromptRegistry::new();
            Pack::load(PACK.path()).unwrap().install(&registry).unwrap();
            black_box(registry)
        });
    }

    fn from_store(bencher: Bencher, backend: &Backend, rt: &tokio::runtime::Runtime) {
        bencher.bench(|| {
            let registry = PromptRegistry::new();
            rt.block_on(backend.store.install("big", &Label::latest(), &registry))
                .unwrap();
            black_box(registry)
        });
    }

    #[divan::bench]
    fn sqlite(bencher: Bencher) {
        let rt = runtime();
        let backend = super::sqlite(&rt);
        from_store(bencher, &backend, &rt);
    }

    #[divan::bench]
    fn postgres(bencher: Bencher) {
        let rt = runtime();
        if let Some(backend) = super::postgres(&rt, "load") {
            from_store(bencher, &backend, &rt);
        }
    }
}

mod push_ten_changed {
    use super::*;

    /// The baseline: read the folder and check the pack.
    #[divan::bench]
    fn read_pack(bencher: Bencher) {
        bencher.bench(|| {
            let files = PackFiles::read(PACK.path()).unwrap();
            black_box(files.to_pack(PACK.path()).unwrap())
        });
    }

    /// Read, check, compare and write: 10 prompts differ from `latest` at
    /// every push (a new text each time), the 990 others do not.
    fn push(bencher: Bencher, backend: &Backend, rt: &tokio::runtime::Runtime) {
        static ROUND: AtomicU64 = AtomicU64::new(0);
        bencher
            .with_inputs(|| ROUND.fetch_add(1, Ordering::Relaxed))
            .bench_local_values(|round| {
                let mut files = PackFiles::read(PACK.path()).unwrap();
                for i in 0..10 {
                    files.insert(format!("defaults/p{i:04}.md"), format!("Round {round}.\n"));
                }
                let report = rt
                    .block_on(backend.store.push(&files, &writer(), "bench"))
                    .unwrap();
                assert_eq!(report.versions_written(), 10);
                report
            });
    }

    #[divan::bench]
    fn sqlite(bencher: Bencher) {
        let rt = runtime();
        let backend = super::sqlite(&rt);
        push(bencher, &backend, &rt);
    }

    #[divan::bench]
    fn postgres(bencher: Bencher) {
        let rt = runtime();
        if let Some(backend) = super::postgres(&rt, "push") {
            push(bencher, &backend, &rt);
        }
    }
}

mod label_moves {
    use super::*;

    /// 10,000 moves of `production` on one prompt between versions 1 and 2,
    /// each naming the version it expects.
    fn moves(bencher: Bencher, backend: &Backend, rt: &tokio::runtime::Runtime) {
        let mut files = PackFiles::read(PACK.path()).unwrap();
        files.insert("defaults/p0000.md", "Second version.\n");
        rt.block_on(backend.store.push(&files, &writer(), "v2"))
            .unwrap();
        let production = Label::new("production").unwrap();
        let store = &backend.store;
        rt.block_on(store.move_label("big", "p0000", &production, 1, None, &writer(), ""))
            .unwrap();
        let mut at = 1;
        bencher
            .counter(divan::counter::ItemsCount::new(MOVES))
            .bench_local(|| {
                rt.block_on(async {
                    for _ in 0..MOVES {
                        let to = 3 - at;
                        store
                            .move_label(
                                "big",
                                "p0000",
                                &production,
                                to,
                                Some(at),
                                &writer(),
                                "bench",
                            )
                            .await
                            .unwrap();
                        at = to;
                    }
                })
            });
    }

    #[divan::bench(sample_count = 3, sample_size = 1)]
    fn sqlite(bencher: Bencher) {
        let rt = runtime();
        let backend = super::sqlite(&rt);
        moves(bencher, &backend, &rt);
    }

    #[divan::bench(sample_count = 3, sample_size = 1)]
    fn postgres(bencher: Bencher) {
        let rt = runtime();
        if let Some(backend) = super::postgres(&rt, "moves") {
            moves(bencher, &backend, &rt);
        }
    }
}

mod releases {
    use super::*;

    /// `production` at the seeded pack (revision 1) and `latest` at a push
    /// that changed every prompt: what a release moves, 1,000 prompts.
    fn prepare(backend: &Backend, rt: &tokio::runtime::Runtime) -> Label {
        let production = Label::new("production").unwrap();
        let store = &backend.store;
        rt.block_on(store.release("big", &Label::latest(), &production, None, &writer(), ""))
            .unwrap();
        let mut files = PackFiles::read(PACK.path()).unwrap();
        for i in 0..PROMPTS {
            files.insert(
                format!("defaults/p{i:04}.md"),
                format!("Version two of {i}.\n"),
            );
        }
        rt.block_on(store.push(&files, &writer(), "v2")).unwrap();
        production
    }

    /// One release of the changed pack to `production` and one pack
    /// rollback of it: 2 transactions, 2,000 label moves, 2 revisions.
    fn release_and_roll_back(bencher: Bencher, backend: &Backend, rt: &tokio::runtime::Runtime) {
        let production = prepare(backend, rt);
        let store = &backend.store;
        bencher.bench_local(|| {
            rt.block_on(async {
                let moved = store
                    .release(
                        "big",
                        &Label::latest(),
                        &production,
                        None,
                        &writer(),
                        "bench",
                    )
                    .await
                    .unwrap();
                assert_eq!(moved.len(), PROMPTS);
                let back = store
                    .rollback_pack("big", &production, &writer(), "bench")
                    .await
                    .unwrap();
                assert_eq!(back.moves.len(), PROMPTS);
            })
        });
    }

    /// The baseline: the same 2,000 moves one prompt at a time, each its
    /// own transaction and revision.
    fn one_by_one(bencher: Bencher, backend: &Backend, rt: &tokio::runtime::Runtime) {
        let production = prepare(backend, rt);
        let store = &backend.store;
        let ids: Vec<String> = (0..PROMPTS).map(|i| format!("p{i:04}")).collect();
        let actor = writer();
        bencher.bench_local(|| {
            rt.block_on(async {
                for (from, to) in [(1, 2), (2, 1)] {
                    for id in &ids {
                        store
                            .move_label("big", id, &production, to, Some(from), &actor, "bench")
                            .await
                            .unwrap();
                    }
                }
            })
        });
    }

    #[divan::bench(sample_count = 5, sample_size = 1)]
    fn release_sqlite(bencher: Bencher) {
        let rt = runtime();
        release_and_roll_back(bencher, &super::sqlite(&rt), &rt);
    }

    #[divan::bench(sample_count = 5, sample_size = 1)]
    fn release_postgres(bencher: Bencher) {
        let rt = runtime();
        if let Some(backend) = super::postgres(&rt, "release") {
            release_and_roll_back(bencher, &backend, &rt);
        }
    }

    #[divan::bench(sample_count = 3, sample_size = 1)]
    fn one_by_one_sqlite(bencher: Bencher) {
        let rt = runtime();
        one_by_one(bencher, &super::sqlite(&rt), &rt);
    }

    #[divan::bench(sample_count = 3, sample_size = 1)]
    fn one_by_one_postgres(bencher: Bencher) {
        let rt = runtime();
        if let Some(backend) = super::postgres(&rt, "one_by_one") {
            one_by_one(bencher, &backend, &rt);
        }
    }
}

mod gates {
    use super::*;
    use promptreg::testing::PromptTests;

    const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");

    /// An example pack's files, `production` gated or not, and the
    /// manifest's description set to `description`.
    fn example(name: &str, gated: bool, description: &str) -> PackFiles {
        let mut files = PackFiles::read(Path::new(EXAMPLES).join(name)).unwrap();
        let manifest = String::from_utf8(files.get("promptreg.toml").unwrap().to_vec()).unwrap();
        let mut manifest = manifest.replacen(
            "description = \"",
            &format!("description = \"{description} "),
            1,
        );
        if gated {
            manifest.push_str("\n[release]\ngated = [\"production\"]\n");
        }
        files.insert("promptreg.toml", manifest);
        files
    }

    /// A SQLite store with `production` at the example pack and `latest`
    /// at the same pack but for its manifest's description: a release
    /// moves one entry and the gate runs every test.
    fn prepared(rt: &tokio::runtime::Runtime, name: &str, gated: bool) -> (Store, TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let url = dir.path().join("promptreg.db");
        let store = rt.block_on(Store::open(url.to_str().unwrap())).unwrap();
        let production = Label::new("production").unwrap();
        rt.block_on(async {
            store
                .push(&example(name, gated, "one"), &writer(), "")
                .await
                .unwrap();
            let pack = example(name, gated, "one")
                .to_pack(name)
                .unwrap()
                .name()
                .to_owned();
            store
                .release(&pack, &Label::latest(), &production, None, &writer(), "")
                .await
                .unwrap();
            store
                .push(&example(name, gated, "two"), &writer(), "")
                .await
                .unwrap();
        });
        (store, dir)
    }

    /// A release to `production` and a pack rollback of it: with the pack
    /// gating `production`, each runs the pack's tests.
    fn release_and_roll_back(bencher: Bencher, name: &str, gated: bool) {
        let rt = runtime();
        let (store, _dir) = prepared(&rt, name, gated);
        let pack = example(name, gated, "one")
            .to_pack(name)
            .unwrap()
            .name()
            .to_owned();
        let production = Label::new("production").unwrap();
        bencher.bench_local(|| {
            rt.block_on(async {
                let moved = store
                    .release(&pack, &Label::latest(), &production, None, &writer(), "")
                    .await
                    .unwrap();
                assert_eq!(moved.len(), 1);
                store
                    .rollback_pack(&pack, &production, &writer(), "")
                    .await
                    .unwrap();
            })
        });
    }

    /// The baseline: the pack's tests run twice as `promptreg test` runs
    /// them on its folder (load the pack and its tests, install, run).
    fn tests_twice(bencher: Bencher, name: &str) {
        let dir = Path::new(EXAMPLES).join(name);
        bencher.bench_local(|| {
            for _ in 0..2 {
                let pack = Pack::load(&dir).unwrap();
                let tests = PromptTests::load(&pack).unwrap();
                let registry = PromptRegistry::new();
                pack.install(&registry).unwrap();
                let results = tests.run(&registry);
                assert!(results.iter().all(|r| r.passed()));
                black_box(results);
            }
        });
    }

    #[divan::bench(args = ["goal-agent", "web-agent"], sample_count = 50)]
    fn ungated(bencher: Bencher, name: &str) {
        release_and_roll_back(bencher, name, false);
    }

    #[divan::bench(args = ["goal-agent", "web-agent"], sample_count = 50)]
    fn gated(bencher: Bencher, name: &str) {
        release_and_roll_back(bencher, name, true);
    }

    #[divan::bench(args = ["goal-agent", "web-agent"], sample_count = 50)]
    fn tests_alone(bencher: Bencher, name: &str) {
        tests_twice(bencher, name);
    }

    /// The gate's own run twice, from the stored files in memory.
    #[divan::bench(args = ["goal-agent", "web-agent"], sample_count = 50)]
    fn test_state(bencher: Bencher, name: &str) {
        let rt = runtime();
        let files = PackFiles::read(Path::new(EXAMPLES).join(name)).unwrap();
        let limit = promptreg_store::TestLimits::GATE;
        bencher.bench_local(|| {
            rt.block_on(async {
                for _ in 0..2 {
                    let report = promptreg_store::test_state(files.clone(), limit).await;
                    assert!(report.unwrap().passed());
                }
            })
        });
    }
}

mod beside_a_gate {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::time::Duration;

    use promptreg_store::{Error, InstanceReport, Served, TestTurns, Timestamp, Turn};
    use tokio::sync::Notify;

    use super::*;

    /// Cases in the gated pack's tests: a run of about 20 s here.
    const CASES: usize = 200_000;

    /// Says when a gate's run has started.
    struct Started(Arc<Notify>);

    impl TestTurns for Started {
        fn turn(&self) -> Pin<Box<dyn Future<Output = Result<Turn, Error>> + Send + '_>> {
            self.0.notify_one();
            Box::pin(async { Ok(Box::new(()) as Turn) })
        }
    }

    fn pack(edit: &str) -> PackFiles {
        let mut files = PackFiles::default();
        files.insert(
            "promptreg.toml",
            "name = \"demo\"\nkeys = [\"greeting\"]\n[user]\nprompts_dir = \".demo/prompts\"\n[release]\ngated = [\"production\"]\n",
        );
        // Each render loops (within its fuel), so a case costs some time.
        let loops = "{% for i in range(2000) %}{% endfor %}";
        let greeting = format!("---\ntemplate: true\n---\n{loops}Hello, {edit}.\n");
        files.insert("defaults/greeting.md", greeting);
        // Test files of 10,000 cases each, under the 1 MiB a file may hold.
        for file in 0..CASES / 10_000 {
            let cases: String = (0..10_000)
                .map(|i| format!("[[case]]\nname = \"c{i}\"\ncontains = \"Hello\"\n"))
                .collect();
            let test = format!("prompt = \"greeting\"\n{cases}");
            files.insert(format!("tests/greeting-{file}.toml"), test);
        }
        files
    }

    /// A release of `latest` to `staging` and a fleet report of it, each
    /// its own write, with a gated release running its tests or not.
    #[divan::bench(args = [false, true], sample_count = 20)]
    fn release_and_report(bencher: Bencher, gate_running: bool) {
        let dir = tempfile::tempdir().unwrap();
        let url = dir.path().join("promptreg.db");
        let started = Arc::new(Notify::new());
        // The gate runs on a runtime of its own, as another request would.
        let gate_rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let rt = runtime();
        let store = rt
            .block_on(Store::open(url.to_str().unwrap()))
            .unwrap()
            .with_test_turns(Arc::new(Started(Arc::clone(&started))));
        let staging = Label::new("staging").unwrap();
        let (one, two) = (Label::new("one").unwrap(), Label::new("two").unwrap());
        rt.block_on(async {
            for (edit, label) in [("one", &one), ("two", &two)] {
                store.push(&pack(edit), &writer(), "").await.unwrap();
                store
                    .release("demo", &Label::latest(), label, None, &writer(), "")
                    .await
                    .unwrap();
            }
        });
        let gate = gate_running.then(|| {
            let store = store.clone();
            let gate = gate_rt.spawn(async move {
                let production = Label::new("production").unwrap();
                let started = std::time::Instant::now();
                let released = store
                    .release("demo", &Label::latest(), &production, None, &writer(), "")
                    .await;
                (started.elapsed(), released.is_ok())
            });
            rt.block_on(started.notified());
            gate
        });
        let report = InstanceReport {
            instance: "bench-1".into(),
            name: None,
            library: "promptreg-rust/bench".into(),
            source: Served::Server,
            revision: Some(1),
            digest: None,
            last_error: None,
            interval: Duration::from_secs(10),
            split: None,
        };
        let releases = AtomicU64::new(0);
        bencher.bench_local(|| {
            rt.block_on(async {
                let from = match releases.fetch_add(1, Ordering::Relaxed) % 2 {
                    0 => &one,
                    _ => &two,
                };
                store
                    .release("demo", from, &staging, None, &writer(), "")
                    .await
                    .unwrap();
                store
                    .report_instance("demo", &staging, &report, "bench", Timestamp::now())
                    .await
                    .unwrap();
            })
        });
        // The figures count only if the gate ran all along.
        if let Some(gate) = gate {
            let running = !gate.is_finished();
            let (took, released) = gate_rt.block_on(gate).unwrap();
            eprintln!(
                "the gated release took {took:.1?} (released: {released}), still running when the measurement ended: {running}"
            );
        }
        gate_rt.shutdown_background();
    }
}
