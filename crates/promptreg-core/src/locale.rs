//! [`Locale`]: parsing, normalising, and the CLDR fallback chain.

use std::fmt;
use std::sync::Arc;

use icu_locale::fallback::LocaleFallbacker;
use icu_locale::subtags::{Language, Region};
use icu_locale::{LanguageIdentifier, LocaleCanonicalizer, LocaleExpander, TransformResult};

use crate::error::{Error, ErrorKind};

/// A BCP-47 language tag, normalised, with its fallback chain computed once.
///
/// Tags are accepted in any case and with `_` as well as `-` as separator
/// (`ja_jp`, `zh-tw`, `EN-gb`) and printed in canonical form (`ja-JP`,
/// `zh-TW`, `en-GB`).
///
/// The [fallback chain](Locale::chain) is the tag followed by its CLDR
/// parents, computed by ICU4X: `zh-TW -> zh-Hant` (never Simplified `zh`),
/// `en-GB -> en-001 -> en`, `es-MX -> es-419 -> es`. The chain holds the
/// keys that locale variants are looked up under; Unicode extensions such as
/// `-u-co-phonebk` are kept in the tag but do not take part in matching.
///
/// ```
/// use promptreg_core::Locale;
///
/// let locale = Locale::parse("zh_tw")?;
/// assert_eq!(locale.as_str(), "zh-TW");
/// assert!(locale.chain().eq(["zh-TW", "zh-Hant"]));
///
/// assert!(Locale::parse("en--US").is_err());
/// # Ok::<(), promptreg_core::Error>(())
/// ```
///
/// Cloning is cheap (a reference count).
#[derive(Clone)]
pub struct Locale(Arc<Inner>);

struct Inner {
    tag: Box<str>,
    chain: Box<[Box<str>]>,
    script: Option<Script>,
}

/// The language and likely script of a locale, for matching variants of
/// the same writing system.
struct Script {
    /// `zh-Hant` for `zh-HK`, `pt-Latn` for `pt-PT`.
    key: Box<str>,
    /// Whether the locale's region (explicit or likely) is the one most
    /// likely for its language and script: `zh-TW` for `zh-Hant`,
    /// `pt-BR` for `pt`.
    likely_region: bool,
}

impl Locale {
    /// The fallback locale of a registry that sets none: `en`.
    pub fn default_fallback() -> Locale {
        // `en` is a constant, valid tag; keep a parsed copy to clone.
        static EN: std::sync::OnceLock<Locale> = std::sync::OnceLock::new();
        EN.get_or_init(|| {
            Locale::parse("en").unwrap_or_else(|_| unreachable!("`en` is a valid tag"))
        })
        .clone()
    }

    /// Parses and normalises a tag.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidLocale`] naming the tag.
    pub fn parse(tag: &str) -> Result<Self, Error> {
        let normalised = tag.trim().replace('_', "-");
        let parsed: icu_locale::Locale = normalised.parse().map_err(|e| invalid(tag, e))?;
        if parsed.id.language.is_unknown() {
            return Err(invalid(tag, "the root locale `und` names no language"));
        }
        Ok(Locale(Arc::new(Inner {
            tag: parsed.to_string().into(),
            chain: fallback_chain(&parsed),
            script: script(&parsed.id),
        })))
    }

    /// The normalised tag, e.g. `zh-TW`.
    pub fn as_str(&self) -> &str {
        &self.0.tag
    }

    /// The keys a locale variant is looked up under, most specific first:
    /// the normalised tag (without extensions) and its CLDR parents,
    /// excluding the root.
    pub fn chain(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.chain.iter().map(|key| &**key)
    }

