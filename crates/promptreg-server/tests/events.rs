//! `GET /v1/events`: order, ids, replay, slow clients, several servers,
//! many clients, shutdown.

mod common;

use std::time::Duration;

use common::{Sse, SseClient, TestServer, config, databases, json, published, writer};
use promptreg_store::{Candidate, Label, PackFiles, Share};
use serde_json::json;

async fn publish(server: &TestServer, text: &str) {
    let created = server
        .post(
            "/v1/packs/demo/prompts/farewell/versions",
            json!({ "files": { "defaults/farewell.md": text } }),
        )
        .await;
    assert!(
        created.status().is_success(),
        "{}",
        created.text().await.unwrap()
    );
}

fn ids(events: &[Sse]) -> Vec<u64> {
    events.iter().map(|e| e.id.unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_arrive_in_order_with_ids_and_last_event_id_replays_what_was_missed() {
    for db in databases("server_events").await {
        let server = TestServer::start(published(&db).await, config()).await;
        let mut client = SseClient::connect(&server, None).await;
        publish(&server, "Bye.\n").await;
        let production = Label::new("production").unwrap();
        server
            .store
            .move_label(
                "demo",
                "farewell",
                &production,
                2,
                Some(1),
                &writer(),
                "ship",
            )
            .await
            .unwrap();
        server
            .store
            .release(
                "demo",
                &Label::latest(),
                &Label::new("staging").unwrap(),
                None,
                &writer(),
                "",
            )
            .await
            .unwrap();
        // A push: a version and `latest`; a move; a release of three
        // prompts, one event; each change of a label then its revision.
        let events = client.take(7).await;
        let kinds: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "version_created",
                "label_moved",
                "revision_created",
                "label_moved",
                "revision_created",
                "released",
                "revision_created"
            ],
            "{}",
            db.name
        );
        let got = ids(&events);
        assert!(
            got.windows(2).all(|w| w[0] < w[1]),
            "{}: ids in order: {got:?}",
            db.name
        );
        assert_eq!(events[0].data["pack"], "demo");
        assert_eq!(events[0].data["prompt"], "farewell", "{:?}", events[0]);
        assert_eq!(events[3].data["label"], "production", "{:?}", events[3]);
        assert_eq!(events[3].data["to"], 2);
        assert_eq!(events[4].data["label"], "production", "{:?}", events[4]);
        assert_eq!(events[4].data["cause"], "move", "{:?}", events[4]);
        assert_eq!(events[5].data["label"], "staging", "{:?}", events[5]);
        assert_eq!(
            events[5].data["moves"][2],
            json!({ "prompt": "greeting", "from": null, "to": 1 }),
            "{:?}",
            events[5]
        );
        // The revision's digest is the label's bundle ETag.
        let bundle = server.get("/v1/packs/demo/labels/staging").await;
        let etag = bundle.headers()["etag"].to_str().unwrap().to_owned();
        assert_eq!(
            etag,
            format!("\"{}\"", events[6].data["digest"].as_str().unwrap())
        );
        assert_eq!(events[6].data["revision"], 1, "{:?}", events[6]);
        assert_eq!(events[6].data["cause"], "release", "{:?}", events[6]);
        for e in &events {
            assert_eq!(
                e.event,
                e.data["type"].as_str().unwrap(),
                "the SSE event name is the type"
            );
        }
        // A client that saw only the first reconnects and gets the rest, in order.
        let mut again = SseClient::connect(&server, Some(got[0])).await;
        let replayed = again.take(6).await;
        assert_eq!(ids(&replayed), got[1..], "{}", db.name);
        // And then live events, once each.
        publish(&server, "Later.\n").await;
        let live = again.next().await.unwrap();
        assert!(live.id.unwrap() > got[3]);
        assert_eq!(live.data["prompt"], "farewell");
    }
}

