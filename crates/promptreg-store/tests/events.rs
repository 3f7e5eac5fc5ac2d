//! The event log and change notifications, on SQLite and PostgreSQL alike.

mod common;

use std::time::Duration;

use common::{admin, databases, demo, writer};
use promptreg_store::{ErrorKind, Event, EventKind, Label, ReleasedPrompt, Store};
use tokio::sync::watch;

fn label(name: &str) -> Label {
    Label::new(name).unwrap()
}

/// A pack whose `greeting` has versions 1 and 2 (`latest` on 2).
async fn two_versions(store: &Store) {
    store.push(&demo(), &writer(), "").await.unwrap();
    let mut edited = demo();
    edited.insert("defaults/greeting.md", "Hi {{ name }}!\n");
    store.push(&edited, &writer(), "hi").await.unwrap();
}

async fn all_events(store: &Store) -> Vec<Event> {
    store.events_since(0, usize::MAX).await.unwrap()
}

fn moved(prompt: &str, label: &str, from: Option<u64>, to: Option<u64>, reason: &str) -> EventKind {
    EventKind::LabelMoved {
        prompt: prompt.into(),
        label: label.into(),
        from,
        to,
        actor: if label == "production" { "root" } else { "ada" }.into(),
        reason: reason.into(),
    }
}

fn released(prompt: &str, from: Option<u64>, to: u64) -> ReleasedPrompt {
    ReleasedPrompt {
        prompt: prompt.into(),
        from,
        to: Some(to),
    }
}

fn created(prompt: &str, version: u64) -> EventKind {
    EventKind::VersionCreated {
        prompt: prompt.into(),
        version,
        author: "ada".into(),
    }
}

/// The events' changes but `revision_created`, and those with the
/// number of changes before each.
fn split_revisions(events: &[Event]) -> (Vec<EventKind>, Vec<(usize, EventKind)>) {
    let (mut others, mut revisions) = (Vec::new(), Vec::new());
    for event in events {
        match &event.change {
            EventKind::RevisionCreated { .. } => {
                revisions.push((others.len(), event.change.clone()))
            }
            change => others.push(change.clone()),
        }
    }
    (others, revisions)
}

/// Waits until the receiver holds at least `id`; a hang guard, not a
/// speed limit.
async fn seen(rx: &mut watch::Receiver<u64>, id: u64, what: &str) {
    let arrived = tokio::time::timeout(Duration::from_secs(30), rx.wait_for(|v| *v >= id))
        .await
        .map(|r| r.map(|_| ()));
    match arrived {
        Ok(done) => done.unwrap(),
        Err(_) => panic!("{what}: event {id} never arrived; last {}", *rx.borrow()),
    }
}