    /// The language and its likely script, from CLDR's likely subtags
    /// (`zh-HK` -> `zh-Hant`, `pt-PT` -> `pt-Latn`, `ja` -> `ja-Jpan`):
    /// the key of the same-script step of a render's locale matching, after
    /// the [chain](Self::chain). `None` when CLDR knows no script for the
    /// language.
    ///
    /// ```
    /// # use promptreg_core::Locale;
    /// assert_eq!(Locale::parse("zh-HK")?.language_script(), Some("zh-Hant"));
    /// assert_eq!(Locale::parse("zh-CN")?.language_script(), Some("zh-Hans"));
    /// assert_eq!(Locale::parse("pt-PT")?.language_script(), Some("pt-Latn"));
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    pub fn language_script(&self) -> Option<&str> {
        self.0.script.as_ref().map(|s| &*s.key)
    }

    /// Whether this locale's region is the likeliest for its language and
    /// script, which ranks it first among same-script variants.
    pub fn has_likely_region(&self) -> bool {
        self.0.script.as_ref().is_some_and(|s| s.likely_region)
    }

    /// The key a variant registered for this locale is stored under: the
    /// first entry of the chain.
    pub fn key(&self) -> &str {
        &self.0.chain[0]
    }

    /// Whether its language is one CLDR knows. `jp` (Japan's country
    /// code) and `xx` are well-formed tags of no language: no locale
    /// variant of a known language matches them.
    ///
    /// ```
    /// # use promptreg_core::Locale;
    /// assert!(Locale::parse("ja-JP")?.names_known_language());
    /// assert!(!Locale::parse("jp")?.names_known_language());
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    pub fn names_known_language(&self) -> bool {
        known_language(self.language_code()) == Some(true)
    }

    /// For a locale of no known language, the tag it most likely stands
    /// for, the rest of the tag kept: the canonical code of an alias
    /// (`jpn-JP` -> `ja-JP`), or the language of a country code (`jp` ->
    /// `ja`).
    ///
    /// ```
    /// # use promptreg_core::Locale;
    /// assert_eq!(Locale::parse("jp")?.likely_meant().as_deref(), Some("ja"));
    /// assert_eq!(Locale::parse("ja")?.likely_meant(), None);
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    pub fn likely_meant(&self) -> Option<String> {
        if self.names_known_language() {
            return None;
        }
        let code = self.language_code();
        let language = language_hint(code)?;
        Some(format!("{language}{}", &self.as_str()[code.len()..]))
    }

    /// The warning for a locale of no known language, written at `place`
    /// (`--locale`, ``the manifest's `default_locale` ``, `the request's
    /// locale`); `None` for a known language. Shared by everything that
    /// takes a locale, so each says it the same way.
    ///
    /// ```
    /// # use promptreg_core::Locale;
    /// let warning = Locale::parse("jp")?.unknown_language_warning("--locale").unwrap();
    /// assert_eq!(
    ///     warning,
    ///     "locale `jp` (--locale) names no known language, so no variant of a known language matches it; did you mean `ja`?"
    /// );
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    pub fn unknown_language_warning(&self, place: &str) -> Option<String> {
        if self.names_known_language() {
            return None;
        }
        let hint = match self.likely_meant() {
            Some(meant) => format!("did you mean `{meant}`?"),
            None => "use an ISO 639 language code such as `en`, `ja` or `zh-Hant`".to_owned(),
        };
        Some(format!(
            "locale `{}` ({place}) names no known language, so no variant of a known language matches it; {hint}",
            self.as_str()
        ))
    }

    fn language_code(&self) -> &str {
        self.as_str().split('-').next().unwrap_or_default()
    }
}

/// `Some(true)` when `code` is a language CLDR knows, `Some(false)` when it
/// is well-formed but unknown, `None` when it is not a language subtag.
fn known_language(code: &str) -> Option<bool> {
    let language: Language = code.parse().ok()?;
    let mut id = LanguageIdentifier::from((language, None, None));
    Some(LocaleExpander::new_extended().maximize(&mut id) == TransformResult::Modified)
}

