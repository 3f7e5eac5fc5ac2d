//! Webhooks and their outbox, on SQLite and PostgreSQL alike: what the
//! store promises the delivery workers (each event queued once per
//! webhook, a lease per delivery, the same message id on every attempt).

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{admin, databases, demo, postgres_only, writer};
use promptreg_store::{
    Attempt, Attempted, DeliveryState, ErrorKind, Label, Store, Timestamp, WebhookFormat,
    WebhookSpec,
};

const LEASE: Duration = Duration::from_secs(60);

fn spec(name: &str, events: &[&str]) -> WebhookSpec {
    WebhookSpec {
        name: name.into(),
        url: "http://127.0.0.1:9/hook".into(),
        packs: vec![],
        events: events.iter().map(|e| e.to_string()).collect(),
        format: WebhookFormat::Standard,
    }
}

fn answered(status: u16, by: &str) -> Attempt {
    Attempt {
        at: Timestamp::now(),
        duration_ms: 3,
        status: Some(status),
        error: None,
        response: "ok".into(),
        by: by.into(),
    }
}

async fn ship(store: &Store) {
    let production = Label::new("production").unwrap();
    store.push(&demo(), &writer(), "first").await.unwrap();
    store
        .release(
            "demo",
            &Label::new("latest").unwrap(),
            &production,
            None,
            &admin(),
            "ship",
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn a_webhook_is_made_by_an_admin_with_a_secret_shown_once() {
    for db in databases("webhooks_lifecycle").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "first").await.unwrap();
        let err = store
            .create_webhook(&spec("chat", &[]), &writer())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Forbidden, "{}: {err}", db.name);

        let (hook, secret) = store
            .create_webhook(&spec("chat", &[]), &admin())
            .await
            .unwrap();
        assert!(secret.starts_with("whsec_"), "{secret}");
        assert_eq!(
            (hook.name.as_str(), hook.created_by.as_str()),
            ("chat", "root")
        );
        assert_eq!(hook.disabled, None);
        assert!(
            !format!("{hook:?}").contains(&secret[6..]),
            "the secret is never listed"
        );

        let again = store
            .create_webhook(&spec("chat", &[]), &admin())
            .await
            .unwrap_err();
        assert_eq!(again.kind(), ErrorKind::Conflict, "{}: {again}", db.name);

        let mut bad = spec("team", &["label.moovd"]);
        let err = store.create_webhook(&bad, &admin()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidWebhook);
        assert!(
            err.to_string().contains("did you mean `label.moved`?"),
            "{err}"
        );
        bad = spec("team", &[]);
        bad.packs = vec!["nope".into()];
        let err = store.create_webhook(&bad, &admin()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownPack);
        assert!(err.to_string().contains("it holds demo"), "{err}");
        bad = spec("team", &[]);
        bad.url = "ftp://example.com/".into();
        let err = store.create_webhook(&bad, &admin()).await.unwrap_err();
        assert!(err.to_string().contains("`http` or `https` only"), "{err}");
        let err = store
            .create_webhook(&spec("Team", &[]), &admin())
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("invalid webhook name `Team`"),
            "{err}"
        );

        assert_eq!(store.webhooks().await.unwrap(), [hook], "{}", db.name);
        let err = store.webhook("chaat").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownWebhook);
        assert!(err.to_string().contains("did you mean `chat`?"), "{err}");

        let change = promptreg_store::WebhookChange {
            url: Some("https://hooks.example.com/moved".into()),
            events: Some(vec!["label.moved".into()]),
            ..Default::default()
        };
        let moved = store
            .update_webhook("chat", &change, &admin())
            .await
            .unwrap();
        assert_eq!(moved.url, "https://hooks.example.com/moved", "{}", db.name);
        assert_eq!(
            (moved.events, moved.packs),
            (vec!["label.moved".to_owned()], vec![])
        );
        let bad = promptreg_store::WebhookChange {
            url: Some("ftp://x/".into()),
            ..Default::default()
        };
        let err = store
            .update_webhook("chat", &bad, &admin())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidWebhook, "{err}");
        let err = store
            .update_webhook("chat", &change, &writer())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Forbidden, "{err}");

        store.delete_webhook("chat", &admin()).await.unwrap();
        assert!(store.webhooks().await.unwrap().is_empty(), "{}", db.name);
    }
}

