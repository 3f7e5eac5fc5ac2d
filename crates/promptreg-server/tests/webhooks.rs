//! Webhooks through the API: made by an admin of every pack, sent by the
//! server's worker, logged, tested, sent again; and two servers on one
//! PostgreSQL delivering each event once.

mod common;

use std::time::Duration;

use common::{TestServer, admin, config, databases, eventually, json, postgres_only, published};
use promptreg_server::Config;
use promptreg_store::{Label, Scope};
use promptreg_webhooks::test_support::{Receiver, verify};
use serde_json::{Value, json};

fn delivering() -> Config {
    Config {
        webhooks_allow_private: true,
        ..config()
    }
}

async fn release(server: &TestServer, key: &str, reason: &str) -> reqwest::Response {
    server
        .client
        .post(server.url("/v1/packs/demo/releases"))
        .bearer_auth(key)
        .json(&json!({ "from": "latest", "to": "staging", "reason": reason }))
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_subscribes_and_the_server_delivers_signed_releases() {
    for db in databases("server_webhooks").await {
        let store = published(&db).await;
        let (_, root) = store
            .create_key("ops", None, Scope::Admin, &admin())
            .await
            .unwrap();
        let (_, writer) = store
            .create_key("ci", None, Scope::Write, &admin())
            .await
            .unwrap();
        let (_, demo_admin) = store
            .create_key("demo-ops", Some("demo"), Scope::Admin, &admin())
            .await
            .unwrap();
        let server = TestServer::start(store, delivering()).await;
        let receiver = Receiver::start(&[200]).await;
        let create = |key: &str| {
            server
                .client
                .post(server.url("/v1/webhooks"))
                .bearer_auth(key)
                .json(&json!({ "name": "ci-trigger", "url": receiver.url(), "events": ["label.released"] }))
                .send()
        };
        for key in [&writer, &demo_admin] {
            let refused = json(create(key).await.unwrap(), 403).await;
            assert_eq!(
                refused["code"], "insufficient-scope",
                "{}: {refused}",
                db.name
            );
        }
        let made = json(create(&root).await.unwrap(), 201).await;
        let secret = made["secret"].as_str().unwrap().to_owned();
        assert!(secret.starts_with("whsec_"), "{made}");
        assert_eq!(made["webhook"]["events"], json!(["label.released"]));
        let again = json(create(&root).await.unwrap(), 412).await;
        assert_eq!(again["code"], "conflict", "{again}");

        let bad = server
            .client
            .post(server.url("/v1/webhooks"))
            .bearer_auth(&root)
            .json(&json!({ "name": "x", "url": "gopher://example.com/", "events": [] }))
            .send()
            .await
            .unwrap();
        assert_eq!(json(bad, 400).await["code"], "invalid-webhook");

        assert_eq!(release(&server, &writer, "to staging").await.status(), 200);
        let got = receiver.wait_for(1).await;
        verify(&got[0], &secret);
        let body: Value = serde_json::from_str(&got[0].body).unwrap();
        assert_eq!(body["type"], "label.released", "{}", db.name);
        assert_eq!(body["data"]["label"], "staging");
        assert_eq!(body["data"]["actor"], "key:ci");
        assert_eq!(body["data"]["reason"], "release latest: to staging");
        let page = format!("{}/packs/demo/labels/staging", server.base);
        assert_eq!(body["data"]["url"], page);

        let log = |path: &'static str| {
            server
                .client
                .get(server.url(path))
                .bearer_auth(&root)
                .send()
        };
        let delivered = eventually(|| async {
            let log = json(
                log("/v1/webhooks/ci-trigger/deliveries").await.unwrap(),
                200,
            )
            .await;
            (log["deliveries"][0]["state"] == "delivered").then_some(log)
        })
        .await;
        let first = &delivered["deliveries"][0];
        server
            .wait_for_metric("promptreg_webhook_attempts_total{outcome=\"delivered\"} 1")
            .await;
        assert_eq!(first["message_id"], got[0].id.as_str());
        assert_eq!(first["attempts"][0]["status"], 200);

        let tested = server
            .client
            .post(server.url("/v1/webhooks/ci-trigger/test"))
            .bearer_auth(&root)
            .send()
            .await
            .unwrap();
        assert_eq!(json(tested, 202).await["type"], "webhook.test");
        let got = receiver.wait_for(2).await;
        assert!(got[1].body.contains("webhook.test"), "{got:?}");

        let id = first["id"].as_u64().unwrap();
        let again = server
            .client
            .post(server.url(&format!(
                "/v1/webhooks/ci-trigger/deliveries/{id}/redeliver"
            )))
            .bearer_auth(&root)
            .send()
            .await
            .unwrap();
        assert_eq!(json(again, 202).await["state"], "pending");
        let got = receiver.wait_for(3).await;
        assert_eq!(
            got[2].id, got[0].id,
            "{}: a redelivery is the same message",
            db.name
        );
        let missing = server
            .client
            .post(server.url("/v1/webhooks/ci-trigger/deliveries/999999/redeliver"))
            .bearer_auth(&root)
            .send()
            .await
            .unwrap();
        assert_eq!(json(missing, 404).await["code"], "unknown-webhook");

        let rotated = server
            .client
            .post(server.url("/v1/webhooks/ci-trigger/rotate"))
            .bearer_auth(&root)
            .json(&json!({ "overlap_seconds": 60 }))
            .send()
            .await
            .unwrap();
        let rotated = json(rotated, 200).await;
        assert_ne!(rotated["secret"], secret.as_str());
        assert!(
            rotated["webhook"]["previous_secret_until"].is_string(),
            "{rotated}"
        );

        let patched = server
            .client
            .patch(server.url("/v1/webhooks/ci-trigger"))
            .bearer_auth(&root)
            .json(&json!({ "events": [], "format": "slack" }))
            .send()
            .await
            .unwrap();
        let patched = json(patched, 200).await;
        assert_eq!(
            (&patched["events"], &patched["format"]),
            (&json!([]), &json!("slack"))
        );
        assert_eq!(patched["url"], receiver.url().as_str(), "{patched}");
        let bad = server
            .client
            .patch(server.url("/v1/webhooks/ci-trigger"))
            .bearer_auth(&root)
            .json(&json!({ "events": ["label.moovd"] }))
            .send()
            .await
            .unwrap();
        assert_eq!(json(bad, 400).await["code"], "invalid-webhook");

        let listed = json(log("/v1/webhooks").await.unwrap(), 200).await;
        assert_eq!(listed["webhooks"][0]["name"], "ci-trigger");
        assert!(listed["event_types"].as_array().unwrap().len() > 5);
        let deleted = server
            .client
            .delete(server.url("/v1/webhooks/ci-trigger"))
            .bearer_auth(&root)
            .send()
            .await
            .unwrap();
        assert_eq!(deleted.status(), 200);
        let gone = json(log("/v1/webhooks/ci-trigger").await.unwrap(), 404).await;
        assert_eq!(gone["code"], "unknown-webhook");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refuses_private_destinations_unless_allowed() {
    for db in databases("server_webhooks_private").await {
        let store = published(&db).await;
        let (_, root) = store
            .create_key("ops", None, Scope::Admin, &admin())
            .await
            .unwrap();
        let server = TestServer::start(store, config()).await;
        let receiver = Receiver::start(&[200]).await;
        let made = server
            .client
            .post(server.url("/v1/webhooks"))
            .bearer_auth(&root)
            .json(&json!({ "name": "inside", "url": receiver.url() }))
            .send()
            .await
            .unwrap();
        let refused = json(made, 400).await;
        assert_eq!(refused["code"], "invalid-webhook", "{refused}");
        assert!(
            refused["detail"].as_str().unwrap().contains("loopback"),
            "{refused}"
        );
        // Made behind the server's back (the tool on the store): refused
        // where it connects.
        let spec = promptreg_store::WebhookSpec {
            name: "inside".into(),
            url: receiver.url(),
            ..Default::default()
        };
        server.store.create_webhook(&spec, &admin()).await.unwrap();
        let queued = server
            .client
            .post(server.url("/v1/webhooks/inside/test"))
            .bearer_auth(&root)
            .send()
            .await
            .unwrap();
        assert_eq!(queued.status(), 202);
        let refused = eventually(|| async {
            let log = server
                .client
                .get(server.url("/v1/webhooks/inside/deliveries"))
                .bearer_auth(&root)
                .send()
                .await
                .unwrap();
            let log = json(log, 200).await;
            log["deliveries"][0]["attempts"][0]["error"]
                .as_str()
                .map(str::to_owned)
        })
        .await;
        assert!(
            refused.contains("loopback") && refused.contains("--webhooks-allow-private"),
            "{refused}"
        );
        assert!(receiver.got().is_empty(), "{}", db.name);
    }
}

/// Two servers sharing one PostgreSQL, both delivering: every event
/// reaches the receiver once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_database_deliver_each_event_once() {
    let Some(db) = postgres_only("server_webhooks_two").await else {
        return;
    };
    let store = published(&db).await;
    let receiver = Receiver::start(&[200]).await;
    let spec = promptreg_store::WebhookSpec {
        name: "every".into(),
        url: receiver.url(),
        ..Default::default()
    };
    store.create_webhook(&spec, &admin()).await.unwrap();
    let a = TestServer::start(store, delivering()).await;
    let b = TestServer::start(db.open().await, delivering()).await;
    let (latest, staging) = (
        Label::new("latest").unwrap(),
        Label::new("staging").unwrap(),
    );
    for n in 1..=10 {
        let label = Label::new(&format!("l{n}")).unwrap();
        [&a.store, &b.store][n % 2]
            .release("demo", &latest, &label, None, &admin(), "fan out")
            .await
            .unwrap();
    }
    a.store
        .release("demo", &latest, &staging, None, &admin(), "last")
        .await
        .unwrap();
    // Each release is a `label.released` and a `revision.created`.
    let expected = 2 * 11;
    let got = receiver.wait_for(expected).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let got_after = receiver.got();
    assert_eq!(got_after.len(), got.len().max(expected), "{got_after:?}");
    let ids: std::collections::BTreeSet<_> = got_after.iter().map(|r| r.id.clone()).collect();
    assert_eq!(ids.len(), expected, "each message once: {got_after:?}");
    let log = a.store.deliveries("every", None, 100).await.unwrap();
    assert_eq!(log.len(), expected);
    for delivery in &log {
        assert_eq!(
            delivery.attempts.len(),
            1,
            "sent by one server: {delivery:?}"
        );
    }
}
