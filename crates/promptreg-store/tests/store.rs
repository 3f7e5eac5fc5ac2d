//! The store's behaviour, run on SQLite and on PostgreSQL alike.

mod common;

use common::{admin, databases, demo, gated_demo, writer};
use promptreg::PromptRegistry;
use promptreg::pack::Pack;
use promptreg::prelude::*;
use promptreg_store::{
    Actor, Change, ErrorKind, FileLimits, Label, LabelMove, PACK_ENTRY, PackFiles, Permission,
    Permit, RevisionCause, RevisionRef, Store, TESTS_ENTRY, VersionRef,
};

fn label(name: &str) -> Label {
    Label::new(name).unwrap()
}

fn changes(report: &promptreg_store::PushReport) -> Vec<(&str, Change)> {
    report
        .prompts
        .iter()
        .map(|(id, c, _)| (id.as_str(), *c))
        .collect()
}

#[tokio::test]
async fn pushing_the_same_content_writes_nothing() {
    for db in databases("idempotent").await {
        let store = db.open().await;
        let first = store.push(&demo(), &writer(), "first").await.unwrap();
        assert_eq!(
            changes(&first),
            [
                ("@pack", Change::Added),
                ("farewell", Change::Added),
                ("greeting", Change::Added)
            ],
            "{}",
            db.name
        );
        let again = store.push(&demo(), &writer(), "again").await.unwrap();
        assert_eq!(again.versions_written(), 0, "{}", db.name);
        assert!(
            again
                .prompts
                .iter()
                .all(|(_, c, v)| *c == Change::Unchanged && *v == Some(1))
        );
        assert_eq!(
            store.history("demo", None).await.unwrap().len(),
            3,
            "{}: no move for an unchanged push",
            db.name
        );
    }
}

#[tokio::test]
async fn a_changed_locale_variant_makes_a_new_version_of_its_prompt_only() {
    for db in databases("changed_variant").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "").await.unwrap();
        let mut edited = demo();
        edited.insert(
            "defaults/greeting.fr.md",
            "---\ntemplate: true\n---\nSalut {{ name }} !\n",
        );
        let report = store.push(&edited, &writer(), "friendlier").await.unwrap();
        assert_eq!(
            changes(&report),
            [
                ("@pack", Change::Unchanged),
                ("farewell", Change::Unchanged),
                ("greeting", Change::Changed)
            ],
            "{}",
            db.name
        );
        // Back to the first content: the first version again, nothing written.
        let back = store.push(&demo(), &writer(), "revert").await.unwrap();
        assert_eq!(
            back.prompts[2],
            ("greeting".to_owned(), Change::Restored, Some(1)),
            "{}",
            db.name
        );
        let log = store.log("demo", "greeting").await.unwrap();
        assert_eq!(
            log.iter().map(|v| v.number).collect::<Vec<_>>(),
            [2, 1],
            "{}",
            db.name
        );
        assert_eq!(log[0].message, "friendlier");
        assert_eq!(log[0].author, "ada");
        assert_eq!(log[1].labels, ["latest"], "{}", db.name);
        assert_eq!(log[0].digest.len(), 64);
    }
}

#[tokio::test]
async fn a_removed_prompt_loses_latest_and_keeps_its_versions() {
    for db in databases("removed").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "").await.unwrap();
        let mut smaller = demo();
        smaller = smaller
            .iter()
            .filter(|(p, _)| !p.contains("farewell"))
            .map(|(p, b)| (p.to_owned(), b.to_vec()))
            .collect();
        let report = store.push(&smaller, &writer(), "").await.unwrap();
        assert!(
            report
                .prompts
                .contains(&("farewell".to_owned(), Change::Removed, None)),
            "{}",
            db.name
        );
        let pulled = store.checkout("demo", &Label::latest()).await.unwrap();
        assert_eq!(pulled, smaller, "{}", db.name);
        assert_eq!(store.log("demo", "farewell").await.unwrap().len(), 1);
    }
}

/// Every file under `dir`, relative with `/`, hidden ones left out.
fn files_under(dir: &std::path::Path, prefix: &str, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir.join(prefix)).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        if name.starts_with('.') {
            continue;
        }
        let path = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        if entry.file_type().unwrap().is_dir() {
            files_under(dir, &path, out);
        } else {
            out.push(path);
        }
    }
}

/// pack -> store -> pack is byte for byte, for both example packs: every
/// file of the pack format, their tests and snapshots included; the files
/// outside it are named by the push.
#[tokio::test]
async fn the_round_trip_through_the_store_is_byte_exact() {
    for db in databases("round_trip").await {
        let store = db.open().await;
        for name in ["goal-agent", "web-agent"] {
            let dir = common::example(name);
            let files = PackFiles::read(&dir).unwrap();
            let mut on_disk = Vec::new();
            files_under(&dir, "", &mut on_disk);
            let mut accounted: Vec<String> = files.iter().map(|(p, _)| p.to_owned()).collect();
            accounted.extend(files.not_stored().iter().cloned());
            accounted.sort();
            on_disk.sort();
            assert_eq!(accounted, on_disk, "{name}: every file is stored or named");
            // The context file the tests name is stored with them.
            let outside: &[&str] = match name {
                "web-agent" => &["history.json"],
                _ => &[],
            };
            assert_eq!(files.not_stored(), outside, "{name}");
            let tests = files
                .iter()
                .filter(|(p, _)| p.starts_with("tests/"))
                .count();
            assert!(tests >= 4, "{name}: its tests and snapshots are read");
            let report = store.push(&files, &writer(), "import").await.unwrap();
            assert_eq!(report.not_stored, files.not_stored(), "{}: {name}", db.name);
            assert_eq!(store.log(name, TESTS_ENTRY).await.unwrap().len(), 1);
            let pulled = store.checkout(name, &Label::latest()).await.unwrap();
            assert_eq!(pulled, files, "{}: {name}", db.name);
            let out = tempfile::tempdir().unwrap();
            let target = out.path().join(name);
            pulled.write(&target).unwrap();
            assert_eq!(
                PackFiles::read(&target).unwrap(),
                files,
                "{}: {name} on disk",
                db.name
            );
            for (path, bytes) in files.iter() {
                assert_eq!(std::fs::read(target.join(path)).unwrap(), bytes, "{path}");
            }
        }
    }
}

