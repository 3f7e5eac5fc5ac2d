//! Faults: files that are not stores, read-only databases, a server that
//! cannot be reached or drops its connections.

mod common;

use common::{demo, writer};
use promptreg_store::{ErrorKind, Label, Store};

#[tokio::test]
async fn a_file_that_is_not_a_database_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.db");
    std::fs::write(&path, "These are my notes, not a database.\n".repeat(200)).unwrap();
    let err = Store::open(path.to_str().unwrap()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotAStore, "{err}");
    assert!(
        err.to_string()
            .contains("notes.db is not a promptreg store"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap().len(),
        36 * 200,
        "the file is left alone"
    );
}

#[tokio::test]
async fn a_folder_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let err = Store::open(dir.path().to_str().unwrap()).await.unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Unavailable | ErrorKind::Database | ErrorKind::NotAStore
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(dir.path().to_str().unwrap()),
        "{err}"
    );
}

/// A read-only database opens and reads; a push is refused, clearly, and
/// writes nothing.
#[tokio::test]
async fn a_read_only_database_reads_and_refuses_writes() {
    let db = common::sqlite();
    db.open().await.push(&demo(), &writer(), "").await.unwrap();
    // Through a read-only connection (`mode=ro`), and through file permissions
    // where they apply (root ignores them).
    let mut urls = vec![format!("sqlite:{}?mode=ro", db.url)];
    let mut perms = std::fs::metadata(&db.url).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&db.url, perms).unwrap();
    if std::fs::OpenOptions::new()
        .write(true)
        .open(&db.url)
        .is_err()
    {
        urls.push(db.url.clone());
    } else {
        eprintln!(
            "running with privileges that ignore file permissions: read-only tested through mode=ro only"
        );
    }
    for url in urls {
        let store = Store::open(&url)
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(
            store.checkout("demo", &Label::latest()).await.unwrap(),
            demo(),
            "{url}"
        );
        let mut changed = demo();
        changed.insert("defaults/farewell.md", "Bye.\n");
        let err = store.push(&changed, &writer(), "").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ReadOnly, "{url}: {err}");
        assert!(
            err.to_string().contains("is read-only")
                && err.to_string().contains("nothing was written"),
            "{err}"
        );
        assert_eq!(store.log("demo", "farewell").await.unwrap().len(), 1);
    }
}

/// Nothing listens: a clear error naming the server, never its password.
#[tokio::test]
async fn an_unreachable_server_is_a_clear_error_without_its_password() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("postgres://app:s3cret@127.0.0.1:{port}/prompts");
    let err = Store::open(&url).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    let message = err.to_string();
    assert!(
        message.contains(&format!("postgres://app:***@127.0.0.1:{port}/prompts")),
        "{message}"
    );
    assert!(message.contains("retrying is safe"), "{message}");
    assert!(
        !message.contains("s3cret") && !format!("{err:?}").contains("s3cret"),
        "{message}"
    );
}

/// The server drops every connection of the store (as a restart or a
/// failover does) between and during operations: each operation either
/// completes or fails as `Unavailable`, a retry succeeds, and the store
/// holds whole versions only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_dropping_connections_leaves_whole_versions_and_retry_works() {
    let Some(db) = common::postgres_only("dropped").await else {
        return;
    };
    let store = db.open().await;
    store
        .push(&common::big_pack(200, 0, ""), &writer(), "")
        .await
        .unwrap();
    let app = db
        .url
        .rsplit("application_name=")
        .next()
        .unwrap()
        .to_owned();
    let base = std::env::var(common::DATABASE_URL_VAR).unwrap();
    let admin = sqlx::PgPool::connect(&base).await.unwrap();
    let mut failures = 0;
    for round in 1..=6 {
        let edit = format!(" Edit {round}.");
        let files = common::big_pack(200, 200, &edit);
        let killer = {
            let (admin, app) = (admin.clone(), app.clone());
            tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(3 * round)).await;
                sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1")
                    .bind(app)
                    .execute(&admin)
                    .await
                    .unwrap();
            })
        };
        let started = std::time::Instant::now();
        let first = store.push(&files, &writer(), "").await;
        eprintln!(
            "round {round}: {:?} {:?}",
            started.elapsed(),
            first.as_ref().err()
        );
        killer.await.unwrap();
        if let Err(err) = &first {
            failures += 1;
            assert_eq!(err.kind(), ErrorKind::Unavailable, "round {round}: {err}");
            assert!(err.to_string().contains("retrying is safe"), "{err}");
        }
        let retry = store.push(&files, &writer(), "").await.unwrap();
        assert_eq!(
            retry.versions_written(),
            if first.is_ok() { 0 } else { 200 },
            "round {round}"
        );
        store.verify("big").await.unwrap();
    }
    eprintln!("{failures} of 6 pushes were cut by the server");
    admin.close().await;
}
