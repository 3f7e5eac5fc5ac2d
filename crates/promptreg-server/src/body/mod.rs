//! The JSON documents of the API, requests and responses, with their
//! OpenAPI schemas.

use std::collections::BTreeMap;

use promptreg::Message;
use promptreg_store::{EntryVersion, LabelMove, VersionInfo};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

mod fleet;
mod l10n;
mod revisions;
mod splits;

pub use fleet::{FleetBody, FleetReport, InstanceBody, InstanceState, ServedBody, Source};
pub use l10n::{Imported, IncompletePrompt, TranslationImport, TranslationStatus};
pub use revisions::{
    RestoreRevision, Restored, RevisionBody, RevisionCause, RevisionChange, Revisions,
    SignatureBody,
};
pub(crate) use splits::share_of;
pub use splits::{EndSplit, SplitBody, SplitShare, SplitStepBody, StartSplit};

/// The packs in the store.
#[derive(Debug, Serialize, ToSchema)]
pub struct PackList {
    /// Their names, sorted.
    pub packs: Vec<String>,
}

/// The prompts of a pack, with their labels.
#[derive(Debug, Serialize, ToSchema)]
pub struct PromptList {
    /// The pack.
    pub pack: String,
    /// Its protected labels, sorted.
    pub protected: Vec<String>,
    /// Every prompt the pack ever had, sorted by id (`@pack` is the
    /// pack-level entry: the manifest).
    pub prompts: Vec<PromptSummary>,
}

/// One prompt in a listing.
#[derive(Debug, Serialize, ToSchema)]
pub struct PromptSummary {
    /// The prompt id, or `@pack`.
    pub id: String,
    /// `text`, `template` (rendered with minijinja) or `pack` (the
    /// manifest), at `latest`; null when `latest` no longer has it.
    pub kind: Option<String>,
    /// Label -> version.
    pub labels: BTreeMap<String, u64>,
    /// How many versions it has.
    pub versions: u64,
    /// The locales of its variant files at `latest`, sorted.
    pub locales: Vec<String>,
}

/// One version of a prompt: its files, as the store checks them out.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PromptVersion {
    /// The pack.
    pub pack: String,
    /// The prompt id, or `@pack`.
    pub id: String,
    /// The version number, from 1.
    pub version: u64,
    /// SHA-256 of the files' canonical form, in hex: the ETag.
    pub digest: String,
    /// The locales of its variant files, sorted.
    pub locales: Vec<String>,
    /// Path in the pack -> text.
    pub files: BTreeMap<String, String>,
}

impl PromptVersion {
    pub(crate) fn new(pack: &str, entry: &EntryVersion) -> PromptVersion {
        let files: BTreeMap<String, String> = entry
            .files
            .iter()
            .map(|(p, b)| (p.to_owned(), String::from_utf8_lossy(b).into_owned()))
            .collect();
        let mut locales: Vec<String> = files
            .keys()
            .filter_map(|p| promptreg_store::file_locale(&entry.prompt, p))
            .map(|l| l.as_str().to_owned())
            .collect();
        locales.sort();
        PromptVersion {
            pack: pack.to_owned(),
            id: entry.prompt.clone(),
            version: entry.number,
            digest: entry.digest.clone(),
            locales,
            files,
        }
    }
}

/// A whole label of a pack: everything a client needs to render every
/// prompt of it offline.
#[derive(Debug, Serialize, ToSchema)]
pub struct Bundle {
    /// The pack.
    pub pack: String,
    /// The label.
    pub label: String,
    /// Every entry at the label, `@pack` (the manifest) first.
    pub entries: Vec<PromptVersion>,
}

/// The versions of a prompt, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct VersionList {
    /// The pack.
    pub pack: String,
    /// The prompt id.
    pub id: String,
    /// Newest first.
    pub versions: Vec<VersionSummary>,
}