/// Every change to what a label resolves to is one numbered revision of
/// it, a release of every prompt included; each names what it changed, and
/// two labels in the same state carry the same digest.
#[tokio::test]
async fn each_change_to_a_label_is_one_revision() {
    for db in databases("revisions").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "first").await.unwrap();
        let production = label("production");
        release_latest(&store, &production).await;
        let mut files = demo();
        files.insert("defaults/greeting.md", "Hi {{ name }}!\n");
        store.push(&files, &writer(), "shorter").await.unwrap();
        store.push(&files, &writer(), "again").await.unwrap();
        store
            .release(
                "demo",
                &Label::latest(),
                &production,
                None,
                &writer(),
                "ship",
            )
            .await
            .unwrap();
        store
            .rollback("demo", "greeting", &production, &writer(), "too short")
            .await
            .unwrap();

        let latest = store.revisions("demo", &Label::latest()).await.unwrap();
        let numbers: Vec<(u64, RevisionCause)> =
            latest.iter().map(|r| (r.number, r.cause)).collect();
        // The push that changed nothing made no revision.
        assert_eq!(
            numbers,
            [(2, RevisionCause::Push), (1, RevisionCause::Push)],
            "{}",
            db.name
        );
        let changed: Vec<(&str, Option<u64>, Option<u64>)> = latest[0]
            .changes
            .iter()
            .map(|c| (c.entry.as_str(), c.from, c.to))
            .collect();
        assert_eq!(changed, [("greeting", Some(1), Some(2))], "{}", db.name);

        let revisions = store.revisions("demo", &production).await.unwrap();
        let causes: Vec<(u64, RevisionCause)> =
            revisions.iter().map(|r| (r.number, r.cause)).collect();
        assert_eq!(
            causes,
            [
                (3, RevisionCause::Rollback),
                (2, RevisionCause::Release),
                (1, RevisionCause::Release)
            ],
            "{}",
            db.name
        );
        // One release of every entry is one revision holding them all.
        let first = &revisions[2];
        assert_eq!(first.entries.len(), 3, "{}", db.name);
        assert_eq!(first.changes.len(), 3, "{}", db.name);
        assert!(
            first
                .changes
                .iter()
                .all(|c| c.from.is_none() && c.to == Some(1))
        );
        assert_eq!(revisions[1].reason, "release latest: ship");
        assert_eq!(
            revisions[1].digest, latest[0].digest,
            "the same state, the same digest"
        );
        assert_eq!(
            revisions[0].digest, first.digest,
            "rolled back to the first state"
        );
        assert_eq!(revisions[0].entries["greeting"], 1);
        // Each move of the history names the revision it made: the
        // release's three moves share one.
        let history = store.history("demo", None).await.unwrap();
        let of_production: Vec<(&str, Option<u64>)> = history
            .iter()
            .filter(|m| m.label == "production")
            .map(|m| (m.prompt.as_str(), m.revision))
            .collect();
        assert_eq!(
            of_production,
            [
                ("@pack", Some(1)),
                ("farewell", Some(1)),
                ("greeting", Some(1)),
                ("greeting", Some(2)),
                ("greeting", Some(3)),
            ],
            "{}",
            db.name
        );
        assert!(history.iter().all(|m| m.revision.is_some()));

        let err = store
            .revisions("demo", &label("staging"))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownVersion, "{err}");
        assert!(
            err.to_string()
                .contains("label `staging` of pack `demo` has no revisions"),
            "{err}"
        );
    }
}

