//! Contracts over HTTP: a render in a provider's shape, the contract a
//! render carries, and a diff's classified contract changes; on SQLite and
//! PostgreSQL.

mod common;

use std::path::Path;

use common::{TestServer, config, databases, json, writer};
use promptreg::prelude::*;
use promptreg_store::{Label, PackFiles, Store};
use serde_json::json;

const NARRATOR: &str = "/v1/packs/web-agent/prompts/webagent-narrator.system";

fn web_agent() -> PackFiles {
    PackFiles::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/web-agent")).unwrap()
}

/// `files` pushed as the web-agent pack and released to `production`.
async fn released(store: &Store, files: &PackFiles) {
    store.push(files, &common::admin(), "first").await.unwrap();
    let production = Label::new("production").unwrap();
    store
        .release(
            "web-agent",
            &Label::latest(),
            &production,
            None,
            &writer(),
            "",
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_render_carries_its_contract_and_a_provider_s_request() {
    for db in databases("server_contracts").await {
        let store = db.open().await;
        released(&store, &web_agent()).await;
        let server = TestServer::start(store, config()).await;
        let ctx = json!({ "brand": "Acme" });

        let plain = json(
            server
                .post(
                    &format!("{NARRATOR}/render"),
                    json!({ "locale": "ja", "context": ctx }),
                )
                .await,
            200,
        )
        .await;
        assert_eq!(
            plain["contract"]["tools"][0]["name"], "open_page",
            "{}",
            db.name
        );
        assert_eq!(
            plain["contract"]["tools"][0]["description"],
            "サイトのページを開き、その本文を読みます。"
        );
        assert!(plain.get("provider_request").is_none(), "{plain}");

        let shaped = json(
            server
                .post(
                    &format!("{NARRATOR}/render"),
                    json!({ "locale": "ja", "context": ctx, "format": "anthropic" }),
                )
                .await,
            200,
        )
        .await;
        let body = &shaped["provider_request"];
        assert!(
            body["system"].as_str().unwrap().starts_with("あなたは"),
            "{body}"
        );
        assert_eq!(body["max_tokens"], 1200);
        assert_eq!(body["tools"][2]["name"], "hand_over");
        assert_eq!(
            body["tools"][0]["input_schema"]["required"],
            json!(["path"])
        );

        let unknown = json(
            server
                .post(
                    &format!("{NARRATOR}/render"),
                    json!({ "context": ctx, "format": "claude" }),
                )
                .await,
            400,
        )
        .await;
        let detail = unknown["detail"].as_str().unwrap();
        assert!(
            detail.contains("unknown variant `claude`, expected one of `openai`"),
            "{unknown}"
        );
        let explained = json(
            server
                .post(
                    &format!("{NARRATOR}/explain"),
                    json!({ "context": ctx, "format": "openai" }),
                )
                .await,
            400,
        )
        .await;
        assert_eq!(explained["code"], "invalid-body");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_diff_classifies_the_contract_s_changes() {
    for db in databases("server_contract_diff").await {
        let store = db.open().await;
        store.push(&web_agent(), &writer(), "first").await.unwrap();
        let mut files = web_agent();
        let narrator = "defaults/webagent-narrator.system.md";
        let text = String::from_utf8(files.get(narrator).unwrap().to_vec()).unwrap();
        let text = text.replace(
            "      required: [query, limit]\n",
            "      required: [query]\n",
        );
        files.insert(narrator, text);
        store
            .push(&files, &writer(), "limit optional")
            .await
            .unwrap();
        let server = TestServer::start(store, config()).await;
        let diff = json(
            server.get(&format!("{NARRATOR}/diff?from=1&to=2")).await,
            200,
        )
        .await;
        assert_eq!(
            diff["contract"],
            json!([{
                "subject": "tool `search_site`, parameter `limit`",
                "what": "became optional",
                "breaking": false,
            }]),
            "{}",
            db.name
        );
    }
}

/// A release over HTTP that breaks a stable label's contract is refused
/// (409 `breaking-change`, naming each change), and an admin key forces
/// it with a reason the revision records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_that_breaks_a_stable_contract_is_refused_unless_forced() {
    for db in databases("server_stable_contract").await {
        let store = db.open().await;
        let mut files = web_agent();
        let manifest = String::from_utf8(files.get("promptreg.toml").unwrap().to_vec()).unwrap();
        files.insert(
            "promptreg.toml",
            format!("{manifest}\n[release]\nstable_contract = [\"production\"]\n"),
        );
        released(&store, &files).await;
        // The narrator no longer offers `hand_over`.
        let path = "defaults/webagent-narrator.system.md";
        let text = String::from_utf8(files.get(path).unwrap().to_vec()).unwrap();
        let without = text.replace("  - hand_over\n", "");
        assert_ne!(without, text);
        files.insert(path, without);
        let path = "defaults/webagent-narrator.system.ja.md";
        let text = String::from_utf8(files.get(path).unwrap().to_vec()).unwrap();
        let text = text.replace(
            "  hand_over:\n    description: 会話をサポートチームの担当者に引き継ぎます。\n    parameters: { reason: 担当者が必要な理由 }\n",
            "",
        );
        files.insert(path, text);
        store.push(&files, &writer(), "no hand-over").await.unwrap();
        let (_, ci) = store
            .create_key(
                "ci",
                Some("web-agent"),
                promptreg_store::Scope::Write,
                &common::admin(),
            )
            .await
            .unwrap();
        let (_, ops) = store
            .create_key("ops", None, promptreg_store::Scope::Admin, &common::admin())
            .await
            .unwrap();
        let server = TestServer::start(store, config()).await;
        let release = |key: &str, body: serde_json::Value| {
            server
                .client
                .post(server.url("/v1/packs/web-agent/releases"))
                .bearer_auth(key.to_owned())
                .json(&body)
                .send()
        };
        let plain = json!({ "from": "latest", "to": "production" });
        let refused = json(release(&ci, plain).await.unwrap(), 409).await;
        assert_eq!(refused["code"], "breaking-change", "{}: {refused}", db.name);
        let detail = refused["detail"].as_str().unwrap();
        assert!(
            detail.contains("webagent-narrator.system v1 -> v2: tool `hand_over` removed"),
            "{detail}"
        );
        let forcing = json!({
            "from": "latest", "to": "production", "force": true,
            "reason": "people are handed over by the widget now",
        });
        let not_admin = json(release(&ci, forcing.clone()).await.unwrap(), 403).await;
        assert_eq!(not_admin["code"], "forbidden", "{not_admin}");
        json(release(&ops, forcing).await.unwrap(), 200).await;
        let listed = server
            .client
            .get(server.url("/v1/packs/web-agent/labels/production/revisions"))
            .bearer_auth(&ops)
            .send()
            .await
            .unwrap();
        let listed = json(listed, 200).await;
        assert_eq!(
            listed["revisions"][0]["breaking"],
            json!(["webagent-narrator.system v1 -> v2: tool `hand_over` removed"]),
            "{listed}"
        );
        assert_eq!(listed["revisions"][1]["breaking"], json!([]));
    }
}

/// A follower serves the contract of the revision in force, its shared
/// tools included: the bundle carries the pack's `tools/` files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_serves_the_contract_shared_tools_included() {
    for db in databases("server_contract_follow").await {
        let store = db.open().await;
        released(&store, &web_agent()).await;
        let server = TestServer::start(store, config()).await;
        let cache = tempfile::tempdir().unwrap();
        let registry = promptreg::PromptRegistry::new();
        let remote = common::follow_demo(&server.base, cache.path()).pack("web-agent");
        let follower = registry.follow(remote).unwrap();
        let deadline = std::time::Duration::from_secs(30);
        assert!(follower.wait_for_first_sync(deadline), "{}", db.name);
        let contract = registry
            .snapshot()
            .contract("webagent-narrator.system", "ja")
            .unwrap()
            .unwrap();
        let hand_over = contract.tool("hand_over").unwrap();
        assert_eq!(
            hand_over.origin(),
            Some("tools/hand_over.yaml"),
            "{}",
            db.name
        );
        assert_eq!(
            hand_over.description(),
            "会話をサポートチームの担当者に引き継ぎます。"
        );
        drop(follower);
    }
}
