//! Heavy work (a label's pack built to render from, a pushed version
//! checked) runs off the async workers, bounded; pushes over the file
//! limits are refused. On SQLite and PostgreSQL alike.

mod common;

use std::time::Duration;

use common::{TestServer, config, databases, json, published, writer};
use promptreg_server::Config;
use promptreg_store::{FileLimits, Label};
use serde_json::{Value, json};

/// The files of a version of `greeting` with `variants` locale variants
/// (`en-US-v00000`, ...: one language and script, so the same-script
/// index holds all of them).
fn greeting_with_variants(variants: usize) -> Value {
    let mut files = serde_json::Map::new();
    files.insert(
        "defaults/greeting.md".to_owned(),
        json!("---\ntemplate: true\nvariables:\n  name:\npin_tail: Be brief.\n---\nHello {{ name }}!\n"),
    );
    for n in 0..variants {
        files.insert(
            format!("defaults/greeting.en-US-v{n:05}.md"),
            json!(format!("Hi {n}.")),
        );
    }
    json!({ "files": files, "message": "every variant" })
}

/// Generous: only a guard against a hang, never a measure of speed.
const HANG_GUARD: Duration = Duration::from_secs(20);

const VARIANTS: usize = 5_000;
const LABELS: [&str; 4] = ["l1", "l2", "l3", "l4"];

fn roomy() -> Config {
    Config {
        file_limits: FileLimits {
            per_prompt: VARIANTS + 1,
            per_pack: VARIANTS + 10,
        },
        heavy_jobs: 1,
        ..config()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_packs_of_thousands_of_variants_build_healthz_answers_and_shutdown_is_prompt() {
    for db in databases("server_heavy_builds").await {
        let mut server = TestServer::start(published(&db).await, roomy()).await;
        let created = server
            .post(
                "/v1/packs/demo/prompts/greeting/versions",
                greeting_with_variants(VARIANTS),
            )
            .await;
        let version = json(created, 201).await["version"].as_u64().unwrap();
        // Each label is a view of its own, built on its first render.
        for name in LABELS {
            let name = Label::new(name).unwrap();
            for (id, v) in [("@pack", 1), ("greeting", version)] {
                server
                    .store
                    .move_label("demo", id, &name, v, None, &writer(), "test")
                    .await
                    .unwrap();
            }
        }
        // Each render sends its answer when it has one.
        let (answered, mut answers) = tokio::sync::mpsc::unbounded_channel();
        for name in LABELS {
            let request = server
                .client
                .post(server.url("/v1/packs/demo/prompts/greeting/render"));
            let body = json!({ "label": name, "locale": "en-GB", "context": { "name": "Ada" } });
            let answered = answered.clone();
            tokio::spawn(async move {
                let response = request.json(&body).send().await.unwrap();
                let status = response.status().as_u16();
                let _ = answered.send((status, response.json::<Value>().await.unwrap()));
            });
        }
        drop(answered);
        let health = tokio::time::timeout(HANG_GUARD, server.get("/healthz"))
            .await
            .expect("/healthz answers while packs build");
        assert_eq!(health.status(), 200, "{}", db.name);
        assert!(
            answers.try_recv().is_err(),
            "{}: /healthz answered only after a build",
            db.name
        );
        // One build done, the others running or waiting: stop now.
        let first = tokio::time::timeout(HANG_GUARD, answers.recv())
            .await
            .unwrap();
        let mut all = vec![first.unwrap()];
        tokio::time::timeout(HANG_GUARD, server.stop())
            .await
            .expect("the server stops while packs build");
        while let Some(answer) = answers.recv().await {
            all.push(answer);
        }
        assert_eq!(all.len(), LABELS.len());
        for (status, body) in all {
            match status {
                200 => assert_eq!(body["text"], "Hi 0.\n\nBe brief.", "{}", db.name),
                // Waiting for the one build at a time when shutdown came.
                _ => assert_eq!(
                    (status, body["code"].as_str()),
                    (503, Some("shutting-down"))
                ),
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_over_the_file_limits_is_refused_naming_the_limit_and_the_count() {
    for db in databases("server_file_limits").await {
        let mut server = TestServer::start(published(&db).await, config()).await;
        let path = "/v1/packs/demo/prompts/greeting/versions";
        let refused = json(server.post(path, greeting_with_variants(1_000)).await, 422).await;
        assert_eq!(refused["code"], "too-many-files", "{}", db.name);
        let detail = refused["detail"].as_str().unwrap();
        assert!(
            detail.contains(
                "prompt `greeting` has 1001 files, more than the limit of 1000 files per prompt"
            ),
            "{detail}"
        );
        // Nothing was written; one file fewer passes.
        let versions = json(
            server.get("/v1/packs/demo/prompts/greeting/versions").await,
            200,
        )
        .await;
        assert_eq!(versions["versions"].as_array().unwrap().len(), 1);
        json(server.post(path, greeting_with_variants(999)).await, 201).await;
        server.stop().await;

        let tight = Config {
            file_limits: FileLimits {
                per_prompt: 1_000,
                per_pack: 5,
            },
            ..config()
        };
        let mut server = TestServer::start(server.store.clone(), tight).await;
        let refused = json(server.post(path, greeting_with_variants(5)).await, 422).await;
        let detail = refused["detail"].as_str().unwrap();
        // The manifest, `farewell` and greeting's six files.
        assert!(
            detail.contains("pack `demo` has 8 files, more than the limit of 5 files per pack"),
            "{detail}"
        );
        server.stop().await;
    }
}