#[tokio::test]
async fn every_write_appends_its_events_in_commit_order() {
    for db in databases("events_kinds").await {
        let store = db.open().await;
        assert_eq!(store.last_event_id().await.unwrap(), 0, "{}", db.name);
        two_versions(&store).await;
        let prod = label("production");
        store
            .move_label("demo", "greeting", &prod, 1, None, &admin(), "ship")
            .await
            .unwrap();
        store
            .move_label("demo", "greeting", &prod, 2, Some(1), &admin(), "ship 2")
            .await
            .unwrap();
        store
            .rollback("demo", "greeting", &prod, &admin(), "")
            .await
            .unwrap();
        store
            .release("demo", &Label::latest(), &prod, None, &admin(), "")
            .await
            .unwrap();
        store.protect("demo", &prod, true, &admin()).await.unwrap();
        store.protect("demo", &prod, true, &admin()).await.unwrap();
        store.protect("demo", &prod, false, &admin()).await.unwrap();

        let events = all_events(&store).await;
        let (kinds, revisions) = split_revisions(&events);
        let root = |label: &str| EventKind::LabelProtected {
            label: label.into(),
            actor: "root".into(),
        };
        assert_eq!(
            kinds,
            [
                created("@pack", 1),
                moved("@pack", "latest", None, Some(1), "push"),
                created("farewell", 1),
                moved("farewell", "latest", None, Some(1), "push"),
                created("greeting", 1),
                moved("greeting", "latest", None, Some(1), "push"),
                created("greeting", 2),
                moved("greeting", "latest", Some(1), Some(2), "push: hi"),
                moved("greeting", "production", None, Some(1), "ship"),
                moved("greeting", "production", Some(1), Some(2), "ship 2"),
                moved(
                    "greeting",
                    "production",
                    Some(2),
                    Some(1),
                    "rollback from 2"
                ),
                EventKind::Released {
                    label: "production".into(),
                    moves: vec![
                        released("@pack", None, 1),
                        released("farewell", None, 1),
                        released("greeting", Some(1), 2),
                    ],
                    actor: "root".into(),
                    reason: "release latest".into(),
                },
                root("production"),
                EventKind::LabelUnprotected {
                    label: "production".into(),
                    actor: "root".into(),
                },
            ],
            "{}",
            db.name
        );
        // Each change of a label ends with its revision: after the two
        // pushes (positions 1 and 7 among the events), the two moves, the
        // rollback and the release; each names the revision the store
        // lists, with its digest.
        let mut listed = Vec::new();
        for label in [Label::latest(), prod.clone()] {
            let mut of_label = store.revisions("demo", &label).await.unwrap();
            of_label.reverse();
            listed.extend(of_label);
        }
        let expected: Vec<(usize, EventKind)> = [6, 8, 9, 10, 11, 12]
            .into_iter()
            .zip(&listed)
            .map(|(after, r)| {
                let change = EventKind::RevisionCreated {
                    label: r.label.clone(),
                    revision: r.number,
                    digest: r.digest.clone(),
                    cause: r.cause,
                    actor: r.actor.clone(),
                    reason: r.reason.clone(),
                };
                (after, change)
            })
            .collect();
        assert_eq!(revisions, expected, "{}", db.name);
        let causes: Vec<&str> = listed.iter().map(|r| r.cause.as_str()).collect();
        assert_eq!(
            causes,
            ["push", "push", "move", "move", "rollback", "release"]
        );
        let ids: Vec<u64> = events.iter().map(|e| e.id).collect();
        assert_eq!(ids, (1..=20).collect::<Vec<_>>(), "{}", db.name);
        assert!(events.iter().all(|e| e.pack == "demo"));
        // Earlier content again moves `latest` back: one move and its
        // revision; the same push once more changes nothing and appends
        // nothing.
        store.push(&demo(), &writer(), "").await.unwrap();
        let restored = store.events_since(20, 10).await.unwrap();
        let (kinds, revisions) = split_revisions(&restored);
        assert_eq!(
            kinds,
            [moved("greeting", "latest", Some(2), Some(1), "push")],
            "{}",
            db.name
        );
        assert!(
            matches!(
                &revisions[..],
                [(1, EventKind::RevisionCreated { revision: 3, .. })]
            ),
            "{revisions:?}"
        );
        store.push(&demo(), &writer(), "").await.unwrap();
        assert_eq!(store.last_event_id().await.unwrap(), 22, "{}", db.name);
    }
}

#[tokio::test]
async fn events_since_pages_through_the_log() {
    for db in databases("events_paging").await {
        let store = db.open().await;
        two_versions(&store).await;
        store
            .release(
                "demo",
                &Label::latest(),
                &label("staging"),
                None,
                &writer(),
                "",
            )
            .await
            .unwrap();
        let all = all_events(&store).await;
        assert_eq!(all.len(), 12, "{}", db.name);
        for size in [1, 2, 5, 100] {
            let mut paged = Vec::new();
            let mut after = 0;
            loop {
                let page = store.events_since(after, size).await.unwrap();
                assert!(page.len() <= size);
                let Some(last) = page.last() else { break };
                after = last.id;
                paged.extend(page);
            }
            assert_eq!(paged, all, "{}: pages of {size}", db.name);
        }
        assert!(store.events_since(0, 0).await.unwrap().is_empty());
        assert!(store.events_since(12, 10).await.unwrap().is_empty());
        assert!(store.events_since(u64::MAX, 10).await.unwrap().is_empty());
        assert_eq!(store.events_since(7, 1).await.unwrap()[0].id, 8);
    }
}

