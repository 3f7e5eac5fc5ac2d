//! Gradual releases in the store: a label's split, its steps, promotion
//! and abort, gates, races; on SQLite and PostgreSQL alike.

mod common;

use common::{admin, databases, demo, writer};
use promptreg_store::{
    Candidate, ErrorKind, EventKind, Label, PackFiles, RevisionCause, RevisionRef, Share,
    SplitState, SplitStep, Store,
};

fn label(name: &str) -> Label {
    Label::new(name).unwrap()
}

fn share(text: &str) -> Share {
    text.parse().unwrap()
}

/// `production` on v1 of the demo pack; `latest` on v2 of `greeting`.
async fn candidate_on_latest(store: &Store, files: PackFiles) {
    store.push(&files, &writer(), "first").await.unwrap();
    store
        .release(
            "demo",
            &Label::latest(),
            &label("production"),
            None,
            &writer(),
            "",
        )
        .await
        .unwrap();
    let mut edited = files;
    edited.insert("defaults/greeting.md", "Hi {{ name }}!\n");
    store.push(&edited, &writer(), "hi").await.unwrap();
}

/// A split starts from `latest`'s newest revision, its share is raised,
/// and its promotion makes the candidate the label's next revision; every
/// step is recorded and announced.
#[tokio::test]
async fn a_split_starts_is_raised_and_promoted_in_recorded_steps() {
    for db in databases("splits_promote").await {
        let store = db.open().await;
        candidate_on_latest(&store, demo()).await;
        let production = label("production");
        let before = store
            .newest_revision("demo", &production)
            .await
            .unwrap()
            .unwrap();
        let latest = store
            .newest_revision("demo", &Label::latest())
            .await
            .unwrap()
            .unwrap();

        let split = store
            .start_split(
                "demo",
                &production,
                &Candidate::newest_of(Label::latest()),
                share("10"),
                &writer(),
                "try hi",
            )
            .await
            .unwrap();
        assert_eq!(
            (split.state, split.share),
            (SplitState::Running, share("10")),
            "{}",
            db.name
        );
        assert_eq!(
            (split.source_label.as_str(), split.source_revision),
            ("latest", latest.0)
        );
        assert_eq!(split.digest, latest.1);
        assert_eq!(split.entries["greeting"], 2);
        assert_eq!(
            split.summary(),
            format!(
                "production: 10% on latest r{} (split {}, running)",
                latest.0, split.id
            )
        );
        assert_eq!(
            store.running_split("demo", &production).await.unwrap(),
            Some(split.clone())
        );
        // The label itself has not moved.
        assert_eq!(
            store
                .newest_revision("demo", &production)
                .await
                .unwrap()
                .unwrap(),
            before
        );

        let again = store
            .start_split(
                "demo",
                &production,
                &Candidate::newest_of(Label::latest()),
                share("5"),
                &writer(),
                "",
            )
            .await
            .unwrap_err();
        assert_eq!(again.kind(), ErrorKind::Conflict);
        assert!(
            again.to_string().contains(&format!(
                "runs split {} already (10%, started by ada)",
                split.id
            )),
            "{again}"
        );

        let raised = store
            .set_split_share(
                "demo",
                &production,
                share("50"),
                Some(split.id),
                &writer(),
                "looks fine",
            )
            .await
            .unwrap();
        assert_eq!(raised.share, share("50"));
        let stale = store
            .set_split_share(
                "demo",
                &production,
                share("60"),
                Some(split.id + 1),
                &writer(),
                "",
            )
            .await
            .unwrap_err();
        assert_eq!(stale.kind(), ErrorKind::Conflict);

        let (promoted, revision) = store
            .promote_split("demo", &production, None, &admin(), "all good")
            .await
            .unwrap();
        let revision = revision.expect("a new revision");
        assert_eq!(
            (promoted.state, promoted.promoted_to),
            (SplitState::Promoted, Some(revision))
        );
        let newest = store.revision("demo", &production, revision).await.unwrap();
        assert_eq!(newest.cause, RevisionCause::Promote);
        assert_eq!(newest.digest, split.digest, "the candidate's state, whole");
        assert!(
            newest
                .reason
                .starts_with(&format!("promote split {}", split.id)),
            "{}",
            newest.reason
        );
        let steps: Vec<(SplitStep, String, &str)> = promoted
            .steps
            .iter()
            .map(|s| (s.step, s.share.to_string(), s.reason.as_str()))
            .collect();
        assert_eq!(
            steps,
            [
                (SplitStep::Start, "10%".to_owned(), "try hi"),
                (SplitStep::Share, "50%".to_owned(), "looks fine"),
                (SplitStep::Promote, "100%".to_owned(), "all good"),
            ]
        );
        assert_eq!(
            store.running_split("demo", &production).await.unwrap(),
            None
        );

        let events = store.events_since(0, usize::MAX).await.unwrap();
        let kinds: Vec<String> = events
            .iter()
            .rev()
            .take(3)
            .map(|e| match &e.change {
                EventKind::SplitChanged {
                    step,
                    share,
                    digest,
                    ..
                } => {
                    assert_eq!(digest, &split.digest);
                    format!("split {} {share}", step.as_str())
                }
                EventKind::RevisionCreated { cause, .. } => format!("revision {cause}"),
                EventKind::Released { .. } => "released".to_owned(),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            kinds,
            ["split promote 100%", "revision promote", "released"]
        );
        let start = events.iter().find(|e| {
            matches!(
                e.change,
                EventKind::SplitChanged {
                    step: SplitStep::Start,
                    ..
                }
            )
        });
        assert!(start.is_some());
        assert_eq!(store.splits("demo", &production).await.unwrap().len(), 1);
    }
}

/// An abort leaves the label as it was, and a second step on the ended
/// split names who ended it; promote and abort racing: one wins.
#[tokio::test]
async fn an_abort_changes_nothing_served_and_racing_ends_name_the_winner() {
    for db in databases("splits_abort").await {
        let store = db.open().await;
        candidate_on_latest(&store, demo()).await;
        let production = label("production");
        let before = store.newest_revision("demo", &production).await.unwrap();
        let split = store
            .start_split(
                "demo",
                &production,
                &Candidate::newest_of(Label::latest()),
                share("1"),
                &writer(),
                "",
            )
            .await
            .unwrap();
        let aborted = store
            .abort_split("demo", &production, Some(split.id), &writer(), "too slow")
            .await
            .unwrap();
        assert_eq!(aborted.state, SplitState::Aborted, "{}", db.name);
        assert_eq!(
            store.newest_revision("demo", &production).await.unwrap(),
            before
        );
        let late = store
            .promote_split("demo", &production, Some(split.id), &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(late.kind(), ErrorKind::Conflict);
        assert!(
            late.to_string()
                .contains(&format!("split {} was aborted by ada", split.id)),
            "{late}"
        );

        // Two ends at once: exactly one takes effect.
        let split = store
            .start_split(
                "demo",
                &production,
                &Candidate::newest_of(Label::latest()),
                share("20"),
                &writer(),
                "",
            )
            .await
            .unwrap();
        let (a, b, who) = (store.clone(), store.clone(), writer());
        let (promoted, aborted) = tokio::join!(
            a.promote_split("demo", &production, Some(split.id), &who, "promote"),
            b.abort_split("demo", &production, Some(split.id), &who, "abort"),
        );
        let ended = store.splits("demo", &production).await.unwrap()[0].clone();
        match (promoted, aborted) {
            (Ok(_), Err(e)) => {
                assert_eq!(ended.state, SplitState::Promoted);
                assert!(e.to_string().contains("was promoted by ada"), "{e}");
            }
            (Err(e), Ok(_)) => {
                assert_eq!(ended.state, SplitState::Aborted);
                assert!(e.to_string().contains("was aborted by ada"), "{e}");
            }
            other => panic!("{}: both or neither ended the split: {other:?}", db.name),
        }
    }
}

/// Bad splits are refused with what would be valid: a revision that does
/// not exist, `latest`, no split running, a protected label without
/// admin; a gated label tests the candidate first.
#[tokio::test]
async fn bad_splits_are_refused_and_a_gated_candidate_is_tested() {
    for db in databases("splits_refused").await {
        let store = db.open().await;
        candidate_on_latest(&store, common::gated_demo()).await;
        let production = label("production");
        let latest = Label::latest();
        let newest = store
            .newest_revision("demo", &latest)
            .await
            .unwrap()
            .unwrap()
            .0;

        let missing = store
            .start_split(
                "demo",
                &production,
                &Candidate {
                    label: Label::latest(),
                    revision: Some(RevisionRef::Number(99)),
                },
                share("10"),
                &writer(),
                "",
            )
            .await
            .unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::UnknownVersion, "{}", db.name);
        assert!(
            missing
                .to_string()
                .contains(&format!("no revision 99: its revisions are 1 to {newest}")),
            "{missing}"
        );
        let on_latest = store
            .start_split(
                "demo",
                &latest,
                &Candidate::newest_of(label("production")),
                share("10"),
                &writer(),
                "",
            )
            .await
            .unwrap_err();
        assert_eq!(on_latest.kind(), ErrorKind::InvalidLabel);
        let none = store
            .set_split_share("demo", &production, share("10"), None, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(none.kind(), ErrorKind::UnknownVersion);
        assert!(
            none.to_string().contains("runs no split: start one with"),
            "{none}"
        );

        // The candidate fails the gate: nothing starts; forced, it does.
        let failing = store
            .start_split(
                "demo",
                &production,
                &Candidate::newest_of(Label::latest()),
                share("10"),
                &writer(),
                "",
            )
            .await
            .unwrap_err();
        assert_eq!(failing.kind(), ErrorKind::TestsFailed, "{failing}");
        assert_eq!(
            store.running_split("demo", &production).await.unwrap(),
            None
        );
        let forced = store
            .start_split(
                "demo",
                &production,
                &Candidate::newest_of(Label::latest()),
                share("10"),
                &admin().forcing_gates(),
                "known",
            )
            .await
            .unwrap();
        assert!(forced.forced);
        assert_eq!(
            forced.tests.as_deref(),
            Some("0 of 1 cases passed, forced by an admin")
        );

        store
            .protect("demo", &production, true, &admin())
            .await
            .unwrap();
        let protected = store
            .abort_split("demo", &production, None, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(protected.kind(), ErrorKind::Forbidden, "{protected}");
        store
            .abort_split("demo", &production, None, &admin(), "")
            .await
            .unwrap();
    }
}