#[tokio::test]
async fn each_event_it_wants_becomes_one_delivery_leased_to_one_worker() {
    for db in databases("webhooks_outbox").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "before").await.unwrap();
        store
            .create_webhook(&spec("releases", &["label.released"]), &admin())
            .await
            .unwrap();
        store
            .create_webhook(&spec("all", &[]), &admin())
            .await
            .unwrap();
        // Events before a webhook exists are not its.
        assert!(
            store
                .claim_deliveries("w1", LEASE, 100, &[])
                .await
                .unwrap()
                .is_empty()
        );

        ship(&store).await;
        let claimed = store.claim_deliveries("w1", LEASE, 100, &[]).await.unwrap();
        let releases: Vec<_> = claimed.iter().filter(|d| d.webhook == "releases").collect();
        assert_eq!(releases.len(), 1, "{}: {claimed:#?}", db.name);
        assert_eq!(releases[0].kind, "label.released");
        assert_eq!(releases[0].attempt, 1);
        assert!(releases[0].event.is_some());
        let all = claimed.iter().filter(|d| d.webhook == "all").count();
        assert_eq!(all, 2, "{}: the release and its revision", db.name);
        // Leased: no other worker gets them, and nothing is queued twice.
        assert!(
            store
                .claim_deliveries("w2", LEASE, 100, &[])
                .await
                .unwrap()
                .is_empty()
        );

        let first = releases[0];
        store
            .record_attempt(
                first.id,
                "w1",
                &answered(503, "w1"),
                Attempted::RetryAt(Timestamp::now()),
            )
            .await
            .unwrap();
        let retried = store.claim_deliveries("w2", LEASE, 100, &[]).await.unwrap();
        assert_eq!(retried.len(), 1, "{}", db.name);
        assert_eq!((retried[0].id, retried[0].attempt), (first.id, 2));
        assert_eq!(
            retried[0].message_id, first.message_id,
            "a retry is the same message"
        );
        // `msg_`, the webhook's 16 random hex digits and `_`, the number.
        let (prefix, number) = first.message_id["msg_".len()..].split_once('_').unwrap();
        assert_eq!(prefix.len(), 16, "{}", first.message_id);
        assert_eq!(number, first.id.to_string());
        let other = claimed.iter().find(|d| d.webhook == "all").unwrap();
        assert!(
            !other.message_id.contains(prefix),
            "each webhook its own prefix"
        );
        store
            .record_attempt(first.id, "w2", &answered(204, "w2"), Attempted::Delivered)
            .await
            .unwrap();

        let log = store.deliveries("releases", None, 10).await.unwrap();
        assert_eq!(log.len(), 1);
        assert_eq!(log[0].state, DeliveryState::Delivered);
        let statuses: Vec<_> = log[0]
            .attempts
            .iter()
            .map(|a| (a.status, a.by.as_str()))
            .collect();
        assert_eq!(
            statuses,
            [(Some(503), "w1"), (Some(204), "w2")],
            "{}",
            db.name
        );
    }
}

#[tokio::test]
async fn a_lease_that_runs_out_gives_the_delivery_to_another_worker() {
    for db in databases("webhooks_lease").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "before").await.unwrap();
        store
            .create_webhook(&spec("all", &["label.released"]), &admin())
            .await
            .unwrap();
        ship(&store).await;
        let lease = Duration::from_millis(200);
        let crashed = store
            .claim_deliveries("crashed", lease, 10, &[])
            .await
            .unwrap();
        assert_eq!(crashed.len(), 1);
        tokio::time::sleep(lease + Duration::from_millis(50)).await;
        let taken = store
            .claim_deliveries("after", LEASE, 10, &[])
            .await
            .unwrap();
        assert_eq!(taken.len(), 1, "{}", db.name);
        assert_eq!(taken[0].message_id, crashed[0].message_id);
        // The late worker's outcome is logged but changes nothing.
        store
            .record_attempt(
                taken[0].id,
                "crashed",
                &answered(200, "crashed"),
                Attempted::Delivered,
            )
            .await
            .unwrap();
        let log = store.delivery("all", taken[0].id).await.unwrap();
        assert_eq!(log.state, DeliveryState::Pending, "{}", db.name);
        assert_eq!(log.attempts.len(), 1);
    }
}

#[tokio::test]
async fn a_rotated_secret_signs_beside_the_new_one_for_the_overlap() {
    for db in databases("webhooks_rotation").await {
        let store = db.open().await;
        let (_, old) = store
            .create_webhook(&spec("chat", &[]), &admin())
            .await
            .unwrap();
        let (hook, new) = store
            .rotate_webhook_secret("chat", Duration::from_secs(3600), &admin())
            .await
            .unwrap();
        assert_ne!(old, new);
        assert!(hook.previous_secret_until.is_some());
        store.queue_test_delivery("chat", &admin()).await.unwrap();
        let claimed = store.claim_deliveries("w", LEASE, 10, &[]).await.unwrap();
        assert_eq!(claimed[0].secrets, [new.clone(), old], "{}", db.name);
        assert_eq!(claimed[0].kind, "webhook.test");

        let (_, newest) = store
            .rotate_webhook_secret("chat", Duration::ZERO, &admin())
            .await
            .unwrap();
        store.queue_test_delivery("chat", &admin()).await.unwrap();
        let claimed = store.claim_deliveries("w", LEASE, 10, &[]).await.unwrap();
        assert_eq!(
            claimed[0].secrets,
            [newest],
            "{}: the overlap is over",
            db.name
        );

        let err = store
            .rotate_webhook_secret("chat", Duration::from_secs(30 * 24 * 3600), &admin())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidWebhook, "{err}");
    }
}

