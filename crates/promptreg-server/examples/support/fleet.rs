//! Fleets of followers and servers as processes of the example's own
//! binary: `serve DB ADDR` and `follow N SERVER...`, which an example's
//! `main` hands to [`serve`] and [`follow`]; the fleet view read from the
//! store.

use promptreg::prelude::*;
use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::Child;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use promptreg::PromptRegistry;
use promptreg::remote::{Change, Remote, Source};
use promptreg_server::{Config, Server};
use promptreg_store::{FleetQuery, Label, Store};
use tokio::runtime::Runtime;

use super::{LABEL, PACK, PROMPT};

/// A server process of this binary.
pub struct Served {
    child: Child,
    pub base: String,
    pub addr: SocketAddr,
}

impl Served {
    /// A server over `database` listening on `addr` (port 0: any).
    pub fn start(database: &str, addr: &str) -> Served {
        let mut child = super::spawn_self(&["serve", database, addr], "a server process");
        let base = super::first_line(&mut child);
        let addr = base
            .trim_start_matches("http://")
            .parse()
            .expect("an address");
        Served { child, base, addr }
    }

    /// Its resident memory, from /proc (Linux).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// Kills it (SIGKILL): no graceful shutdown, as in a crash.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `serve DB ADDR`: a server over the store at DB on ADDR; prints its
/// address, then serves until killed.
pub fn serve(database: &str, addr: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("the server's runtime");
    runtime.block_on(async {
        let store = Store::open(database).await.expect("the store");
        let config = Config {
            listen: addr.parse().expect("an address"),
            max_connections: 11_000,
            ..Config::default()
        };
        let server = Server::bind(store, config).await.expect("the server");
        println!("http://{}", server.local_addr());
        server.run(std::future::pending()).await.expect("serving");
    });
}

/// What a follower process says of one of its followers (the process's
/// number and the follower's there), at a wall-clock time (nanoseconds
/// since the epoch).
enum Heard {
    /// A `label_moved` event arrived on its stream.
    Moved((usize, usize), u128),
    /// It put a bundle from a server in force.
    Updated((usize, usize), u128),
}

/// Follower processes of this binary, and what they say.
pub struct Followers {
    children: Vec<Child>,
    updates: mpsc::Receiver<Heard>,
    renders: Arc<Mutex<(u64, u64)>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Followers {
    /// Starts `followers` followers of `servers` (spread over them) in
    /// `processes` processes.
    pub fn spawn(followers: usize, processes: usize, servers: &[String]) -> Followers {
        let (sender, updates) = mpsc::channel();
        let renders = Arc::new(Mutex::new((0, 0)));
        let mut readers = Vec::new();
        let children = (0..processes)
            .map(|p| {
                let share = followers / processes + usize::from(p < followers % processes);
                let args = ["follow".to_owned(), share.to_string()];
                let args: Vec<&str> = args.iter().chain(servers).map(String::as_str).collect();
                let mut child = super::spawn_self(&args, "a follower process");
                let out = BufReader::new(child.stdout.take().expect("its output"));
                let (sender, renders) = (sender.clone(), Arc::clone(&renders));
                readers.push(std::thread::spawn(move || {
                    for line in out.lines().map_while(Result::ok) {
                        let words: Vec<&str> = line.split_whitespace().collect();
                        match words.as_slice() {
                            [heard @ ("moved" | "updated"), follower, at] => {
                                let who = (p, follower.parse().expect("a follower"));
                                let at = at.parse().expect("a time");
                                let _ = sender.send(match *heard {
                                    "moved" => Heard::Moved(who, at),
                                    _ => Heard::Updated(who, at),
                                });
                            }
                            ["renders", made, failed] => {
                                let mut totals = renders.lock().expect("the totals");
                                totals.0 += made.parse::<u64>().expect("a number");
                                totals.1 += failed.parse::<u64>().expect("a number");
                            }
                            _ => {}
                        }
                    }
                }));
                child
            })
            .collect();
        Followers {
            children,
            updates,
            renders,
            readers,
        }
    }

    /// Waits until each of the `count` followers put a bundle from a
    /// server in force: the wall-clock time (nanoseconds since the epoch)
    /// of each one's first, and of each one's first `label_moved` event
    /// meanwhile, since the last [`forget`](Self::forget).
    ///
    /// # Panics
    ///
    /// When they do not all come within `give_up`, naming how many did.
    pub fn updates(&self, count: usize, give_up: Duration) -> (Vec<u128>, Vec<u128>) {
        let deadline = std::time::Instant::now() + give_up;
        let mut updated = std::collections::HashMap::with_capacity(count);
        let mut moved = std::collections::HashMap::new();
        while updated.len() < count {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.updates.recv_timeout(left) {
                Ok(Heard::Updated(who, at)) => updated.entry(who).or_insert(at),
                Ok(Heard::Moved(who, at)) => moved.entry(who).or_insert(at),
                Err(_) => panic!(
                    "{} of {count} followers updated within {give_up:?}",
                    updated.len()
                ),
            };
        }
        (
            updated.into_values().collect(),
            moved.into_values().collect(),
        )
    }

    /// Drops what the followers said so far: call it before the change
    /// whose arrival [`updates`](Self::updates) then times.
    pub fn forget(&self) {
        while self.updates.try_recv().is_ok() {}
    }

    /// Stops the processes; how many renders they made, and how many of
    /// those failed.
    pub fn stop(mut self) -> (u64, u64) {
        for child in &mut self.children {
            drop(child.stdin.take());
        }
        for child in &mut self.children {
            let _ = child.wait();
        }
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
        *self.renders.lock().expect("the totals")
    }
}

/// Nanoseconds since the epoch, the clock every process of a run reads.
pub fn wall_clock() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos()
}

/// `follow N SERVER...`: N followers, spread over the servers, each with
/// no disk cache, reporting every 30 s (and on each change); every one
/// renders the prompt every 100 ms. Prints `moved I NANOS` each time a
/// `label_moved` event reaches follower I, `updated I NANOS` each time it
/// puts a bundle from a server in force, and when standard input
/// closes, `renders MADE FAILED`, and ends.
pub fn follow(args: &[String]) {
    let count: usize = args[0].parse().expect("a number of followers");
    let servers = &args[1..];
    let keep: Vec<_> = (0..count)
        .map(|i| {
            let registry = PromptRegistry::new();
            registry
                .register_default(PROMPT, "Until the server answers.")
                .expect("a default");
            let on_change = move |change: &Change| {
                let heard = match change {
                    Change::Updated {
                        source: Source::Server,
                        ..
                    } => "updated",
                    Change::Event { kind, .. } if kind == "label_moved" => "moved",
                    _ => return,
                };
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{heard} {i} {}", wall_clock());
                let _ = out.flush();
            };
            let remote = Remote::new(servers[i % servers.len()].as_str())
                .pack(PACK)
                .label(LABEL)
                .without_disk_cache()
                .on_change(on_change);
            let follower = registry.follow(remote).expect("a follower");
            (registry, follower)
        })
        .collect();
    let (closed, stop) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_line(&mut String::new());
        let _ = closed.send(());
    });
    let (mut renders, mut failed) = (0u64, 0u64);
    while stop.recv_timeout(Duration::from_millis(100)).is_err() {
        for (registry, _) in &keep {
            renders += 1;
            if black_box(registry.render_plain(PROMPT)).is_err() {
                failed += 1;
            }
        }
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "renders {renders} {failed}");
    let _ = out.flush();
}