/// A label points back at any earlier revision for the whole pack in one
/// transaction, and a pack rollback walks back one revision at a time; a
/// revision reads and compares as the pack it held.
#[tokio::test]
async fn a_whole_pack_rolls_back_and_restores_revisions() {
    for db in databases("restore").await {
        let store = db.open().await;
        let production = label("production");
        store.push(&demo(), &writer(), "first").await.unwrap();
        release_latest(&store, &production).await;
        let mut files = demo();
        files.insert("defaults/greeting.md", "Hi {{ name }}!\n");
        files.insert("defaults/farewell.md", "Bye.\n");
        store.push(&files, &writer(), "shorter").await.unwrap();
        release_latest(&store, &production).await;

        let back = store
            .rollback_pack("demo", &production, &writer(), "bad day")
            .await
            .unwrap();
        assert_eq!(back.revision, Some(3), "{}", db.name);
        assert_eq!(
            back.moves.len(),
            2,
            "greeting and farewell move back together"
        );
        let revisions = store.revisions("demo", &production).await.unwrap();
        let (r3, r2, r1) = (&revisions[0], &revisions[1], &revisions[2]);
        assert_eq!((r3.cause, r3.restores), (RevisionCause::Restore, Some(1)));
        assert_eq!(r3.reason, "rollback to revision 1: bad day");
        assert_eq!(r3.digest, r1.digest, "{}", db.name);
        let err = store
            .rollback_pack("demo", &production, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownVersion, "{err}");
        assert!(
            err.to_string().contains("stands on its first revision"),
            "{err}"
        );

        let again = store
            .restore("demo", &production, 2, Some(3), &writer(), "")
            .await
            .unwrap();
        assert_eq!(again.revision, Some(4));
        assert_eq!(
            store.revisions("demo", &production).await.unwrap()[0].digest,
            r2.digest
        );
        let stale = store
            .restore("demo", &production, 1, Some(3), &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(stale.kind(), ErrorKind::Conflict, "{stale}");
        assert!(
            stale.to_string().contains("is at revision 4, not 3"),
            "{stale}"
        );
        let same = store
            .restore("demo", &production, 2, None, &writer(), "")
            .await
            .unwrap();
        assert_eq!(
            (same.revision, same.moves.len()),
            (None, 0),
            "already there: nothing moves"
        );
        let missing = store
            .restore("demo", &production, 99, None, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::UnknownVersion);
        assert!(
            missing
                .to_string()
                .contains("has no revision 99: its revisions are 1 to 4"),
            "{missing}"
        );
        let latest = store
            .restore("demo", &Label::latest(), 1, None, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(latest.kind(), ErrorKind::InvalidLabel, "{latest}");

        assert_eq!(
            store
                .checkout_revision("demo", &production, 1)
                .await
                .unwrap(),
            demo()
        );
        assert_eq!(
            store
                .checkout_revision("demo", &production, 4)
                .await
                .unwrap(),
            files
        );
        let diff = store
            .diff_revisions("demo", &production, 1, 2)
            .await
            .unwrap();
        let paths: Vec<&str> = diff.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["defaults/farewell.md", "defaults/greeting.md"],
            "{}",
            db.name
        );
        assert!(
            diff.files[1].diff.contains("+++ defaults/greeting.md (r2)"),
            "{}",
            diff.files[1].diff
        );

        store
            .protect("demo", &production, true, &admin())
            .await
            .unwrap();
        let refused = store
            .rollback_pack("demo", &production, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::Forbidden, "{refused}");
    }
}

#[tokio::test]
async fn a_revision_is_named_by_its_number_or_its_digest() {
    for db in databases("revision_digest").await {
        let store = db.open().await;
        let production = label("production");
        store.push(&demo(), &writer(), "").await.unwrap();
        release_latest(&store, &production).await;
        let mut files = demo();
        files.insert("defaults/farewell.md", "Bye.\n");
        store.push(&files, &writer(), "").await.unwrap();
        release_latest(&store, &production).await;
        store
            .rollback_pack("demo", &production, &writer(), "")
            .await
            .unwrap();
        let listed = store.revisions("demo", &production).await.unwrap();
        let (r3, r2) = (&listed[0], &listed[1]);
        // By number: as listed, with what it changed since the one before.
        assert_eq!(&store.revision("demo", &production, 2).await.unwrap(), r2);
        // By digest, whole or its start: r1 and r3 hold one state, and a
        // digest names the newest.
        for wanted in [r3.digest.clone(), r3.digest[..8].to_uppercase()] {
            let wanted: RevisionRef = wanted.parse().unwrap();
            let found = store.revision("demo", &production, wanted.clone()).await;
            assert_eq!(found.unwrap().number, 3, "{}: {wanted}", db.name);
            let pulled = store.checkout_revision("demo", &production, wanted).await;
            assert_eq!(pulled.unwrap(), demo());
        }
        let by_digest = RevisionRef::Digest(r2.digest[..12].to_owned());
        let restored = store
            .restore("demo", &production, by_digest, Some(3), &writer(), "")
            .await
            .unwrap();
        assert_eq!((restored.restores, restored.revision), (2, Some(4)));
        // A digest no revision has, and a number past the newest: named.
        let unknown: RevisionRef = "0123abcd".parse().unwrap();
        let err = store
            .revision("demo", &production, unknown.clone())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownVersion);
        assert_eq!(
            err.to_string(),
            "label `production` has no revision of digest `0123abcd`: none of its revisions 1 to 4 holds that state (`promptreg store revisions production` lists their digests)"
        );
        let err = store
            .diff_revisions("demo", &production, 1, unknown)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownVersion, "{err}");
        let err = store.revision("demo", &production, 5).await.unwrap_err();
        assert!(
            err.to_string()
                .contains("has no revision 5: its revisions are 1 to 4"),
            "{err}"
        );
    }
    // What names no revision is refused before any read.
    for text in ["0", "r0", "abc", "xyz12345", "-1", ""] {
        let err = text.parse::<RevisionRef>().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{text}");
        assert!(err.to_string().contains("give its number"), "{err}");
    }
    assert_eq!(
        "r12".parse::<RevisionRef>().unwrap(),
        RevisionRef::Number(12)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_releases_decided_on_one_revision_one_wins_and_the_other_names_it() {
    for db in databases("release_race").await {
        let store = db.open().await;
        let production = label("production");
        store.push(&demo(), &writer(), "").await.unwrap();
        store
            .release(
                "demo",
                &Label::latest(),
                &production,
                Some(0),
                &writer(),
                "",
            )
            .await
            .unwrap();
        let mut files = demo();
        files.insert("defaults/farewell.md", "Bye.\n");
        store.push(&files, &writer(), "").await.unwrap();
        let mut staged = demo();
        staged.insert("defaults/farewell.md", "Farewell.\n");
        store.push(&staged, &writer(), "").await.unwrap();
        store
            .release(
                "demo",
                &Label::latest(),
                &label("staging"),
                None,
                &writer(),
                "",
            )
            .await
            .unwrap();
        // Both read revision 1 of production; each releases its own label.
        let race = |from: &'static str| {
            let store = store.clone();
            let production = production.clone();
            tokio::spawn(async move {
                let from = if from == "latest" {
                    Label::latest()
                } else {
                    label(from)
                };
                store
                    .release("demo", &from, &production, Some(1), &writer(), "")
                    .await
            })
        };
        let (a, b) = (race("staging"), race("latest"));
        let results = [a.await.unwrap(), b.await.unwrap()];
        let won = results.iter().filter(|r| r.is_ok()).count();
        assert_eq!(won, 1, "{}: {results:?}", db.name);
        let lost = results.iter().find_map(|r| r.as_ref().err()).unwrap();
        assert_eq!(lost.kind(), ErrorKind::Conflict, "{lost}");
        assert_eq!(
            lost.current_version(),
            Some(2),
            "{}: the winner's revision",
            db.name
        );
        assert!(
            lost.to_string()
                .contains("label `production` is at revision 2, not 1 as expected"),
            "{lost}"
        );
        // Nothing of the loser was written.
        let revisions = store.revisions("demo", &production).await.unwrap();
        assert_eq!(revisions.len(), 2, "{}", db.name);
        // A label that has no revision yet is expected as 0.
        let err = store
            .release(
                "demo",
                &Label::latest(),
                &label("canary"),
                Some(3),
                &writer(),
                "",
            )
            .await
            .unwrap_err();
        assert!(err.to_string().contains("is at revision 0, not 3"), "{err}");
    }
}

/// Releases `latest` of the demo pack to `to`, as a writer: its moves.
async fn release_latest(store: &Store, to: &Label) -> Vec<LabelMove> {
    store
        .release("demo", &Label::latest(), to, None, &writer(), "")
        .await
        .unwrap()
}