#[tokio::test]
async fn giving_up_disables_the_webhook_until_enabled_and_failures_can_be_sent_again() {
    for db in databases("webhooks_give_up").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "before").await.unwrap();
        store
            .create_webhook(&spec("chat", &[]), &admin())
            .await
            .unwrap();
        let since = Timestamp::now();
        ship(&store).await;
        let claimed = store.claim_deliveries("w", LEASE, 1, &[]).await.unwrap();
        let failing = Attempt {
            status: None,
            error: Some("connection refused".into()),
            ..answered(0, "w")
        };
        store
            .record_attempt(claimed[0].id, "w", &failing, Attempted::GiveUp)
            .await
            .unwrap();
        let hook = store.webhook("chat").await.unwrap();
        let disabled = hook.disabled.expect("disabled");
        assert!(
            disabled.reason.contains("connection refused"),
            "{}",
            disabled.reason
        );
        let states: BTreeSet<_> = store
            .deliveries("chat", None, 10)
            .await
            .unwrap()
            .iter()
            .map(|d| d.state)
            .collect();
        assert_eq!(
            states,
            BTreeSet::from([DeliveryState::Failed]),
            "{}",
            db.name
        );
        // Nothing is queued or sent while disabled.
        store.queue_test_delivery("chat", &admin()).await.unwrap();
        assert!(
            store
                .claim_deliveries("w", LEASE, 10, &[])
                .await
                .unwrap()
                .is_empty()
        );

        store.enable_webhook("chat", &admin()).await.unwrap();
        let again = store
            .redeliver_failed("chat", since, &admin())
            .await
            .unwrap();
        assert_eq!(again, 2, "{}: the release and its revision", db.name);
        let claimed = store.claim_deliveries("w", LEASE, 10, &[]).await.unwrap();
        assert_eq!(claimed.len(), 3, "{}: and the test message", db.name);
        assert!(
            claimed.iter().all(|d| d.attempt == 1),
            "a new day of retries"
        );
    }
}

#[tokio::test]
async fn finished_deliveries_are_pruned_with_their_attempts() {
    for db in databases("webhooks_prune").await {
        let store = db.open().await;
        store
            .create_webhook(&spec("chat", &[]), &admin())
            .await
            .unwrap();
        let sent = store.queue_test_delivery("chat", &admin()).await.unwrap();
        store.queue_test_delivery("chat", &admin()).await.unwrap();
        let claimed = store.claim_deliveries("w", LEASE, 1, &[]).await.unwrap();
        assert_eq!(claimed[0].id, sent.id);
        store
            .record_attempt(sent.id, "w", &answered(200, "w"), Attempted::Delivered)
            .await
            .unwrap();
        let later = Timestamp(Timestamp::now().0 + 1000);
        assert_eq!(
            store.prune_deliveries(later).await.unwrap(),
            1,
            "{}",
            db.name
        );
        let left = store.deliveries("chat", None, 10).await.unwrap();
        assert_eq!(left.len(), 1, "{}: the pending one stays", db.name);
        assert_eq!(left[0].state, DeliveryState::Pending);
        let err = store
            .redeliver("chat", sent.id, &admin())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("has no delivery"), "{err}");
    }
}

/// Two servers on one PostgreSQL claim at once: every delivery goes to
/// exactly one of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stores_on_one_database_never_take_one_delivery() {
    let Some(db) = postgres_only("webhooks_two_servers").await else {
        return;
    };
    let (a, b) = (db.open().await, db.open().await);
    a.push(&demo(), &writer(), "before").await.unwrap();
    for n in 0..5 {
        a.create_webhook(&spec(&format!("hook-{n}"), &[]), &admin())
            .await
            .unwrap();
    }
    for n in 0..20 {
        a.queue_test_delivery(&format!("hook-{}", n % 5), &admin())
            .await
            .unwrap();
    }
    ship(&a).await;
    let take = |store: Store, worker: &'static str| {
        tokio::spawn(async move {
            let mut ids = Vec::new();
            loop {
                let batch = store.claim_deliveries(worker, LEASE, 3, &[]).await.unwrap();
                if batch.is_empty() {
                    return ids;
                }
                ids.extend(batch.iter().map(|d| d.id));
            }
        })
    };
    let (ours, theirs) = (take(a, "a"), take(b, "b"));
    let (ours, theirs) = (ours.await.unwrap(), theirs.await.unwrap());
    let all: BTreeSet<_> = ours.iter().chain(&theirs).collect();
    assert_eq!(
        all.len(),
        ours.len() + theirs.len(),
        "claimed twice: {ours:?} {theirs:?}"
    );
    assert_eq!(all.len(), 20 + 5 * 2, "every delivery claimed");
}
