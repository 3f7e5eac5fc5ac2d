//! The worker against a receiver on loopback: signed deliveries, a
//! receiver down then back, a worker killed mid-delivery, a rotation,
//! a private destination refused. On SQLite and PostgreSQL alike.

use std::time::Duration;

use promptreg_store::test_support::{admin, databases, demo, writer};
use promptreg_store::{DeliveryState, Label, Store, WebhookFormat, WebhookSpec};
use promptreg_webhooks::test_support::{Receiver, verify};
use promptreg_webhooks::{Destinations, Retries, WorkerOptions};
use tokio::sync::watch;

fn options(name: &str) -> WorkerOptions {
    let mut options = WorkerOptions::new(name, "http://127.0.0.1:7878/".parse().unwrap());
    options.destinations = Destinations {
        allow_private: true,
    };
    options.poll = Duration::from_millis(50);
    options.timeout = Duration::from_secs(2);
    options.lease = Duration::from_secs(3);
    options.retries = Retries {
        first: Duration::from_millis(100),
        longest: Duration::from_millis(400),
        for_at_most: Duration::from_secs(60),
    };
    options
}

/// A worker running until the returned sender says stop.
fn start(
    store: &Store,
    options: WorkerOptions,
) -> (watch::Sender<bool>, tokio::task::JoinHandle<()>) {
    let (stop, stopped) = watch::channel(false);
    let store = store.clone();
    let task = tokio::spawn(async move {
        promptreg_webhooks::run(store, options, stopped)
            .await
            .unwrap();
    });
    (stop, task)
}

async fn subscribe(store: &Store, url: &str, events: &[&str]) -> String {
    let spec = WebhookSpec {
        name: "hook".into(),
        url: url.into(),
        events: events.iter().map(|e| e.to_string()).collect(),
        ..WebhookSpec::default()
    };
    store.create_webhook(&spec, &admin()).await.unwrap().1
}

