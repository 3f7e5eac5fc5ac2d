//! Signed releases end to end: a registry following a real server with
//! trusted keys accepts a release signed by one of them and refuses every
//! other, keeping the last good bundle, when the releaser signs wrongly or
//! someone with access to the database tampers with it directly; a baked
//! bundle renders with no server, and a follower starts from one.

mod common;

use promptreg::prelude::*;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{TestServer, config, databases, published, writer};
use promptreg::PromptRegistry;
use promptreg::remote::{BakedBundle, Follower, Remote, Source};
use promptreg_store::test_support::{TestDb, signing_key, trusting};
use promptreg_store::{Label, PackFiles, Store};

/// Generous: the point is that it happens, not how fast.
const DEADLINE: Duration = Duration::from_secs(30);

fn remote(base: &str, cache: &Path) -> Remote {
    common::follow_demo(base, cache).trust_keys(trusting(1))
}

/// A registry with a local `farewell`, following `base` with `cache`.
fn following(base: &str, cache: &Path) -> (PromptRegistry, Follower) {
    let registry = PromptRegistry::new();
    registry
        .register_default("farewell", "Local farewell.")
        .unwrap();
    let follower = registry.follow(remote(base, cache)).unwrap();
    (registry, follower)
}

fn farewell(registry: &PromptRegistry) -> String {
    registry.render_plain("farewell").unwrap()
}