/// The language an unknown code most likely stands for: the canonical
/// code of an alias (`jpn` -> `ja`), or the language of a country code
/// (`jp` -> `ja`).
fn language_hint(code: &str) -> Option<Language> {
    let mut alias: icu_locale::Locale = code.parse().ok()?;
    if LocaleCanonicalizer::new_extended().canonicalize(&mut alias) == TransformResult::Modified
        && alias.id.language.as_str() != code
        && known_language(alias.id.language.as_str()) == Some(true)
    {
        return Some(alias.id.language);
    }
    let region: Region = code.to_ascii_uppercase().parse().ok()?;
    let mut id = LanguageIdentifier::from((Language::UNKNOWN, None, Some(region)));
    let found = LocaleExpander::new_extended().maximize(&mut id) == TransformResult::Modified;
    (found && !id.language.is_unknown()).then_some(id.language)
}

fn invalid(tag: &str, why: impl fmt::Display) -> Error {
    // ICU's text ("Invalid subtag") reads as part of this sentence.
    let why = why.to_string();
    let mut chars = why.chars();
    let why: String = chars
        .next()
        .map(|first| first.to_lowercase().chain(chars).collect())
        .unwrap_or_default();
    Error::new(
        ErrorKind::InvalidLocale,
        format!(
            "invalid locale `{}` ({why}): expected a BCP-47 tag such as `en`, `ja-JP` or `zh-Hant`",
            tag.escape_debug()
        ),
    )
    .with_locale(tag)
}

/// The language and likely script of `id`, and whether its region is the
/// likeliest for them.
fn script(id: &LanguageIdentifier) -> Option<Script> {
    let expander = LocaleExpander::new_extended();
    let mut full = id.clone();
    expander.maximize(&mut full);
    let script = full.script?;
    let mut typical = LanguageIdentifier::from((full.language, Some(script), None));
    expander.maximize(&mut typical);
    Some(Script {
        key: format!("{}-{script}", full.language).into(),
        likely_region: full.region.is_some() && full.region == typical.region,
    })
}

fn fallback_chain(locale: &icu_locale::Locale) -> Box<[Box<str>]> {
    let fallbacker = LocaleFallbacker::new().for_config(Default::default());
    let mut steps = fallbacker.fallback_for(locale.into());
    let mut chain: Vec<Box<str>> = Vec::new();
    while !steps.get().is_unknown() {
        chain.push(steps.get().to_string().into());
        steps.step();
    }
    if chain.is_empty() {
        // Only the root has an empty chain and `parse` refuses it; keep the
        // invariant that a chain has a first entry all the same.
        chain.push(locale.id.to_string().into());
    }
    chain.into_boxed_slice()
}

impl PartialEq for Locale {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.tag == other.0.tag
    }
}

impl Eq for Locale {}

impl std::hash::Hash for Locale {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.tag.hash(state);
    }
}

impl fmt::Display for Locale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.tag)
    }
}

/// A locale serialises as its normalised tag (`"zh-TW"`).
impl serde::Serialize for Locale {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0.tag)
    }
}

impl fmt::Debug for Locale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Locale({})", self.0.tag)
    }
}

impl std::str::FromStr for Locale {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Locale::parse(s)
    }
}

/// Anything a locale can be taken from: a [`Locale`] (no work) or a tag
/// (`&str`, `String`) that is parsed first.
///
/// Methods that take a locale accept any of these, so both
/// `registry.set_locale("ja")` and `registry.set_locale(&parsed)` work.
pub trait IntoLocale {
    /// Converts, parsing a tag when needed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidLocale`] for a tag that does not parse.
    fn into_locale(self) -> Result<Locale, Error>;

    /// The locale without converting, when it is one already: renders use
    /// it by reference instead of cloning.
    #[doc(hidden)]
    fn as_parsed(&self) -> Option<&Locale> {
        None
    }
}

impl IntoLocale for Locale {
    fn into_locale(self) -> Result<Locale, Error> {
        Ok(self)
    }

    fn as_parsed(&self) -> Option<&Locale> {
        Some(self)
    }
}

impl IntoLocale for &Locale {
    fn into_locale(self) -> Result<Locale, Error> {
        Ok(self.clone())
    }

