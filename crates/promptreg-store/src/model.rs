//! What the store records: labels, versions, label moves, actors.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ErrorKind};
pub use crate::timestamp::Timestamp;

/// The label every push moves to the version it pushed.
pub const LATEST: &str = "latest";

/// A label: a named pointer from a prompt to one of its versions
/// (`production`, `staging`), matching `[a-z0-9][a-z0-9-]*`, at most 64
/// characters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Label(String);

impl Label {
    /// Validates `name`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidLabel`] saying which character breaks the rule.
    pub fn new(name: &str) -> Result<Label, Error> {
        match name_problem(name) {
            None => Ok(Label(name.to_owned())),
            Some(why) => Err(Error::new(
                ErrorKind::InvalidLabel,
                format!(
                    "invalid label `{name}`: {why}; a label is lowercase letters, digits and `-`, starting with a letter or digit (like `production`)"
                ),
            )),
        }
    }

    /// The automatic label `latest`.
    pub fn latest() -> Label {
        Label(LATEST.to_owned())
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is `latest`, which only pushes move.
    pub fn is_latest(&self) -> bool {
        self.0 == LATEST
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for Label {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Label::new(s)
    }
}

/// What breaks the naming rule of labels (and API keys) in `name`:
/// `[a-z0-9][a-z0-9-]*`, at most 64 characters.
pub(crate) fn name_problem(name: &str) -> Option<String> {
    let Some(first) = name.chars().next() else {
        return Some("it is empty".into());
    };
    if name.len() > 64 {
        return Some("it is longer than 64 characters".into());
    }
    if first == '-' {
        return Some("it starts with `-`".into());
    }
    name.chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
        .map(|c| format!("`{c}` is not allowed"))
}

/// A version named by number (`3`) or by label (`production`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionRef {
    /// A version number, from 1.
    Number(u64),
    /// The version a label points at.
    Label(Label),
}

impl FromStr for VersionRef {
    type Err = Error;
    /// A number from 1, or a label.
    fn from_str(s: &str) -> Result<Self, Error> {
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            return match s.parse::<u64>() {
                Ok(n) if n >= 1 && n <= i64::MAX as u64 => Ok(VersionRef::Number(n)),
                _ => Err(Error::new(
                    ErrorKind::InvalidVersion,
                    format!("invalid version `{s}`: versions are numbered from 1"),
                )),
            };
        }
        Label::new(s).map(VersionRef::Label)
    }
}

impl fmt::Display for VersionRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionRef::Number(n) => write!(f, "{n}"),
            VersionRef::Label(l) => write!(f, "{l}"),
        }
    }
}

/// What an actor may do besides reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Permission {
    /// Push versions, move unprotected labels.
    Write,
    /// Move protected labels and mark labels protected.
    Admin,
}

/// Who makes a change: the name recorded in the history, and what they
/// may do. The store checks the permissions; whoever builds the actor (the
/// CLI for the local user, a server for an API key) vouches for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// Recorded as the author of versions and the mover of labels.
    pub name: String,
    /// What the actor may do.
    pub permissions: Vec<Permission>,
    /// Moves of gated labels past failing tests ([`forcing_gates`](Self::forcing_gates)).
    forces_gates: bool,
    /// Signs each revision the actor makes ([`signing_with`](Self::signing_with)).
    signer: Option<Signer>,
}

/// The releaser's key, shared by the clones of an actor.
#[derive(Debug, Clone)]
struct Signer(std::sync::Arc<promptreg::signing::SigningKey>);

impl PartialEq for Signer {
    fn eq(&self, other: &Signer) -> bool {
        self.0.fingerprint() == other.0.fingerprint()
    }
}

impl Eq for Signer {}

impl Actor {
    /// An actor with `permissions`.
    pub fn new(name: impl Into<String>, permissions: impl IntoIterator<Item = Permission>) -> Self {
        Actor {
            name: name.into(),
            permissions: permissions.into_iter().collect(),
            forces_gates: false,
            signer: None,
        }
    }

    /// This actor, signing every revision it makes with `key`, in the
    /// transaction that makes it: a label's revision is signed as
    /// [`Statement::revision`](promptreg::signing::Statement::revision)
    /// of its pack, label, number and digest. The key stays where the
    /// actor runs; the store keeps the signature.
    pub fn signing_with(mut self, key: promptreg::signing::SigningKey) -> Actor {
        self.signer = Some(Signer(std::sync::Arc::new(key)));
        self
    }

    /// The key [`signing_with`](Self::signing_with) gave.
    pub fn signer(&self) -> Option<&promptreg::signing::SigningKey> {
        self.signer.as_ref().map(|s| &*s.0)
    }