/// A gated label moves only to a state whose tests pass, by a release, a
/// move or a restore; an admin may force it with a reason, and the
/// revision says so; tests that cannot be read fail the gate closed.
#[tokio::test]
async fn a_gated_label_moves_only_to_a_state_that_passes_its_tests() {
    for db in databases("gates").await {
        let store = db.open().await;
        let production = label("production");
        store.push(&gated_demo(), &writer(), "first").await.unwrap();
        release_latest(&store, &production).await;
        let first = &store.revisions("demo", &production).await.unwrap()[0];
        assert_eq!(
            first.tests.as_deref(),
            Some("1 of 1 cases passed"),
            "{}",
            db.name
        );
        assert!(!first.forced);

        let mut broken = gated_demo();
        broken.insert(
            "defaults/greeting.md",
            "---\ntemplate: true\nvariables:\n  name:\n---\nHi {{ name }}!\n",
        );
        store.push(&broken, &writer(), "shorter").await.unwrap();
        let err = store
            .release("demo", &Label::latest(), &production, None, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TestsFailed, "{}: {err}", db.name);
        assert!(
            err.to_string()
                .contains("label `production` is gated: 1 of 1 test cases fail"),
            "{err}"
        );
        let case = &err.failed_cases()[0];
        assert_eq!(
            (case.prompt.as_str(), case.case.as_str()),
            ("greeting", "hello")
        );
        assert_eq!(case.file, "tests/greeting.toml");
        assert!(
            case.problems[0].contains("Hello Ada"),
            "{:?}",
            case.problems
        );
        // The refusal is in the event log, for webhooks and the stream.
        let last = store.last_event_id().await.unwrap();
        let refused = store.events_since(last - 1, 1).await.unwrap();
        assert_eq!(
            refused[0].change,
            promptreg_store::EventKind::GateRefused {
                label: "production".into(),
                failed: 1,
                actor: "ada".into(),
                reason: "release latest".into(),
            },
            "{}",
            db.name
        );
        let moved = store
            .move_label("demo", "greeting", &production, 2, Some(1), &writer(), "")
            .await;
        assert_eq!(
            moved.unwrap_err().kind(),
            ErrorKind::TestsFailed,
            "a move is gated too"
        );
        assert_eq!(
            store.revisions("demo", &production).await.unwrap().len(),
            1,
            "nothing moved"
        );
        // A label the manifest does not gate moves as before.
        store
            .release(
                "demo",
                &Label::latest(),
                &label("staging"),
                None,
                &writer(),
                "",
            )
            .await
            .unwrap();

        let writer_forcing = writer().forcing_gates();
        let refused = store
            .release(
                "demo",
                &Label::latest(),
                &production,
                None,
                &writer_forcing,
                "hotfix",
            )
            .await;
        assert_eq!(refused.unwrap_err().kind(), ErrorKind::Forbidden);
        let admin_forcing = admin().forcing_gates();
        let no_reason = store
            .release(
                "demo",
                &Label::latest(),
                &production,
                None,
                &admin_forcing,
                "",
            )
            .await;
        assert_eq!(no_reason.unwrap_err().kind(), ErrorKind::InvalidInput);
        store
            .release(
                "demo",
                &Label::latest(),
                &production,
                None,
                &admin_forcing,
                "hotfix",
            )
            .await
            .unwrap();
        let forced = &store.revisions("demo", &production).await.unwrap()[0];
        assert!(forced.forced, "{}", db.name);
        assert_eq!(
            forced.tests.as_deref(),
            Some("0 of 1 cases passed, forced by an admin")
        );

        // Tests that cannot be read refuse even a forced move. A push
        // refuses such a file, so it is one a database holds from before
        // pushes checked tests.
        let mut next = gated_demo();
        next.insert("defaults/farewell.md", "Goodbye for now.\n");
        store.push(&next, &writer(), "next").await.unwrap();
        db.tamper(match db.name {
            "postgres" => "UPDATE version_files SET content = convert_to('prompt = [' || chr(10), 'UTF8') WHERE path = 'tests/greeting.toml'",
            _ => "UPDATE version_files SET content = CAST('prompt = [' || char(10) AS BLOB) WHERE path = 'tests/greeting.toml'",
        })
        .await;
        let err = store
            .release(
                "demo",
                &Label::latest(),
                &production,
                None,
                &admin_forcing,
                "again",
            )
            .await;
        let err = err.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TestsFailed, "{err}");
        assert!(err.to_string().contains("cannot be read"), "{err}");
        // Named by their path in the pack, not in the folder they ran in.
        assert!(err.to_string().contains(" tests/greeting.toml:"), "{err}");
        assert!(!err.to_string().contains("/tmp"), "{err}");
        let files: Vec<_> = err
            .diagnostics()
            .iter()
            .filter_map(|d| d.file.clone())
            .collect();
        assert_eq!(
            files,
            [std::path::PathBuf::from("tests/greeting.toml")],
            "{err}"
        );
    }
}

/// A test run past its bound fails, saying so; within it, the same
/// state passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_run_past_its_bound_fails_with_the_reason() {
    // Many cases, so that the run takes far longer than no time at all.
    let mut files = gated_demo();
    let cases: String = (0..2000)
        .map(|i| {
            format!(
                "[[case]]\nname = \"c{i}\"\ncontext = {{ name = \"Ada\" }}\ncontains = \"Ada\"\n"
            )
        })
        .collect();
    files.insert("tests/many.toml", format!("prompt = \"greeting\"\n{cases}"));
    let err = promptreg_store::test_state(
        files.clone(),
        promptreg_store::TestLimits::within(std::time::Duration::ZERO),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TestsFailed, "{err}");
    assert_eq!(err.to_string(), "the tests ran past 0 s; make them faster");
    let report = promptreg_store::test_state(files, promptreg_store::TestLimits::GATE)
        .await
        .unwrap();
    assert!(report.cases > 2000, "{}", report.summary());
}