#[tokio::test]
async fn a_failed_write_appends_nothing() {
    for db in databases("events_failed").await {
        let store = db.open().await;
        two_versions(&store).await;
        let prod = label("production");
        store
            .move_label("demo", "greeting", &prod, 1, None, &writer(), "")
            .await
            .unwrap();
        let before = all_events(&store).await;
        let conflict = store
            .move_label("demo", "greeting", &prod, 2, Some(2), &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(conflict.kind(), ErrorKind::Conflict);
        store.protect("demo", &prod, true, &admin()).await.unwrap();
        let before_protected = all_events(&store).await;
        assert_eq!(before_protected.len(), before.len() + 1);
        for err in [
            store
                .move_label("demo", "greeting", &prod, 2, Some(1), &writer(), "")
                .await
                .unwrap_err(),
            store
                .release("demo", &Label::latest(), &prod, None, &writer(), "")
                .await
                .unwrap_err(),
            store
                .rollback("demo", "greeting", &prod, &writer(), "")
                .await
                .unwrap_err(),
        ] {
            assert_eq!(err.kind(), ErrorKind::Forbidden, "{}: {err}", db.name);
        }
        let mut broken = demo();
        broken.insert(
            "defaults/greeting.md",
            "---\ntemplate: true\n---\n{{ oops\n",
        );
        let invalid = store.push(&broken, &writer(), "").await.unwrap_err();
        assert_eq!(invalid.kind(), ErrorKind::InvalidPack);
        assert_eq!(all_events(&store).await, before_protected, "{}", db.name);
    }
}

#[test]
fn events_serialise_with_their_kind_in_type() {
    let event = Event {
        id: 7,
        at: promptreg_store::Timestamp(1_796_043_950_000),
        pack: "demo".into(),
        change: moved("greeting", "production", None, Some(2), "ship"),
    };
    assert_eq!(
        serde_json::to_value(&event).unwrap(),
        serde_json::json!({
            "id": 7, "at": "2026-11-30T13:05:50Z", "pack": "demo", "type": "label_moved",
            "prompt": "greeting", "label": "production", "from": null, "to": 2,
            "actor": "root", "reason": "ship",
        })
    );
    let release = EventKind::Released {
        label: "production".into(),
        moves: vec![released("a", Some(1), 2)],
        actor: "root".into(),
        reason: "release staging".into(),
    };
    assert_eq!(
        serde_json::to_value(&release).unwrap(),
        serde_json::json!({
            "type": "released", "label": "production",
            "moves": [{ "prompt": "a", "from": 1, "to": 2 }],
            "actor": "root", "reason": "release staging",
        })
    );
}

#[tokio::test]
async fn this_process_s_writes_reach_subscribers_at_once() {
    for db in databases("events_local").await {
        let store = db.open().await;
        // A long poll: only the write itself can announce the event in time.
        let store = store.with_event_poll(Duration::from_secs(3600));
        let mut rx = store.clone().subscribe();
        assert_eq!(*rx.borrow_and_update(), 0);
        store.push(&demo(), &writer(), "").await.unwrap();
        assert!(rx.has_changed().unwrap(), "{}", db.name);
        assert_eq!(*rx.borrow_and_update(), 7, "{}", db.name);
    }
}

#[tokio::test]
async fn a_store_opened_later_starts_at_the_newest_event() {
    for db in databases("events_reopen").await {
        db.open().await.push(&demo(), &writer(), "").await.unwrap();
        let again = db.open().await;
        assert_eq!(*again.subscribe().borrow(), 7, "{}", db.name);
    }
}

/// Another handle on the same database stands for another process: on
/// PostgreSQL its write reaches this one through LISTEN/NOTIFY, on SQLite
/// through polling.
#[tokio::test]
async fn another_handle_s_writes_reach_subscribers() {
    for db in databases("events_other").await {
        let reader = db.open().await.with_event_poll(Duration::from_millis(20));
        let mut rx = reader.subscribe();
        let writer_store = db.open().await;
        writer_store.push(&demo(), &writer(), "").await.unwrap();
        seen(&mut rx, 7, db.name).await;
        writer_store
            .move_label(
                "demo",
                "greeting",
                &label("staging"),
                1,
                None,
                &writer(),
                "",
            )
            .await
            .unwrap();
        seen(&mut rx, 9, db.name).await;
        assert_eq!(reader.events_since(7, 10).await.unwrap().len(), 2);
    }
}

/// The server drops the listener's connection (a restart, a failover): it
/// connects again and misses nothing, even what was written meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listener_reconnects_after_the_server_drops_it() {
    let Some(db) = common::postgres_only("events_dropped").await else {
        return;
    };
    let reader = db.open().await;
    let mut rx = reader.subscribe();
    let other = db.open().await;
    two_versions(&other).await;
    seen(&mut rx, 8, "before the drop").await;
    let app = db
        .url
        .rsplit("application_name=")
        .next()
        .unwrap()
        .to_owned();
    let base = std::env::var(common::DATABASE_URL_VAR).unwrap();
    let server = sqlx::PgPool::connect(&base).await.unwrap();
    for round in 1..=3u64 {
        sqlx::query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
        )
        .bind(&app)
        .execute(&server)
        .await
        .unwrap();
        // Written while the listener may be away: retried, as a client would.
        let (from, to) = match round {
            1 => (None, 1),
            2 => (Some(1), 2),
            _ => (Some(2), 1),
        };
        let mut attempts = 0;
        loop {
            let prod = label("production");
            let done = other
                .move_label("demo", "greeting", &prod, to, from, &writer(), "")
                .await;
            match done {
                Ok(_) => break,
                Err(e) if e.kind() == ErrorKind::Unavailable && attempts < 20 => attempts += 1,
                Err(e) => panic!("round {round}: {e}"),
            }
        }
        seen(&mut rx, 8 + round, &format!("round {round}")).await;
    }
    server.close().await;
}