    /// This actor, moving gated labels even when the candidate state's
    /// tests fail, and labels that keep their contracts stable past a
    /// breaking change: an admin's forced move, which needs a reason and
    /// is marked as forced in the revision (with the breaking changes it
    /// made). Tests that cannot be read, or run too long, still refuse the
    /// move.
    pub fn forcing_gates(mut self) -> Actor {
        self.forces_gates = true;
        self
    }

    /// Whether [`forcing_gates`](Self::forcing_gates) was asked for.
    pub fn forces_gates(&self) -> bool {
        self.forces_gates
    }

    /// Forcing gates is for admins, and says why.
    pub(crate) fn require_forcing_allowed(&self, reason: &str) -> Result<(), Error> {
        if !self.forces_gates {
            return Ok(());
        }
        self.require(
            Permission::Admin,
            "force a label past its tests or a breaking contract change",
        )?;
        if reason.trim().is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "forcing a label past its tests or a breaking contract change needs a reason, for the history",
            ));
        }
        Ok(())
    }

    /// Whether the actor has `permission` (admins may also write).
    pub fn may(&self, permission: Permission) -> bool {
        self.permissions.contains(&permission)
            || (permission == Permission::Write && self.permissions.contains(&Permission::Admin))
    }

    pub(crate) fn require(&self, permission: Permission, what: &str) -> Result<(), Error> {
        if self.may(permission) {
            return Ok(());
        }
        let needed = match permission {
            Permission::Write => "write",
            Permission::Admin => "admin",
        };
        Err(Error::new(
            ErrorKind::Forbidden,
            format!(
                "{} may not {what}: it needs the {needed} permission",
                self.name
            ),
        ))
    }
}

/// An actor whose write permission a host has checked already, once, for
/// the request it serves: a server checks an API key's scope on the pack
/// before it reads anything, so the store's writes it makes with a permit
/// do not check that permission again. The host vouches for it, as it
/// vouches for an [`Actor`]'s permissions. Protected labels and forced
/// gates still need [`Permission::Admin`], checked where they apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permit(Actor);

impl Permit {
    /// `actor`, whose write permission the host has checked.
    pub fn vouched(actor: Actor) -> Permit {
        Permit(actor)
    }

    /// The actor the permit is for.
    pub fn actor(&self) -> &Actor {
        &self.0
    }

    /// The same permit, moving gated labels past failing tests (see
    /// [`Actor::forcing_gates`]).
    pub fn forcing_gates(self) -> Permit {
        Permit(self.0.forcing_gates())
    }
}

/// Who makes a label move: an [`Actor`], whose write permission the
/// store checks, or a [`Permit`], checked once already by its host.
pub trait Writer: Send + Sync {
    /// The actor, once it may write; `what` names the write for a refusal
    /// ([`ErrorKind::Forbidden`]).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Forbidden`] for an actor without the write permission.
    fn writer(&self, what: &dyn Fn() -> String) -> Result<&Actor, Error>;
}

impl Writer for Actor {
    fn writer(&self, what: &dyn Fn() -> String) -> Result<&Actor, Error> {
        if !self.may(Permission::Write) {
            self.require(Permission::Write, &what())?;
        }
        Ok(self)
    }
}

impl Writer for Permit {
    fn writer(&self, _: &dyn Fn() -> String) -> Result<&Actor, Error> {
        Ok(&self.0)
    }
}

/// One immutable version of a prompt (or of the pack-level entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionInfo {
    /// The prompt id, or [`PACK_ENTRY`](crate::PACK_ENTRY).
    pub prompt: String,
    /// Numbered per prompt from 1.
    pub number: u64,
    /// The SHA-256 of its files' canonical form, in hex.
    pub digest: String,
    /// Who pushed it.
    pub author: String,
    /// Why.
    pub message: String,
    /// When.
    pub created_at: Timestamp,
    /// The labels pointing at it now, sorted.
    pub labels: Vec<String>,
}

/// One entry (a prompt, or [`PACK_ENTRY`](crate::PACK_ENTRY)) at one
/// version: its number, its content address and its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryVersion {
    /// The prompt id, or [`PACK_ENTRY`](crate::PACK_ENTRY).
    pub prompt: String,
    /// The version number.
    pub number: u64,
    /// The SHA-256 of its files' canonical form, in hex.
    pub digest: String,
    /// Its files, by path in the pack, exactly as pushed.
    pub files: crate::files::PackFiles,
}