/// A label loaded from the store renders and explains as the pack folder does.
#[tokio::test]
async fn a_stored_label_renders_like_the_pack_folder() {
    for db in databases("renders_alike").await {
        let store = db.open().await;
        let dir = common::example("web-agent");
        store
            .push(&PackFiles::read(&dir).unwrap(), &writer(), "")
            .await
            .unwrap();
        // The user's configuration on top: a local override of the planner.
        let user = tempfile::tempdir().unwrap();
        let (home, project) = (user.path().join("home"), user.path().join("project"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(project.join(".webagent/prompts")).unwrap();
        std::fs::write(
            project.join(".webagent/prompts/planner.system.md"),
            "Plan in three steps.\n",
        )
        .unwrap();
        let options = promptreg::config::LoadOptions::new(&home, &project);
        let from_store = PromptRegistry::new();
        let stored = store
            .install("web-agent", &Label::latest(), &from_store)
            .await
            .unwrap();
        from_store
            .load_config(stored.spec().clone(), options.clone())
            .unwrap();
        let from_files = PromptRegistry::new();
        let pack = Pack::load(&dir).unwrap();
        pack.install(&from_files).unwrap();
        from_files
            .load_config(pack.spec().clone(), options)
            .unwrap();
        let planner = from_store.render_plain("planner.system").unwrap();
        assert!(planner.ends_with("\n\nPlan in three steps."), "{planner}");
        let ctx = serde_json::json!({ "brand": "Acme", "site": "acme.example", "locale": "ja", "page": "home", "goal": "buy", "text": "hi" });
        let mut compared = 0;
        let store_root = format!("{}#web-agent@latest", store.location());
        for id in from_files.list() {
            for locale in ["en", "ja-JP", "zh-TW", "fr"] {
                // Text prompts traced as text, chat prompts as messages.
                let traced = |registry: &PromptRegistry| match registry.render_traced_in(
                    id.as_str(),
                    &ctx,
                    locale,
                ) {
                    Err(e) if e.kind() == promptreg::ErrorKind::ChatPrompt => registry
                        .render_messages_traced_in(id.as_str(), &ctx, locale, &[])
                        .map(|r| format!("{r:?}")),
                    other => other.map(|r| format!("{r:?}")),
                };
                let (a, b) = (traced(&from_files), traced(&from_store));
                match (a, b) {
                    (Ok(a), Ok(b)) => {
                        assert_eq!(
                            a.replace(dir.to_str().unwrap(), "PACK"),
                            b.replace(&store_root, "PACK"),
                            "{}: {id} {locale}",
                            db.name
                        );
                        compared += 1;
                    }
                    (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind()),
                    (a, b) => panic!("{}: {id} {locale}: {a:?} vs {b:?}", db.name),
                }
            }
        }
        assert!(compared > 10, "only {compared} renders compared");
    }
}

#[tokio::test]
async fn labels_move_only_from_the_version_expected() {
    for db in databases("expect").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "").await.unwrap();
        let mut v2 = demo();
        v2.insert("defaults/farewell.md", "Bye.\n");
        store.push(&v2, &writer(), "").await.unwrap();
        let prod = label("production");
        let moved = store
            .move_label("demo", "farewell", &prod, 1, None, &writer(), "ship")
            .await
            .unwrap();
        assert_eq!((moved.from, moved.to), (None, Some(1)));
        // A second "create" conflicts: the label exists now.
        let err = store
            .move_label("demo", "farewell", &prod, 2, None, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Conflict, "{}: {err}", db.name);
        assert_eq!(err.current_version(), Some(1));
        assert!(
            err.to_string().contains("points at version 1, not nothing"),
            "{err}"
        );
        let err = store
            .move_label("demo", "farewell", &prod, 2, Some(2), &writer(), "")
            .await
            .unwrap_err();
        assert!(err.to_string().contains("retry with --expect 1"), "{err}");
        store
            .move_label("demo", "farewell", &prod, 2, Some(1), &writer(), "")
            .await
            .unwrap();
        assert_eq!(
            store
                .resolve("demo", "farewell", &VersionRef::Label(prod.clone()))
                .await
                .unwrap(),
            2
        );
    }
}

#[tokio::test]
async fn rollbacks_walk_back_the_label_history_one_step_each() {
    for db in databases("rollback").await {
        let store = db.open().await;
        let (prod, writer) = (label("production"), writer());
        store.push(&demo(), &writer, "").await.unwrap();
        for text in ["Hi.\n", "Hey.\n"] {
            let mut next = demo();
            next.insert("defaults/greeting.md", text);
            store.push(&next, &writer, "").await.unwrap();
        }
        let rollback = |why: &'static str| store.rollback("demo", "greeting", &prod, &writer, why);
        let err = rollback("").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownVersion, "{}", db.name);
        assert!(
            err.to_string().contains("has no label `production`"),
            "{}: {err}",
            db.name
        );
        let moves = [(1, None), (2, Some(1)), (3, Some(2))];
        for (to, expect) in moves {
            store
                .move_label("demo", "greeting", &prod, to, expect, &writer, "")
                .await
                .unwrap();
        }

        let back = rollback(" v3 greets rudely ").await.unwrap();
        assert_eq!((back.from, back.to), (Some(3), Some(2)), "{}", db.name);
        assert_eq!(back.reason, "rollback from 3: v3 greets rudely");
        let back = rollback("").await.unwrap();
        assert_eq!((back.from, back.to), (Some(2), Some(1)), "{}", db.name);
        let err = rollback("").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownVersion, "{}", db.name);
        assert!(
            err.to_string()
                .contains("back at version 1, where it was created"),
            "{}: {err}",
            db.name
        );

        // A move after rollbacks is one more step; rolling it back returns
        // to where it came from, and the walk goes on below it.
        store
            .move_label("demo", "greeting", &prod, 3, Some(1), &writer, "")
            .await
            .unwrap();
        let back = rollback("").await.unwrap();
        assert_eq!((back.from, back.to), (Some(3), Some(1)), "{}", db.name);
        assert!(rollback("").await.is_err(), "{}", db.name);

        let history = store.history("demo", Some("greeting")).await.unwrap();
        let prod_moves: Vec<_> = history
            .iter()
            .filter(|m| m.label == "production")
            .map(|m| (m.from, m.to))
            .collect();
        assert_eq!(
            prod_moves,
            [
                (None, Some(1)),
                (Some(1), Some(2)),
                (Some(2), Some(3)),
                (Some(3), Some(2)),
                (Some(2), Some(1)),
                (Some(1), Some(3)),
                (Some(3), Some(1)),
            ],
            "{}",
            db.name
        );
        assert!(history.windows(2).all(|w| w[0].at <= w[1].at));
    }
}