async fn release(store: &Store) {
    store
        .release(
            "demo",
            &Label::new("latest").unwrap(),
            &Label::new("production").unwrap(),
            None,
            &admin(),
            "ship",
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_reaches_the_receiver_signed() {
    for db in databases("webhooks_signed").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "first").await.unwrap();
        let receiver = Receiver::start(&[204]).await;
        let secret = subscribe(&store, &receiver.url(), &["label.released"]).await;
        let (stop, task) = start(&store, options("w"));
        release(&store).await;
        let got = receiver.wait_for(1).await;
        verify(&got[0], &secret);
        let body: serde_json::Value = serde_json::from_str(&got[0].body).unwrap();
        assert_eq!(body["type"], "label.released", "{}", db.name);
        assert_eq!(body["data"]["label"], "production");
        assert_eq!(
            body["data"]["prompts"].as_array().unwrap().len(),
            3,
            "{body}"
        );
        stop.send_replace(true);
        task.await.unwrap();
        let log = store.deliveries("hook", None, 10).await.unwrap();
        assert_eq!(log[0].state, DeliveryState::Delivered, "{}", db.name);
        assert_eq!(log[0].attempts[0].status, Some(204));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_down_then_back_gets_the_same_message() {
    for db in databases("webhooks_down_then_back").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "first").await.unwrap();
        let receiver = Receiver::start(&[503, 502, 200]).await;
        subscribe(&store, &receiver.url(), &["label.released"]).await;
        let (stop, task) = start(&store, options("w"));
        release(&store).await;
        let got = receiver.wait_for(3).await;
        assert!(got.iter().all(|r| r.id == got[0].id), "{got:?}");
        stop.send_replace(true);
        task.await.unwrap();
        let log = store.deliveries("hook", None, 10).await.unwrap();
        assert_eq!(log[0].state, DeliveryState::Delivered, "{}", db.name);
        let statuses: Vec<_> = log[0].attempts.iter().map(|a| a.status).collect();
        assert_eq!(statuses, [Some(503), Some(502), Some(200)], "{}", db.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_mid_delivery_leaves_it_to_the_next() {
    for db in databases("webhooks_killed").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "first").await.unwrap();
        let receiver = Receiver::start(&[200]).await;
        receiver.hang_first();
        subscribe(&store, &receiver.url(), &["label.released"]).await;
        let mut first = options("first");
        first.timeout = Duration::from_secs(30);
        let (_stop, killed) = start(&store, first);
        release(&store).await;
        receiver.wait_for(1).await;
        // Killed mid-delivery: its request hangs, its attempt is never recorded.
        killed.abort();
        let _ = killed.await;
        let (stop, task) = start(&store, options("second"));
        let got = receiver.wait_for(2).await;
        assert_eq!(got[0].id, got[1].id, "{}: the same message", db.name);
        stop.send_replace(true);
        task.await.unwrap();
        let log = store.deliveries("hook", None, 10).await.unwrap();
        assert_eq!(log[0].state, DeliveryState::Delivered, "{}", db.name);
        let by: Vec<_> = log[0].attempts.iter().map(|a| a.by.as_str()).collect();
        assert_eq!(by, ["second"], "{}", db.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_secrets_sign_during_a_rotation() {
    for db in databases("webhooks_rotation_signed").await {
        let store = db.open().await;
        let receiver = Receiver::start(&[200]).await;
        let old = subscribe(&store, &receiver.url(), &[]).await;
        let (_, new) = store
            .rotate_webhook_secret("hook", Duration::from_secs(600), &admin())
            .await
            .unwrap();
        let sent = promptreg_webhooks::send_test(&store, "hook", &options("cli"), &admin())
            .await
            .unwrap();
        assert_eq!(sent.state, DeliveryState::Delivered, "{}", db.name);
        let got = receiver.got();
        verify(&got[0], &old);
        verify(&got[0], &new);
        assert_eq!(got[0].signature.split(' ').count(), 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_destination_is_refused_unless_allowed() {
    for db in databases("webhooks_private").await {
        let store = db.open().await;
        let receiver = Receiver::start(&[200]).await;
        subscribe(&store, &receiver.url(), &[]).await;
        let mut strict = options("strict");
        strict.destinations = Destinations::default();
        let sent = promptreg_webhooks::send_test(&store, "hook", &strict, &admin())
            .await
            .unwrap();
        assert_eq!(
            sent.state,
            DeliveryState::Pending,
            "{}: retried later",
            db.name
        );
        let error = sent.attempts[0].error.clone().unwrap();
        assert!(
            error.contains("loopback") && error.contains("--webhooks-allow-private"),
            "{error}"
        );
        assert!(receiver.got().is_empty());

        // A name is checked after it is looked up.
        let spec = WebhookSpec {
            name: "by-name".into(),
            url: format!("http://localhost:{}/hook", receiver.addr.port()),
            format: WebhookFormat::Slack,
            ..WebhookSpec::default()
        };
        store.create_webhook(&spec, &admin()).await.unwrap();
        let sent = promptreg_webhooks::send_test(&store, "by-name", &strict, &admin())
            .await
            .unwrap();
        let error = sent.attempts[0].error.clone().unwrap();
        assert!(error.contains("loopback"), "{error}");
        assert!(receiver.got().is_empty());
    }
}

/// A redirect is not followed, a slow receiver is given up on at the
/// timeout, and a long answer is read to a bound: each attempt is logged
/// and retried, and the message arrives once the receiver answers 2xx.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_slowness_and_long_answers_are_bounded() {
    let db = promptreg_store::test_support::sqlite();
    let store = db.open().await;
    let receiver = Receiver::start(&[302, 200]).await;
    receiver.hang_first();
    receiver.answer_bytes(4 * 1024 * 1024);
    subscribe(&store, &receiver.url(), &[]).await;
    let mut quick = options("w");
    quick.timeout = Duration::from_secs(1);
    let (stop, task) = start(&store, quick);
    store.queue_test_delivery("hook", &admin()).await.unwrap();
    let got = receiver.wait_for(3).await;
    assert!(got.iter().all(|r| r.id == got[0].id), "{got:?}");
    let delivered = async {
        loop {
            let log = store.deliveries("hook", None, 1).await.unwrap();
            if log[0].state == DeliveryState::Delivered {
                return log;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    };
    let log = tokio::time::timeout(Duration::from_secs(10), delivered)
        .await
        .expect("delivered");
    stop.send_replace(true);
    task.await.unwrap();
    let attempts = &log[0].attempts;
    assert_eq!(attempts.len(), 3, "{attempts:#?}");
    let timed_out = attempts[0].error.as_deref().unwrap_or_default();
    assert!(timed_out.contains("no answer within 1 s"), "{timed_out}");
    assert_eq!(attempts[1].status, Some(302), "not followed: {attempts:#?}");
    assert_eq!(attempts[2].status, Some(200));
    assert_eq!(attempts[2].response.len(), 1024, "the first KiB is kept");
    assert_eq!(receiver.got().len(), 3, "the redirect was not followed");
}
