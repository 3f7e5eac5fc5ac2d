//! API keys: 401 without a valid one, 403 with too small a scope, protected
//! labels need admin, writes record the key's name, and a server refuses to
//! listen beyond loopback with no key.

mod common;

use std::net::SocketAddr;

use common::{SseClient, TestServer, admin, config, databases, json, published};
use promptreg_server::{ServeError, Server};
use promptreg_store::{Label, PackFiles, Scope};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_required_once_the_store_has_one_and_scopes_are_enforced() {
    for db in databases("server_keys").await {
        let store = published(&db).await;
        let mut other_pack = PackFiles::default();
        other_pack.insert(
            "promptreg.toml",
            "name = \"other\"\nkeys = [\"x\"]\n[user]\nprompts_dir = \".other/prompts\"\n",
        );
        other_pack.insert("defaults/x.md", "X.\n");
        store.push(&other_pack, &admin(), "").await.unwrap();
        let (_, reader) = store
            .create_key("dashboard", None, Scope::Read, &admin())
            .await
            .unwrap();
        let (_, writer) = store
            .create_key("ci", Some("demo"), Scope::Write, &admin())
            .await
            .unwrap();
        let (_, root) = store
            .create_key("ops", None, Scope::Admin, &admin())
            .await
            .unwrap();
        let (_, other) = store
            .create_key("elsewhere", Some("other"), Scope::Admin, &admin())
            .await
            .unwrap();
        let server = TestServer::start(store, config()).await;
        let get = |key: Option<&str>| {
            let mut request = server
                .client
                .get(server.url("/v1/packs/demo/prompts/greeting"));
            if let Some(key) = key {
                request = request.bearer_auth(key);
            }
            request.send()
        };
        let none = get(None).await.unwrap();
        assert_eq!(
            none.headers()["www-authenticate"],
            "Bearer realm=\"promptreg\""
        );
        assert_eq!(json(none, 401).await["code"], "unauthorized", "{}", db.name);
        assert_eq!(
            json(get(Some("prk_not-a-key")).await.unwrap(), 401).await["code"],
            "unauthorized"
        );
        json(get(Some(&reader)).await.unwrap(), 200).await;
        assert_eq!(
            json(get(Some(&other)).await.unwrap(), 403).await["code"],
            "insufficient-scope"
        );

        let create = |key: &str| {
            server
                .client
                .post(server.url("/v1/packs/demo/prompts/farewell/versions"))
                .bearer_auth(key)
                .json(&json!({ "files": { "defaults/farewell.md": "Bye.\n" } }))
                .send()
        };
        let refused = json(create(&reader).await.unwrap(), 403).await;
        assert!(
            refused["detail"].as_str().unwrap().contains("dashboard"),
            "{refused}"
        );
        json(create(&writer).await.unwrap(), 201).await;
        let log = server.store.log("demo", "farewell").await.unwrap();
        assert_eq!(
            log[0].author, "key:ci",
            "{}: the key's name is the author",
            db.name
        );

        // Protected labels need admin, for keys as for people.
        server
            .store
            .protect("demo", &Label::new("production").unwrap(), true, &admin())
            .await
            .unwrap();
        let etag = get(Some(&reader)).await.unwrap().headers()["etag"]
            .to_str()
            .unwrap()
            .to_owned();
        let move_with = |key: &str| {
            server
                .client
                .put(server.url("/v1/packs/demo/prompts/greeting/labels/production"))
                .bearer_auth(key)
                .header("if-match", &etag)
                .json(&json!({ "version": 1, "reason": "same" }))
                .send()
        };
        let refused = json(move_with(&writer).await.unwrap(), 403).await;
        assert_eq!(refused["code"], "forbidden", "{}: {refused}", db.name);
        let moved = json(move_with(&root).await.unwrap(), 200).await;
        assert_eq!(moved["actor"], "key:ops");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_key_is_refused() {
    for db in databases("server_revoked").await {
        let store = published(&db).await;
        let (_, secret) = store
            .create_key("laptop", None, Scope::Read, &admin())
            .await
            .unwrap();
        let server = TestServer::start(store, config()).await;
        let get = || {
            server
                .client
                .get(server.url("/v1/packs"))
                .bearer_auth(&secret)
                .send()
        };
        json(get().await.unwrap(), 200).await;
        server.store.revoke_key("laptop", &admin()).await.unwrap();
        let refused = json(get().await.unwrap(), 401).await;
        assert_eq!(refused["code"], "unauthorized", "{}", db.name);
        // Whoever holds a leaked key learns nothing of whose it was.
        let detail = refused["detail"].as_str().unwrap();
        assert!(!detail.contains("laptop"), "{detail}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_the_last_key_does_not_open_the_server_after_a_restart() {
    for db in databases("server_last_key").await {
        let store = published(&db).await;
        store
            .create_key("laptop", None, Scope::Admin, &admin())
            .await
            .unwrap();
        store.revoke_key("laptop", &admin()).await.unwrap();
        let server = TestServer::start(store, config()).await;
        let read = json(server.get("/v1/packs").await, 401).await;
        assert_eq!(read["code"], "unauthorized", "{}", db.name);
        let write = server
            .post(
                "/v1/packs/demo/prompts/greeting/versions",
                json!({ "files": { "defaults/greeting.md": "Hijacked.\n" } }),
            )
            .await;
        json(write, 401).await;
        assert_eq!(server.store.log("demo", "greeting").await.unwrap().len(), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_event_stream_of_a_revoked_key_ends() {
    for db in databases("server_revoked_stream").await {
        let store = published(&db).await;
        let (_, secret) = store
            .create_key("follower", None, Scope::Read, &admin())
            .await
            .unwrap();
        let (_, other) = store
            .create_key("dashboard", None, Scope::Read, &admin())
            .await
            .unwrap();
        let server = TestServer::start(store, config()).await;
        let mut stream = SseClient::connect_as(&server, &secret).await;
        let mut kept = SseClient::connect_as(&server, &other).await;
        server.store.revoke_key("follower", &admin()).await.unwrap();
        // The revocation itself may be an event; then the stream ends.
        let mut last = None;
        while let Some(event) = stream.next().await {
            last = Some(event);
        }
        let last = last.expect("a final event");
        assert_eq!(last.event, "reconnect", "{last:?}");
        assert_eq!(last.data["reason"], "unauthorized", "{}", db.name);
        // Another key's stream goes on.
        let mut files = PackFiles::default();
        files.insert("defaults/farewell.md", "Later.\n");
        server
            .store
            .push_prompt("demo", "farewell", &files, &common::writer(), "after")
            .await
            .unwrap();
        loop {
            let event = kept.next().await.expect("the other stream goes on");
            assert_ne!(event.event, "reconnect", "{event:?}");
            if event.event == "version_created" {
                break;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listening_beyond_loopback_without_a_key_is_refused() {
    let db = common::sqlite();
    let store = published(&db).await;
    let mut open = config();
    open.listen = SocketAddr::from(([0, 0, 0, 0], 0));
    let err = Server::bind(store.clone(), open.clone())
        .await
        .err()
        .expect("refused");
    assert!(matches!(err, ServeError::OpenWithoutKeys(_)), "{err}");
    assert!(err.to_string().contains("promptreg keys create"), "{err}");
    store
        .create_key("ops", None, Scope::Admin, &admin())
        .await
        .unwrap();
    let server = Server::bind(store, open).await.unwrap();
    assert!(!server.local_addr().ip().is_loopback());
}
