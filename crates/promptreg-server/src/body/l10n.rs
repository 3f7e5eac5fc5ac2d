//! The bodies of the translation routes.

use std::collections::BTreeMap;

use promptreg::l10n::Status;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Per locale, at `latest`: how far the pack is translated.
#[derive(Debug, Serialize, ToSchema)]
pub struct TranslationStatus {
    /// The pack.
    pub pack: String,
    /// What untranslated prompts serve.
    pub default_locale: String,
    /// One per locale, sorted.
    pub locales: Vec<LocaleCoverage>,
}

/// One locale's coverage.
#[derive(Debug, Serialize, ToSchema)]
pub struct LocaleCoverage {
    /// The locale.
    pub locale: String,
    /// Whether the manifest's `[l10n] required` names it.
    pub required: bool,
    /// Prompts with a default file.
    pub prompts: usize,
    /// Prompts with a variant along the locale's chain.
    pub translated: usize,
    /// Of those, translated from the default's current text.
    pub current: usize,
    /// Of those, translated from an older text.
    pub stale: usize,
    /// Of those, recording no source.
    pub untracked: usize,
    /// Prompts without a variant, which fall back.
    pub falling_back: usize,
    /// Every prompt.
    pub entries: Vec<PromptCoverage>,
}

/// One prompt in one locale.
#[derive(Debug, Serialize, ToSchema)]
pub struct PromptCoverage {
    /// The prompt.
    pub prompt: String,
    /// `current`, `stale`, `untracked` or `missing`.
    pub state: String,
    /// The locale of the variant a render serves; `null` for the default.
    pub serves: Option<String>,
    /// The step of locale matching that found it (`exact`, `parent`,
    /// `same-script`, `fallback`).
    pub step: Option<String>,
}

impl From<&Status> for TranslationStatus {
    fn from(status: &Status) -> Self {
        let step = |s: &promptreg::LocaleStep| {
            serde_json::to_value(s)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
        };
        TranslationStatus {
            pack: status.pack.clone(),
            default_locale: status.default_locale.to_string(),
            locales: status
                .locales
                .iter()
                .map(|l| LocaleCoverage {
                    locale: l.locale.to_string(),
                    required: l.required,
                    prompts: l.prompts,
                    translated: l.translated,
                    current: l.current,
                    stale: l.stale,
                    untracked: l.untracked,
                    falling_back: l.falling_back,
                    entries: l
                        .entries
                        .iter()
                        .map(|e| PromptCoverage {
                            prompt: e.prompt.to_string(),
                            state: e.state.as_str().to_owned(),
                            serves: e.serves.as_ref().map(ToString::to_string),
                            step: e.step.as_ref().and_then(step),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

/// A translated file to write back.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TranslationImport {
    /// The XLIFF or PO file, as `GET …/l10n/{locale}` gave it and a
    /// translator's tool changed it.
    pub file: String,
    /// Why, recorded with the versions written.
    #[serde(default)]
    pub message: String,
}

/// What an import wrote.
#[derive(Debug, Serialize, ToSchema)]
pub struct Imported {
    /// The pack.
    pub pack: String,
    /// The locale.
    pub locale: String,
    /// The variant files written, by path in the pack.
    pub written: Vec<String>,
    /// The prompts left as they were: not every unit is translated.
    pub incomplete: Vec<IncompletePrompt>,
    /// The new version of each prompt written.
    pub versions: BTreeMap<String, u64>,
    /// What a reviewer should look at in the file's translations (one
    /// with bidirectional-text controls), one sentence each.
    pub warnings: Vec<String>,
}

/// A prompt not imported.
#[derive(Debug, Serialize, ToSchema)]
pub struct IncompletePrompt {
    /// The prompt.
    pub prompt: String,
    /// Its units still to translate (`goal-running:body`).
    pub units: Vec<String>,
}
