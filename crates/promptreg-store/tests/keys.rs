//! API keys, on SQLite and PostgreSQL alike.

mod common;

use common::{TestDb, admin, databases, demo, writer};
use promptreg_store::{ErrorKind, Label, Scope};

#[tokio::test]
async fn a_key_authenticates_with_its_secret_until_revoked() {
    for db in databases("keys_lifecycle").await {
        let store = db.open().await;
        let (key, secret) = store
            .create_key("ci-deploy", None, Scope::Write, &admin())
            .await
            .unwrap();
        assert_eq!((key.name.as_str(), key.scope), ("ci-deploy", Scope::Write));
        assert_eq!((key.pack, key.created_by.as_str()), (None, "root"));
        assert!(secret.starts_with("prk_") && secret.len() == 68, "{secret}");
        let found = store.authenticate(&secret).await.unwrap();
        assert_eq!(found.name, "ci-deploy", "{}", db.name);
        assert_eq!(found.revoked_at, None);

        let revoked = store.revoke_key("ci-deploy", &admin()).await.unwrap();
        assert!(revoked.revoked_at.is_some(), "{}", db.name);
        let err = store.authenticate(&secret).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::KeyRevoked, "{}: {err}", db.name);
        assert!(err.to_string().contains("`ci-deploy` was revoked"), "{err}");
        assert!(!err.to_string().contains(&secret[4..]), "{err}");
        // Revoking again keeps the first revocation.
        let again = store.revoke_key("ci-deploy", &admin()).await.unwrap();
        assert_eq!(again.revoked_at, revoked.revoked_at, "{}", db.name);

        let listed = store.keys().await.unwrap();
        assert_eq!(listed, [revoked], "{}", db.name);
    }
}

#[tokio::test]
async fn a_wrong_secret_is_unauthorized_and_never_echoed() {
    for db in databases("keys_wrong").await {
        let store = db.open().await;
        let (_, secret) = store
            .create_key("reader", None, Scope::Read, &admin())
            .await
            .unwrap();
        let mut wrong = secret.clone();
        wrong.replace_range(10..12, if &secret[10..12] == "00" { "11" } else { "00" });
        for attempt in [wrong.as_str(), "", "prk_", "Bearer nonsense", &secret[4..]] {
            let err = store.authenticate(attempt).await.unwrap_err();
            assert_eq!(
                err.kind(),
                ErrorKind::Unauthorized,
                "{}: {attempt}",
                db.name
            );
            assert!(
                attempt.is_empty() || !err.to_string().contains(attempt),
                "{err}"
            );
            assert!(!format!("{err:?}").contains(&secret[4..]));
        }
    }
}

#[tokio::test]
async fn keys_need_an_admin_a_valid_name_and_a_new_one() {
    for db in databases("keys_rules").await {
        let store = db.open().await;
        let err = store
            .create_key("ci", None, Scope::Read, &writer())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Forbidden, "{err}");
        for bad in ["", "CI", "ci deploy", "-ci", "ci_deploy"] {
            let err = store
                .create_key(bad, None, Scope::Read, &admin())
                .await
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidKey, "{bad}: {err}");
            assert!(err.to_string().contains("invalid API key name"), "{err}");
        }
        store
            .create_key("ci", None, Scope::Read, &admin())
            .await
            .unwrap();
        store.revoke_key("ci", &admin()).await.unwrap();
        let err = store
            .create_key("ci", None, Scope::Admin, &admin())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Conflict, "{}: {err}", db.name);
        assert!(err.to_string().contains("`ci` exists already"), "{err}");

        let err = store.revoke_key("ci", &writer()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Forbidden);
        let err = store.revoke_key("nobody", &admin()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownKey, "{err}");
        assert_eq!(store.keys().await.unwrap().len(), 1);
    }
}

#[tokio::test]
async fn a_key_for_one_pack_allows_that_pack_at_its_scope_and_below() {
    for db in databases("keys_pack").await {
        let store = db.open().await;
        let err = store
            .create_key("demo-ci", Some("demo"), Scope::Write, &admin())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownPack, "{}: {err}", db.name);
        store.push(&demo(), &writer(), "").await.unwrap();
        let (_, secret) = store
            .create_key("demo-ci", Some("demo"), Scope::Write, &admin())
            .await
            .unwrap();
        let key = store.authenticate(&secret).await.unwrap();
        assert_eq!(key.pack.as_deref(), Some("demo"));
        assert!(key.allows("demo", Scope::Read) && key.allows("demo", Scope::Write));
        assert!(!key.allows("demo", Scope::Admin));
        assert!(!key.allows("other", Scope::Read));

        // The key's actor: writes under `key:NAME`, cannot move a protected label.
        let prod = Label::new("production").unwrap();
        store.protect("demo", &prod, true, &admin()).await.unwrap();
        let err = store
            .move_label("demo", "greeting", &prod, 1, None, &key.actor(), "")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Forbidden, "{err}");
        assert!(err.to_string().starts_with("key:demo-ci may not"), "{err}");
        let staging = Label::new("staging").unwrap();
        let moved = store
            .move_label("demo", "greeting", &staging, 1, None, &key.actor(), "")
            .await
            .unwrap();
        assert_eq!(moved.actor, "key:demo-ci");
        let (_, admin_secret) = store
            .create_key("release-bot", Some("demo"), Scope::Admin, &admin())
            .await
            .unwrap();
        let bot = store.authenticate(&admin_secret).await.unwrap().actor();
        store
            .move_label("demo", "greeting", &prod, 1, None, &bot, "ship")
            .await
            .unwrap();
        let history = store.history("demo", Some("greeting")).await.unwrap();
        assert_eq!(
            history.last().unwrap().actor,
            "key:release-bot",
            "{}",
            db.name
        );
    }
}

/// Every byte the database holds about keys, as text.
async fn stored_key_bytes(db: &TestDb) -> Vec<u8> {
    if db.name == "sqlite" {
        // The file and its write-ahead log, wherever the rows are now.
        let dir = std::path::Path::new(&db.url).parent().unwrap();
        let mut bytes = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            bytes.extend(std::fs::read(entry.unwrap().path()).unwrap());
        }
        return bytes;
    }
    let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
    let rows: Vec<(String,)> = sqlx::query_as("SELECT k::text FROM api_keys k")
        .fetch_all(&pool)
        .await
        .unwrap();
    pool.close().await;
    rows.into_iter().flat_map(|(r,)| r.into_bytes()).collect()
}

#[tokio::test]
async fn the_secret_is_not_stored_only_its_hash() {
    for db in databases("keys_hash").await {
        let store = db.open().await;
        let (_, secret) = store
            .create_key("scan-me", None, Scope::Admin, &admin())
            .await
            .unwrap();
        let stored = stored_key_bytes(&db).await;
        let text = String::from_utf8_lossy(&stored);
        assert!(
            text.contains("scan-me"),
            "{}: the scan reads the keys",
            db.name
        );
        // Neither the secret nor its random part, nor half of it.
        for part in [&secret[..], &secret[4..], &secret[4..36], &secret[36..]] {
            assert!(!text.contains(part), "{}: `{part}` is stored", db.name);
        }
    }
}