#[tokio::test]
async fn a_permit_is_not_checked_again_and_a_protected_label_still_needs_an_admin() {
    for db in databases("permit").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "").await.unwrap();
        let guest = Actor::new("guest", []);
        let err = store
            .move_label("demo", "greeting", &label("beta"), 1, None, &guest, "")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Forbidden, "{}: {err}", db.name);
        // Its host checked the write permission once: the store takes its word.
        let vouched = Permit::vouched(guest);
        let moved = store
            .move_label("demo", "greeting", &label("beta"), 1, None, &vouched, "")
            .await
            .unwrap();
        assert_eq!(moved.actor, "guest");
        let prod = label("production");
        store.protect("demo", &prod, true, &admin()).await.unwrap();
        let err = store
            .move_label(
                "demo",
                "greeting",
                &prod,
                1,
                None,
                &Permit::vouched(writer()),
                "",
            )
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Forbidden, "{}: {err}", db.name);
        let forced = Permit::vouched(writer()).forcing_gates();
        let err = store
            .move_label(
                "demo",
                "greeting",
                &label("beta"),
                1,
                Some(1),
                &forced,
                "why",
            )
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Forbidden, "{}: {err}", db.name);
        store
            .move_label(
                "demo",
                "greeting",
                &prod,
                1,
                None,
                &Permit::vouched(admin()),
                "",
            )
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn a_protected_label_needs_an_admin() {
    for db in databases("protected").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "").await.unwrap();
        let prod = label("production");
        let err = store
            .protect("demo", &prod, true, &writer())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Forbidden);
        store.protect("demo", &prod, true, &admin()).await.unwrap();
        let err = store
            .move_label("demo", "greeting", &prod, 1, None, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Forbidden, "{}: {err}", db.name);
        assert!(
            err.to_string()
                .contains("ada may not move the protected label `production`"),
            "{err}"
        );
        let err = store
            .release("demo", &Label::latest(), &prod, None, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Forbidden);
        assert!(
            store
                .history("demo", None)
                .await
                .unwrap()
                .iter()
                .all(|m| m.label == "latest")
        );
        store
            .move_label("demo", "greeting", &prod, 1, None, &admin(), "")
            .await
            .unwrap();
        let reader = Actor::new("guest", []);
        assert_eq!(
            store.push(&demo(), &reader, "").await.unwrap_err().kind(),
            ErrorKind::Forbidden
        );
        assert_eq!(
            store
                .protected_labels("demo")
                .await
                .unwrap()
                .into_iter()
                .collect::<Vec<_>>(),
            ["production"]
        );
    }
}

#[tokio::test]
async fn a_release_moves_every_prompt_at_once() {
    for db in databases("release").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "").await.unwrap();
        let (staging, prod) = (label("staging"), label("production"));
        let moves = release_latest(&store, &staging).await;
        assert_eq!(moves.len(), 3, "{}", db.name);
        assert!(moves.iter().all(|m| m.reason == "release latest"));
        let moves = store
            .release("demo", &staging, &prod, None, &writer(), "week 48")
            .await
            .unwrap();
        assert!(
            moves
                .iter()
                .all(|m| m.reason == "release staging: week 48" && m.to == Some(1))
        );
        let again = store
            .release("demo", &staging, &prod, None, &writer(), "")
            .await
            .unwrap();
        assert!(again.is_empty(), "{}: nothing left to move", db.name);
        assert_eq!(store.checkout("demo", &prod).await.unwrap(), demo());
    }
}

#[tokio::test]
async fn bad_names_are_refused_with_what_exists() {
    for db in databases("bad_names").await {
        let store = db.open().await;
        let err = store.log("demo", "greeting").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownPack);
        assert!(
            err.to_string()
                .contains("is empty: run `promptreg store push DIR` first"),
            "{err}"
        );
        store.push(&demo(), &writer(), "").await.unwrap();
        let err = store.log("demo", "greting").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownPrompt);
        assert!(
            err.to_string().contains("did you mean `greeting`?"),
            "{err}"
        );
        let err = store.log("dmo", "greeting").await.unwrap_err();
        assert!(
            err.to_string().contains("no pack `dmo`") && err.to_string().contains("`demo`"),
            "{err}"
        );
        let err = store
            .files("demo", "greeting", &VersionRef::Number(7))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownVersion);
        assert!(err.to_string().contains("has no version 7"), "{err}");
        let err = store
            .move_label("demo", "greeting", &label("prod"), 9, None, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownVersion);
        let err = store
            .move_label(
                "demo",
                "greeting",
                &Label::latest(),
                1,
                Some(1),
                &writer(),
                "",
            )
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidLabel);
        let err = store
            .checkout("demo", &label("production"))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownVersion);
        assert_eq!(
            Label::new("Prod").unwrap_err().kind(),
            ErrorKind::InvalidLabel
        );
        assert_eq!(
            store.history("demo", None).await.unwrap().len(),
            3,
            "{}: no failed move recorded",
            db.name
        );
    }
}

#[tokio::test]
async fn a_pack_failing_check_is_refused_before_anything_is_written() {
    for db in databases("failing_check").await {
        let store = db.open().await;
        let mut broken = demo();
        broken.insert(
            "defaults/greeting.md",
            "---\ntemplate: true\n---\nHello {{ name\n",
        );
        broken.insert("defaults/unknown.md", "Who am I?\n");
        let err = store.push(&broken, &writer(), "").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidPack, "{}", db.name);
        let messages: Vec<String> = err.diagnostics().iter().map(ToString::to_string).collect();
        assert!(
            messages.iter().any(|m| m.contains("unknown.md")),
            "{messages:?}"
        );
        assert!(
            messages.iter().any(|m| m.contains("greeting.md")),
            "{messages:?}"
        );
        assert!(store.packs().await.unwrap().is_empty(), "{}", db.name);
        let mut not_utf8 = demo();
        not_utf8.insert("defaults/farewell.md", vec![0xff, 0xfe]);
        let err = store.push(&not_utf8, &writer(), "").await.unwrap_err();
        assert!(
            err.to_string().contains("farewell.md is not UTF-8"),
            "{err}"
        );
    }
}