/// One row of the append-only label history.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LabelMove {
    /// The prompt id, or [`PACK_ENTRY`](crate::PACK_ENTRY).
    pub prompt: String,
    /// The label moved.
    pub label: String,
    /// Where it pointed before (`None`: it did not exist).
    pub from: Option<u64>,
    /// Where it points now (`None`: it was removed, when a push no longer
    /// has the prompt).
    pub to: Option<u64>,
    /// Who moved it.
    pub actor: String,
    /// When.
    pub at: Timestamp,
    /// Why: `push`, `rollback`, `release staging`, or the caller's words.
    pub reason: String,
    /// The revision of the label the move made, with the other moves of
    /// the same change (`None` only while the change is being written).
    pub revision: Option<u64>,
}

impl LabelMove {
    /// Whether `self` and `other` were made by one change: the same
    /// revision of the same label (a release, a push, a pack rollback).
    pub fn same_change(&self, other: &LabelMove) -> bool {
        self.revision.is_some() && (&self.label, self.revision) == (&other.label, other.revision)
    }
}

/// What a push did to one prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// A new prompt: version 1.
    Added,
    /// New content: a new version.
    Changed,
    /// The content of an earlier version again: `latest` moves back to it,
    /// no version is written.
    Restored,
    /// The same content as `latest`: nothing written.
    Unchanged,
    /// The pack no longer has the prompt: `latest` is removed from it (its
    /// versions and other labels stay).
    Removed,
}

impl Change {
    /// `added`, `changed`, `restored`, `unchanged`, `removed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Changed => "changed",
            Change::Restored => "restored",
            Change::Unchanged => "unchanged",
            Change::Removed => "removed",
        }
    }
}

/// What made a revision of a label. Exhaustive: the API publishes the
/// causes as an enum, and a new one is a new version of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RevisionCause {
    /// A push moved `latest`.
    Push,
    /// A label moved on one prompt.
    Move,
    /// A release pointed the label at what another label points at.
    Release,
    /// A rollback moved the label back on one prompt.
    Rollback,
    /// The store was migrated to revisions: the label as it then stood.
    Migration,
    /// The label was pointed back at an earlier revision of it, for the
    /// whole pack: a pack rollback, or a label set to a revision.
    Restore,
    /// A split's candidate became the label's revision.
    Promote,
}

impl RevisionCause {
    const ALL: [RevisionCause; 7] = [
        RevisionCause::Push,
        RevisionCause::Move,
        RevisionCause::Release,
        RevisionCause::Rollback,
        RevisionCause::Migration,
        RevisionCause::Restore,
        RevisionCause::Promote,
    ];

    /// Its name: `push`, `move`, `release`, `rollback`, `migration`,
    /// `restore`, `promote`.
    pub fn as_str(self) -> &'static str {
        match self {
            RevisionCause::Push => "push",
            RevisionCause::Move => "move",
            RevisionCause::Release => "release",
            RevisionCause::Rollback => "rollback",
            RevisionCause::Migration => "migration",
            RevisionCause::Restore => "restore",
            RevisionCause::Promote => "promote",
        }
    }

    /// The cause named `name`, as [`as_str`](Self::as_str) writes it.
    pub(crate) fn named(name: &str) -> Option<RevisionCause> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

impl fmt::Display for RevisionCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One numbered, immutable state of a label of a pack: the version of
/// every entry (prompts, [`PACK_ENTRY`](crate::PACK_ENTRY),
/// [`TESTS_ENTRY`](crate::TESTS_ENTRY)) it pointed at after one change.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Revision {
    /// The label.
    pub label: String,
    /// Its number, from 1, per label.
    pub number: u64,
    /// The state's address ([`state_digest`](crate::state_digest) of its
    /// entries), as the label's bundle ETag carries it.
    pub digest: String,
    /// What made it.
    pub cause: RevisionCause,
    /// Who made it.
    pub actor: String,
    /// When.
    pub at: Timestamp,
    /// Why, as the history records it.
    pub reason: String,
    /// The earlier revision a [`RevisionCause::Restore`] brought back.
    pub restores: Option<u64>,
    /// For a gated label, the test results the state was admitted with
    /// (`9 of 9 cases passed`).
    pub tests: Option<String>,
    /// Whether an admin moved the gated label past failing tests.
    pub forced: bool,
    /// For a label that keeps its contracts stable
    /// (`[release] stable_contract`), the breaking contract changes an
    /// admin forced it past, one line each
    /// (``auditor v1 -> v2: output `audit_verdict`, property `verdict` removed``).
    pub breaking: Vec<String>,
    /// Every entry the label points at, with its version.
    pub entries: BTreeMap<String, u64>,
    /// The entries that changed since the revision before (all of them for
    /// the first), sorted.
    pub changes: Vec<RevisionChange>,
    /// Its signatures, oldest first.
    pub signatures: Vec<RevisionSignature>,
}

