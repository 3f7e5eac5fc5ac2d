//! A label's revisions: one numbered state of the whole pack per change.

use std::collections::BTreeMap;

use promptreg_store::Revision;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::problem::Problem;

/// The revisions of a label, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct Revisions {
    /// The pack.
    pub pack: String,
    /// The label.
    pub label: String,
    /// Newest first.
    pub revisions: Vec<RevisionBody>,
}

/// One numbered, immutable state of a label: the version of every entry
/// (prompts, `@pack`, `@tests`) it pointed at after one change.
#[derive(Debug, Serialize, ToSchema)]
pub struct RevisionBody {
    /// Its number, from 1, per label.
    pub revision: u64,
    /// The state's SHA-256, in hex: the ETag of the label's bundle while
    /// the label stands at this revision.
    pub digest: String,
    /// What made it.
    #[schema(inline)]
    pub cause: RevisionCause,
    /// Who made it: a user or an API key's name.
    pub actor: String,
    /// When, RFC 3339.
    pub at: String,
    /// Why, as the history records it.
    pub reason: String,
    /// The earlier revision a restore brought back.
    pub restores: Option<u64>,
    /// For a gated label, the test results it was admitted with.
    pub tests: Option<String>,
    /// Whether an admin moved the gated label past failing tests.
    pub forced: bool,
    /// The breaking contract changes an admin forced the label past, one
    /// line each (``auditor v1 -> v2: output `audit_verdict`, property `verdict` removed``).
    pub breaking: Vec<String>,
    /// Every entry the label points at, with its version.
    pub entries: BTreeMap<String, u64>,
    /// The entries whose version changed since the revision before.
    pub changes: Vec<RevisionChange>,
    /// Its signatures by releasers' keys, oldest first: a follower that
    /// trusts one of the keys accepts the revision.
    pub signatures: Vec<SignatureBody>,
}

/// A signature of a revision.
#[derive(Debug, Serialize, ToSchema)]
pub struct SignatureBody {
    /// The key's fingerprint, as `ssh-keygen -l` prints it (`SHA256:…`).
    pub fingerprint: String,
    /// The name an admin gave the key, if any.
    pub key_name: Option<String>,
    /// Who stored it.
    pub actor: String,
    /// When, RFC 3339.
    pub at: String,
    /// The SSH signature (`-----BEGIN SSH SIGNATURE-----`, namespace
    /// `promptreg-release`) over the revision's statement: verifiable with
    /// `ssh-keygen -Y verify`.
    pub signature: String,
}

impl From<&promptreg_store::RevisionSignature> for SignatureBody {
    fn from(s: &promptreg_store::RevisionSignature) -> Self {
        SignatureBody {
            fingerprint: s.fingerprint.clone(),
            key_name: s.key_name.clone(),
            actor: s.actor.clone(),
            at: s.at.to_string(),
            signature: s.signature.clone(),
        }
    }
}

/// What made a revision.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RevisionCause {
    /// A push moved `latest`.
    Push,
    /// A label moved on one prompt.
    Move,
    /// A release.
    Release,
    /// A rollback on one prompt.
    Rollback,
    /// The store was migrated to revisions.
    Migration,
    /// The label was pointed back at an earlier revision, for the whole
    /// pack (a pack rollback, or a label set to a revision).
    Restore,
    /// A split's candidate became the label's revision.
    Promote,
}

/// One entry a revision changed.
#[derive(Debug, Serialize, ToSchema)]
pub struct RevisionChange {
    /// The entry: a prompt id, `@pack` or `@tests`.
    pub id: String,
    /// Its version before (null: the label was not on it).
    pub from: Option<u64>,
    /// Its version after (null: the label left it).
    pub to: Option<u64>,
}

/// Points a label at one of its revisions.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreRevision {
    /// The revision whose state the label takes, on every entry: its
    /// number, or its digest (8 hex digits or more).
    pub revision: RevisionName,
    /// The label's newest revision now, to refuse the change (412) when
    /// someone changed the label since it was read.
    #[serde(default)]
    pub expect: Option<u64>,
    /// Why, recorded in the history after `restore revision N`.
    #[serde(default)]
    pub reason: String,
    /// Move a gated label even though the tests of the state it would
    /// serve fail, or a label that keeps its contracts stable past a
    /// breaking change: needs an admin key and a reason; the revision is
    /// marked as forced.
    #[serde(default)]
    pub force: bool,
}

/// A revision by number (`12`) or by digest (`"3f9c01ab"`: 8 to 64 hex
/// digits; the newest revision holding that state).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum RevisionName {
    /// Its number, from 1.
    Number(u64),
    /// Its digest, or the start of it.
    Digest(String),
}

impl RevisionName {
    /// The revision it names, or a 400 saying why it names none.
    pub(crate) fn to_ref(&self) -> Result<promptreg_store::RevisionRef, Problem> {
        match self {
            RevisionName::Number(n) => Ok(promptreg_store::RevisionRef::Number(*n)),
            RevisionName::Digest(text) => Ok(text.parse()?),
        }
    }
}

/// What restoring a revision did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Restored {
    /// The label.
    pub label: String,
    /// The revision whose state it took.
    pub restores: u64,
    /// The new revision it recorded (null: the label already held it).
    pub revision: Option<u64>,
    /// Every label move it made.
    pub moves: Vec<super::Move>,
}

impl Restored {
    /// The body of `restored` for `label`.
    pub(crate) fn of(label: &str, restored: &promptreg_store::Restored) -> Restored {
        Restored {
            label: label.to_owned(),
            restores: restored.restores,
            revision: restored.revision,
            moves: restored.moves.iter().map(super::Move::from).collect(),
        }
    }
}

impl Revisions {
    /// The body of `revisions` of `label` in `pack`.
    pub fn of(pack: &str, label: &str, revisions: &[Revision]) -> Revisions {
        Revisions {
            pack: pack.to_owned(),
            label: label.to_owned(),
            revisions: revisions.iter().map(RevisionBody::from).collect(),
        }
    }
}

impl From<&Revision> for RevisionBody {
    fn from(r: &Revision) -> Self {
        use promptreg_store::RevisionCause as C;
        let cause = match r.cause {
            C::Push => RevisionCause::Push,
            C::Move => RevisionCause::Move,
            C::Release => RevisionCause::Release,
            C::Rollback => RevisionCause::Rollback,
            C::Migration => RevisionCause::Migration,
            C::Restore => RevisionCause::Restore,
            C::Promote => RevisionCause::Promote,
        };
        RevisionBody {
            revision: r.number,
            digest: r.digest.clone(),
            cause,
            actor: r.actor.clone(),
            at: r.at.to_string(),
            reason: r.reason.clone(),
            restores: r.restores,
            tests: r.tests.clone(),
            forced: r.forced,
            breaking: r.breaking.clone(),
            entries: r.entries.clone(),
            changes: r
                .changes
                .iter()
                .map(|c| RevisionChange {
                    id: c.entry.clone(),
                    from: c.from,
                    to: c.to,
                })
                .collect(),
            signatures: r.signatures.iter().map(SignatureBody::from).collect(),
        }
    }
}