/// Two writers move the same label from the same version at once: one
/// wins, the other gets the conflict naming the winner's version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writers_moving_one_label_one_wins() {
    for db in databases("two_writers").await {
        let store = db.open().await;
        let mut v2 = demo();
        v2.insert("defaults/greeting.md", "Hi.\n");
        let mut v3 = demo();
        v3.insert("defaults/greeting.md", "Hey.\n");
        for files in [demo(), v2, v3] {
            store.push(&files, &writer(), "").await.unwrap();
        }
        let prod = label("production");
        for round in 0..10 {
            let current = store
                .resolve("demo", "greeting", &VersionRef::Label(prod.clone()))
                .await
                .ok();
            // Two targets, both other than the current version.
            let c = current.unwrap_or(0);
            let (to_a, to_b) = (c % 3 + 1, (c + 1) % 3 + 1);
            let (a, b) = (db.open().await, db.open().await);
            let (one, two) = tokio::join!(
                tokio::spawn({
                    let prod = prod.clone();
                    async move {
                        a.move_label("demo", "greeting", &prod, to_a, current, &writer(), "a")
                            .await
                    }
                }),
                tokio::spawn({
                    let prod = prod.clone();
                    async move {
                        b.move_label("demo", "greeting", &prod, to_b, current, &writer(), "b")
                            .await
                    }
                }),
            );
            let results = [one.unwrap(), two.unwrap()];
            let wins: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
            assert_eq!(wins.len(), 1, "{} round {round}: {results:?}", db.name);
            let err = results.iter().find_map(|r| r.as_ref().err()).unwrap();
            assert_eq!(err.kind(), ErrorKind::Conflict, "{}: {err}", db.name);
            assert_eq!(err.current_version(), wins[0].to, "{}: {err}", db.name);
        }
        let moves = store.history("demo", Some("greeting")).await.unwrap();
        assert_eq!(moves.iter().filter(|m| m.label == "production").count(), 10);
    }
}

#[tokio::test]
async fn a_database_from_a_newer_promptreg_is_refused() {
    for db in databases("newer_schema").await {
        let store = db.open().await;
        drop(store);
        raw_execute(
            &db.url,
            "INSERT INTO promptreg_schema (version, applied_at) VALUES (99, 0)",
        )
        .await;
        let err = Store::open(&db.url).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NewerSchema, "{}", db.name);
        assert!(err.to_string().contains("schema version 99"), "{err}");
    }
}

async fn raw_execute(url: &str, sql: &str) {
    if url.starts_with("postgres") {
        let pool = sqlx::PgPool::connect(url).await.unwrap();
        sqlx::query(sql).execute(&pool).await.unwrap();
        pool.close().await;
    } else {
        let pool = sqlx::SqlitePool::connect(&format!("sqlite:{url}"))
            .await
            .unwrap();
        sqlx::query(sql).execute(&pool).await.unwrap();
        pool.close().await;
    }
}

#[tokio::test]
async fn the_pack_entry_versions_the_manifest() {
    for db in databases("pack_entry").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "").await.unwrap();
        let mut described = demo();
        described.insert(
            "promptreg.toml",
            format!("description = \"Greetings\"\n{}", common::MANIFEST),
        );
        let report = store.push(&described, &writer(), "").await.unwrap();
        assert_eq!(report.versions_written(), 1);
        let (n, files) = store
            .files("demo", PACK_ENTRY, &VersionRef::Label(Label::latest()))
            .await
            .unwrap();
        assert_eq!(n, 2);
        assert!(
            files
                .get("promptreg.toml")
                .unwrap()
                .starts_with(b"description")
        );
        assert_eq!(store.verify("demo").await.unwrap(), 4, "{}", db.name);
    }
}

#[tokio::test]
async fn a_thousand_prompts_with_ten_changed_write_ten_versions() {
    for db in databases("ten_of_thousand").await {
        let store = db.open().await;
        store
            .push(&common::big_pack(1000, 0, ""), &writer(), "")
            .await
            .unwrap();
        let report = store
            .push(&common::big_pack(1000, 10, " Be kind."), &writer(), "")
            .await
            .unwrap();
        assert_eq!(report.versions_written(), 10, "{}", db.name);
        assert_eq!(store.verify("big").await.unwrap(), 1011);
        let registry = PromptRegistry::new();
        store
            .install("big", &Label::latest(), &registry)
            .await
            .unwrap();
        assert_eq!(
            registry.render_in("p0003", &(), "ja").unwrap(),
            "あなたはアシスタント3です。 Be kind."
        );
    }
}

#[test]
fn only_admins_may_do_admin_things() {
    assert!(Actor::new("a", [Permission::Admin]).may(Permission::Write));
    assert!(!Actor::new("w", [Permission::Write]).may(Permission::Admin));
}

/// Two pushes of different content at once: both complete, one after the
/// other, and the store holds whole versions only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_pushes_at_once_never_mix() {
    for db in databases("two_pushes").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "").await.unwrap();
        for round in 0..5 {
            let (a, b) = (db.open().await, db.open().await);
            let mut one = demo();
            one.insert("defaults/farewell.md", format!("Bye {round} from one.\n"));
            let mut two = demo();
            two.insert("defaults/farewell.md", format!("Bye {round} from two.\n"));
            let (r1, r2) = tokio::join!(
                tokio::spawn(async move { a.push(&one, &writer(), "one").await }),
                tokio::spawn(async move { b.push(&two, &writer(), "two").await }),
            );
            for result in [r1.unwrap(), r2.unwrap()] {
                result.unwrap_or_else(|e| panic!("{}: {e}", db.name));
            }
            store.verify("demo").await.unwrap();
        }
        let log = store.log("demo", "farewell").await.unwrap();
        let numbers: Vec<u64> = log.iter().map(|v| v.number).collect();
        assert_eq!(numbers, (1..=11).rev().collect::<Vec<u64>>(), "{}", db.name);
    }
}