/// A signature of a revision by the releaser's key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RevisionSignature {
    /// The key's fingerprint (`SHA256:…`).
    pub fingerprint: String,
    /// The name an admin gave the key ([`Store::name_signing_key`](crate::Store::name_signing_key)).
    pub key_name: Option<String>,
    /// The signature, as OpenSSH writes it (`-----BEGIN SSH SIGNATURE-----`).
    pub signature: String,
    /// Who stored it.
    pub actor: String,
    /// When.
    pub at: Timestamp,
}

/// A revision as a user names it: by its number, or by its digest (the
/// label's bundle ETag, whole or its first 8 or more hex digits, as
/// `store revisions` shows it). Several revisions of a label may hold one
/// state (a rollback brings an earlier one back): a digest names the
/// newest of them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RevisionRef {
    /// The revision's number, from 1.
    Number(u64),
    /// Its digest, or the start of it: lowercase hex.
    Digest(String),
}

impl RevisionRef {
    /// The shortest start of a digest taken for it.
    pub const DIGEST_PREFIX: usize = 8;
}

impl From<u64> for RevisionRef {
    fn from(number: u64) -> Self {
        RevisionRef::Number(number)
    }
}

impl FromStr for RevisionRef {
    type Err = Error;

    /// `12` (or `r12`, as `store revisions` prints it) is revision 12;
    /// `3f9c01ab…` (8 to 64 hex digits) a digest.
    fn from_str(text: &str) -> Result<Self, Error> {
        let text = text.trim();
        let digits = text.strip_prefix('r').unwrap_or(text);
        if let Ok(number) = digits.parse::<u64>()
            && number > 0
            && (digits.len() < Self::DIGEST_PREFIX || digits.len() < text.len())
        {
            return Ok(RevisionRef::Number(number));
        }
        let hex = text.chars().all(|c| c.is_ascii_hexdigit());
        if hex && (Self::DIGEST_PREFIX..=64).contains(&text.len()) {
            return Ok(RevisionRef::Digest(text.to_ascii_lowercase()));
        }
        Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "`{text}` names no revision: give its number (from 1) or its digest (at least {} hex digits, as `promptreg store revisions` shows)",
                Self::DIGEST_PREFIX
            ),
        ))
    }
}

impl fmt::Display for RevisionRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RevisionRef::Number(n) => write!(f, "{n}"),
            RevisionRef::Digest(d) => f.write_str(d),
        }
    }
}

/// What restoring a revision did: the revision it recorded (`None` when
/// the label already held that state) and the moves.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Restored {
    /// The revision restored.
    pub restores: u64,
    /// The new revision, restoring it.
    pub revision: Option<u64>,
    /// Every label move it made, in one transaction.
    pub moves: Vec<LabelMove>,
}

/// One entry that a revision changed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RevisionChange {
    /// The entry.
    pub entry: String,
    /// Its version in the revision before (`None`: the label was not on it).
    pub from: Option<u64>,
    /// Its version in this one (`None`: the label left it).
    pub to: Option<u64>,
}

/// The outcome of a push, per prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PushReport {
    /// The pack's name.
    pub pack: String,
    /// Every prompt of the pack and every prompt removed, sorted; the
    /// version is the one `latest` points at now (`None` when removed).
    pub prompts: Vec<(String, Change, Option<u64>)>,
    /// The files given that are outside the pack format, sorted: not
    /// stored, so a pull does not give them back
    /// ([`PackFiles::not_stored`](crate::PackFiles::not_stored)).
    pub not_stored: Vec<String>,
}

impl PushReport {
    /// How many versions the push wrote.
    pub fn versions_written(&self) -> usize {
        self.prompts
            .iter()
            .filter(|(_, c, _)| matches!(c, Change::Added | Change::Changed))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_the_rule() {
        assert!(Label::new("production").is_ok());
        assert!(Label::new("v2-beta").is_ok());
        for bad in ["", "-x", "Prod", "a_b", "a b", "é", &"x".repeat(65)] {
            assert_eq!(
                Label::new(bad).unwrap_err().kind(),
                ErrorKind::InvalidLabel,
                "{bad}"
            );
        }
    }

    #[test]
    fn versions_are_numbers_or_labels() {
        assert_eq!("3".parse::<VersionRef>().unwrap(), VersionRef::Number(3));
        assert!(matches!(
            "staging".parse::<VersionRef>().unwrap(),
            VersionRef::Label(_)
        ));
        assert_eq!(
            "0".parse::<VersionRef>().unwrap_err().kind(),
            ErrorKind::InvalidVersion
        );
        assert_eq!(
            "99999999999999999999"
                .parse::<VersionRef>()
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidVersion
        );
    }
}