/// One version in a prompt's log.
#[derive(Debug, Serialize, ToSchema)]
pub struct VersionSummary {
    /// From 1.
    pub version: u64,
    /// Its content address.
    pub digest: String,
    /// Who pushed it.
    pub author: String,
    /// Why.
    pub message: String,
    /// When, RFC 3339.
    pub created_at: String,
    /// The labels pointing at it now.
    pub labels: Vec<String>,
}

impl From<&VersionInfo> for VersionSummary {
    fn from(v: &VersionInfo) -> Self {
        VersionSummary {
            version: v.number,
            digest: v.digest.clone(),
            author: v.author.clone(),
            message: v.message.clone(),
            created_at: v.created_at.to_string(),
            labels: v.labels.clone(),
        }
    }
}

/// A new version of one prompt.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewVersion {
    /// Path in the pack -> text: `defaults/<id>.md` and
    /// `defaults/<id>.<locale>.md`; they replace all of the prompt's files.
    pub files: BTreeMap<String, String>,
    /// Why, recorded with the version.
    #[serde(default)]
    pub message: String,
}

/// What creating a version did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Created {
    /// The pack.
    pub pack: String,
    /// The prompt id.
    pub id: String,
    /// `added`, `changed`, `restored` (earlier content again) or
    /// `unchanged`.
    pub change: String,
    /// The version `latest` points at now.
    pub version: u64,
}

/// A label move.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveLabel {
    /// The version to point the label at.
    pub version: u64,
    /// Why, recorded in the history.
    #[serde(default)]
    pub reason: String,
    /// Move a gated label even though the tests of the state it would
    /// serve fail: needs an admin key and a reason; the revision is marked
    /// as forced.
    #[serde(default)]
    pub force: bool,
}

/// A release: point label `to` where `from` points, on every prompt.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Release {
    /// The label to copy (`staging`).
    pub from: String,
    /// The label to move (`production`).
    pub to: String,
    /// Why, recorded in the history after `release FROM`.
    #[serde(default)]
    pub reason: String,
    /// Release only if `to`'s newest revision is this one (0: it has none
    /// yet); otherwise 412 with `current`, the revision that won.
    #[serde(default)]
    pub expect_revision: Option<u64>,
    /// Move a gated label even though the tests of the state it would
    /// serve fail: needs an admin key and a reason; the revision is marked
    /// as forced.
    #[serde(default)]
    pub force: bool,
}

/// A rollback; the body is optional.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Rollback {
    /// Why, recorded in the history after `rollback from N`.
    #[serde(default)]
    pub reason: String,
    /// Move a gated label even though the tests of the state it would
    /// serve fail: needs an admin key and a reason; the revision is marked
    /// as forced.
    #[serde(default)]
    pub force: bool,
}

impl Rollback {
    /// The reason and `force` of an optional body (none: no reason, not
    /// forced).
    pub(crate) fn parts(body: Option<Rollback>) -> (String, bool) {
        body.map_or_else(Default::default, |r| (r.reason, r.force))
    }
}

/// Label moves, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct Moves {
    /// The moves.
    pub moves: Vec<Move>,
}

/// One label move of the history.
#[derive(Debug, Serialize, ToSchema)]
pub struct Move {
    /// The prompt id, or `@pack`.
    pub id: String,
    /// The label.
    pub label: String,
    /// Where it pointed before (null: nowhere).
    pub from: Option<u64>,
    /// Where it points after (null: removed).
    pub to: Option<u64>,
    /// Who moved it: a user or an API key's name.
    pub actor: String,
    /// When, RFC 3339.
    pub at: String,
    /// Why.
    pub reason: String,
}

impl From<&LabelMove> for Move {
    fn from(m: &LabelMove) -> Self {
        Move {
            id: m.prompt.clone(),
            label: m.label.clone(),
            from: m.from,
            to: m.to,
            actor: m.actor.clone(),
            at: m.at.to_string(),
            reason: m.reason.clone(),
        }
    }
}

impl Moves {
    pub(crate) fn of(moves: &[LabelMove]) -> Moves {
        Moves {
            moves: moves.iter().map(Move::from).collect(),
        }
    }
}

