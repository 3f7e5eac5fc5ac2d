//! Contracts over HTTP: a render in a provider's shape, the contract a
//! render carries, and a diff's classified contract changes; on SQLite and
//! PostgreSQL.

mod common;

use std::path::Path;

use common::{TestServer, config, databases, json, writer};
use promptreg_store::{Label, PackFiles};
use serde_json::json;

const NARRATOR: &str = "/v1/packs/web-agent/prompts/webagent-narrator.system";

fn web_agent() -> PackFiles {
    PackFiles::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/web-agent")).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_render_carries_its_contract_and_a_provider_s_request() {
    for db in databases("server_contracts").await {
        let store = db.open().await;
        store.push(&web_agent(), &writer(), "first").await.unwrap();
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
