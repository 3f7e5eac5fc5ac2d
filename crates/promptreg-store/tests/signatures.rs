//! Signed releases in the store, on every backend: a signing actor signs
//! each revision it makes, the signature verifies for exactly that pack,
//! label, revision and digest, a label that requires signatures refuses
//! an unsigned move, and a revision can be signed after the fact.

mod common;

use common::*;
use promptreg::signing::{Signature, Statement};
use promptreg_store::{ErrorKind, EventKind, Label, PackFiles, RevisionCause};

fn label(name: &str) -> Label {
    Label::new(name).unwrap()
}

/// The demo pack with `production` signed.
fn signed_demo() -> PackFiles {
    let mut files = demo();
    files.insert(
        "promptreg.toml",
        format!("{MANIFEST}[release]\nsigned = [\"production\"]\n"),
    );
    files
}

#[tokio::test]
async fn a_signing_actor_signs_each_revision_it_makes_for_exactly_that_revision() {
    for db in databases("signatures").await {
        let store = db.open().await;
        let production = label("production");
        store.push(&demo(), &writer(), "first").await.unwrap();
        let releaser = writer().signing_with(signing_key(1));
        let released = store
            .release("demo", &Label::latest(), &production, None, &releaser, "")
            .await
            .unwrap();
        let revision = store.revision("demo", &production, 1).await.unwrap();
        assert_eq!(revision.signatures.len(), 1, "{}", db.name);
        let signed = &revision.signatures[0];
        assert_eq!(signed.fingerprint, signing_key(1).fingerprint());
        assert_eq!(signed.actor, writer().name);
        let signature = Signature::from_armored(&signed.signature).unwrap();
        let statement = Statement::revision("demo", "production", 1, &revision.digest);
        assert_eq!(
            trusting(1)
                .verify(&statement, std::slice::from_ref(&signature))
                .unwrap(),
            signing_key(1).fingerprint()
        );
        assert!(
            trusting(2)
                .verify(&statement, std::slice::from_ref(&signature))
                .is_err()
        );
        let next = Statement::revision("demo", "production", 2, &revision.digest);
        assert!(trusting(1).verify(&next, &[signature]).is_err());
        assert!(!released.is_empty());

        // An unsigned actor's revision has none; signing it later adds one
        // and announces it.
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
        let staging = label("staging");
        assert!(
            store
                .revision("demo", &staging, 1)
                .await
                .unwrap()
                .signatures
                .is_empty()
        );
        let after = store.last_event_id().await.unwrap();
        let (number, fingerprint) = store
            .sign_revision("demo", &staging, 1, &writer().signing_with(signing_key(2)))
            .await
            .unwrap();
        assert_eq!(
            (number, fingerprint.as_str()),
            (1, signing_key(2).fingerprint().as_str())
        );
        let events = store.events_since(after, 10).await.unwrap();
        assert!(
            matches!(&events[..], [e] if matches!(&e.change, EventKind::RevisionSigned { revision: 1, .. })),
            "{}: {events:?}",
            db.name
        );
        // Signing twice with one key keeps one signature.
        store
            .sign_revision("demo", &staging, 1, &writer().signing_with(signing_key(2)))
            .await
            .unwrap();
        let signatures = store
            .revision_signatures("demo", &staging, 1)
            .await
            .unwrap();
        assert_eq!(signatures.len(), 1);
        let unsigned = store.sign_revision("demo", &staging, 1, &writer()).await;
        assert_eq!(unsigned.unwrap_err().kind(), ErrorKind::InvalidInput);
        let absent = store
            .sign_revision("demo", &staging, 9, &writer().signing_with(signing_key(2)))
            .await;
        assert_eq!(absent.unwrap_err().kind(), ErrorKind::UnknownVersion);
    }
}