/// A render on the server.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenderRequest {
    /// The label to render from.
    #[serde(default = "production")]
    pub label: String,
    /// A BCP 47 locale; the pack's default locale when absent.
    pub locale: Option<String>,
    /// The template context.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub context: Value,
    /// For a chat prompt: the conversation history per placeholder name
    /// (`{"conversation": [{"role": "user", "content": "..."}]}`).
    #[serde(default)]
    #[schema(value_type = Object)]
    pub history: BTreeMap<String, Vec<Message>>,
    /// The subject (a user, a session) to render for: while a split runs
    /// on the label, the subjects its share picks get its candidate, as a
    /// follower's `render_for` does.
    #[serde(default)]
    pub subject: Option<String>,
}

impl RenderRequest {
    /// The histories as the library's render calls take them.
    pub(crate) fn histories(&self) -> Vec<(&str, &[Message])> {
        self.history
            .iter()
            .map(|(name, messages)| (name.as_str(), messages.as_slice()))
            .collect()
    }
}

fn production() -> String {
    "production".to_owned()
}

/// A split and the arm of a render's subject.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SplitArm {
    /// The split's id.
    pub split: u64,
    /// `stable` or `candidate`.
    pub arm: String,
}

/// A rendered prompt.
#[derive(Debug, Serialize, ToSchema)]
pub struct RenderResponse {
    /// The prompt id.
    pub id: String,
    /// The label it was rendered from.
    pub label: String,
    /// The locale asked for.
    pub locale: String,
    /// The text the application sends; for a chat prompt, its messages as
    /// role-headed text (`# system`, the content, ...).
    pub text: String,
    /// A chat prompt's messages, in OpenAI's `{"role", "content"}` shape;
    /// absent for a text prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub messages: Option<Vec<Message>>,
    /// The model settings declared for the prompt, if any.
    #[schema(value_type = Option<Object>)]
    pub model: Option<Value>,
    /// With a `subject`, while a split runs on the label: the split, and
    /// the arm the subject gets (`stable`, `candidate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitArm>,
    /// What is worth knowing about the request (a `locale` of no known
    /// language, which matches no variant); absent when nothing is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A render with every part and its origin (`promptreg explain`).
#[derive(Debug, Serialize, ToSchema)]
pub struct ExplainResponse {
    /// The label it was rendered from.
    pub label: String,
    /// As a render's `warnings`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The trace: the text, the locale lookup, and every part with its
    /// origin and provenance.
    #[schema(value_type = Object)]
    pub rendered: Value,
    /// As a render's `split`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitArm>,
}

/// The differences between two versions of a prompt, per file.
#[derive(Debug, Serialize, ToSchema)]
pub struct DiffResponse {
    /// The prompt id.
    pub id: String,
    /// The version `from` named.
    pub from: u64,
    /// The version `to` named.
    pub to: u64,
    /// One per file of either version (of the locale asked for).
    pub files: Vec<FileDiff>,
}

/// One file's unified diff.
#[derive(Debug, Serialize, ToSchema)]
pub struct FileDiff {
    /// Path in the pack.
    pub path: String,
    /// Its locale; null for the default file.
    pub locale: Option<String>,
    /// Whether the two versions differ.
    pub changed: bool,
    /// The unified diff (empty when unchanged).
    pub diff: String,
}

impl From<promptreg_store::PromptDiff> for DiffResponse {
    fn from(diff: promptreg_store::PromptDiff) -> DiffResponse {
        DiffResponse {
            id: diff.id,
            from: diff.from,
            to: diff.to,
            files: diff
                .files
                .into_iter()
                .map(|f| FileDiff {
                    path: f.path,
                    locale: f.locale.map(|l| l.as_str().to_owned()),
                    changed: f.changed,
                    diff: f.diff,
                })
                .collect(),
        }
    }
}

/// `/healthz` and `/readyz`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok`, or `unavailable`.
    pub status: String,
    /// Why it is not ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}
