//! Gradual releases over HTTP: a split started, shown in the fleet view,
//! its share changed, promoted and aborted, with the refusals a client
//! needs; on SQLite and PostgreSQL.

mod common;

use common::{TestServer, config, databases, json, published, writer};
use promptreg_store::{Label, PackFiles};
use serde_json::json;

const SPLIT: &str = "/v1/packs/demo/labels/production/split";

/// `latest` one version of `farewell` ahead of `production`.
async fn ahead(store: &promptreg_store::Store) {
    let mut files = PackFiles::default();
    files.insert("defaults/farewell.md", "See you.\n");
    store
        .push_prompt("demo", "farewell", &files, &writer(), "see you")
        .await
        .unwrap();
}

#[tokio::test]
async fn a_split_starts_shows_changes_share_and_is_promoted_or_aborted() {
    for db in databases("api_splits").await {
        let store = published(&db).await;
        ahead(&store).await;
        let mut server = TestServer::start(store.clone(), config()).await;

        let none = json(server.get(SPLIT).await, 404).await;
        assert!(
            none["detail"].as_str().unwrap().contains("runs no split"),
            "{}: {none}",
            db.name
        );
        let bad = json(
            server
                .post(SPLIT, json!({"from": "latest", "percent": 100.5}))
                .await,
            400,
        )
        .await;
        assert!(
            bad["detail"]
                .as_str()
                .unwrap()
                .contains("from 0 to 100, to two decimals"),
            "{bad}"
        );
        let missing = json(
            server
                .post(
                    SPLIT,
                    json!({"from": "latest", "revision": 99, "percent": 10}),
                )
                .await,
            404,
        )
        .await;
        assert!(
            missing["detail"]
                .as_str()
                .unwrap()
                .contains("no revision 99"),
            "{missing}"
        );

        let started = json(
            server
                .post(
                    SPLIT,
                    json!({"from": "latest", "percent": 10, "reason": "try"}),
                )
                .await,
            200,
        )
        .await;
        let id = started["split"].as_u64().unwrap();
        assert_eq!(
            (started["percent"].as_f64(), started["state"].as_str()),
            (Some(10.0), Some("running"))
        );
        assert_eq!(started["entries"]["farewell"], 2);
        // The server's renders follow the same assignment as followers.
        let rule = promptreg::split::SplitRule {
            id,
            basis_points: 1000,
        };
        let on = |arm| {
            (0..)
                .map(|n| format!("user-{n}"))
                .find(|s| rule.arm(s) == arm)
                .unwrap()
        };
        let render = "/v1/packs/demo/prompts/farewell/render";
        for (arm, text) in [
            (promptreg::split::Arm::Candidate, "See you."),
            (promptreg::split::Arm::Stable, "Goodbye."),
        ] {
            let subject = on(arm);
            let got = json(server.post(render, json!({"subject": subject})).await, 200).await;
            assert_eq!(got["text"], text, "{}: {subject}", db.name);
            assert_eq!(got["split"], json!({"split": id, "arm": arm.as_str()}));
        }
        let plain = json(server.post(render, json!({})).await, 200).await;
        assert_eq!(
            (plain["text"].as_str(), plain.get("split")),
            (Some("Goodbye."), None)
        );
        let page = server
            .get(&format!(
                "/packs/demo/prompts/farewell/playground?at=production&subject={}",
                on(promptreg::split::Arm::Candidate)
            ))
            .await
            .text()
            .await
            .unwrap();
        assert!(
            page.contains(&format!("gets split {id}: candidate")),
            "{page}"
        );
        assert!(page.contains("See you."), "{page}");
        let twice = json(
            server
                .post(SPLIT, json!({"from": "latest", "percent": 5}))
                .await,
            412,
        )
        .await;
        assert_eq!(twice["current"], id);
        assert_eq!(json(server.get(SPLIT).await, 200).await["split"], id);
        let fleet = json(
            server.get("/v1/packs/demo/labels/production/fleet").await,
            200,
        )
        .await;
        assert_eq!(
            fleet["split"]["split"], id,
            "the fleet view shows the split"
        );

        let shared = json(
            server
                .client
                .patch(server.url(SPLIT))
                .json(&json!({"percent": 25.5, "expect": id}))
                .send()
                .await
                .unwrap(),
            200,
        )
        .await;
        assert_eq!(shared["percent"], 25.5);
        let stale = json(
            server
                .post(&format!("{SPLIT}/promote"), json!({"expect": id + 1}))
                .await,
            412,
        )
        .await;
        assert!(
            stale["detail"]
                .as_str()
                .unwrap()
                .contains(&format!("runs split {id}, not split {}", id + 1)),
            "{stale}"
        );

        let promoted = json(
            server
                .post(&format!("{SPLIT}/promote"), json!({"reason": "good"}))
                .await,
            200,
        )
        .await;
        assert_eq!(promoted["state"], "promoted");
        let revision = promoted["promoted_to"].as_u64().unwrap();
        let bundle = server.get("/v1/packs/demo/labels/production").await;
        assert_eq!(
            bundle.headers()["promptreg-revision"].to_str().unwrap(),
            revision.to_string()
        );
        let body: serde_json::Value = bundle.json().await.unwrap();
        let farewell = body["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == "farewell")
            .unwrap();
        assert_eq!(
            farewell["version"], 2,
            "production serves the candidate now"
        );
        json(server.get(SPLIT).await, 404).await;
        json(server.get(&format!("{SPLIT}/bundle")).await, 404).await;
        let late = json(
            server
                .post(&format!("{SPLIT}/abort"), serde_json::Value::Null)
                .await,
            412,
        )
        .await;
        assert!(
            late["detail"]
                .as_str()
                .unwrap()
                .contains(&format!("split {id} was promoted by local")),
            "{late}"
        );

        // An abort of a split of an earlier revision serves production as it was.
        let started = json(
            server
                .post(
                    SPLIT,
                    json!({"from": "production", "revision": 1, "percent": 50}),
                )
                .await,
            200,
        )
        .await;
        let aborted = json(
            server
                .post(
                    &format!("{SPLIT}/abort"),
                    json!({"expect": started["split"]}),
                )
                .await,
            200,
        )
        .await;
        assert_eq!(aborted["state"], "aborted");
        let newest = store
            .newest_revision("demo", &Label::new("production").unwrap())
            .await
            .unwrap()
            .unwrap()
            .0;
        assert_eq!(newest, revision, "an abort moves nothing");
        server.stop().await;
    }
}
