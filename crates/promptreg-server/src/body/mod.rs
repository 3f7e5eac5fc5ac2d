//! The JSON documents of the API, requests and responses, with their
//! OpenAPI schemas.

use std::collections::BTreeMap;

use promptreg_store::{EntryVersion, VersionInfo};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

mod fleet;
mod l10n;
mod labels;
mod renders;
mod revisions;
mod splits;
mod webhooks;

pub use fleet::{FleetBody, FleetReport, InstanceBody, InstanceState, ServedBody, Source};
pub use l10n::{Imported, IncompletePrompt, TranslationImport, TranslationStatus};
pub use labels::{Move, MoveLabel, Moves, Release, Rollback};
pub use renders::{ExplainResponse, RenderRequest, RenderResponse, SplitArm};
pub use revisions::{
    RestoreRevision, Restored, RevisionBody, RevisionCause, RevisionChange, Revisions,
    SignatureBody,
};
pub(crate) use splits::share_of;
pub use splits::{EndSplit, SplitBody, SplitShare, SplitStepBody, StartSplit};
pub use webhooks::{
    DeliveryBody, DeliveryLog, NewWebhook, RedeliverFailed, Redelivered, Rotation, WebhookBody,
    WebhookList, WebhookPatch, WebhookSecret,
};

/// The packs in the store.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
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
    /// What `to` changes in the prompt's contract (tools and output
    /// schema), each change classified: breaking when an application
    /// written against `from` may fail.
    pub contract: Vec<ContractChange>,
}

/// One change of a prompt's contract.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContractChange {
    /// What it is about: ``tool `open_page`, parameter `path` ``.
    pub subject: String,
    /// What changed: `removed`, `became required`, `type string -> integer`.
    pub what: String,
    /// Whether an application written against the old contract may fail.
    pub breaking: bool,
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
            contract: diff
                .contract
                .into_iter()
                .map(|c| ContractChange {
                    subject: c.subject,
                    what: c.what,
                    breaking: c.breaking,
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
