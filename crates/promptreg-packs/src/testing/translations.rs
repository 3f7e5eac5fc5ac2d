//! The manifest's `[l10n] required`: for each required locale, every
//! prompt of the pack has a translation that is current, one result each
//! beside the cases of the test files.

use crate::pack::{Pack, Translation};

use super::{CaseFailure, CaseResult};

/// What a translation must be, as a result's expectation names it.
const EXPECTATION: &str = "translation is current";

/// One result per prompt with a default file and required locale.
pub(super) fn results(pack: &Pack) -> Vec<CaseResult> {
    let mut results = Vec::new();
    for locale in &pack.l10n().required {
        for prompt in pack.prompts() {
            let (Some(default), Some(source)) = (prompt.default_file(), prompt.source_text())
            else {
                continue;
            };
            let id = prompt.id();
            let variant = prompt.variant_locale_for(locale);
            let failure = match variant.and_then(|v| Some((v, prompt.translation(v)?))) {
                None => Some(CaseFailure {
                    expectation: EXPECTATION.to_owned(),
                    message: format!(
                        "`{id}` has no `{locale}` translation, which `[l10n] required` asks for; `promptreg l10n export --locale {locale}` gives its text to translate"
                    ),
                    diff: None,
                }),
                Some((_, Translation::Current)) => None,
                Some((variant, Translation::Untracked)) => Some(CaseFailure {
                    expectation: EXPECTATION.to_owned(),
                    message: format!(
                        "the `{variant}` variant of `{id}` records no source, so it may be stale; once it is up to date, run `promptreg l10n mark-current {id} {variant}`"
                    ),
                    diff: None,
                }),
                Some((variant, Translation::Stale { from })) => Some(CaseFailure {
                    expectation: EXPECTATION.to_owned(),
                    message: format!(
                        "the `{variant}` variant of `{id}` is stale: its default changed since it was translated"
                    ),
                    diff: Some(source.diff_since(from)),
                }),
            };
            let file = variant
                .and_then(|v| prompt.variant_file(v))
                .unwrap_or(default);
            results.push(CaseResult {
                prompt: id.clone(),
                case: format!("translation ({locale})"),
                file: file.to_path_buf(),
                locale: locale.clone(),
                text: None,
                failures: failure.into_iter().collect(),
                updated: Vec::new(),
            });
        }
    }
    results
}
