//! The locale matrix: for each locale, the variant a render gets and the
//! steps of locale matching that lead to it, as `explain` shows them.

use std::collections::BTreeSet;

use promptreg::pack::{Pack, Translation};
use promptreg::{Locale, LocaleStep, PromptRegistry};
use serde::Serialize;

/// Typed-in locales shown at most.
const MAX_TYPED: usize = 20;

/// One row of the matrix.
#[derive(Debug, Serialize)]
pub(crate) struct LocaleRow {
    locale: String,
    /// The file a render gets, or `default`.
    variant: String,
    /// The steps, each with whether it is the one that matched, ending
    /// with `default`.
    steps: Vec<(String, bool)>,
    /// Why it is not a locale (an invalid tag typed in).
    error: Option<String>,
    /// For a variant of the prompt's own: `current`, `stale` or
    /// `untracked`.
    pub(crate) translation: Option<&'static str>,
    /// For a stale one: the default's change since the text it
    /// translates, and that text's digest.
    pub(crate) stale: Option<Stale>,
    /// The version of the prompt since which it is stale, when the store
    /// still has the one it translates.
    pub(crate) stale_since: Option<u64>,
}

/// What a translator must carry over.
#[derive(Debug, Serialize)]
pub(crate) struct Stale {
    pub(crate) diff: String,
    /// The digest of the default's text the variant translates.
    #[serde(skip)]
    pub(crate) from_digest: String,
}

/// Every locale the pack has variants for (and its default locale), then
/// the locales typed in (`zh-HK, pt-PT`).
pub(crate) fn matrix(
    pack: &Pack,
    registry: &PromptRegistry,
    id: &str,
    typed: &str,
) -> Vec<LocaleRow> {
    let mut own: BTreeSet<String> = pack
        .prompts()
        .flat_map(|p| p.variants().map(|(l, _)| l.as_str().to_owned()))
        .collect();
    own.insert(pack.default_locale().as_str().to_owned());
    let typed: Vec<&str> = typed
        .split([',', ' '])
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .take(MAX_TYPED)
        .collect();
    let mut rows: Vec<LocaleRow> = own.iter().map(|l| row(pack, registry, id, l)).collect();
    for tag in typed {
        if !own.contains(tag) && !rows.iter().any(|r| r.locale == tag) {
            rows.push(row(pack, registry, id, tag));
        }
    }
    rows
}

fn row(pack: &Pack, registry: &PromptRegistry, id: &str, tag: &str) -> LocaleRow {
    let lookup = Locale::parse(tag).and_then(|l| registry.snapshot().locale_lookup(id, l));
    let found = match lookup {
        Ok(found) => found,
        Err(e) => {
            return LocaleRow {
                locale: tag.to_owned(),
                variant: String::new(),
                steps: Vec::new(),
                error: Some(e.to_string()),
                translation: None,
                stale: None,
                stale_since: None,
            };
        }
    };
    let matched = found.matched.as_ref();
    let mut steps: Vec<(String, bool)> = found
        .steps
        .iter()
        .map(|step| match matched {
            Some(m) if m.step == step.step && m.step == LocaleStep::SameScript => {
                (m.locale.as_str().to_owned(), true)
            }
            Some(m) if m.step == step.step && m.locale.as_str() == step.key => {
                (step.key.clone(), true)
            }
            _ if step.step == LocaleStep::SameScript => {
                (format!("same script ({})", step.key), false)
            }
            _ => (step.key.clone(), false),
        })
        .collect();
    steps.push(("default".to_owned(), matched.is_none()));
    let variant = matched
        .and_then(|m| pack.prompt(id)?.variant_file(&m.locale))
        .map(|file| {
            file.strip_prefix(pack.root())
                .unwrap_or(file)
                .display()
                .to_string()
        })
        .unwrap_or_else(|| "default".to_owned());
    let prompt = pack.prompt(id);
    let translation = matched.and_then(|m| prompt?.translation(&m.locale));
    let stale = match (translation, prompt.and_then(|p| p.source_text())) {
        (Some(Translation::Stale { from }), Some(now)) => Some(Stale {
            diff: now.diff_since(from),
            from_digest: from.digest(),
        }),
        _ => None,
    };
    LocaleRow {
        locale: found.locale.as_str().to_owned(),
        variant,
        steps,
        error: None,
        translation: translation.map(Translation::as_str),
        stale,
        stale_since: None,
    }
}
