//! A registry following a label on a real server (`promptreg::remote`):
//! label moves, a server down at start, a server restarted mid-stream, a
//! server failing behind a load balancer, a server that never answers, an
//! overloaded server, a corrupt cache, a
//! bundle that does not load, a revoked key; renders work throughout.

mod common;

use promptreg::prelude::*;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{TestServer, admin, config, databases, published, writer};
use promptreg::PromptRegistry;
use promptreg::remote::{Change, Follower, Remote, Source};
use promptreg_store::{Label, PackFiles, Scope, Store};

/// Generous: the point is that it happens, not how fast.
const DEADLINE: Duration = Duration::from_secs(30);

fn remote(base: &str, cache: &Path) -> Remote {
    common::follow_demo(base, cache)
}

/// A registry with its own `farewell`, which a followed label's replaces.
fn farewell_registry() -> PromptRegistry {
    let registry = PromptRegistry::new();
    registry
        .register_default("farewell", "Local farewell.")
        .unwrap();
    registry
}

fn farewell(registry: &PromptRegistry) -> String {
    registry.render_plain("farewell").unwrap()
}

/// Waits until `ready` holds, rendering meanwhile: every render must work.
async fn until(registry: &PromptRegistry, what: &str, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() {
        farewell(registry);
        assert!(
            start.elapsed() < DEADLINE,
            "not within {DEADLINE:?}: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A first run, synced with the server at `base`, fills the disk cache in
/// `dir`.
fn fill_cache(base: &str, dir: &Path) {
    let registry = PromptRegistry::new();
    let follower = registry.follow(remote(base, dir)).unwrap();
    assert!(
        follower.wait_for_first_sync(DEADLINE),
        "{:?}",
        follower.status()
    );
}

/// Pushes a new `farewell` and moves `production` to it.
async fn ship_farewell(store: &Store, text: &str) {
    let mut files = PackFiles::default();
    files.insert("defaults/farewell.md", text);
    store
        .push_prompt("demo", "farewell", &files, &writer(), "new farewell")
        .await
        .unwrap();
    let latest = store
        .entries_at("demo", &Label::latest())
        .await
        .unwrap()
        .into_iter()
        .find(|e| e.prompt == "farewell")
        .unwrap()
        .number;
    store
        .move_label(
            "demo",
            "farewell",
            &Label::new("production").unwrap(),
            latest,
            Some(latest - 1),
            &writer(),
            "ship",
        )
        .await
        .unwrap();
}

fn rendered_is(registry: &PromptRegistry, text: &str) -> bool {
    registry.render_plain("farewell").is_ok_and(|t| t == text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_move_reaches_the_registry_and_parts_name_the_server() {
    for db in databases("follow_move").await {
        let server = TestServer::start(published(&db).await, config()).await;
        let cache = tempfile::tempdir().unwrap();
        let registry = farewell_registry();
        registry.append("farewell", "Host rule.").unwrap();
        let follower = registry.follow(remote(&server.base, cache.path())).unwrap();
        // A render may see the bundle a moment before the status does.
        until(&registry, "first sync", || {
            rendered_is(&registry, "Goodbye.\n\nHost rule.")
                && follower.status().source == Source::Server
        })
        .await;
        until(&registry, "stream connected", || {
            follower.status().connected
        })
        .await;

        ship_farewell(&server.store, "See you.\n").await;
        until(&registry, "the label move", || {
            rendered_is(&registry, "See you.\n\nHost rule.")
                && follower.status().versions.get("farewell") == Some(&2)
        })
        .await;
        let status = follower.status();
        assert_eq!(status.versions.get("farewell"), Some(&2), "{status:?}");
        assert_eq!(status.last_error, None, "{}", db.name);
        let trace = registry.render_traced("farewell", &()).unwrap();
        let provenance = trace.parts[0].provenance.as_ref().unwrap();
        assert_eq!(provenance.version, Some(2), "{}", db.name);
        let file = provenance.file.clone().unwrap();
        assert_eq!(
            file.to_string_lossy(),
            format!(
                "{}/v1/packs/demo/labels/production/defaults/farewell.md",
                server.base
            ),
            "{}",
            db.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fetch_refused_as_overloaded_is_retried_after_retry_after_without_an_event() {
    let db = common::sqlite();
    let mut limited = config();
    limited.max_requests = 1;
    let server = TestServer::start(published(&db).await, limited).await;
    let (stalled, _) = common::hold_the_only_place(&server).await;
    let cache = tempfile::tempdir().unwrap();
    let registry = farewell_registry();
    let follower = registry.follow(remote(&server.base, cache.path())).unwrap();
    // The stream opens (it has its own limit); the bundle is refused.
    until(&registry, "the refusal", || {
        let status = follower.status();
        status.connected
            && status
                .last_error
                .is_some_and(|e| e.contains("HTTP 503") && e.contains("retry after"))
    })
    .await;
    assert!(rendered_is(&registry, "Local farewell."));
    // No event will come: the follower fetches again on its own.
    drop(stalled);
    until(&registry, "the retried fetch", || {
        rendered_is(&registry, "Goodbye.") && follower.status().last_error.is_none()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_down_at_start_leaves_the_cache_in_force_until_it_comes_back() {
    for db in databases("follow_down").await {
        let cache = tempfile::tempdir().unwrap();
        let mut server = TestServer::start(published(&db).await, config()).await;
        let addr = server.addr;
        fill_cache(&server.base, cache.path());
        let base = server.base.clone();
        let store = server.store.clone();
        server.stop().await;
        ship_farewell(&store, "Back again.\n").await;

        let registry = PromptRegistry::new();
        let follower = registry.follow(remote(&base, cache.path())).unwrap();
        // Offline: the cached bundle, at once.
        assert_eq!(farewell(&registry), "Goodbye.", "{}", db.name);
        assert_eq!(follower.status().source, Source::Cache);
        until(&registry, "the failure reported", || {
            follower.status().last_error.is_some()
        })
        .await;

        let _server = TestServer::start(
            store,
            promptreg_server::Config {
                listen: addr,
                ..config()
            },
        )
        .await;
        until(&registry, "catching up by itself", || {
            rendered_is(&registry, "Back again.")
        })
        .await;
        // The status follows the render: it is updated once the bundle is
        // in force.
        until(&registry, "the status saying so", || {
            let status = follower.status();
            status.source == Source::Server && status.last_error.is_none()
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_cache_is_ignored_with_a_warning() {
    let cache = tempfile::tempdir().unwrap();
    let db = common::sqlite();
    let mut server = TestServer::start(published(&db).await, config()).await;
    fill_cache(&server.base, cache.path());
    let file = std::fs::read_dir(cache.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let whole = std::fs::read(&file).unwrap();
    std::fs::write(&file, &whole[..whole.len() / 2]).unwrap();
    server.stop().await;

    let registry = farewell_registry();
    // The server is down: the host\'s prompts stay in force.
    let follower = registry.follow(remote(&server.base, cache.path())).unwrap();
    let status = follower.status();
    assert_eq!(status.source, Source::Local, "{status:?}");
    let warning = status.cache_warning.unwrap();
    assert!(warning.contains("does not match its hash"), "{warning}");
    assert!(warning.contains(&file.display().to_string()), "{warning}");
    assert_eq!(farewell(&registry), "Local farewell.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_key_is_reported_and_the_last_good_bundle_stays() {
    for db in databases("follow_revoked").await {
        let store = published(&db).await;
        let (_, secret) = store
            .create_key("app", None, Scope::Read, &admin())
            .await
            .unwrap();
        let server = TestServer::start(store, config()).await;
        let cache = tempfile::tempdir().unwrap();
        let registry = PromptRegistry::new();
        let follower = registry
            .follow(remote(&server.base, cache.path()).key(secret))
            .unwrap();
        assert!(
            follower.wait_for_first_sync(DEADLINE),
            "{:?}",
            follower.status()
        );

        server.store.revoke_key("app", &admin()).await.unwrap();
        follower.resync();
        until(&registry, "the refusal reported", || {
            follower.status().last_error.is_some()
        })
        .await;
        let error = follower.status().last_error.unwrap();
        assert!(error.contains("HTTP 401"), "{error}");
        assert!(error.contains("revoked"), "{error}");
        assert_eq!(farewell(&registry), "Goodbye.", "{}", db.name);
    }
}

/// A server that answers every request with the bundle it holds now (and
/// 404 for the event stream, so the follower polls).
fn bundle_server(bundle: Arc<Mutex<String>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut request = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            while reader.read_line(&mut request).is_ok_and(|n| n > 2) {}
            let body = bundle.lock().unwrap().clone();
            let (status, body) = if request.starts_with("GET /v1/events") {
                ("404 Not Found", String::new())
            } else {
                ("200 OK", body)
            };
            let etag = format!("\"{}\"", body.len());
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\netag: {etag}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    base
}

fn bundle(manifest: &str, farewell: &str) -> String {
    serde_json::json!({
        "pack": "demo",
        "label": "production",
        "entries": [
            { "id": "@pack", "version": 1, "files": { "promptreg.toml": manifest } },
            { "id": "farewell", "version": 1, "files": { "defaults/farewell.md": farewell } },
        ],
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_that_does_not_load_keeps_the_last_good_one_without_a_stream() {
    let good = "name = \"demo\"\nkeys = [\"farewell\"]\n[user]\nprompts_dir = \".demo/prompts\"\n";
    let served = Arc::new(Mutex::new(bundle(good, "Polled.\n")));
    let base = bundle_server(Arc::clone(&served));
    let cache = tempfile::tempdir().unwrap();
    let registry = farewell_registry();
    let follower = registry.follow(remote(&base, cache.path())).unwrap();
    until(&registry, "a poll", || rendered_is(&registry, "Polled.")).await;

    *served.lock().unwrap() = bundle("name = \"demo\"\nkeys = [", "Broken.\n");
    until(&registry, "the bad bundle reported", || {
        follower.status().last_error.is_some()
    })
    .await;
    let error = follower.status().last_error.unwrap();
    assert!(error.contains("does not load as a pack"), "{error}");
    assert!(error.contains("promptreg.toml"), "{error}");
    assert_eq!(farewell(&registry), "Polled.");

    *served.lock().unwrap() = bundle(good, "Fixed.\n");
    until(&registry, "the fix", || {
        rendered_is(&registry, "Fixed.") && follower.status().last_error.is_none()
    })
    .await;
    drop::<Follower>(follower);
}

/// The ids of the events a follower reported, as they arrived.
fn seen_ids(seen: &Mutex<Vec<String>>) -> Vec<u64> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|id| id.parse().unwrap())
        .collect()
}

/// A registry, its follower, and the ids of the events the follower
/// reported.
type Recording = (PromptRegistry, Follower, Arc<Mutex<Vec<String>>>);

/// A registry with its own `farewell`, following `base`, and the ids of
/// the events its follower reports (read them with [`seen_ids`]).
fn recording_follower(base: &str, cache: &Path) -> Recording {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let events = Arc::clone(&seen);
    let registry = farewell_registry();
    let follower = registry
        .follow(remote(base, cache).on_change(move |change| {
            if let Change::Event { id: Some(id), .. } = change {
                events.lock().unwrap().push(id.clone());
            }
        }))
        .unwrap();
    (registry, follower, seen)
}

/// Followers of one URL, each with its own registry, disk cache and
/// record of the events it heard of: the small version of the fleets the
/// scale examples run by thousands (`examples/fleet-failover.rs`).
struct Fleet {
    members: Vec<Recording>,
    _caches: tempfile::TempDir,
}

/// How many followers the fleet tests run.
const FLEET: usize = 100;

impl Fleet {
    fn follow(base: &str) -> Fleet {
        let caches = tempfile::tempdir().unwrap();
        let members = (0..FLEET)
            .map(|n| {
                let cache = caches.path().join(n.to_string());
                recording_follower(base, &cache)
            })
            .collect();
        Fleet {
            members,
            _caches: caches,
        }
    }

    /// Waits until `ready` holds for every follower, every registry
    /// rendering meanwhile: every render must work.
    async fn until(&self, what: &str, ready: impl Fn(&PromptRegistry, &Follower) -> bool) {
        let start = Instant::now();
        loop {
            let mut waiting = 0;
            for (registry, follower, _) in &self.members {
                farewell(registry);
                waiting += usize::from(!ready(registry, follower));
            }
            if waiting == 0 {
                return;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "not within {DEADLINE:?}: {what} ({waiting} of {FLEET} followers still waiting)"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until every follower has heard of the events up to `newest`
    /// (from a replay) and renders `text` (the bundle it then fetched).
    async fn until_caught_up(&self, newest: u64, text: &str) {
        self.until("the replay up to the newest event", |_, f| {
            f.status().last_event_id == Some(newest.to_string())
        })
        .await;
        self.until("the catch-up", |r, _| rendered_is(r, text))
            .await;
    }

    /// Every follower heard of `expected`, each event once and in order.
    fn assert_heard(&self, expected: &[u64], context: &str) {
        for (n, (_, follower, seen)) in self.members.iter().enumerate() {
            assert_eq!(seen_ids(seen), expected, "follower {n}: {context}");
            assert_eq!(follower.status().versions.get("farewell"), Some(&4));
        }
    }
}

/// The lines of `server`'s request counts with a 5xx status other than
/// the documented overload answer (503).
async fn server_errors(server: &TestServer) -> Vec<String> {
    let text = server.get("/metrics").await.text().await.unwrap();
    text.lines()
        .filter(|l| l.starts_with("promptreg_http_requests_total"))
        .filter(|l| l.contains("status=\"5") && !l.contains("status=\"503\""))
        .map(str::to_owned)
        .collect()
}

/// The ids of the events the store logged after `first`.
async fn event_ids_after(store: &Store, first: u64) -> Vec<u64> {
    let events = store.events_since(first, 1000).await.unwrap();
    events.iter().map(|e| e.id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_is_resumed_by_every_follower_from_the_last_event_without_missing_one() {
    for db in databases("follow_restart").await {
        let mut server = TestServer::start(published(&db).await, config()).await;
        let (addr, base, store) = (server.addr, server.base.clone(), server.store.clone());
        let first_event = store.last_event_id().await.unwrap();
        let fleet = Fleet::follow(&base);
        fleet
            .until("every stream connected", |_, f| f.status().connected)
            .await;
        ship_farewell(&store, "Before the restart.\n").await;
        fleet
            .until("the move before the restart", |r, _| {
                rendered_is(r, "Before the restart.")
            })
            .await;

        server.stop().await;
        // Two moves while the server is down: the followers cannot hear of
        // them but from the replay when they resume.
        ship_farewell(&store, "While it was down.\n").await;
        ship_farewell(&store, "The last move.\n").await;
        fleet
            .until("the last good bundle while the server is down", |r, _| {
                farewell(r) == "Before the restart."
            })
            .await;
        let newest = store.last_event_id().await.unwrap();

        // The whole fleet reconnects at once, with its back-off and jitter.
        let server = TestServer::start(
            store.clone(),
            promptreg_server::Config {
                listen: addr,
                ..config()
            },
        )
        .await;
        fleet.until_caught_up(newest, "The last move.").await;
        // Every event after the first one, each once and in order: the
        // moves made while the server was down came from the replay.
        let expected = event_ids_after(&store, first_event).await;
        fleet.assert_heard(&expected, db.name);
        assert_eq!(
            server_errors(&server).await,
            Vec::<String>::new(),
            "{}",
            db.name
        );
    }
}

/// A load balancer in front of a team's servers, as followers reach them:
/// each connection goes to the first server still in service. Taking one
/// out of service cuts its connections, as its crash would.
struct Balancer {
    base: String,
    backends: Arc<Mutex<Vec<Backend>>>,
}

/// A server in service and the connections relayed to it.
type Backend = (std::net::SocketAddr, Vec<tokio::task::AbortHandle>);

impl Balancer {
    async fn start(servers: &[&TestServer]) -> Balancer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let backends = Arc::new(Mutex::new(
            servers
                .iter()
                .map(|s| (s.addr, Vec::new()))
                .collect::<Vec<_>>(),
        ));
        let routing = Arc::clone(&backends);
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let first = routing.lock().unwrap().first().map(|(addr, _)| *addr);
                let Some(backend) = first else { continue };
                let Ok(mut outbound) = tokio::net::TcpStream::connect(backend).await else {
                    continue;
                };
                let relay = tokio::spawn(async move {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                });
                let mut backends = routing.lock().unwrap();
                match backends.iter_mut().find(|(addr, _)| *addr == backend) {
                    Some((_, relays)) => relays.push(relay.abort_handle()),
                    // Taken out of service meanwhile.
                    None => relay.abort(),
                }
            }
        });
        Balancer { base, backends }
    }

    /// Takes `server` out of service, cutting its connections.
    fn fail(&self, server: &TestServer) {
        let mut backends = self.backends.lock().unwrap();
        backends.retain(|(addr, relays)| {
            let failed = *addr == server.addr;
            if failed {
                relays.iter().for_each(tokio::task::AbortHandle::abort);
            }
            !failed
        });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_holds_one_connection_to_its_server_its_stream() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    let cache = tempfile::tempdir().unwrap();
    let registry = farewell_registry();
    let follower = registry.follow(remote(&server.base, cache.path())).unwrap();
    until(&registry, "a sync, the stream and a report", || {
        let status = follower.status();
        status.source == Source::Server && status.connected && status.last_report.is_some()
    })
    .await;
    // The follower's fetch and report leave no connection open; the
    // metrics request's own is the other one.
    common::eventually(|| async {
        let text = server.get("/metrics").await.text().await.unwrap();
        let open = text
            .lines()
            .find_map(|l| l.strip_prefix("promptreg_connections_open "))
            .map(|n| n.trim().to_owned());
        (open.as_deref() == Some("2")).then_some(())
    })
    .await;
}

/// How many event streams `server` holds, from its metrics.
async fn streams(server: &TestServer) -> Option<String> {
    let text = server.get("/metrics").await.text().await.unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("promptreg_sse_clients "))
        .map(|n| n.trim().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_load_balancer_followers_move_to_another_server_when_theirs_fails_and_miss_nothing()
 {
    let Some(db) = common::postgres_only("follow_failover").await else {
        return;
    };
    let a = TestServer::start(published(&db).await, config()).await;
    let b = TestServer::start(db.open().await, config()).await;
    let balancer = Balancer::start(&[&a, &b]).await;
    let store = a.store.clone();
    let first_event = store.last_event_id().await.unwrap();
    let fleet = Fleet::follow(&balancer.base);
    fleet
        .until("every stream through the balancer", |_, f| {
            f.status().connected
        })
        .await;
    assert_eq!(streams(&a).await, Some(FLEET.to_string()));
    // A move through the other server reaches the followers on this one.
    ship_farewell(&b.store, "Through b.\n").await;
    fleet
        .until("the move through b", |r, _| rendered_is(r, "Through b."))
        .await;

    balancer.fail(&a);
    // Two moves while the followers move over: they hear of them from the
    // replay on b, or from the bundle they fetch there.
    ship_farewell(&store, "While they moved.\n").await;
    ship_farewell(&store, "The last move.\n").await;
    let newest = store.last_event_id().await.unwrap();
    fleet.until_caught_up(newest, "The last move.").await;
    assert_eq!(
        streams(&b).await,
        Some(FLEET.to_string()),
        "the followers are on b"
    );
    let expected = event_ids_after(&store, first_event).await;
    fleet.assert_heard(&expected, "every event once, in order");
    assert_eq!(server_errors(&b).await, Vec::<String>::new());
}

/// A listener that accepts connections and never answers them (nor reads
/// them); it lives as long as the test.
fn silent_server() -> (String, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            match stream {
                Ok(stream) => held.push(stream),
                Err(_) => return,
            }
        }
    });
    (base, handle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_times_out_and_the_last_good_bundle_renders() {
    // A first run against a real server leaves its bundle in the cache.
    let cache = tempfile::tempdir().unwrap();
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    fill_cache(&server.base, cache.path());
    // The same server's cache file serves the silent one: it is named by
    // the server's address, so copy it under the silent server's name.
    let (silent, _listener) = silent_server();
    let cached = std::fs::read_dir(cache.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let bytes = std::fs::read(&cached).unwrap();
    let renamed = cached.file_name().unwrap().to_string_lossy().replace(
        &server.addr.to_string().replace(':', "_"),
        &silent.trim_start_matches("http://").replace(':', "_"),
    );
    std::fs::write(cache.path().join(renamed), bytes).unwrap();

    let registry = farewell_registry();
    let follower = registry
        .follow(remote(&silent, cache.path()).timeout(Duration::from_millis(300)))
        .unwrap();
    assert_eq!(follower.status().source, Source::Cache);
    assert!(!follower.wait_for_first_sync(Duration::from_millis(100)));
    until(&registry, "the timeout reported", || {
        follower.status().last_error.is_some()
    })
    .await;
    let status = follower.status();
    let error = status.last_error.clone().unwrap();
    assert!(error.contains(&silent), "{error}");
    assert!(error.to_lowercase().contains("timeout"), "{error}");
    assert_eq!((status.source, status.connected), (Source::Cache, false));
    assert_eq!(farewell(&registry), "Goodbye.");
    // It keeps trying, and renders keep answering meanwhile.
    follower.resync();
    for _ in 0..10 {
        assert_eq!(farewell(&registry), "Goodbye.");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let answer = follower.wait_for_first_answer(Duration::ZERO).unwrap_err();
    assert!(answer.contains(&silent), "{answer}");
}

/// No clock decides what is in force: the cache is checked by its hash,
/// never by its age; freshness is the server's ETag; waits use a monotonic
/// clock. A cache file dated in 1970 or a century ahead is used alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_is_used_whatever_its_date() {
    let cache = tempfile::tempdir().unwrap();
    let db = common::sqlite();
    let mut server = TestServer::start(published(&db).await, config()).await;
    fill_cache(&server.base, cache.path());
    server.stop().await;
    let file = std::fs::read_dir(cache.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let century = Duration::from_secs(100 * 365 * 24 * 3600);
    for date in [
        std::time::UNIX_EPOCH,
        std::time::SystemTime::now() + century,
    ] {
        let opened = std::fs::File::options().write(true).open(&file).unwrap();
        opened.set_modified(date).unwrap();
        drop(opened);
        let registry = PromptRegistry::new();
        let follower = registry.follow(remote(&server.base, cache.path())).unwrap();
        let status = follower.status();
        assert_eq!(status.source, Source::Cache, "{date:?}: {status:?}");
        assert_eq!(status.cache_warning, None, "{date:?}");
        assert_eq!(farewell(&registry), "Goodbye.", "{date:?}");
    }
}

/// A release is one `released` event, with no `label_moved` per prompt:
/// the follower syncs on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_reaches_the_registry() {
    for db in databases("follow_release").await {
        let server = TestServer::start(published(&db).await, config()).await;
        let cache = tempfile::tempdir().unwrap();
        let registry = farewell_registry();
        let follower = registry.follow(remote(&server.base, cache.path())).unwrap();
        until(&registry, "first sync and the stream", || {
            let status = follower.status();
            status.source == Source::Server && status.connected
        })
        .await;

        let mut files = PackFiles::default();
        files.insert("defaults/farewell.md", "Released.\n");
        let store = &server.store;
        store
            .push_prompt("demo", "farewell", &files, &writer(), "")
            .await
            .unwrap();
        let production = Label::new("production").unwrap();
        store
            .release("demo", &Label::latest(), &production, None, &writer(), "")
            .await
            .unwrap();
        until(&registry, "the release", || {
            farewell(&registry) == "Released."
        })
        .await;
    }
}

/// The fleet view of `production`, read from the store.
async fn fleet(store: &Store) -> promptreg_store::Fleet {
    let production = Label::new("production").unwrap();
    store
        .fleet("demo", &production, &promptreg_store::FleetQuery::now())
        .await
        .unwrap()
}

/// A follower reports on start and on each change: the fleet view shows
/// it on the label's revision; its renders name the label, the revision
/// and the version's digest, also as tracing attributes; a restore of the
/// same state is a new revision it learns from a `304`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_reports_what_it_serves_and_renders_carry_the_revision() {
    use promptreg::trace_attributes::{AttributeValue, LABEL, PROMPT_DIGEST, REVISION};
    for db in databases("follow_reports").await {
        let server = TestServer::start(published(&db).await, config()).await;
        let production = Label::new("production").unwrap();
        let cache = tempfile::tempdir().unwrap();
        let registry = farewell_registry();
        let follower = registry
            .follow(
                remote(&server.base, cache.path())
                    .instance_id("web-1")
                    .instance_name("<b>web</b> one")
                    .report_interval(Duration::from_secs(60)),
            )
            .unwrap();
        let first = server
            .store
            .newest_revision("demo", &production)
            .await
            .unwrap()
            .unwrap()
            .0;
        until(&registry, "a report on the first revision", || {
            follower.status().revision == Some(first) && follower.status().last_report.is_some()
        })
        .await;
        let mut view = fleet(&server.store).await;
        for _ in 0..100 {
            if view.reporting_on(first) == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            view = fleet(&server.store).await;
        }
        let instance = &view.instances[0];
        assert_eq!(
            (instance.instance.as_str(), instance.name.as_deref()),
            ("web-1", Some("<b>web</b> one")),
            "{}",
            db.name
        );
        assert_eq!(
            (
                instance.revision,
                instance.library.starts_with("promptreg-rust/")
            ),
            (Some(first), true)
        );
        assert_eq!(instance.interval_ms, 60_000);

        ship_farewell(&server.store, "See you.\n").await;
        let second = server
            .store
            .newest_revision("demo", &production)
            .await
            .unwrap()
            .unwrap()
            .0;
        assert!(second > first);
        until(&registry, "the move, reported", || {
            follower.status().revision == Some(second)
        })
        .await;
        let converged = async {
            for _ in 0..200 {
                if fleet(&server.store).await.converged(second, 1.0) {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            false
        };
        assert!(
            converged.await,
            "the report of revision {second} within 5 s"
        );

        let trace = registry.render_traced("farewell", &()).unwrap();
        let attributes: std::collections::BTreeMap<_, _> =
            trace.trace_attributes().into_iter().collect();
        assert_eq!(
            attributes[LABEL],
            AttributeValue::String("production".into())
        );
        assert_eq!(attributes[REVISION], AttributeValue::Int(second as i64));
        let digest = server
            .store
            .entries_at("demo", &production)
            .await
            .unwrap()
            .into_iter()
            .find(|e| e.prompt == "farewell")
            .unwrap()
            .digest;
        assert_eq!(attributes[PROMPT_DIGEST], AttributeValue::String(digest));

        // Restoring the first revision, then the second again: the state
        // of the second comes back as a new revision, with the same ETag.
        server
            .store
            .restore("demo", &production, first, None, &writer(), "back")
            .await
            .unwrap();
        server
            .store
            .restore("demo", &production, second, None, &writer(), "forth")
            .await
            .unwrap();
        let fourth = server
            .store
            .newest_revision("demo", &production)
            .await
            .unwrap()
            .unwrap()
            .0;
        until(&registry, "the restored revision", || {
            follower.status().revision == Some(fourth)
        })
        .await;
        let provenance = registry.render_traced("farewell", &()).unwrap().parts[0]
            .provenance
            .clone()
            .unwrap();
        assert_eq!(provenance.revision, Some(fourth), "{}", db.name);
    }
}

/// Reports off: the server never hears of the follower. Reports refused
/// (an id the server does not take): the follow goes on, and the status
/// says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_can_be_off_and_a_refused_report_fails_nothing() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    let cache = tempfile::tempdir().unwrap();
    let quiet = PromptRegistry::new();
    let silent = quiet
        .follow(remote(&server.base, cache.path()).without_reports())
        .unwrap();
    assert!(silent.wait_for_first_sync(DEADLINE));
    let refused = PromptRegistry::new();
    let other_cache = tempfile::tempdir().unwrap();
    let bad = refused
        .follow(remote(&server.base, other_cache.path()).instance_id("not an id"))
        .unwrap();
    assert!(bad.wait_for_first_sync(DEADLINE));
    until(&refused, "the refusal", || {
        bad.status().report_error.is_some()
    })
    .await;
    let status = bad.status();
    assert_eq!(status.source, Source::Server, "{status:?}");
    assert!(
        status.report_error.unwrap().contains("HTTP 400"),
        "{:?}",
        bad.status()
    );
    assert_eq!(fleet(&server.store).await.instances_total, 0);
    assert_eq!(farewell(&refused), "Goodbye.");
    drop((silent, bad));
}

/// `latest` one version of `farewell` ahead of `production`: "See you.".
async fn see_you_at_latest(store: &Store) {
    let mut files = PackFiles::default();
    files.insert("defaults/farewell.md", "See you.\n");
    store
        .push_prompt("demo", "farewell", &files, &writer(), "see you")
        .await
        .unwrap();
}

/// The first subject `user-N` that split `rule` sends to `arm`.
fn subject_on(rule: promptreg::split::SplitRule, arm: promptreg::split::Arm) -> String {
    (0..)
        .map(|n| format!("user-{n}"))
        .find(|s| rule.arm(s) == arm)
        .unwrap()
}

/// A split on the followed label: the follower fetches its candidate and
/// serves it to the subjects its share picks, the same subject always the
/// same arm; a new share moves subjects to the candidate; an abort serves
/// everyone the label again, and a promotion makes the candidate the
/// label.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_split_serves_its_candidate_to_its_share_of_subjects() {
    use promptreg::split::{Arm, SplitRule};
    use promptreg_store::{Candidate, Share};
    for db in databases("follow_split").await {
        let server = TestServer::start(published(&db).await, config()).await;
        see_you_at_latest(&server.store).await;
        let cache = tempfile::tempdir().unwrap();
        let registry = farewell_registry();
        let follower = registry.follow(remote(&server.base, cache.path())).unwrap();
        until(&registry, "first sync", || {
            follower.status().source == Source::Server
        })
        .await;
        let production = Label::new("production").unwrap();
        let share = |p: &str| p.parse::<Share>().unwrap();
        let candidate = Candidate::newest_of(Label::latest());
        let split = server
            .store
            .start_split("demo", &production, &candidate, share("50"), &writer(), "")
            .await
            .unwrap();
        let rule = SplitRule {
            id: split.id,
            basis_points: 5000,
        };
        until(&registry, "the split", || {
            follower.status().split == Some(rule)
        })
        .await;
        let on = |arm| subject_on(rule, arm);
        let (stable, chosen) = (on(Arm::Stable), on(Arm::Candidate));
        for _ in 0..3 {
            assert_eq!(
                registry.render_for(&chosen, "farewell", &()).unwrap(),
                "See you.",
                "{}",
                db.name
            );
            assert_eq!(
                registry.render_for(&stable, "farewell", &()).unwrap(),
                "Goodbye."
            );
        }
        assert_eq!(registry.arm_for(&chosen), Some((split.id, Arm::Candidate)));
        // Its report says it holds the candidate: the fleet view counts it.
        let holding = async {
            for _ in 0..200 {
                let view = fleet(&server.store).await;
                if view.split == Some((split.id, 1)) {
                    return Some(view.summary());
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            None
        };
        let summary = holding
            .await
            .expect("the fleet view counts the candidate held");
        assert!(
            summary.ends_with(&format!("; split {}'s candidate held by 1", split.id)),
            "{summary}"
        );
        assert_eq!(farewell(&registry), "Goodbye.", "no subject: the label");
        let provenance = registry
            .snapshot_for(&chosen)
            .render_traced("farewell", &())
            .unwrap()
            .parts[0]
            .provenance
            .clone()
            .unwrap();
        assert!(
            provenance
                .file
                .clone()
                .unwrap()
                .to_string_lossy()
                .contains("/labels/production/split/bundle/")
        );
        assert_eq!(provenance.split, Some(split.id));
        use promptreg::trace_attributes::{ARM, AttributeValue, SPLIT};
        let traced = registry
            .snapshot_for(&chosen)
            .render_traced("farewell", &())
            .unwrap();
        let attributes: std::collections::BTreeMap<_, _> =
            traced.trace_attributes().into_iter().collect();
        assert_eq!(attributes[SPLIT], AttributeValue::Int(split.id as i64));
        assert_eq!(attributes[ARM], AttributeValue::String("candidate".into()));

        // All subjects, then none.
        server
            .store
            .set_split_share("demo", &production, share("100"), None, &writer(), "")
            .await
            .unwrap();
        let all = SplitRule {
            id: split.id,
            basis_points: 10_000,
        };
        until(&registry, "the new share", || {
            follower.status().split == Some(all)
        })
        .await;
        assert_eq!(
            registry.render_for(&stable, "farewell", &()).unwrap(),
            "See you."
        );
        server
            .store
            .abort_split("demo", &production, None, &writer(), "")
            .await
            .unwrap();
        until(&registry, "the abort", || follower.status().split.is_none()).await;
        assert_eq!(
            registry.render_for(&chosen, "farewell", &()).unwrap(),
            "Goodbye."
        );

        // Promoted: the label is the candidate, for everyone.
        server
            .store
            .start_split("demo", &production, &candidate, share("10"), &writer(), "")
            .await
            .unwrap();
        until(&registry, "the second split", || {
            follower.status().split.is_some()
        })
        .await;
        server
            .store
            .promote_split("demo", &production, None, &writer(), "")
            .await
            .unwrap();
        until(&registry, "the promotion", || {
            follower.status().split.is_none() && rendered_is(&registry, "See you.")
        })
        .await;
        assert_eq!(
            registry.render_for(&stable, "farewell", &()).unwrap(),
            "See you."
        );
    }
}

/// A follower restarted while the server is down serves the split it
/// cached: each subject keeps its arm.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_split_is_sticky_across_a_restart_with_the_server_down() {
    use promptreg::split::{Arm, SplitRule};
    use promptreg_store::{Candidate, Share};
    for db in databases("follow_split_sticky").await {
        let mut server = TestServer::start(published(&db).await, config()).await;
        see_you_at_latest(&server.store).await;
        let production = Label::new("production").unwrap();
        let share: Share = "30".parse().unwrap();
        let candidate = Candidate::newest_of(Label::latest());
        let split = server
            .store
            .start_split("demo", &production, &candidate, share, &writer(), "")
            .await
            .unwrap();
        let rule = SplitRule {
            id: split.id,
            basis_points: 3000,
        };
        let on = |arm| subject_on(rule, arm);
        let (stable, chosen) = (on(Arm::Stable), on(Arm::Candidate));
        let cache = tempfile::tempdir().unwrap();
        {
            let registry = farewell_registry();
            let follower = registry.follow(remote(&server.base, cache.path())).unwrap();
            until(&registry, "the split", || {
                follower.status().split == Some(rule)
            })
            .await;
        }
        let base = server.base.clone();
        server.stop().await;

        let registry = PromptRegistry::new();
        let follower = registry.follow(remote(&base, cache.path())).unwrap();
        let status = follower.status();
        assert_eq!(
            (status.source, status.split),
            (Source::Cache, Some(rule)),
            "{status:?}"
        );
        assert_eq!(
            registry.render_for(&chosen, "farewell", &()).unwrap(),
            "See you."
        );
        assert_eq!(
            registry.render_for(&stable, "farewell", &()).unwrap(),
            "Goodbye.",
            "{}",
            db.name
        );
        drop(follower);
    }
}

/// A candidate that does not load (a label's revision without the pack's
/// manifest): every subject gets the label's own state, and the status
/// says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_candidate_that_does_not_load_leaves_everyone_on_the_label() {
    use promptreg_store::{Candidate, Share};
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    see_you_at_latest(&server.store).await;
    let partial = Label::new("partial").unwrap();
    server
        .store
        .move_label(
            "demo",
            "farewell",
            &partial,
            2,
            None,
            &writer(),
            "only farewell",
        )
        .await
        .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let registry = farewell_registry();
    let follower = registry.follow(remote(&server.base, cache.path())).unwrap();
    until(&registry, "first sync", || {
        follower.status().source == Source::Server
    })
    .await;
    let production = Label::new("production").unwrap();
    let share: Share = "100".parse().unwrap();
    server
        .store
        .start_split(
            "demo",
            &production,
            &Candidate::newest_of(partial),
            share,
            &writer(),
            "",
        )
        .await
        .unwrap();
    until(&registry, "the refusal", || {
        follower
            .status()
            .last_error
            .is_some_and(|e| e.contains("split/bundle"))
    })
    .await;
    let status = follower.status();
    assert_eq!(status.split, None, "{status:?}");
    assert!(
        status
            .last_error
            .unwrap()
            .contains("does not load as a pack")
    );
    assert_eq!(
        registry.render_for("anyone", "farewell", &()).unwrap(),
        "Goodbye."
    );
    assert_eq!(registry.arm_for("anyone"), None);
}
