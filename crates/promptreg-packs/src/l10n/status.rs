//! Coverage: per locale, which prompts are translated, how freshly, and
//! what a render in that locale serves for the others.

use serde::Serialize;

use crate::id::PromptId;
use crate::locale::Locale;
use crate::locale_match::LocaleStep;
use crate::pack::{PSEUDO_LOCALE, Pack, Translation};
use crate::registry::PromptRegistry;

/// The translation status of a pack, one entry per locale.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// The pack's name.
    pub pack: String,
    /// The pack's default locale: what untranslated prompts serve.
    pub default_locale: Locale,
    /// One per locale, sorted.
    pub locales: Vec<LocaleStatus>,
}

/// One locale's coverage.
#[derive(Debug, Clone, Serialize)]
pub struct LocaleStatus {
    /// The locale.
    pub locale: Locale,
    /// Whether `[l10n] required` names it.
    pub required: bool,
    /// Prompts with a default file.
    pub prompts: usize,
    /// Prompts with a variant for this locale (its own, or a CLDR
    /// parent's): current, stale or untracked.
    pub translated: usize,
    /// Of those, translated from the default's current text.
    pub current: usize,
    /// Of those, translated from an older text.
    pub stale: usize,
    /// Of those, recording no source.
    pub untracked: usize,
    /// Prompts without a variant of their own, which fall back.
    pub falling_back: usize,
    /// Every prompt, by id.
    pub entries: Vec<PromptStatus>,
}

/// One prompt in one locale.
#[derive(Debug, Clone, Serialize)]
pub struct PromptStatus {
    /// The prompt.
    pub prompt: PromptId,
    /// Where its translation stands.
    pub state: Coverage,
    /// The locale of the variant a render in this locale serves, `None`
    /// for the default.
    pub serves: Option<Locale>,
    /// The step of locale matching that found it (the same steps
    /// `explain` shows); `None` for the default.
    pub step: Option<LocaleStep>,
}

/// Where the translation of one prompt into one locale stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coverage {
    /// A variant along the locale's chain translates the default's current
    /// text.
    Current,
    /// It translates an older text.
    Stale,
    /// It records no source.
    Untracked,
    /// No variant along the chain: renders fall back.
    Missing,
}

impl Coverage {
    /// `current`, `stale`, `untracked`, `missing`.
    pub fn as_str(self) -> &'static str {
        match self {
            Coverage::Current => "current",
            Coverage::Stale => "stale",
            Coverage::Untracked => "untracked",
            Coverage::Missing => "missing",
        }
    }
}

impl Status {
    /// The status of `pack`, installed in `registry` (for locale matching),
    /// for `locales`; when empty, the manifest's `[l10n] locales` and every
    /// locale a variant is for.
    pub fn of(pack: &Pack, registry: &PromptRegistry, locales: &[Locale]) -> Status {
        let locales = match locales.is_empty() {
            true => known_locales(pack),
            false => locales.to_vec(),
        };
        let snapshot = registry.snapshot();
        let locales = locales
            .into_iter()
            .map(|locale| {
                let mut status = LocaleStatus {
                    required: pack.l10n().required.contains(&locale),
                    locale: locale.clone(),
                    prompts: 0,
                    translated: 0,
                    current: 0,
                    stale: 0,
                    untracked: 0,
                    falling_back: 0,
                    entries: Vec::new(),
                };
                for prompt in pack.prompts().filter(|p| p.default_file().is_some()) {
                    let own = prompt.variant_locale_for(&locale);
                    let state = match own.and_then(|v| prompt.translation(v)) {
                        Some(Translation::Current) => Coverage::Current,
                        Some(Translation::Stale { .. }) => Coverage::Stale,
                        Some(Translation::Untracked) => Coverage::Untracked,
                        None => Coverage::Missing,
                    };
                    let matched = snapshot
                        .locale_lookup(prompt.id(), locale.clone())
                        .ok()
                        .and_then(|lookup| lookup.matched);
                    status.prompts += 1;
                    match state {
                        Coverage::Current => status.current += 1,
                        Coverage::Stale => status.stale += 1,
                        Coverage::Untracked => status.untracked += 1,
                        Coverage::Missing => status.falling_back += 1,
                    }
                    status.entries.push(PromptStatus {
                        prompt: prompt.id().clone(),
                        state,
                        serves: matched.as_ref().map(|m| m.locale.clone()),
                        step: matched.map(|m| m.step),
                    });
                }
                status.translated = status.current + status.stale + status.untracked;
                status
            })
            .collect();
        Status {
            pack: pack.name().to_owned(),
            default_locale: pack.default_locale().clone(),
            locales,
        }
    }
}

/// The manifest's `[l10n] locales` and every locale with a variant, except
/// the pack's default locale and the generated pseudo-locale, sorted.
fn known_locales(pack: &Pack) -> Vec<Locale> {
    let mut locales: Vec<Locale> = pack.l10n().locales.clone();
    for prompt in pack.prompts() {
        for (locale, _) in prompt.variants() {
            if !locales.contains(locale) {
                locales.push(locale.clone());
            }
        }
    }
    let pseudo = pack.l10n().pseudo;
    locales.retain(|l| l != pack.default_locale() && !(pseudo && l.as_str() == PSEUDO_LOCALE));
    locales.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    locales
}