    fn as_parsed(&self) -> Option<&Locale> {
        Some(self)
    }
}

impl IntoLocale for &str {
    fn into_locale(self) -> Result<Locale, Error> {
        Locale::parse(self)
    }
}

impl IntoLocale for String {
    fn into_locale(self) -> Result<Locale, Error> {
        Locale::parse(&self)
    }
}

impl IntoLocale for &String {
    fn into_locale(self) -> Result<Locale, Error> {
        Locale::parse(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(tag: &str) -> Vec<String> {
        let locale = Locale::parse(tag).unwrap();
        locale.chain().map(str::to_owned).collect()
    }

    #[test]
    fn normalises_case_and_underscores() {
        for (input, expected) in [
            ("ja_jp", "ja-JP"),
            ("zh-tw", "zh-TW"),
            ("EN-gb", "en-GB"),
            ("zh_hant_tw", "zh-Hant-TW"),
            (" fr ", "fr"),
        ] {
            assert_eq!(Locale::parse(input).unwrap().as_str(), expected);
        }
    }

    #[test]
    fn follows_cldr_parents() {
        assert_eq!(chain("zh-TW"), ["zh-TW", "zh-Hant"]);
        assert_eq!(chain("en-GB"), ["en-GB", "en-001", "en"]);
        assert_eq!(chain("es-MX"), ["es-MX", "es-419", "es"]);
        assert_eq!(chain("ja-JP"), ["ja-JP", "ja"]);
        assert_eq!(chain("fr"), ["fr"]);
    }

    #[test]
    fn traditional_chinese_never_falls_back_to_simplified() {
        assert!(!chain("zh-TW").contains(&"zh".to_string()));
        assert!(!chain("zh-Hant-HK").contains(&"zh".to_string()));
    }

    #[test]
    fn default_script_is_folded_into_the_key() {
        // `zh-Hans` is `zh`: a variant stored for one is found for the other.
        assert_eq!(Locale::parse("zh-Hans").unwrap().key(), "zh");
        assert_eq!(chain("zh-CN"), ["zh-CN", "zh"]);
    }

    #[test]
    fn extensions_are_kept_in_the_tag_but_not_matched() {
        let locale = Locale::parse("de-CH-u-co-phonebk").unwrap();
        assert_eq!(locale.as_str(), "de-CH-u-co-phonebk");
        assert_eq!(chain("de-CH-u-co-phonebk"), ["de-CH", "de"]);
    }

    #[test]
    fn refuses_invalid_tags_naming_them() {
        for tag in ["en--US", "x", "", "123", "und", "a b", "en-US-"] {
            let err = Locale::parse(tag).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidLocale, "{tag:?}");
            assert_eq!(err.locale(), Some(tag));
        }
    }

    #[test]
    fn the_same_script_key_comes_from_likely_subtags() {
        let script = |tag: &str| {
            Locale::parse(tag)
                .unwrap()
                .language_script()
                .map(str::to_owned)
        };
        assert_eq!(script("zh-HK").as_deref(), Some("zh-Hant"));
        assert_eq!(script("zh-TW").as_deref(), Some("zh-Hant"));
        assert_eq!(script("zh-CN").as_deref(), Some("zh-Hans"));
        assert_eq!(script("zh").as_deref(), Some("zh-Hans"));
        assert_eq!(script("pt-PT").as_deref(), Some("pt-Latn"));
        assert_eq!(script("sr-Latn").as_deref(), Some("sr-Latn"));
        assert_eq!(script("sr").as_deref(), Some("sr-Cyrl"));
    }

    #[test]
    fn the_likely_region_is_known_for_each_script() {
        let likely = |tag: &str| Locale::parse(tag).unwrap().has_likely_region();
        assert!(likely("zh-TW"));
        assert!(!likely("zh-HK"));
        assert!(likely("pt-BR"));
        assert!(!likely("pt-PT"));
        assert!(likely("ja-JP"));
    }
}