#[tokio::test]
async fn a_label_the_manifest_signs_refuses_an_unsigned_move_and_keeps_its_state() {
    for db in databases("signed-label").await {
        let store = db.open().await;
        let production = label("production");
        store
            .push(&signed_demo(), &writer(), "first")
            .await
            .unwrap();
        let refused = store
            .release("demo", &Label::latest(), &production, None, &writer(), "")
            .await
            .unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::SignatureRequired, "{}", db.name);
        assert!(refused.to_string().contains("--sign KEYFILE"), "{refused}");
        let nothing = store.revisions("demo", &production).await.unwrap_err();
        assert_eq!(nothing.kind(), ErrorKind::UnknownVersion, "nothing moved");
        let releaser = writer().signing_with(signing_key(1));
        store
            .release("demo", &Label::latest(), &production, None, &releaser, "")
            .await
            .unwrap();
        // Every kind of move is held to it: a move, a rollback, a restore.
        let mut changed = signed_demo();
        changed.insert(
            "defaults/greeting.md",
            "---\ntemplate: true\nvariables:\n  name:\n---\nHi {{ name }}!\n",
        );
        store.push(&changed, &writer(), "second").await.unwrap();
        let moved = store
            .move_label("demo", "greeting", &production, 2, Some(1), &writer(), "")
            .await;
        assert_eq!(moved.unwrap_err().kind(), ErrorKind::SignatureRequired);
        store
            .move_label("demo", "greeting", &production, 2, Some(1), &releaser, "")
            .await
            .unwrap();
        let back = store
            .rollback_pack("demo", &production, &writer(), "")
            .await;
        assert_eq!(back.unwrap_err().kind(), ErrorKind::SignatureRequired);
        let restored = store
            .restore("demo", &production, 1, None, &releaser, "")
            .await
            .unwrap();
        let revisions = store.revisions("demo", &production).await.unwrap();
        assert_eq!(revisions.len(), 3);
        assert!(
            revisions.iter().all(|r| r.signatures.len() == 1),
            "{}",
            db.name
        );
        assert_eq!(revisions[0].cause, RevisionCause::Restore);
        assert_eq!(restored.revision, Some(3));
        // A split of it is a change of what it serves: signed too.
        let candidate = promptreg_store::Candidate::newest_of(Label::latest());
        let half: promptreg_store::Share = "50".parse().unwrap();
        let split = store
            .start_split("demo", &production, &candidate, half, &writer(), "")
            .await;
        assert_eq!(split.unwrap_err().kind(), ErrorKind::SignatureRequired);
        let split = store
            .start_split("demo", &production, &candidate, half, &releaser, "")
            .await
            .unwrap();
        let signed = store.split_signatures(split.id).await.unwrap();
        let signature = Signature::from_armored(&signed[0]).unwrap();
        let statement = Statement::split("demo", "production", split.id, &split.digest);
        assert!(
            trusting(1).verify(&statement, &[signature]).is_ok(),
            "{}",
            db.name
        );
        // `latest` follows pushes and is not held to it.
        assert!(
            !store
                .revisions("demo", &Label::latest())
                .await
                .unwrap()
                .is_empty()
        );
    }
}

#[tokio::test]
async fn admins_name_signing_keys_and_revisions_show_the_name() {
    for db in databases("signing-keys").await {
        let store = db.open().await;
        let production = label("production");
        store.push(&demo(), &writer(), "first").await.unwrap();
        let fingerprint = signing_key(1).fingerprint();
        let refused = store
            .name_signing_key(&fingerprint, "release bot", &writer())
            .await;
        assert_eq!(refused.unwrap_err().kind(), ErrorKind::Forbidden);
        let bad = store.name_signing_key("MD5:ab", "x", &admin()).await;
        assert_eq!(bad.unwrap_err().kind(), ErrorKind::InvalidInput);
        store
            .name_signing_key(&fingerprint, "release bot", &admin())
            .await
            .unwrap();
        store
            .release(
                "demo",
                &Label::latest(),
                &production,
                None,
                &writer().signing_with(signing_key(1)),
                "",
            )
            .await
            .unwrap();
        let revision = store.revision("demo", &production, 1).await.unwrap();
        assert_eq!(
            revision.signatures[0].key_name.as_deref(),
            Some("release bot"),
            "{}",
            db.name
        );
        assert_eq!(
            store.signing_keys().await.unwrap(),
            [(fingerprint, "release bot".to_owned())]
        );
    }
}