/// A split's steps reach the stream under the names the book gives (docs/src/reference/events.md),
/// each a `split_changed` with its `step`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_splits_steps_are_streamed_under_their_own_names() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    publish(&server, "Bye.\n").await;
    let mut client = SseClient::connect(&server, None).await;
    let (store, production) = (&server.store, Label::new("production").unwrap());
    let share = |p: &str| p.parse::<Share>().unwrap();
    let candidate = Candidate::newest_of(Label::latest());
    let (w, no) = (&writer(), None);
    store
        .start_split("demo", &production, &candidate, share("10"), w, "")
        .await
        .unwrap();
    store
        .set_split_share("demo", &production, share("50"), no, w, "")
        .await
        .unwrap();
    store
        .abort_split("demo", &production, no, w, "")
        .await
        .unwrap();
    store
        .start_split("demo", &production, &candidate, share("10"), w, "")
        .await
        .unwrap();
    store
        .promote_split("demo", &production, no, w, "")
        .await
        .unwrap();
    let events = client.take(7).await;
    let kinds: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "split_start",
            "split_share",
            "split_abort",
            "split_start",
            "released",
            "revision_created",
            "split_promote"
        ]
    );
    for event in events.iter().filter(|e| e.event.starts_with("split_")) {
        assert_eq!(event.data["type"], "split_changed", "{event:?}");
        assert_eq!(
            format!("split_{}", event.data["step"].as_str().unwrap()),
            event.event
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_stream_gets_keep_alive_comments() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    let mut client = SseClient::connect(&server, None).await;
    let quiet = tokio::time::timeout(Duration::from_millis(700), client.next()).await;
    assert!(quiet.is_err(), "no event while nothing changes");
    assert!(
        client.comments >= 2,
        "keep-alive comments every 200 ms: {}",
        client.comments
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_last_event_id_is_refused() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    let response = server
        .client
        .get(server.url("/v1/events"))
        .header("last-event-id", "yesterday")
        .send()
        .await
        .unwrap();
    assert_eq!(json(response, 400).await["code"], "invalid-last-event-id");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_its_limit_of_streams_the_server_says_when_to_come_back() {
    let db = common::sqlite();
    let mut config = config();
    config.max_streams = 1;
    let server = TestServer::start(published(&db).await, config).await;
    let _first = SseClient::connect(&server, None).await;
    let response = server.get("/v1/events").await;
    assert_eq!(response.headers()["retry-after"], "1");
    let refused = json(response, 503).await;
    assert_eq!(refused["code"], "too-many-streams", "{refused}");
    // Other requests still get through.
    assert_eq!(server.get("/v1/packs").await.status(), 200);
    drop(_first);
}

/// A client that sends its request and then reads nothing until told,
/// with the smallest receive buffer the system allows.
struct StalledClient(tokio::net::TcpStream);

impl StalledClient {
    async fn connect(server: &TestServer) -> StalledClient {
        use tokio::io::AsyncWriteExt;
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(1024).unwrap();
        let mut stream = socket.connect(server.addr).await.unwrap();
        let request = format!("GET /v1/events HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr);
        stream.write_all(request.as_bytes()).await.unwrap();
        StalledClient(stream)
    }

    /// Reads until the response ends or the connection closes: the bytes,
    /// and whether the response ended (its final chunk arrived).
    async fn read_raw(&mut self) -> (Vec<u8>, bool) {
        use tokio::io::AsyncReadExt;
        let mut raw = Vec::new();
        // One deadline for the whole read: a stream that stays open and
        // keeps sending (keep-alive comments) must not keep it going.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while !raw.ends_with(b"\r\n0\r\n\r\n") {
            let mut buf = [0u8; 65536];
            let read = tokio::time::timeout_at(deadline, self.0.read(&mut buf))
                .await
                .expect("the stream ends within 30 s");
            match read {
                Ok(0) | Err(_) => return (raw, false),
                Ok(n) => raw.extend_from_slice(&buf[..n]),
            }
        }
        (raw, true)
    }

    /// After the server closed the connection: sends a byte, which the
    /// server's system answers with a reset, then reads what the server
    /// sent before: the text, and whether the response ended properly.
    ///
    /// Without the byte the client could wait forever: the reset the
    /// server sent when it closed may have fallen outside the window the
    /// client's full buffer left open, and a client that only reads sends
    /// nothing more for the server's system to answer.
    async fn read_after_close(mut self) -> (String, bool) {
        use tokio::io::AsyncWriteExt;
        let _ = self.0.write_all(b"\r\n").await;
        let (raw, ended) = self.read_raw().await;
        (String::from_utf8_lossy(&raw).into_owned(), ended)
    }

    /// Reads the whole response now, and returns its events.
    async fn read_all(mut self) -> Vec<Sse> {
        let (raw, _) = self.read_raw().await;
        let text = String::from_utf8_lossy(&raw).into_owned();
        let (head, mut chunked) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        let mut body = String::new();
        while let Some((size, rest)) = chunked.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            if size == 0 {
                break;
            }
            body.push_str(&rest[..size]);
            chunked = &rest[size + 2..];
        }
        body.split("\n\n")
            .filter(|block| block.lines().any(|l| l.starts_with("data:")))
            .map(|block| {
                let mut event = Sse::default();
                for line in block.lines() {
                    match line.split_once(':') {
                        Some(("id", v)) => event.id = v.trim().parse().ok(),
                        Some(("event", v)) => event.event = v.trim().to_owned(),
                        Some(("data", v)) => event.data = serde_json::from_str(v.trim()).unwrap(),
                        _ => {}
                    }
                }
                event
            })
            .collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_client_is_dropped_with_a_reconnect_event_and_holds_up_nobody() {
    let db = common::sqlite();
    let mut small = config();
    small.client_buffer = 8;
    small.send_buffer = Some(4096);
    // The client reads late, not never: the write timeout does not apply.
    small.write_timeout = Duration::from_secs(120);
    let server = TestServer::start(published(&db).await, small).await;
    let slow = StalledClient::connect(&server).await;
    let mut fast = SseClient::connect(&server, None).await;
    // The fast client reads every event as it comes; the slow one reads nothing.
    const VERSIONS: usize = 300;
    for n in 0..VERSIONS {
        let mut files = PackFiles::default();
        files.insert("defaults/farewell.md", format!("Version {n}.\n"));
        server
            .store
            .push_prompt("demo", "farewell", &files, &writer(), "")
            .await
            .unwrap();
        // A version, `latest` moved to it, and the revision of `latest`.
        for event in fast.take(3).await {
            assert_eq!(event.data["pack"], "demo", "{event:?}");
        }
    }
    // The slow one gets what its buffers held, then `reconnect`, then the end.
    let events = slow.read_all().await;
    let (reconnect, seen) = events.split_last().unwrap();
    assert_eq!(reconnect.event, "reconnect", "{reconnect:?}");
    assert_eq!(reconnect.data["reason"], "too-slow");
    assert_eq!(reconnect.id, None);
    assert!(
        seen.len() < 3 * VERSIONS,
        "dropped before the end: {} events",
        seen.len()
    );
    // Reconnecting from the last event it saw, it misses nothing.
    let last = reconnect.data["last_event_id"].as_u64().unwrap();
    assert_eq!(Some(last), seen.last().and_then(|e| e.id));
    let mut back = SseClient::connect(&server, Some(last)).await;
    let rest = back.take(3 * VERSIONS - seen.len()).await;
    let mut all = ids(seen);
    all.extend(ids(&rest));
    assert_eq!(all.len(), 3 * VERSIONS);
    assert!(all.windows(2).all(|w| w[0] + 1 == w[1]), "{all:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_of_the_stream_that_reads_nothing_is_dropped_after_the_write_timeout() {
    let db = common::sqlite();
    let mut small = config();
    // The ring never overflows: only the write timeout can drop it.
    small.client_buffer = 100_000;
    small.send_buffer = Some(4096);
    // Long enough that the reading client, starved of CPU by the tests
    // running beside it, is never the one a blocked write drops.
    small.write_timeout = Duration::from_secs(1);
    let server = TestServer::start(published(&db).await, small).await;
    let stalled = StalledClient::connect(&server).await;
    let mut fast = SseClient::connect(&server, None).await;
    // Enough events to fill every buffer between the server and the
    // stalled client, and then some.
    let mut files = PackFiles::default();
    let mut n = 0;
    let closed = "promptreg_connections_timed_out_total{reason=\"write\"} 1";
    while !bounded("the metrics", server.metrics())
        .await
        .contains(closed)
    {
        n += 1;
        files.insert("defaults/farewell.md", format!("Version {n}.\n"));
        bounded(
            "a push",
            server
                .store
                .push_prompt("demo", "farewell", &files, &writer(), ""),
        )
        .await
        .unwrap();
        bounded("the reading client's events", fast.take(3)).await;
        assert!(n < 5_000, "the stalled client was never dropped");
    }
    // The one dropped is the stalled client: the reading one is served.
    files.insert("defaults/farewell.md", "Still there?\n");
    bounded(
        "a push",
        server
            .store
            .push_prompt("demo", "farewell", &files, &writer(), ""),
    )
    .await
    .unwrap();
    bounded("the reading client's events", fast.take(3)).await;
    assert_eq!(server.events_clients().await, 1);
    // It was cut off, not ended: no final chunk, no `reconnect`.
    let (text, ended) = stalled.read_after_close().await;
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(!ended, "the stream ended cleanly");
    assert!(!text.contains("event: reconnect"), "{text}");
    // The client that reads is still served.
    files.insert("defaults/farewell.md", "After.\n");
    bounded(
        "a push",
        server
            .store
            .push_prompt("demo", "farewell", &files, &writer(), ""),
    )
    .await
    .unwrap();
    let after = bounded("the reading client's events", fast.take(3)).await;
    assert_eq!(after[0].data["prompt"], "farewell");
}

/// `step`, failing with a message after 30 s: a wait that stops is a
/// failure naming it, not a run that never ends.
async fn bounded<T>(what: &str, step: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), step)
        .await
        .unwrap_or_else(|_| panic!("{what} did not come within 30 s"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutting_down_sends_a_final_reconnect_event() {
    let db = common::sqlite();
    let mut server = TestServer::start(published(&db).await, config()).await;
    let mut client = SseClient::connect(&server, None).await;
    let stop = tokio::spawn(async move {
        server.stop().await;
        server
    });
    let event = client.next().await.unwrap();
    assert_eq!(event.event, "reconnect");
    assert_eq!(event.data["reason"], "shutdown");
    assert!(client.next().await.is_none());
    stop.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_postgresql_database_stream_each_others_changes() {
    let Some(db) = common::postgres_only("server_two").await else {
        return;
    };
    let a = TestServer::start(published(&db).await, config()).await;
    let b = TestServer::start(db.open().await, config()).await;
    // Warm b's cache, then change through a.
    let before = json(
        b.get("/v1/packs/demo/prompts/farewell?label=latest").await,
        200,
    )
    .await;
    assert_eq!(before["version"], 1);
    let mut on_b = SseClient::connect(&b, None).await;
    publish(&a, "Bye from a.\n").await;
    let event = on_b.next().await.unwrap();
    assert_eq!(event.data["prompt"], "farewell");
    assert_eq!(event.event, "version_created");
    on_b.next().await.unwrap();
    // b's cache was dropped by the event: it serves the new version.
    let after = json(
        b.get("/v1/packs/demo/prompts/farewell?label=latest").await,
        200,
    )
    .await;
    assert_eq!(after["version"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_clients_while_versions_are_published_see_every_event_in_order() {
    for db in databases("server_many").await {
        let server = std::sync::Arc::new(TestServer::start(published(&db).await, config()).await);
        let mut clients = Vec::new();
        for _ in 0..200 {
            clients.push(SseClient::connect(&server, None).await);
        }
        const VERSIONS: usize = 10;
        let readers: Vec<_> = clients
            .into_iter()
            .map(|mut c| tokio::spawn(async move { ids(&c.take(2 * VERSIONS).await) }))
            .collect();
        let getters: Vec<_> = (0..50)
            .map(|_| {
                let server = server.clone();
                tokio::spawn(async move {
                    let mut statuses = Vec::new();
                    for _ in 0..10 {
                        let r = server
                            .get("/v1/packs/demo/prompts/farewell?label=latest")
                            .await;
                        statuses.push(r.status().as_u16());
                    }
                    statuses
                })
            })
            .collect();
        for n in 0..VERSIONS {
            let mut files = PackFiles::default();
            files.insert("defaults/farewell.md", format!("Version {n}.\n"));
            server
                .store
                .push_prompt("demo", "farewell", &files, &writer(), "")
                .await
                .unwrap();
        }
        let mut first: Option<Vec<u64>> = None;
        for reader in readers {
            let got = reader.await.unwrap();
            assert!(got.windows(2).all(|w| w[0] < w[1]), "{}: {got:?}", db.name);
            match &first {
                Some(f) => assert_eq!(&got, f, "{}: every client saw the same events", db.name),
                None => first = Some(got),
            }
        }
        for getter in getters {
            for status in getter.await.unwrap() {
                assert_eq!(status, 200, "{}: no error while publishing", db.name);
            }
        }
    }
}

/// A release of 3,000 prompts is one event: ten readers keeping up get
/// it, and the change after it, without a `reconnect`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_release_of_three_thousand_prompts_reaches_every_reader() {
    const PROMPTS: usize = 3000;
    for db in databases("server_big_release").await {
        let store = db.open().await;
        store
            .push(&common::big_pack(PROMPTS, 0, ""), &writer(), "")
            .await
            .unwrap();
        // Started after the push: the stream begins after its events.
        let server = TestServer::start(store, config()).await;
        let mut readers = Vec::new();
        for _ in 0..10 {
            let mut client = SseClient::connect(&server, None).await;
            readers.push(tokio::spawn(async move {
                let mut seen = Vec::new();
                // Up to the marker move after the release, or the end.
                while let Some(event) = client.next().await {
                    let done = event.event == "reconnect" || event.data["label"] == "marker";
                    seen.push(event);
                    if done {
                        break;
                    }
                }
                seen
            }));
        }
        let release = server
            .post(
                "/v1/packs/big/releases",
                json!({ "from": "latest", "to": "production" }),
            )
            .await;
        assert_eq!(
            json(release, 200).await["moves"].as_array().unwrap().len(),
            PROMPTS + 1
        );
        server
            .store
            .move_label(
                "big",
                "p0000",
                &Label::new("marker").unwrap(),
                1,
                None,
                &writer(),
                "",
            )
            .await
            .unwrap();
        for reader in readers {
            let seen = reader.await.unwrap();
            let kinds: Vec<&str> = seen.iter().map(|e| e.event.as_str()).collect();
            assert_eq!(
                kinds,
                ["released", "revision_created", "label_moved"],
                "{}",
                db.name
            );
            assert_eq!(seen[0].data["moves"].as_array().unwrap().len(), PROMPTS + 1);
        }
    }
}
