//! Which of a key's `<key>.<locale>.md` files a render in a locale uses:
//! one rule for the loaded layer and the stateless resolver, the core's
//! locale matching ([`match_locale`]) over the files' locales, as for a
//! prompt's variants: the locale's chain, a file of the same language and
//! script (the likeliest region first, then by tag), then the fallback
//! locale's chain.

use crate::locale::Locale;
use crate::locale_match::{match_locale, script_index};

/// The file of `files` (each with its locale) a render in `locale` uses,
/// `fallback` being the registry's fallback locale; `None`: the key's
/// plain file, if any.
pub(crate) fn pick<'f, F>(
    locale: &Locale,
    fallback: &Locale,
    files: &'f [(Locale, F)],
) -> Option<&'f F> {
    if files.is_empty() {
        return None;
    }
    let by_script = script_index(files.iter().map(|(l, _)| l));
    let keyed = |key: &str| files.iter().find(|(l, _)| l.key() == key).map(|(_, f)| f);
    match_locale(locale, fallback, &by_script, keyed).map(|(file, _)| file)
}
