//! What the latency examples share: a server on loopback over a fresh
//! SQLite store, label moves through the API, percentiles. Each example
//! uses a part of it.
#![allow(dead_code)]

pub mod fleet;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use promptreg_server::{Config, Server};
use promptreg_store::{Actor, Label, PackFiles, Permission, Store};
use tokio::runtime::Runtime;

/// The pack served: one prompt, `greeting`, followed at `production`.
pub const PACK: &str = "bench";
pub const PROMPT: &str = "greeting";
pub const LABEL: &str = "production";

/// A server running on a runtime of its own (two worker threads, as
/// `promptreg serve` on this machine), so the clients measuring it do not
/// run on its threads.
pub struct Bench {
    pub base: String,
    pub client: reqwest::Client,
    _runtime: Runtime,
    _dir: tempfile::TempDir,
}

/// The text of version `n` of the prompt.
pub fn text(n: u64) -> String {
    format!("Greeting, version {n}.")
}

impl Bench {
    /// A store where the prompt has versions 1 to `versions` (each with
    /// its own [`text`]) and `production` points at 1, served on an
    /// ephemeral port.
    pub fn start(versions: u64) -> Bench {
        Bench::start_with(versions, Config::default())
    }

    /// As [`Bench::start`], with `config` (its address is replaced).
    pub fn start_with(versions: u64, config: Config) -> Bench {
        Bench::serving(config, move |store| async move {
            publish(&store, versions).await
        })
    }

    /// A fresh store filled by `fill`, served with `config` on an
    /// ephemeral port.
    pub fn serving<F, Fut>(config: Config, fill: F) -> Bench
    where
        F: FnOnce(Store) -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("the server's runtime");
        let database = dir.path().join("bench.db");
        let addr = runtime.block_on(async {
            let store = Store::open(&database.to_string_lossy())
                .await
                .expect("the store");
            fill(store.clone()).await;
            let config = Config {
                listen: SocketAddr::from(([127, 0, 0, 1], 0)),
                ..config
            };
            let server = Server::bind(store, config).await.expect("the server");
            let addr = server.local_addr();
            tokio::spawn(server.run(std::future::pending()));
            addr
        });
        Bench {
            base: format!("http://{addr}"),
            client: reqwest::Client::new(),
            _runtime: runtime,
            _dir: dir,
        }
    }

    /// Moves `production` to `version` through the API; the time the
    /// request took.
    pub async fn move_label(&self, version: u64) -> Duration {
        move_label(&self.client, &self.base, version).await
    }
}

/// A client saw a move: which client, and when.
pub type Seen = (usize, Instant);

/// Moves the label to `version` and waits for each of `clients` to see it
/// (each reports on `inbox`): the request's round trip, and each client's
/// time from just before the request.
pub async fn deliver(
    bench: &Bench,
    version: u64,
    clients: usize,
    inbox: &mut tokio::sync::mpsc::UnboundedReceiver<Seen>,
) -> (Duration, Vec<Duration>) {
    let start = Instant::now();
    let request = bench.move_label(version).await;
    let mut times = vec![None; clients];
    let mut missing = clients;
    while missing > 0 {
        let (client, at) = tokio::time::timeout(Duration::from_secs(10), inbox.recv())
            .await
            .expect("every client sees the move within 10 s")
            .expect("the clients are running");
        if times[client].replace(at - start).is_none() {
            missing -= 1;
        }
    }
    (request, times.into_iter().flatten().collect())
}

/// Times of a series of moves, each seen by every client: each client's
/// time, the last client's of each move, and each move request's own.
pub struct Moves {
    pub each: Vec<Duration>,
    pub last: Vec<Duration>,
    pub requests: Vec<Duration>,
}

/// One move not counted (connections and caches warm up), then `moves`
/// moves between versions 1 and 2, 50 ms apart, each awaited at every one
/// of `clients`.
pub async fn measure_moves(
    bench: &Bench,
    clients: usize,
    moves: usize,
    inbox: &mut tokio::sync::mpsc::UnboundedReceiver<Seen>,
) -> Moves {
    deliver(bench, 2, clients, inbox).await;
    let mut out = Moves {
        each: Vec::with_capacity(clients * moves),
        last: Vec::with_capacity(moves),
        requests: Vec::with_capacity(moves),
    };
    for n in 0..moves {
        let version = if n % 2 == 0 { 1 } else { 2 };
        let (request, times) = deliver(bench, version, clients, inbox).await;
        out.requests.push(request);
        out.last.push(*times.iter().max().expect("clients"));
        out.each.extend(times);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    out
}

/// Moves `production` to `version` through the API of the server at
/// `base`; the time the request took.
pub async fn move_label(client: &reqwest::Client, base: &str, version: u64) -> Duration {
    let start = Instant::now();
    let response = client
        .put(format!(
            "{base}/v1/packs/{PACK}/prompts/{PROMPT}/labels/{LABEL}"
        ))
        .header("if-match", "*")
        .json(&serde_json::json!({ "version": version, "reason": "bench" }))
        .send()
        .await
        .expect("the move request");
    let status = response.status();
    assert!(
        status.is_success(),
        "moving {LABEL} to {version}: {status} {}",
        response.text().await.unwrap_or_default()
    );
    start.elapsed()
}

/// Fills `store`: the prompt with versions 1 to `versions`, `production`
/// on 1.
pub async fn publish(store: &Store, versions: u64) {
    let actor = Actor::new("bench", [Permission::Write]);
    let mut files = PackFiles::default();
    files.insert(
        "promptreg.toml",
        format!(
            "name = \"{PACK}\"\nkeys = [\"{PROMPT}\"]\n[user]\nprompts_dir = \".{PACK}/prompts\"\n"
        ),
    );
    files.insert(format!("defaults/{PROMPT}.md"), text(1));
    store.push(&files, &actor, "v1").await.expect("the push");
    for n in 2..=versions {
        let mut files = PackFiles::default();
        files.insert(format!("defaults/{PROMPT}.md"), text(n));
        store
            .push_prompt(PACK, PROMPT, &files, &actor, "next")
            .await
            .expect("a new version");
    }
    let production = Label::new(LABEL).expect("a label");
    for id in ["@pack", PROMPT] {
        store
            .move_label(PACK, id, &production, 1, None, &actor, "first")
            .await
            .expect("the first move");
    }
}

/// The `q` quantile (0 to 1) of sorted samples, nearest rank.
pub fn quantile<T: Copy>(sorted: &[T], q: f64) -> T {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// One line: p50, p99 and the maximum of `samples`.
pub fn summary(what: &str, samples: &mut [Duration]) -> String {
    samples.sort();
    format!(
        "{what}: n = {}, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        samples.len(),
        ms(quantile(samples, 0.50)),
        ms(quantile(samples, 0.99)),
        ms(samples[samples.len() - 1]),
    )
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The machine's load, as `/proc/loadavg` has it (Linux).
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// Starts this example again with `args` as a helper process of its own
/// (a server, a balancer, clients: each within its own file descriptor
/// limit), its input and output piped; `what` names it if it cannot start.
pub fn spawn_self<S: AsRef<std::ffi::OsStr>>(args: &[S], what: &str) -> Child {
    Command::new(std::env::current_exe().expect("this example"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// The first line a helper process prints (its address, its report),
/// trimmed; the rest of its output is left unread.
pub fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("its output"))
        .read_line(&mut line)
        .expect("its first line");
    line.trim().to_owned()
}