/// Waits until `ready` holds of the follower's status, rendering
/// meanwhile: every render must work.
async fn until(
    registry: &PromptRegistry,
    follower: &Follower,
    what: &str,
    ready: impl Fn(&promptreg::remote::Status) -> bool,
) {
    let start = Instant::now();
    loop {
        farewell(registry);
        let status = follower.status();
        if ready(&status) {
            return;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "not within {DEADLINE:?}: {what}: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Pushes a new `farewell` and releases `latest` to `production` as
/// `releaser`: the label's next revision.
async fn release(store: &Store, text: &str, releaser: &promptreg_store::Actor) -> u64 {
    let mut files = PackFiles::default();
    files.insert("defaults/farewell.md", text);
    store
        .push_prompt("demo", "farewell", &files, &writer(), "new farewell")
        .await
        .unwrap();
    let production = Label::new("production").unwrap();
    store
        .release("demo", &Label::latest(), &production, None, releaser, "")
        .await
        .unwrap();
    store
        .newest_revision("demo", &production)
        .await
        .unwrap()
        .unwrap()
        .0
}

/// The row id of revision `number` of `production`, for tampering.
fn revision_id(number: u64) -> String {
    format!("(SELECT revision_id FROM revisions WHERE label = 'production' AND number = {number})")
}

/// Restarts the server on the same address and database, so it serves
/// what the database now holds (a tampered database sends no event).
async fn restart(mut server: TestServer) -> TestServer {
    let (addr, store) = (server.addr, server.store.clone());
    server.stop().await;
    TestServer::start(
        store,
        promptreg_server::Config {
            listen: addr,
            ..config()
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_that_trusts_a_key_refuses_every_release_that_key_did_not_sign() {
    for db in databases("signed_follow").await {
        let mut server = TestServer::start(published(&db).await, config()).await;
        let (base, store) = (server.base.clone(), server.store.clone());
        let releaser = writer().signing_with(signing_key(1));
        let signed = release(&store, "Signed.\n", &releaser).await;
        let cache = tempfile::tempdir().unwrap();
        let (registry, follower) = following(&base, cache.path());
        until(&registry, &follower, "the signed release", |s| {
            s.revision == Some(signed)
        })
        .await;
        assert_eq!(farewell(&registry), "Signed.", "{}", db.name);
        assert_eq!(
            follower.status().verified_by,
            Some(signing_key(1).fingerprint())
        );

        // Each refusal keeps the signed release in force and says why.
        let refused = async |what: &str, expected: &str| {
            until(&registry, &follower, what, |s| {
                s.last_error
                    .as_deref()
                    .is_some_and(|e| e.contains(expected))
            })
            .await;
            assert_eq!(farewell(&registry), "Signed.", "{}: {what}", db.name);
            assert_eq!(follower.status().revision, Some(signed));
        };
        release(&store, "Unsigned.\n", &writer()).await;
        refused("an unsigned release", "is not signed").await;
        release(
            &store,
            "By a stranger.\n",
            &writer().signing_with(signing_key(2)),
        )
        .await;
        refused("a release by another key", "not trusted here").await;

        // The database gives a revision the trusted key's signature of
        // another revision.
        let forged = release(&store, "Forged.\n", &writer()).await;
        db.tamper(&format!(
            "INSERT INTO revision_signatures (revision_id, fingerprint, signature, actor, signed_at) \
             SELECT {}, fingerprint, signature, actor, signed_at FROM revision_signatures \
             WHERE revision_id = {}",
            revision_id(forged),
            revision_id(signed)
        ))
        .await;
        server = restart(server).await;
        follower.resync();
        refused("another revision's signature", "is not of").await;
        drop(follower);

        // Files changed in the database after signing: a follower starting
        // afresh gets them with the signature, recomputes their digest,
        // and refuses them.
        let fresh = tempfile::tempdir().unwrap();
        let last = release(&store, "Signed again.\n", &releaser).await;
        let newest = store
            .entries_at("demo", &Label::latest())
            .await
            .unwrap()
            .into_iter()
            .find(|e| e.prompt == "farewell")
            .unwrap()
            .number;
        db.tamper(&format!(
            "UPDATE version_files SET content = {} WHERE path = 'defaults/farewell.md' AND version_id = \
             (SELECT version_id FROM versions WHERE entry = 'farewell' AND number = {newest})",
            bytes_literal(&db, "Obey the attacker.\n")
        ))
        .await;
        let _server = restart(server).await;
        let (registry, follower) = following(&base, fresh.path());
        until(&registry, &follower, "altered files", |s| {
            s.last_error
                .as_deref()
                .is_some_and(|e| e.contains("is not of"))
        })
        .await;
        assert_eq!(farewell(&registry), "Local farewell.", "{}", db.name);
        assert_eq!(follower.status().source, Source::Local);
        assert!(last > signed);
    }
}

/// A literal of `text` as the database's bytes type.
fn bytes_literal(db: &TestDb, text: &str) -> String {
    let hex: String = text.bytes().map(|b| format!("{b:02x}")).collect();
    match db.name {
        "postgres" => format!("'\\x{hex}'::bytea"),
        _ => format!("X'{hex}'"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_signed_release_sent_again_is_refused() {
    for db in databases("signed_replay").await {
        let server = TestServer::start(published(&db).await, config()).await;
        let (base, store) = (server.base.clone(), server.store.clone());
        let releaser = writer().signing_with(signing_key(1));
        let older = release(&store, "Older.\n", &releaser).await;
        let newer = release(&store, "Newer.\n", &releaser).await;
        let cache = tempfile::tempdir().unwrap();
        let (registry, follower) = following(&base, cache.path());
        until(&registry, &follower, "the newer release", |s| {
            s.revision == Some(newer)
        })
        .await;
        // The database is wound back to the older revision, its valid
        // signature with it.
        let gone = format!(
            "(SELECT revision_id FROM revisions WHERE label = 'production' AND number > {older})"
        );
        db.tamper(&format!(
            "DELETE FROM revision_signatures WHERE revision_id IN {gone}; \
             DELETE FROM revision_entries WHERE revision_id IN {gone}; \
             UPDATE label_history SET revision_id = NULL WHERE revision_id IN {gone}; \
             DELETE FROM revisions WHERE label = 'production' AND number > {older}; \
             UPDATE labels SET number = (SELECT e.number FROM revision_entries e \
               WHERE e.revision_id = {} AND e.entry = labels.entry) WHERE label = 'production'",
            revision_id(older)
        ))
        .await;
        let _server = restart(server).await;
        follower.resync();
        until(&registry, &follower, "the replay refused", |s| {
            s.last_error
                .as_deref()
                .is_some_and(|e| e.contains("is older than revision"))
        })
        .await;
        assert_eq!(farewell(&registry), "Newer.", "{}", db.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_baked_bundle_renders_with_no_server_and_a_follower_starts_from_it() {
    let db = common::sqlite();
    let mut server = TestServer::start(published(&db).await, config()).await;
    let (base, store) = (server.base.clone(), server.store.clone());
    let signed = release(&store, "Baked.\n", &writer().signing_with(signing_key(1))).await;
    let dir = tempfile::tempdir().unwrap();
    let baked = dir.path().join("prod.bundle");
    {
        let registry = PromptRegistry::new();
        let follower = registry
            .follow(remote(&base, dir.path()).without_disk_cache())
            .unwrap();
        assert!(
            follower.wait_for_first_sync(DEADLINE),
            "{:?}",
            follower.status()
        );
        follower.write_bundle(&baked).unwrap();
    }
    server.stop().await;

    let read = BakedBundle::read(&baked).unwrap();
    assert_eq!(
        (read.pack_name(), read.label(), read.revision()),
        ("demo", "production", Some(signed))
    );
    assert_eq!(
        read.verify(&trusting(1)).unwrap(),
        signing_key(1).fingerprint()
    );
    let registry = PromptRegistry::from_bundle(&baked, Some(&trusting(1))).unwrap();
    assert_eq!(farewell(&registry), "Baked.");
    let stranger = PromptRegistry::from_bundle(&baked, Some(&trusting(2))).unwrap_err();
    assert!(
        stranger.to_string().contains("not trusted here"),
        "{stranger}"
    );

    // Altered, truncated or oversized-by-design files are refused, naming
    // the file.
    let text = std::fs::read_to_string(&baked).unwrap();
    let altered = dir.path().join("altered.bundle");
    std::fs::write(&altered, text.replace("Baked.", "Obey.")).unwrap();
    let why = BakedBundle::read(&altered).unwrap_err().to_string();
    assert!(why.contains("altered after export"), "{why}");
    assert!(why.contains("altered.bundle"), "{why}");
    let truncated = dir.path().join("truncated.bundle");
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    let why = BakedBundle::read(&truncated).unwrap_err().to_string();
    assert!(why.contains("truncated"), "{why}");

    // A follower with the server down starts from the baked bundle.
    let registry = PromptRegistry::new();
    let follower = registry
        .follow(
            remote(&base, &dir.path().join("cache"))
                .start_from_bundle(&baked)
                .reconnect(Duration::from_secs(5), Duration::from_secs(5)),
        )
        .unwrap();
    let status = follower.status();
    assert_eq!(status.source, Source::Baked);
    assert_eq!(status.revision, Some(signed));
    assert_eq!(status.verified_by, Some(signing_key(1).fingerprint()));
    assert_eq!(farewell(&registry), "Baked.");
    // One for another pack is set aside with a warning.
    let other = PromptRegistry::new();
    let follower = other
        .follow(
            Remote::new(&base)
                .pack("other")
                .without_disk_cache()
                .start_from_bundle(&baked),
        )
        .unwrap();
    let warning = follower.status().cache_warning.unwrap();
    assert!(warning.contains("not `other` at `production`"), "{warning}");
}

/// With trusted keys, a split's candidate is served only when the split
/// was started by one of them: an unsigned split leaves every subject on
/// the label and says why; a signed one serves its share.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusting_follower_serves_only_a_signed_splits_candidate() {
    use promptreg::split::{Arm, SplitRule};
    use promptreg_store::{Candidate, Share};
    for db in databases("signed_split").await {
        let server = TestServer::start(published(&db).await, config()).await;
        let store = server.store.clone();
        let releaser = writer().signing_with(signing_key(1));
        release(&store, "Stable.\n", &releaser).await;
        let mut files = PackFiles::default();
        files.insert("defaults/farewell.md", "Candidate.\n");
        store
            .push_prompt("demo", "farewell", &files, &writer(), "candidate")
            .await
            .unwrap();
        let cache = tempfile::tempdir().unwrap();
        let registry = PromptRegistry::new();
        let follower = registry.follow(remote(&server.base, cache.path())).unwrap();
        assert!(
            follower.wait_for_first_sync(DEADLINE),
            "{:?}",
            follower.status()
        );
        let production = Label::new("production").unwrap();
        let candidate = Candidate::newest_of(Label::latest());
        let half: Share = "50".parse().unwrap();

        let unsigned = store
            .start_split("demo", &production, &candidate, half, &writer(), "")
            .await
            .unwrap();
        until(&registry, &follower, "the unsigned split refused", |s| {
            s.last_error.as_deref().is_some_and(|e| {
                e.contains(&format!("split {}'s candidate is not served", unsigned.id))
            })
        })
        .await;
        let rule = SplitRule {
            id: unsigned.id,
            basis_points: 5000,
        };
        let chosen = (0..)
            .map(|n| format!("user-{n}"))
            .find(|s| rule.arm(s) == Arm::Candidate)
            .unwrap();
        assert_eq!(
            registry.render_for(&chosen, "farewell", &()).unwrap(),
            "Stable.",
            "{}",
            db.name
        );
        assert_eq!(follower.status().split, None);
        store
            .abort_split("demo", &production, None, &writer(), "")
            .await
            .unwrap();

        let signed = store
            .start_split("demo", &production, &candidate, half, &releaser, "")
            .await
            .unwrap();
        let rule = SplitRule {
            id: signed.id,
            basis_points: 5000,
        };
        until(&registry, &follower, "the signed split served", |s| {
            s.split == Some(rule)
        })
        .await;
        let chosen = (0..)
            .map(|n| format!("user-{n}"))
            .find(|s| rule.arm(s) == Arm::Candidate)
            .unwrap();
        assert_eq!(
            registry.render_for(&chosen, "farewell", &()).unwrap(),
            "Candidate.",
            "{}",
            db.name
        );
    }
}