/// A database of its own on the PostgreSQL server `url` names.
pub fn fresh_postgres(url: &str, prefix: &str) -> String {
    let name = format!("{prefix}_{}", std::process::id());
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        use sqlx::Connection;
        let mut admin = sqlx::PgConnection::connect(url).await.expect("PostgreSQL");
        sqlx::raw_sql(&format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .await
            .expect("a database");
    });
    let (server, _) = url.rsplit_once('/').expect("a URL ending in /DATABASE");
    format!("{server}/{name}")
}

/// The fleet view of the followed label, read from the store.
pub struct FleetView<'a> {
    pub runtime: &'a Runtime,
    pub store: &'a Store,
}

impl FleetView<'_> {
    /// How many instances report, and how many of them are on `revision`.
    pub fn reporting(&self, revision: u64) -> (u64, u64) {
        self.runtime.block_on(async {
            let query = FleetQuery {
                limit: 1,
                ..FleetQuery::now()
            };
            let production = Label::new(LABEL).expect("a label");
            let fleet = self
                .store
                .fleet(PACK, &production, &query)
                .await
                .expect("the view");
            (fleet.reporting, fleet.reporting_on(revision))
        })
    }

    /// The label's newest revision.
    pub fn newest(&self) -> u64 {
        let production = Label::new(LABEL).expect("a label");
        self.runtime
            .block_on(self.store.newest_revision(PACK, &production))
            .expect("the revision")
            .expect("a revision")
            .0
    }

    /// Waits until all `followers` report `revision`; gives up after
    /// `give_up` with what the view shows.
    pub fn wait_for_all(
        &self,
        followers: usize,
        revision: u64,
        give_up: Duration,
    ) -> Result<Duration, (u64, u64)> {
        let start = std::time::Instant::now();
        loop {
            let (all, on) = self.reporting(revision);
            if all == followers as u64 && on == all {
                return Ok(start.elapsed());
            }
            if start.elapsed() > give_up {
                return Err((all, on));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