/// Many writers at once, from several handles, and a reader paging the
/// log all along: the reader sees every event, in id order, and never
/// steps over one that commits later.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_never_let_a_reader_skip_an_event() {
    for db in databases("events_concurrent").await {
        let first = db.open().await;
        two_versions(&first).await;
        let mut writers = Vec::new();
        for w in 0..6 {
            let store = db.open().await;
            writers.push(tokio::spawn(async move {
                let label = label(&format!("t{w}"));
                let mut at = None;
                for i in 0..15u64 {
                    let to = 1 + (i % 2);
                    store
                        .move_label("demo", "greeting", &label, to, at, &writer(), "")
                        .await
                        .unwrap();
                    at = Some(to);
                    if w % 3 == 0 {
                        let mut files = demo();
                        files.insert("defaults/farewell.md", format!("Bye {w}.{i}\n"));
                        store.push(&files, &common::writer(), "").await.unwrap();
                    }
                }
            }));
        }
        let reader = db.open().await;
        let mut seen = Vec::new();
        let mut after = 0;
        loop {
            let done = writers.iter().all(|w| w.is_finished());
            let page = reader.events_since(after, 7).await.unwrap();
            if let Some(last) = page.last() {
                after = last.id;
            }
            seen.extend(page.into_iter().map(|e| e.id));
            if done && after == reader.last_event_id().await.unwrap() {
                break;
            }
        }
        for w in writers {
            w.await.unwrap();
        }
        let all: Vec<u64> = all_events(&reader)
            .await
            .into_iter()
            .map(|e| e.id)
            .collect();
        assert!(all.len() > 6 * 15, "{}: {}", db.name, all.len());
        assert_eq!(
            seen, all,
            "{}: the reader skipped or repeated events",
            db.name
        );
    }
}

/// A store outliving the runtime its first subscriber ran on follows
/// other handles again when subscribed to from a new runtime.
#[test]
fn a_store_follows_again_on_a_new_runtime() {
    let db = common::sqlite();
    let runtime = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    };
    let store = runtime().block_on(async {
        let store = db.open().await.with_event_poll(Duration::from_millis(20));
        store.subscribe();
        store
    });
    runtime().block_on(async {
        let mut rx = store.subscribe();
        db.open().await.push(&demo(), &writer(), "").await.unwrap();
        seen(&mut rx, 6, "after a new runtime").await;
    });
}

/// A push that changes a prompt's default and leaves a translated
/// variant as it was appends `translation_stale` for its locale; a push
/// that translates it again, or touches neither, appends none.
#[tokio::test]
async fn a_translation_left_behind_by_a_push_goes_stale() {
    use promptreg::pack::SourceText;
    use promptreg::pack::translation::record_source;
    for db in databases("events_translation_stale").await {
        let store = db.open().await;
        let mut files = demo();
        let source = SourceText::of_file("Goodbye.\n").unwrap();
        files.insert(
            "defaults/farewell.fr.md",
            record_source("Au revoir.\n", &source),
        );
        store.push(&files, &writer(), "translated").await.unwrap();
        let stale = |events: &[Event]| -> Vec<EventKind> {
            events
                .iter()
                .filter(|e| matches!(e.change, EventKind::TranslationStale { .. }))
                .map(|e| e.change.clone())
                .collect()
        };
        assert!(
            stale(&all_events(&store).await).is_empty(),
            "{}: current",
            db.name
        );

        files.insert("defaults/farewell.md", "Farewell.\n");
        store.push(&files, &writer(), "reworded").await.unwrap();
        assert_eq!(
            stale(&all_events(&store).await),
            [EventKind::TranslationStale {
                prompt: "farewell".into(),
                locale: "fr".into(),
                version: 2,
                actor: "ada".into(),
            }],
            "{}",
            db.name
        );

        // Translating it again is no news; nor is a change elsewhere.
        let source = SourceText::of_file("Farewell.\n").unwrap();
        files.insert(
            "defaults/farewell.fr.md",
            record_source("Adieu.\n", &source),
        );
        store.push(&files, &writer(), "retranslated").await.unwrap();
        files.insert("defaults/greeting.md", "Hey {{ name }}!\n");
        store.push(&files, &writer(), "greeting").await.unwrap();
        assert_eq!(stale(&all_events(&store).await).len(), 1, "{}", db.name);
    }
}