/// Twenty versions of one prompt pushed at once through clones of one
/// store, as a server does: all recorded, numbered 2 to 21.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_versions_of_one_prompt_at_once_are_all_numbered() {
    for db in databases("twenty_versions").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "").await.unwrap();
        let pushes: Vec<_> = (0..20)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    let mut files = PackFiles::default();
                    files.insert("defaults/farewell.md", format!("Bye number {i}.\n"));
                    store
                        .push_prompt("demo", "farewell", &files, &writer(), "")
                        .await
                })
            })
            .collect();
        let mut numbers = Vec::new();
        for push in pushes {
            let report = push
                .await
                .unwrap()
                .unwrap_or_else(|e| panic!("{}: {e}", db.name));
            numbers.push(report.prompts[0].2.unwrap());
        }
        numbers.sort_unstable();
        assert_eq!(numbers, (2..=21).collect::<Vec<u64>>(), "{}", db.name);
        store.verify("demo").await.unwrap();
    }
}

#[tokio::test]
async fn the_sqlite_file_is_in_wal_mode() {
    let db = common::sqlite();
    db.open().await.push(&demo(), &writer(), "").await.unwrap();
    let pool = sqlx::SqlitePool::connect(&format!("sqlite:{}", db.url))
        .await
        .unwrap();
    let (mode,): (String,) = sqlx::query_as("PRAGMA journal_mode")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn pushing_one_prompt_leaves_the_others_and_is_checked_with_the_pack() {
    for db in databases("push_prompt").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "").await.unwrap();
        let mut files = PackFiles::default();
        files.insert("defaults/farewell.md", "Bye.\n");
        files.insert("defaults/farewell.ja.md", "さようなら。\n");
        let report = store
            .push_prompt("demo", "farewell", &files, &writer(), "shorter")
            .await
            .unwrap();
        assert_eq!(
            changes(&report),
            [("farewell", Change::Changed)],
            "{}",
            db.name
        );
        let at = store.entries_at("demo", &Label::latest()).await.unwrap();
        let names: Vec<(&str, u64)> = at.iter().map(|e| (e.prompt.as_str(), e.number)).collect();
        assert_eq!(
            names,
            [("@pack", 1), ("farewell", 2), ("greeting", 1)],
            "{}",
            db.name
        );
        assert_eq!(at[1].files, files, "{}", db.name);
        let same = store
            .push_prompt("demo", "farewell", &files, &writer(), "again")
            .await
            .unwrap();
        assert_eq!(same.versions_written(), 0, "{}", db.name);

        let mut broken = PackFiles::default();
        broken.insert(
            "defaults/greeting.md",
            "---\ntemplate: true\n---\nHello {{ name !\n",
        );
        let err = store
            .push_prompt("demo", "greeting", &broken, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidPack, "{}", db.name);
        assert!(!err.diagnostics().is_empty(), "{}", db.name);

        let mut stray = PackFiles::default();
        stray.insert("defaults/farewell.md", "Bye.\n");
        stray.insert("defaults/greeting.md", "Hi.\n");
        let err = store
            .push_prompt("demo", "farewell", &stray, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidPack, "{}", db.name);
        assert!(err.to_string().contains("defaults/greeting.md"), "{err}");
        assert_eq!(store.log("demo", "greeting").await.unwrap().len(), 1);
    }
}

#[tokio::test]
async fn one_version_comes_with_its_address() {
    for db in databases("entry_version").await {
        let store = db.open().await;
        store.push(&demo(), &writer(), "").await.unwrap();
        let v = store
            .entry_version("demo", "greeting", &"latest".parse().unwrap())
            .await
            .unwrap();
        let log = store.log("demo", "greeting").await.unwrap();
        assert_eq!((v.number, &v.digest), (1, &log[0].digest), "{}", db.name);
        assert_eq!(v.files.len(), 2, "{}", db.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_over_the_file_limits_is_refused_and_writes_nothing() {
    for db in databases("file_limits").await {
        let limits = FileLimits {
            per_prompt: 3,
            per_pack: 6,
        };
        let store = db.open().await.with_file_limits(limits);
        // The manifest, greeting (2 files) and farewell.
        let mut files = demo();
        files.insert("defaults/greeting.de.md", "Hallo!");
        store.push(&files, &writer(), "first").await.unwrap();
        files.insert("defaults/greeting.es.md", "Hola.");
        let err = store.push(&files, &writer(), "more").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooManyFiles, "{}", db.name);
        let message = err.to_string();
        assert!(
            message.contains(
                "prompt `greeting` has 4 files, more than the limit of 3 files per prompt"
            ),
            "{message}"
        );
        let mut files = demo();
        files.insert("defaults/greeting.de.md", "Hallo!");
        files.insert("defaults/farewell.de.md", "Tschüss.");
        files.insert("defaults/farewell.fr.md", "Au revoir.");
        let err = store.push(&files, &writer(), "more").await.unwrap_err();
        assert!(
            err.to_string()
                .contains("the pack pushed has 7 files, more than the limit of 6 files per pack"),
            "{err}"
        );
        // One prompt at a time is held to the same limits.
        let mut greeting = PackFiles::default();
        for locale in ["", ".fr", ".de", ".es"] {
            greeting.insert(format!("defaults/greeting{locale}.md"), "Hi.");
        }
        let err = store
            .push_prompt("demo", "greeting", &greeting, &writer(), "more")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooManyFiles);
        assert_eq!(store.log("demo", "greeting").await.unwrap().len(), 1);
    }
}

/// A push checks every file as `check` does: a test file that does not
/// parse refuses the push, naming it, and nothing is written.
#[tokio::test]
async fn a_push_with_a_test_file_check_rejects_is_refused() {
    for db in databases("push_checks_tests").await {
        let store = db.open().await;
        let mut files = demo();
        files.insert("tests/greeting.toml", "prompt = \"greeting\"\nx\n");
        let err = store.push(&files, &writer(), "bad test").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidPack, "{}: {err}", db.name);
        assert!(err.to_string().contains("tests/greeting.toml:2"), "{err}");
        assert!(store.packs().await.unwrap().is_empty(), "{}", db.name);
    }
}
