//! The `/v1` API over HTTP on loopback, on SQLite and PostgreSQL alike.

mod common;

use common::{TestServer, config, databases, json, published};
use promptreg::PromptRegistry;
use promptreg_store::PackFiles;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packs_and_prompts_are_listed_with_labels_versions_locales_and_kind() {
    for db in databases("server_listing").await {
        let server = TestServer::start(published(&db).await, config()).await;
        let packs = json(server.get("/v1/packs").await, 200).await;
        assert_eq!(packs, json!({ "packs": ["demo"] }), "{}", db.name);
        let list = json(server.get("/v1/packs/demo/prompts").await, 200).await;
        let greeting = &list["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == "greeting")
            .unwrap();
        assert_eq!(greeting["kind"], "template", "{}", db.name);
        assert_eq!(greeting["locales"], json!(["fr"]));
        assert_eq!(greeting["versions"], 1);
        assert_eq!(greeting["labels"], json!({ "latest": 1, "production": 1 }));
        let farewell = &list["prompts"].as_array().unwrap()[1];
        assert_eq!(farewell["id"], "farewell");
        assert_eq!(farewell["kind"], "text");
        let missing = json(server.get("/v1/packs/nope/prompts").await, 404).await;
        assert_eq!(missing["code"], "unknown-pack");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_at_a_label_has_a_strong_etag_and_304_when_unchanged() {
    for db in databases("server_etag").await {
        let server = TestServer::start(published(&db).await, config()).await;
        let response = server.get("/v1/packs/demo/prompts/greeting").await;
        let etag = response.headers()["etag"].to_str().unwrap().to_owned();
        let body = json(response, 200).await;
        assert_eq!(
            etag,
            format!("\"{}\"", body["digest"].as_str().unwrap()),
            "{}",
            db.name
        );
        assert!(!etag.starts_with("W/"), "a strong ETag");
        assert_eq!(body["version"], 1);
        assert_eq!(body["locales"], json!(["fr"]));
        assert!(
            body["files"]["defaults/greeting.fr.md"]
                .as_str()
                .unwrap()
                .contains("Bonjour")
        );
        let again = server
            .client
            .get(server.url("/v1/packs/demo/prompts/greeting?label=production"))
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 304, "{}", db.name);
        assert_eq!(again.headers()["etag"], etag.as_str());
        let by_number = server
            .get("/v1/packs/demo/prompts/greeting?version=1")
            .await;
        assert_eq!(by_number.headers()["etag"], etag.as_str());
        let unknown = json(
            server
                .get("/v1/packs/demo/prompts/greeting?label=staging")
                .await,
            404,
        )
        .await;
        assert_eq!(unknown["code"], "unknown-version", "{}", db.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_of_a_pack_is_one_bundle_that_renders_offline() {
    for db in databases("server_bundle").await {
        let server = TestServer::start(published(&db).await, config()).await;
        let response = server.get("/v1/packs/demo/labels/production").await;
        let etag = response.headers()["etag"].to_str().unwrap().to_owned();
        let bundle = json(response, 200).await;
        let entries = bundle["entries"].as_array().unwrap();
        assert_eq!(entries[0]["id"], "@pack", "{}", db.name);
        // Everything a client needs: build the pack from the files alone.
        let files: PackFiles = entries
            .iter()
            .flat_map(|e| e["files"].as_object().unwrap().clone())
            .map(|(path, text)| (path, text.as_str().unwrap().as_bytes().to_vec()))
            .collect();
        let pack = files.to_pack("bundle").unwrap();
        let registry = PromptRegistry::new();
        pack.install(&registry).unwrap();
        let text = registry
            .render_in("greeting", &json!({ "name": "Ada" }), "fr")
            .unwrap();
        assert!(text.contains("Bonjour Ada !"), "{text}");
        let again = server
            .client
            .get(server.url("/v1/packs/demo/labels/production"))
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 304);
        // A move changes the bundle and its ETag.
        let mut v2 = PackFiles::default();
        v2.insert("defaults/farewell.md", "Bye.\n");
        server
            .store
            .push_prompt("demo", "farewell", &v2, &common::writer(), "")
            .await
            .unwrap();
        let current = server
            .get("/v1/packs/demo/prompts/farewell?label=production")
            .await;
        let farewell_etag = current.headers()["etag"].to_str().unwrap().to_owned();
        let moved = server
            .client
            .put(server.url("/v1/packs/demo/prompts/farewell/labels/production"))
            .header("if-match", &farewell_etag)
            .json(&json!({ "version": 2, "reason": "shorter" }))
            .send()
            .await
            .unwrap();
        assert_eq!(moved.status(), 200, "{}", db.name);
        let after = server.get("/v1/packs/demo/labels/production").await;
        assert_ne!(after.headers()["etag"], etag.as_str(), "{}", db.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_version_is_checked_as_check_does() {
    for db in databases("server_create").await {
        let server = TestServer::start(published(&db).await, config()).await;
        let created = server
            .post(
                "/v1/packs/demo/prompts/farewell/versions",
                json!({ "files": { "defaults/farewell.md": "See you.\n" }, "message": "warmer" }),
            )
            .await;
        assert_eq!(
            created.headers()["location"],
            "/v1/packs/demo/prompts/farewell?version=2"
        );
        let body = json(created, 201).await;
        assert_eq!(
            body,
            json!({ "pack": "demo", "id": "farewell", "change": "changed", "version": 2 }),
            "{}",
            db.name
        );
        let log = json(
            server.get("/v1/packs/demo/prompts/farewell/versions").await,
            200,
        )
        .await;
        assert_eq!(log["versions"][0]["author"], "local");
        assert_eq!(log["versions"][0]["message"], "warmer");
        let same = server
            .post(
                "/v1/packs/demo/prompts/farewell/versions",
                json!({ "files": { "defaults/farewell.md": "See you.\n" } }),
            )
            .await;
        assert_eq!(json(same, 200).await["change"], "unchanged");

        let broken = server
            .post(
                "/v1/packs/demo/prompts/greeting/versions",
                json!({ "files": { "defaults/greeting.md": "---\ntemplate: true\n---\nHello {{ name !\n" } }),
            )
            .await;
        assert_eq!(broken.headers()["content-type"], "application/problem+json");
        let problem = json(broken, 422).await;
        assert_eq!(problem["code"], "invalid-pack", "{}", db.name);
        assert!(
            !problem["diagnostics"].as_array().unwrap().is_empty(),
            "{problem}"
        );

        let outside = server
            .post(
                "/v1/packs/demo/prompts/farewell/versions",
                json!({ "files": { "defaults/../../etc/farewell.md": "x" } }),
            )
            .await;
        assert_eq!(json(outside, 400).await["code"], "invalid-file-path");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_moves_with_if_match_and_a_stale_one_is_refused_naming_the_current_version() {
    for db in databases("server_if_match").await {
        let server = TestServer::start(published(&db).await, config()).await;
        for text in ["Bye.\n", "Farewell.\n"] {
            server
                .post(
                    "/v1/packs/demo/prompts/farewell/versions",
                    json!({ "files": { "defaults/farewell.md": text } }),
                )
                .await;
        }
        let path = "/v1/packs/demo/prompts/farewell/labels/production";
        let v1 = server
            .get("/v1/packs/demo/prompts/farewell?label=production")
            .await;
        let v1_etag = v1.headers()["etag"].to_str().unwrap().to_owned();

        let missing = server
            .client
            .put(server.url(path))
            .json(&json!({ "version": 2 }))
            .send()
            .await
            .unwrap();
        assert_eq!(
            json(missing, 428).await["code"],
            "precondition-required",
            "{}",
            db.name
        );

        let put = |etag: String, version: u64| {
            server
                .client
                .put(server.url(path))
                .header("if-match", etag)
                .json(&json!({ "version": version, "reason": "test" }))
                .send()
        };
        let moved = put(v1_etag.clone(), 2).await.unwrap();
        let v2_etag = moved.headers()["etag"].to_str().unwrap().to_owned();
        let body = json(moved, 200).await;
        assert_eq!(
            (body["from"].as_u64(), body["to"].as_u64()),
            (Some(1), Some(2))
        );
        assert_eq!(body["actor"], "local");

        let stale = put(v1_etag, 3).await.unwrap();
        let problem = json(stale, 412).await;
        assert_eq!(problem["code"], "conflict", "{}", db.name);
        assert_eq!(problem["current"], 2, "{problem}");
        assert!(
            problem["detail"].as_str().unwrap().contains("version 2"),
            "{problem}"
        );

        put(v2_etag, 3).await.unwrap();
        let new_label = server
            .client
            .put(server.url("/v1/packs/demo/prompts/farewell/labels/staging"))
            .header("if-none-match", "*")
            .json(&json!({ "version": 1 }))
            .send()
            .await
            .unwrap();
        assert_eq!(new_label.status(), 200, "{}", db.name);
        // The label is on this prompt only: readable on it, as the hint of
        // the 428 says, while the pack at that label is not (no manifest
        // there), and its error names the prompt that carries it.
        let at_staging = json(
            server
                .get("/v1/packs/demo/prompts/farewell?label=staging")
                .await,
            200,
        )
        .await;
        assert_eq!(at_staging["version"], 1, "{}: {at_staging}", db.name);
        let bundle = json(server.get("/v1/packs/demo/labels/staging").await, 404).await;
        let detail = bundle["detail"].as_str().unwrap();
        assert!(
            detail.contains("only `farewell` carries")
                && detail.contains("promptreg store release latest staging"),
            "{}: {detail}",
            db.name
        );
        json(
            server
                .get("/v1/packs/demo/prompts/greeting?label=staging")
                .await,
            404,
        )
        .await;

        let back = json(
            server
                .post(
                    "/v1/packs/demo/prompts/farewell/labels/production/rollback",
                    json!({ "reason": "v3 is rude" }),
                )
                .await,
            200,
        )
        .await;
        assert_eq!(
            (back["from"].as_u64(), back["to"].as_u64()),
            (Some(3), Some(2))
        );
        let history = json(
            server.get("/v1/packs/demo/prompts/farewell/history").await,
            200,
        )
        .await;
        let last = history["moves"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["reason"], "rollback from 3: v3 is rude", "{}", db.name);

        // The body is optional; a second rollback goes one more step back,
        // and a third finds the label where it was created.
        let rollback = || {
            server
                .client
                .post(server.url("/v1/packs/demo/prompts/farewell/labels/production/rollback"))
                .send()
        };
        let again = json(rollback().await.unwrap(), 200).await;
        assert_eq!(again["reason"], "rollback from 2", "{}", db.name);
        assert_eq!(again["to"], 1, "{}", db.name);
        let past_first = json(rollback().await.unwrap(), 404).await;
        assert!(
            past_first["detail"]
                .as_str()
                .unwrap()
                .contains("where it was created"),
            "{}: {past_first}",
            db.name
        );
        let unknown = server
            .client
            .post(server.url("/v1/packs/demo/prompts/farewell/labels/canary/rollback"))
            .send()
            .await
            .unwrap();
        let unknown = json(unknown, 404).await;
        assert!(
            unknown["detail"]
                .as_str()
                .unwrap()
                .contains("has no label `canary`"),
            "{}: {unknown}",
            db.name
        );
    }
}

/// A release is one revision of its label, listed with what it changed,
/// and the label's bundle carries the revision's digest as its ETag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_is_one_revision_whose_digest_is_the_bundle_etag() {
    for db in databases("server_revisions").await {
        let server = TestServer::start(published(&db).await, config()).await;
        let release = json!({ "from": "latest", "to": "staging", "reason": "ship" });
        json(server.post("/v1/packs/demo/releases", release).await, 200).await;
        let listed = json(
            server.get("/v1/packs/demo/labels/staging/revisions").await,
            200,
        )
        .await;
        let revisions = listed["revisions"].as_array().unwrap();
        assert_eq!(revisions.len(), 1, "{}: {listed}", db.name);
        let revision = &revisions[0];
        assert_eq!(revision["revision"], 1);
        assert_eq!(revision["cause"], "release");
        assert_eq!(revision["reason"], "release latest: ship");
        assert_eq!(
            revision["entries"],
            json!({ "@pack": 1, "farewell": 1, "greeting": 1 })
        );
        assert_eq!(revision["changes"].as_array().unwrap().len(), 3);
        let bundle = server.get("/v1/packs/demo/labels/staging").await;
        let etag = bundle.headers()["etag"].to_str().unwrap().to_owned();
        assert_eq!(
            etag,
            format!("\"{}\"", revision["digest"].as_str().unwrap())
        );
        // production moved prompt by prompt: a revision per move.
        let production = json(
            server
                .get("/v1/packs/demo/labels/production/revisions")
                .await,
            200,
        )
        .await;
        let causes: Vec<&str> = production["revisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["cause"].as_str().unwrap())
            .collect();
        assert_eq!(causes, ["move", "move", "move"], "{}", db.name);
        let unknown = json(
            server.get("/v1/packs/demo/labels/canary/revisions").await,
            404,
        )
        .await;
        assert!(
            unknown["detail"]
                .as_str()
                .unwrap()
                .contains("label `canary` of pack `demo` has no revisions"),
            "{unknown}"
        );
    }
}

/// A whole pack rolls back one revision, and a label takes any earlier
/// revision, each in one step the bundle then serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pack_rolls_back_and_a_label_takes_a_revision_over_http() {
    for db in databases("server_restore").await {
        let store = published(&db).await;
        let mut files = common::demo();
        files.insert("defaults/farewell.md", "Bye.\n");
        store
            .push(&files, &common::writer(), "shorter")
            .await
            .unwrap();
        let server = TestServer::start(store, config()).await;
        let release = json!({ "from": "latest", "to": "production" });
        json(server.post("/v1/packs/demo/releases", release).await, 200).await;
        let bundle = "/v1/packs/demo/labels/production";
        let etag = |r: &reqwest::Response| r.headers()["etag"].to_str().unwrap().to_owned();
        let released = etag(&server.get(bundle).await);

        let back = json(
            server
                .post(
                    "/v1/packs/demo/labels/production/rollback",
                    json!({ "reason": "bad day" }),
                )
                .await,
            200,
        )
        .await;
        // Revisions 1 to 3 were the three moves of `published`; 4 the release.
        assert_eq!(back["restores"], 3, "{}: {back}", db.name);
        assert_eq!(back["revision"], 5);
        assert_eq!(back["moves"][0]["id"], "farewell");
        assert_eq!(back["moves"][0]["to"], 1);
        assert_ne!(
            etag(&server.get(bundle).await),
            released,
            "the bundle moved back"
        );

        let again = json(
            server
                .put(
                    "/v1/packs/demo/labels/production/revision",
                    json!({ "revision": 4, "expect": 5 }),
                )
                .await,
            200,
        )
        .await;
        assert_eq!(
            (again["restores"].clone(), again["revision"].clone()),
            (json!(4), json!(6))
        );
        assert_eq!(etag(&server.get(bundle).await), released, "{}", db.name);
        let stale = json(
            server
                .put(
                    "/v1/packs/demo/labels/production/revision",
                    json!({ "revision": 1, "expect": 5 }),
                )
                .await,
            412,
        )
        .await;
        assert_eq!(stale["current"], 6, "{stale}");
        let missing = json(
            server
                .put(
                    "/v1/packs/demo/labels/production/revision",
                    json!({ "revision": 99 }),
                )
                .await,
            404,
        )
        .await;
        assert!(
            missing["detail"]
                .as_str()
                .unwrap()
                .contains("has no revision 99"),
            "{missing}"
        );

        // One revision, by number or by (the start of) its digest; a
        // digest is also a revision to restore.
        let one = json(
            server
                .get("/v1/packs/demo/labels/production/revisions/4")
                .await,
            200,
        )
        .await;
        assert_eq!(
            (one["revision"].clone(), one["cause"].clone()),
            (json!(4), json!("release"))
        );
        let digest = one["digest"].as_str().unwrap().to_owned();
        let by_digest = json(
            server
                .get(&format!(
                    "/v1/packs/demo/labels/production/revisions/{}",
                    &digest[..10]
                ))
                .await,
            200,
        )
        .await;
        assert_eq!(
            by_digest["revision"], 6,
            "the newest holding that state: {by_digest}"
        );
        let restored = json(
            server
                .put(
                    "/v1/packs/demo/labels/production/revision",
                    json!({ "revision": "0000000000", "expect": 6 }),
                )
                .await,
            404,
        )
        .await;
        assert!(
            restored["detail"]
                .as_str()
                .unwrap()
                .contains("has no revision of digest `0000000000`"),
            "{restored}"
        );
        let restored = json(
            server
                .put(
                    "/v1/packs/demo/labels/production/revision",
                    json!({ "revision": json!(back["revision"]), "expect": 6 }),
                )
                .await,
            200,
        )
        .await;
        assert_eq!(restored["restores"], 5);
        for (wanted, status) in [("99", 404), ("deadbeef", 404), ("latest", 400), ("0", 400)] {
            let response = server
                .get(&format!(
                    "/v1/packs/demo/labels/production/revisions/{wanted}"
                ))
                .await;
            let problem = json(response, status).await;
            assert!(
                problem["detail"].as_str().unwrap().contains(wanted),
                "{wanted}: {problem}"
            );
        }
        // A release decided on a revision that is no longer the newest is
        // refused with the one that won.
        let late = json!({ "from": "latest", "to": "production", "expect_revision": 6 });
        let late = json(server.post("/v1/packs/demo/releases", late).await, 412).await;
        assert_eq!(late["current"], 7, "{late}");
        assert!(
            late["detail"]
                .as_str()
                .unwrap()
                .contains("is at revision 7, not 6"),
            "{late}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_moves_every_prompt_at_once() {
    for db in databases("server_release").await {
        let server = TestServer::start(published(&db).await, config()).await;
        let moves = json(
            server
                .post(
                    "/v1/packs/demo/releases",
                    json!({ "from": "latest", "to": "staging" }),
                )
                .await,
            200,
        )
        .await;
        assert_eq!(moves["moves"].as_array().unwrap().len(), 3, "{}", db.name);
        let bundle = json(server.get("/v1/packs/demo/labels/staging").await, 200).await;
        assert_eq!(bundle["entries"].as_array().unwrap().len(), 3);
        let history = json(server.get("/v1/packs/demo/history").await, 200).await;
        assert!(
            history["moves"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["reason"] == "release latest")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_renders_and_explains_in_a_locale_with_a_context() {
    for db in databases("server_render").await {
        let server = TestServer::start(published(&db).await, config()).await;
        let rendered = json(
            server
                .post(
                    "/v1/packs/demo/prompts/greeting/render",
                    json!({ "locale": "fr-CA", "context": { "name": "Ada" } }),
                )
                .await,
            200,
        )
        .await;
        assert_eq!(
            rendered["text"], "Bonjour Ada !\n\nBe brief.",
            "{}",
            db.name
        );
        assert_eq!(rendered["label"], "production");
        let explained = json(
            server
                .post(
                    "/v1/packs/demo/prompts/greeting/explain",
                    json!({ "locale": "fr", "context": { "name": "Ada" } }),
                )
                .await,
            200,
        )
        .await;
        let parts = explained["rendered"]["parts"].as_array().unwrap();
        assert!(parts.len() >= 2, "{explained}");
        assert!(explained.get("warnings").is_none(), "{explained}");
        // A locale of no known language renders (the default), and says so.
        for action in ["render", "explain"] {
            let warned = json(
                server
                    .post(
                        &format!("/v1/packs/demo/prompts/greeting/{action}"),
                        json!({ "locale": "jp", "context": { "name": "Ada" } }),
                    )
                    .await,
                200,
            )
            .await;
            assert_eq!(
                warned["warnings"],
                json!([
                    "locale `jp` (the request's `locale`) names no known language, so no variant of a known language matches it; did you mean `ja`?"
                ]),
                "{}: {warned}",
                db.name
            );
        }
        let unknown = json(
            server
                .post("/v1/packs/demo/prompts/nope/render", json!({}))
                .await,
            404,
        )
        .await;
        assert_eq!(unknown["code"], "unknown-prompt", "{}", db.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_prompt_renders_as_messages_with_the_history_given() {
    for db in databases("server_chat").await {
        let store = db.open().await;
        let mut files = common::demo();
        files.insert(
            "defaults/farewell.md",
            "---\nkind: chat\n---\n# system\nSay goodbye.\n\n# history: conversation\n",
        );
        store.push(&files, &common::writer(), "chat").await.unwrap();
        let production = promptreg_store::Label::new("production").unwrap();
        for id in ["@pack", "farewell"] {
            store
                .move_label("demo", id, &production, 1, None, &common::writer(), "ship")
                .await
                .unwrap();
        }
        let server = TestServer::start(store, config()).await;
        let history = json!({ "conversation": [{ "role": "user", "content": "Bye!" }] });
        let rendered = json(
            server
                .post(
                    "/v1/packs/demo/prompts/farewell/render",
                    json!({ "history": history }),
                )
                .await,
            200,
        )
        .await;
        assert_eq!(
            rendered["messages"],
            json!([
                { "role": "system", "content": "Say goodbye." },
                { "role": "user", "content": "Bye!" },
            ]),
            "{}",
            db.name
        );
        assert_eq!(rendered["text"], "# system\nSay goodbye.\n\n# user\nBye!");
        let explained = json(
            server
                .post(
                    "/v1/packs/demo/prompts/farewell/explain",
                    json!({ "history": history }),
                )
                .await,
            200,
        )
        .await;
        let messages = explained["rendered"]["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 2, "{explained}");
        let unknown = json(
            server
                .post(
                    "/v1/packs/demo/prompts/farewell/render",
                    json!({ "history": { "chat": [] } }),
                )
                .await,
            422,
        )
        .await;
        assert!(
            unknown["detail"].as_str().unwrap().contains("conversation"),
            "{unknown}"
        );
        let typo = json(
            server
                .post(
                    "/v1/packs/demo/prompts/farewell/render",
                    json!({ "history": { "conversation": [{ "role": "usr", "content": "Bye!" }] } }),
                )
                .await,
            422,
        )
        .await;
        let detail = typo["detail"].as_str().unwrap();
        assert!(
            detail.contains("has unknown role `usr`") && detail.contains("did you mean `user`?"),
            "{}: {typo}",
            db.name
        );
        // The one rule for a text prompt (`greeting`): a history is refused,
        // on render and explain alike, not dropped.
        for action in ["render", "explain"] {
            let text = json(
                server
                    .post(
                        &format!("/v1/packs/demo/prompts/greeting/{action}"),
                        json!({ "label": "latest", "context": { "name": "Ada" }, "history": history }),
                    )
                    .await,
                422,
            )
            .await;
            assert!(
                text["detail"]
                    .as_str()
                    .unwrap()
                    .contains("has no history placeholder `conversation`"),
                "{}: {text}",
                db.name
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_versions_are_compared_per_locale() {
    for db in databases("server_diff").await {
        let server = TestServer::start(published(&db).await, config()).await;
        server
            .post(
                "/v1/packs/demo/prompts/greeting/versions",
                json!({ "files": {
                    "defaults/greeting.md": "---\ntemplate: true\nvariables:\n  name:\npin_tail: Be brief.\n---\nHello {{ name }}!\n",
                    "defaults/greeting.fr.md": "---\ntemplate: true\n---\nSalut {{ name }} !\n",
                } }),
            )
            .await;
        let all = json(
            server
                .get("/v1/packs/demo/prompts/greeting/diff?from=production&to=latest")
                .await,
            200,
        )
        .await;
        let changed: Vec<(&str, bool)> = all["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["path"].as_str().unwrap(), f["changed"].as_bool().unwrap()))
            .collect();
        assert_eq!(
            changed,
            [
                ("defaults/greeting.fr.md", true),
                ("defaults/greeting.md", false)
            ],
            "{}",
            db.name
        );
        let fr = json(
            server
                .get("/v1/packs/demo/prompts/greeting/diff?from=1&to=2&locale=fr")
                .await,
            200,
        )
        .await;
        let diff = fr["files"][0]["diff"].as_str().unwrap();
        assert!(
            diff.contains("-Bonjour {{ name }} !") && diff.contains("+Salut {{ name }} !"),
            "{diff}"
        );
        let none = json(
            server
                .get("/v1/packs/demo/prompts/greeting/diff?from=1&to=2&locale=ja")
                .await,
            404,
        )
        .await;
        assert_eq!(none["code"], "not-found");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_as_problem_details_before_any_lookup() {
    let db = common::sqlite();
    let mut small = config();
    small.body_limit = 1024;
    let server = TestServer::start(published(&db).await, small).await;
    let problem = |response: reqwest::Response, status: u16| async move {
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json"
        );
        json(response, status).await
    };

    let unknown = problem(server.get("/v1/nothing/here").await, 404).await;
    assert_eq!(unknown["code"], "unknown-route");
    assert_eq!(unknown["type"], "urn:promptreg:problem:unknown-route");
    assert_eq!(unknown["status"], 404);

    for path in [
        "/v1/packs/demo/prompts/..%2F..%2Fetc%2Fpasswd",
        "/v1/packs/demo/prompts/..%5C..%5Cwindows",
        "/v1/packs/demo/prompts/.hidden",
        "/v1/packs/demo/prompts/a%5Cb",
    ] {
        let refused = problem(server.get(path).await, 400).await;
        assert_eq!(refused["code"], "invalid-id", "{path}");
    }
    let pack = problem(server.get("/v1/packs/..%2Fx/prompts").await, 400).await;
    assert_eq!(pack["code"], "invalid-pack-name");
    let label = problem(server.get("/v1/packs/demo/labels/Prod%00").await, 400).await;
    assert_eq!(label["code"], "invalid-label");
    let version = problem(
        server
            .get("/v1/packs/demo/prompts/greeting?version=0")
            .await,
        400,
    )
    .await;
    assert_eq!(version["code"], "invalid-version");

    let path = server.url("/v1/packs/demo/prompts/farewell/versions");
    let malformed = server
        .client
        .post(&path)
        .header("content-type", "application/json")
        .body("{\"files\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(problem(malformed, 400).await["code"], "malformed-json");
    let wrong_type = server
        .client
        .post(&path)
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(
        problem(wrong_type, 415).await["code"],
        "unsupported-media-type"
    );
    let unknown_field = server
        .post(
            "/v1/packs/demo/prompts/farewell/versions",
            json!({ "file": {} }),
        )
        .await;
    assert_eq!(problem(unknown_field, 400).await["code"], "invalid-body");
    let big = json!({ "files": { "defaults/farewell.md": "x".repeat(4096) } });
    let oversized = server
        .post("/v1/packs/demo/prompts/farewell/versions", big)
        .await;
    assert_eq!(problem(oversized, 413).await["code"], "body-too-large");
    let method = server
        .client
        .delete(server.url("/v1/packs"))
        .send()
        .await
        .unwrap();
    assert_eq!(problem(method, 405).await["code"], "method-not-allowed");
    // Nothing was written by any of them.
    assert_eq!(server.store.log("demo", "farewell").await.unwrap().len(), 1);
}

/// `Server::router` is the whole application, called in-process: the
/// routes and every layer (request ids, the security headers, metrics).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_router_answers_in_process_with_every_layer() {
    use tower_service::Service as _;

    let db = common::sqlite();
    let server = promptreg_server::Server::bind(published(&db).await, config())
        .await
        .unwrap();
    let router = server.router();
    let call = async |path: &str| {
        let request = axum::http::Request::get(path)
            .header("host", "localhost")
            .body(axum::body::Body::empty())
            .unwrap();
        router.clone().call(request).await.unwrap()
    };
    let response = call("/v1/packs/demo/prompts/greeting?label=production").await;
    assert_eq!(response.status(), 200);
    for header in [
        "x-request-id",
        "etag",
        "x-content-type-options",
        "content-security-policy",
    ] {
        assert!(response.headers().contains_key(header), "{header} missing");
    }
    assert_eq!(call("/v1/packs/demo/prompts/nope").await.status(), 404);
    let metrics = call("/metrics").await;
    let text = axum::body::to_bytes(metrics.into_body(), usize::MAX)
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&text);
    assert!(
        text.contains(r#"route="/v1/packs/{pack}/prompts/{id}""#),
        "no request counted by route in\n{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_readiness_and_metrics() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    assert_eq!(
        json(server.get("/healthz").await, 200).await["status"],
        "ok"
    );
    assert_eq!(json(server.get("/readyz").await, 200).await["status"], "ok");
    server.get("/v1/packs/demo/prompts/greeting").await;
    server.get("/v1/packs/demo/prompts/nope").await;
    let response = server.get("/metrics").await;
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let text = response.text().await.unwrap();
    for line in [
        r#"promptreg_http_requests_total{method="GET",route="/v1/packs/{pack}/prompts/{id}",status="200"} 1"#,
        r#"promptreg_http_requests_total{method="GET",route="/v1/packs/{pack}/prompts/{id}",status="404"} 1"#,
        "promptreg_http_request_duration_seconds_bucket",
        "promptreg_sse_clients 0",
        "promptreg_store_errors_total 0",
    ] {
        assert!(text.contains(line), "{line} missing from\n{text}");
    }
    // The book's operations page lists every metric.
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/src/server/operations.md"
    ))
    .unwrap();
    for metric in text
        .lines()
        .filter_map(|l| l.strip_prefix("# HELP ")?.split(' ').next())
    {
        assert!(
            page.contains(&format!("| `{metric}` |")),
            "docs/src/server/operations.md does not describe the metric `{metric}`"
        );
    }
    // Request ids: this process's random prefix, then a counter in hex.
    let id = async || {
        let response = server.get("/healthz").await;
        let id = response.headers()["x-request-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let (prefix, n) = id.split_once('-').unwrap_or_else(|| panic!("`{id}`"));
        assert_eq!(prefix.len(), 16, "`{id}`");
        let hex = |s: &str| u64::from_str_radix(s, 16).unwrap_or_else(|e| panic!("`{id}`: {e}"));
        (hex(prefix), hex(n))
    };
    let (first_prefix, first) = id().await;
    let (prefix, next) = id().await;
    assert_eq!(prefix, first_prefix);
    assert!(next > first, "{next:x} after {first:x}");
}

/// Twenty new versions of one prompt at once: each is created, numbered
/// after the others, without a 412 (a create has no precondition).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_of_one_prompt_are_all_numbered() {
    for db in databases("server_concurrent_creates").await {
        let server = std::sync::Arc::new(TestServer::start(published(&db).await, config()).await);
        let creates = (0..20).map(|i| {
            let server = server.clone();
            tokio::spawn(async move {
                let body =
                    json!({ "files": { "defaults/farewell.md": format!("Bye number {i}.\n") } });
                let response = server
                    .post("/v1/packs/demo/prompts/farewell/versions", body)
                    .await;
                json(response, 201).await["version"].as_u64().unwrap()
            })
        });
        let mut numbers = Vec::new();
        for create in creates.collect::<Vec<_>>() {
            numbers.push(create.await.unwrap());
        }
        numbers.sort_unstable();
        // Version 1 was pushed first.
        assert_eq!(numbers, (2..=21).collect::<Vec<u64>>(), "{}", db.name);
    }
}

/// Text the store does not keep is a 400 naming the field, on both
/// backends: a NUL byte in a file, a message or a reason, and a message or
/// reason past 4 KiB. Nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nul_bytes_and_overlong_messages_are_refused_naming_the_field() {
    for db in databases("server_text").await {
        let server = TestServer::start(published(&db).await, config()).await;
        let create = "/v1/packs/demo/prompts/farewell/versions";
        let long = "m".repeat(4097);
        for (path, body, named) in [
            (
                create,
                json!({ "files": { "defaults/farewell.md": "Bye\u{0}.\n" } }),
                "file `defaults/farewell.md` holds a NUL byte at byte offset 3",
            ),
            (
                create,
                json!({ "files": { "defaults/farewell.md": "Bye.\n" }, "message": "a\u{0}b" }),
                "the message holds a NUL byte",
            ),
            (
                create,
                json!({ "files": { "defaults/farewell.md": "Bye.\n" }, "message": long }),
                "the message is 4097 bytes long",
            ),
            (
                "/v1/packs/demo/releases",
                json!({ "from": "latest", "to": "staging", "reason": "x\u{0}" }),
                "the reason holds a NUL byte",
            ),
            (
                "/v1/packs/demo/prompts/farewell/labels/production/rollback",
                json!({ "reason": long }),
                "the reason is 4097 bytes long",
            ),
        ] {
            let problem = json(server.post(path, body).await, 400).await;
            assert_eq!(problem["code"], "invalid-input", "{}: {problem}", db.name);
            let detail = problem["detail"].as_str().unwrap();
            assert!(detail.contains(named), "{}: {detail}", db.name);
        }
        let moved = server
            .client
            .put(server.url("/v1/packs/demo/prompts/farewell/labels/staging"))
            .header("if-none-match", "*")
            .json(&json!({ "version": 1, "reason": "why\u{0}" }))
            .send()
            .await
            .unwrap();
        assert_eq!(
            json(moved, 400).await["code"],
            "invalid-input",
            "{}",
            db.name
        );
        assert_eq!(server.store.log("demo", "farewell").await.unwrap().len(), 1);
        assert!(
            server
                .store
                .history("demo", None)
                .await
                .unwrap()
                .iter()
                .all(|m| m.label != "staging")
        );
    }
}

/// A bogus name or value of half a megabyte is quoted in part, with an
/// ellipsis; a refused version lists at most 50 diagnostics and counts the
/// rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_responses_are_bounded() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    let huge = "x".repeat(500_000);
    let long = &huge[..20_000];
    let release = server
        .post(
            "/v1/packs/demo/releases",
            json!({ "from": "latest", "to": format!("Bad{huge}") }),
        )
        .await;
    for response in [
        server.get(&format!("/v1/packs/..{long}/prompts")).await,
        server
            .get(&format!("/v1/packs/demo/labels/Bad{long}"))
            .await,
        server.get(&format!("/v1/{long}")).await,
        release,
    ] {
        let text = response.text().await.unwrap();
        assert!(text.len() < 2_000, "{} bytes: {}", text.len(), &text[..300]);
        let problem: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(
            problem["detail"].as_str().unwrap().contains('…'),
            "{problem}"
        );
    }

    let variables: String = (0..120).map(|i| format!("{{{{ v{i} }}}} ")).collect();
    // A warning per undeclared variable, and an error in the French file.
    let noisy = format!("---\ntemplate: true\n---\n{variables}\n");
    let wrong = "---\nmodel:\n  temperature: hot\n---\nAu revoir.\n";
    let refused = server
        .post(
            "/v1/packs/demo/prompts/farewell/versions",
            json!({ "files": { "defaults/farewell.md": noisy, "defaults/farewell.fr.md": wrong } }),
        )
        .await;
    let problem = json(refused, 422).await;
    assert_eq!(
        problem["diagnostics"].as_array().unwrap().len(),
        50,
        "{problem}"
    );
    let more = problem["more"].as_u64().unwrap();
    assert!(more > 0, "{problem}");
    let counted = format!("and {more} more");
    assert!(
        problem["detail"].as_str().unwrap().contains(&counted),
        "{problem}"
    );
}

/// A gated label refuses a release to a failing state with every failing
/// case; an admin key may force it with a reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_release_over_http_lists_the_failing_cases_and_an_admin_may_force_it() {
    for db in databases("server_gates").await {
        let store = db.open().await;
        let mut files = common::demo();
        let manifest = String::from_utf8(files.get("promptreg.toml").unwrap().to_vec()).unwrap();
        files.insert(
            "promptreg.toml",
            format!("{manifest}[release]\ngated = [\"production\"]\n"),
        );
        files.insert(
            "tests/greeting.toml",
            "prompt = \"greeting\"\n[[case]]\nname = \"hello\"\ncontext = { name = \"Ada\" }\ncontains = \"Bonjour\"\n",
        );
        store.push(&files, &common::admin(), "first").await.unwrap();
        let (_, writer) = store
            .create_key(
                "ci",
                Some("demo"),
                promptreg_store::Scope::Write,
                &common::admin(),
            )
            .await
            .unwrap();
        let (_, root) = store
            .create_key("ops", None, promptreg_store::Scope::Admin, &common::admin())
            .await
            .unwrap();
        let server = TestServer::start(store, config()).await;
        let release = |key: &str, body: serde_json::Value| {
            server
                .client
                .post(server.url("/v1/packs/demo/releases"))
                .bearer_auth(key.to_owned())
                .json(&body)
                .send()
        };
        let refused = json(
            release(&writer, json!({ "from": "latest", "to": "production" }))
                .await
                .unwrap(),
            422,
        )
        .await;
        assert_eq!(refused["code"], "tests-failed", "{}: {refused}", db.name);
        assert_eq!(refused["cases"][0]["prompt"], "greeting");
        assert_eq!(refused["cases"][0]["case"], "hello");
        assert_eq!(refused["cases"][0]["file"], "tests/greeting.toml");
        let forcing =
            json!({ "from": "latest", "to": "production", "force": true, "reason": "hotfix" });
        let not_admin = json(release(&writer, forcing.clone()).await.unwrap(), 403).await;
        assert_eq!(not_admin["code"], "forbidden", "{not_admin}");
        json(release(&root, forcing).await.unwrap(), 200).await;
        let listed = server
            .client
            .get(server.url("/v1/packs/demo/labels/production/revisions"))
            .bearer_auth(&root)
            .send()
            .await
            .unwrap();
        let listed = json(listed, 200).await;
        assert_eq!(listed["revisions"][0]["forced"], true, "{listed}");
        assert_eq!(
            listed["revisions"][0]["tests"],
            "0 of 1 cases passed, forced by an admin"
        );
    }
}
