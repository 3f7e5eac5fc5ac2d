//! Locale matching, in one place: the steps a render tries for a locale
//! (its CLDR chain, the same language and script, the fallback locale's
//! chain), the steps as data for `explain`, and the match itself. Prompts,
//! their pinned blocks and model settings, and a pack's snippets all match
//! through [`match_locale`].

use std::fmt;

use serde::Serialize;

use crate::Map;
use crate::locale::Locale;

/// Which step of locale matching found a locale variant (an override of
/// the body or a translation of a pinned block).
///
/// The steps, in the order a render tries them: the render locale itself,
/// its CLDR parents ([`Locale::chain`]), a variant of the same language and
/// script ([`Locale::language_script`]), the fallback locale and its
/// parents. When none matches, the default is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum LocaleStep {
    /// The render locale itself (`ja-JP` for `ja-JP`).
    Exact,
    /// A CLDR parent of the render locale (`ja` for `ja-JP`, `zh-Hant`
    /// for `zh-TW`).
    Parent,
    /// A variant of the same language and script (`zh-TW` for `zh-HK`,
    /// `pt-BR` for `pt-PT`).
    SameScript,
    /// The fallback locale or one of its CLDR parents.
    Fallback,
}

impl fmt::Display for LocaleStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LocaleStep::Exact => "the render locale",
            LocaleStep::Parent => "a CLDR parent of the render locale",
            LocaleStep::SameScript => "the same language and script as the render locale",
            LocaleStep::Fallback => "the fallback locale",
        })
    }
}

/// The locale variant a pinned block was translated by, and how it was
/// matched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LocaleMatch {
    /// The locale the translation was registered for.
    pub locale: Locale,
    /// The step of locale matching that found it.
    pub step: LocaleStep,
}

/// One step of locale matching, in the order a render tries them: a key
/// variants are looked up under and the step it belongs to. The
/// same-script step's key is the language and script (`zh-Hant`): any
/// variant of that script matches it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LookupStep {
    /// The locale key, or the language and script for the same-script step.
    pub key: String,
    /// Which step it is.
    pub step: LocaleStep,
}

/// The steps of locale matching for `locale`, with `fallback` as the
/// fallback locale: its chain, its language and script, then the fallback
/// locale's chain (keys already tried left out).
pub fn lookup(locale: &Locale, fallback: &Locale) -> Vec<LookupStep> {
    let step = |key: &str, step| LookupStep {
        key: key.to_owned(),
        step,
    };
    let mut steps: Vec<LookupStep> = locale
        .chain()
        .enumerate()
        .map(|(i, key)| match i {
            0 => step(key, LocaleStep::Exact),
            _ => step(key, LocaleStep::Parent),
        })
        .collect();
    if let Some(script) = locale.language_script() {
        steps.push(step(script, LocaleStep::SameScript));
    }
    for key in fallback.chain() {
        if !locale.chain().any(|own| own == key) {
            steps.push(step(key, LocaleStep::Fallback));
        }
    }
    steps
}

/// How a render finds its body for one locale, from
/// [`Snapshot::locale_lookup`](crate::Snapshot::locale_lookup): the steps
/// of locale matching and the variant they find.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LocaleLookup {
    /// The locale asked for.
    pub locale: Locale,
    /// The steps of locale matching, in the order they are tried.
    pub steps: Vec<LookupStep>,
    /// The locale variant found, and at which step; `None`: the default.
    pub matched: Option<LocaleMatch>,
}

/// The same-script step of locale matching, as data: the locale keys of
/// `locales` by language and script (`zh-Hant`), likeliest region first,
/// then by tag. Computed when variants are set, so a render only looks it
/// up.
pub fn script_index<'a>(
    locales: impl IntoIterator<Item = &'a Locale>,
) -> Map<Box<str>, Box<[Box<str>]>> {
    let mut groups: Map<Box<str>, Vec<&Locale>> = Map::default();
    for locale in locales {
        if let Some(script) = locale.language_script() {
            groups.entry(script.into()).or_default().push(locale);
        }
    }
    groups
        .into_iter()
        .map(|(script, mut locales)| {
            locales.sort_by(|a, b| {
                (!a.has_likely_region(), a.key()).cmp(&(!b.has_likely_region(), b.key()))
            });
            let mut keys: Vec<Box<str>> = locales.iter().map(|l| l.key().into()).collect();
            keys.dedup();
            (script, keys.into_boxed_slice())
        })
        .collect()
}

/// Locale matching: the first variant `get` finds for a render in
/// `locale`, with the step that found it: the render locale, its CLDR
/// parents, variants of the same language and script (`by_script`, from
/// [`script_index`]), the `fallback` locale's chain. Prompts, their pins
/// and model settings, and a pack's snippets all match this way. Plain
/// loops: this runs on every render.
#[inline]
pub fn match_locale<T>(
    locale: &Locale,
    fallback: &Locale,
    by_script: &Map<Box<str>, Box<[Box<str>]>>,
    get: impl Fn(&str) -> Option<T>,
) -> Option<(T, LocaleStep)> {
    for (i, key) in locale.chain().enumerate() {
        if let Some(found) = get(key) {
            let step = if i == 0 {
                LocaleStep::Exact
            } else {
                LocaleStep::Parent
            };
            return Some((found, step));
        }
    }
    let same_script = locale
        .language_script()
        .and_then(|script| by_script.get(script));
    for key in same_script.into_iter().flat_map(|keys| keys.iter()) {
        if let Some(found) = get(key) {
            return Some((found, LocaleStep::SameScript));
        }
    }
    fallback
        .chain()
        .find_map(|key| Some((get(key)?, LocaleStep::Fallback)))
}
