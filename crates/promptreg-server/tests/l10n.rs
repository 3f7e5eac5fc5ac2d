//! Translations of a stored pack over HTTP: a change to a default makes
//! its variant stale in the coverage, the export carries the stale unit,
//! and a translated file imported back becomes new versions, current; on
//! SQLite and PostgreSQL.

mod common;

use common::{TestServer, config, databases, json, published, writer};
use promptreg_store::PackFiles;
use serde_json::json;

const STATUS: &str = "/v1/packs/demo/l10n?locale=fr";
const FR: &str = "/v1/packs/demo/l10n/fr";

/// `greeting`'s body changed at `latest` after its French variant was
/// marked current.
async fn stale_french(store: &promptreg_store::Store) {
    let pack = store
        .load("demo", &promptreg_store::Label::latest())
        .await
        .unwrap();
    let source = pack
        .prompt("greeting")
        .unwrap()
        .source_text()
        .unwrap()
        .clone();
    let french = promptreg::pack::translation::record_source(
        "---\ntemplate: true\n---\nBonjour {{ name }} !\n",
        &source,
    );
    let mut files = PackFiles::default();
    files.insert(
        "defaults/greeting.md",
        "---\ntemplate: true\nvariables:\n  name:\npin_tail: Be brief.\n---\nHello {{ name }}!\n",
    );
    files.insert("defaults/greeting.fr.md", french.as_str());
    store
        .push_prompt("demo", "greeting", &files, &writer(), "French, current")
        .await
        .unwrap();
    files.insert(
        "defaults/greeting.md",
        "---\ntemplate: true\nvariables:\n  name:\npin_tail: Be brief.\n---\nHello {{ name }}, welcome!\n",
    );
    store
        .push_prompt("demo", "greeting", &files, &writer(), "A warmer greeting")
        .await
        .unwrap();
}

#[tokio::test]
async fn a_stale_translation_is_exported_translated_and_imported_current() {
    for db in databases("api_l10n").await {
        let store = published(&db).await;
        stale_french(&store).await;
        let mut server = TestServer::start(store.clone(), config()).await;

        let status = json(server.get(STATUS).await, 200).await;
        let fr = &status["locales"][0];
        assert_eq!(fr["stale"], 1, "{}: {status}", db.name);
        assert_eq!(fr["falling_back"], 1, "{status}");

        let response = server.get(&format!("{FR}?format=po")).await;
        assert_eq!(response.status(), 200);
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/x-gettext-translation")
        );
        let po = response.text().await.unwrap();
        assert!(po.contains("#, fuzzy\nmsgctxt \"greeting:body\""), "{po}");

        // A file nobody translated writes nothing.
        let untouched = json(server.post(FR, json!({ "file": po })).await, 200).await;
        assert_eq!(untouched["written"], json!([]), "{untouched}");
        assert_eq!(untouched["versions"], json!({}), "{untouched}");
        assert_eq!(untouched["warnings"], json!([]), "{untouched}");

        let translated = po.replace("#, fuzzy\n", "").replace(
            "msgstr \"Bonjour {{ name }} !\\n\"",
            "msgstr \"Bonjour {{ name }}, bienvenue !\\n\"",
        );
        let imported = json(
            server
                .post(
                    FR,
                    json!({ "file": translated, "message": "French greeting" }),
                )
                .await,
            200,
        )
        .await;
        assert_eq!(
            imported["written"],
            json!(["defaults/greeting.fr.md"]),
            "{imported}"
        );
        assert_eq!(imported["versions"]["greeting"], 4, "{imported}");
        let status = json(server.get(STATUS).await, 200).await;
        assert_eq!(status["locales"][0]["current"], 1, "{status}");
        assert_eq!(status["locales"][0]["stale"], 0, "{status}");
        let log = store.log("demo", "greeting").await.unwrap();
        assert_eq!(log[0].message, "French greeting");

        // Refusals: a file for another locale, a template change, not a file.
        let other = json(
            server
                .post("/v1/packs/demo/l10n/de", json!({ "file": translated }))
                .await,
            422,
        )
        .await;
        assert_eq!(other["code"], "invalid-translation", "{other}");
        assert!(
            other["diagnostics"][0]["message"]
                .as_str()
                .unwrap()
                .contains("translates into `fr`, not `de`")
        );
        let export = server
            .get(&format!("{FR}?format=xliff"))
            .await
            .text()
            .await
            .unwrap();
        let broken = export
            .replace("state=\"final\"", "state=\"translated\"")
            .replace("bienvenue", "{{ nom }}");
        let refused = json(server.post(FR, json!({ "file": broken })).await, 422).await;
        assert!(
            refused["diagnostics"][0]["message"]
                .as_str()
                .unwrap()
                .starts_with("unit `greeting:body`: the translation changes the template"),
            "{refused}"
        );
        assert_eq!(store.log("demo", "greeting").await.unwrap().len(), 4);
        let bad = json(server.get(&format!("{FR}?format=docx")).await, 400).await;
        assert_eq!(bad["code"], "invalid-query", "{bad}");

        // A translation with a bidirectional-text override is written, and
        // said to hold one.
        let hidden = export
            .replace("state=\"final\"", "state=\"translated\"")
            .replace("bienvenue", "bien\u{202e}venue");
        let warned = json(server.post(FR, json!({ "file": hidden })).await, 200).await;
        assert_eq!(warned["written"], json!(["defaults/greeting.fr.md"]));
        let warnings = warned["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 1, "{warned}");
        assert!(
            warnings[0].as_str().unwrap().starts_with(
                "unit `greeting:body`: the translation holds 1 bidirectional-text control character"
            ),
            "{warned}"
        );
        server.stop().await;
    }
}
