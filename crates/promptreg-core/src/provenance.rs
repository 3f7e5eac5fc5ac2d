//! [`Provenance`]: where a part of a prompt came from, recorded by the
//! source that contributed it, so a trace can say so without the core
//! knowing any source.

use std::path::PathBuf;

use serde::Serialize;

use crate::locale::Locale;

/// What kind of source contributed a part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SourceKind {
    /// Registered by the application's code.
    Code,
    /// Declared in a pack's files.
    Pack,
    /// The end user's configuration: settings and prompt files.
    User,
}

/// The settings entry that chose a part: a file and a key path in it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub struct Setting {
    /// The settings file.
    pub file: PathBuf,
    /// The key path, such as `prompts.auditor`.
    pub key_path: String,
    /// Where the entry starts, from 1.
    pub line: usize,
    /// Its column in characters, from 1.
    pub column: usize,
}

impl Setting {
    /// The entry at `key_path` of `file`, starting on `line` and `column`
    /// (from 1).
    pub fn new(file: PathBuf, key_path: String, line: usize, column: usize) -> Self {
        Setting {
            file,
            key_path,
            line,
            column,
        }
    }
}

/// Where a part of a prompt came from.
///
/// Sources record it when they contribute a part; a traced render hands it
/// out with the part ([`Part::provenance`](crate::Part::provenance)), and
/// `promptreg explain` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub struct Provenance {
    /// The kind of source.
    pub source: SourceKind,
    /// How the source names this part, for a person: `default file`,
    /// `locale variant`, `local file`, `inline setting`.
    pub what: String,
    /// The file the part was read from, as found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// The file actually read, when `file` is a symbolic link (or its path
    /// holds `..`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<PathBuf>,
    /// The locale the file is for (`auditor.ja.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<Locale>,
    /// The mode in force, for a block of the user's configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The settings entry that configured the part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chosen_by: Option<Setting>,
    /// The version of the part's prompt in the store it came from: a pack
    /// followed on a server (`PromptRegistry::follow`) stamps each file's
    /// parts with its prompt's version at the label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// That version's content digest (SHA-256, hex), from the same store.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The label followed, for a part of a followed pack.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The label's revision the bundle in force is, when the server named
    /// it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
    /// The split whose candidate the part is, served to the split's share
    /// of subjects ([`PromptRegistry::render_for`](crate::PromptRegistry::render_for)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<u64>,
    /// A locale variant translated from an older text of its default
    /// (`pack::Translation::Stale`): the default changed since.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
}

impl Provenance {
    /// A provenance of `source`, named `what`.
    pub fn new(source: SourceKind, what: impl Into<String>) -> Self {
        Provenance {
            source,
            what: what.into(),
            file: None,
            target: None,
            locale: None,
            mode: None,
            chosen_by: None,
            version: None,
            digest: None,
            label: None,
            revision: None,
            split: None,
            stale: false,
        }
    }

    /// Names the file the part was read from.
    pub fn file(mut self, file: impl Into<PathBuf>) -> Self {
        self.file = Some(file.into());
        self
    }
}
