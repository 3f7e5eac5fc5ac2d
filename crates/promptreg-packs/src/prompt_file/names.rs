//! Prompt file names: listing a folder's `*.md` files and reading
//! `<id>[.<locale>].md`.

use std::fs;
use std::io;
use std::path::Path;

use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::error::Error;
use crate::id::PromptId;
use crate::locale::Locale;

/// The names of the `*.md` files in `dir`, sorted; `None` when the folder
/// does not exist. Names that are not UTF-8 cannot be a prompt id and are
/// left out, and so is a bare `.md`, which names nothing.
pub(crate) fn markdown_names(dir: &Path) -> io::Result<Option<Vec<String>>> {
    names_ending(dir, &[".md"])
}

/// The names of the files in `dir` ending in one of `endings` (`.md`,
/// `.yaml`), sorted, as [`markdown_names`] lists them.
pub(crate) fn names_ending(dir: &Path, endings: &[&str]) -> io::Result<Option<Vec<String>>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| {
            endings
                .iter()
                .any(|end| name.len() > end.len() && name.ends_with(end))
        })
        .collect();
    names.sort_unstable();
    Ok(Some(names))
}

/// The ids a source declares, which decide how a file name splits.
pub(crate) trait DeclaredIds {
    /// Whether `id` is declared exactly (not through a pattern).
    fn is_exact(&self, id: &str) -> bool;
    /// Whether `id` is declared exactly or matches a pattern.
    fn is_known(&self, id: &str) -> bool;
}

/// What a prompt file name stands for; see [`file_key`].
pub(crate) enum FileKey<'a> {
    /// A declared key, and the locale of a `<key>.<locale>.md` file.
    Key(PromptId, Option<Locale>),
    /// A name that matches a pattern but is not a valid id.
    #[cfg_attr(not(feature = "packs"), allow(dead_code))]
    Invalid(Error),
    /// No declared key: `key` is the part before any locale suffix.
    Unknown {
        key: &'a str,
        locale_suffix: &'a str,
    },
}

/// What the prompt file name `<stem>.md` stands for, given the declared
/// `ids`: `<key>` or
/// `<key>.<locale>`. Ids may contain dots, so an exact key naming the
/// whole stem wins. A pattern such as `tool-*` matches `tool-x.ja` as a
/// whole too: there a suffix naming a known language makes a variant
/// (`tool-x.ja.md`), and any other suffix is part of the id
/// (`tool-x.system.md`).
pub(crate) fn file_key<'a>(ids: &impl DeclaredIds, stem: &'a str) -> FileKey<'a> {
    let as_id = |key: &str, locale| match PromptId::new(key) {
        Ok(id) => FileKey::Key(id, locale),
        Err(e) => FileKey::Invalid(e),
    };
    if ids.is_exact(stem) {
        return as_id(stem, None);
    }
    let split = stem
        .rsplit_once('.')
        .and_then(|(key, tag)| Some((key, Locale::parse(tag).ok()?)));
    let whole_is_key = ids.is_known(stem);
    match split {
        Some((key, locale))
            if ids.is_known(key) && (!whole_is_key || locale.names_known_language()) =>
        {
            as_id(key, Some(locale))
        }
        _ if whole_is_key => as_id(stem, None),
        Some((key, _)) => FileKey::Unknown {
            key,
            locale_suffix: &stem[key.len()..],
        },
        None => FileKey::Unknown {
            key: stem,
            locale_suffix: "",
        },
    }
}

/// A warning when the locale of a file name (`chef.system.jp.md`) is
/// well-formed but names no language: no render will ever use the file.
///
/// ICU's likely-subtags data (in `icu_locale`, already used for the
/// fallback chain) tells a known language: maximising it succeeds. A list of
/// ISO 639 codes would add data to keep in step with CLDR, and edit distance
/// over two-letter codes finds nothing useful (`jp` is as close to `ja` as to
/// `hu`). The same data gives better hints: the common mistake is a country
/// code (`jp`, `cn`, `kr`, `se`), whose likely language ICU knows
/// (`und-JP` -> `ja`), and an ISO 639-2 alias (`jpn`) canonicalises to the
/// code that matching uses.
pub(crate) fn file_locale_warning(
    id: &PromptId,
    locale: &Locale,
    path: &Path,
) -> Option<Diagnostic> {
    if locale.names_known_language() {
        return None;
    }
    let tag = locale.as_str();
    let hint = locale
        .likely_meant()
        .map(|meant| format!("did you mean `{meant}`? name the file `{id}.{meant}.md`"));
    Some(
        Diagnostic::warning(
            DiagnosticCode::UnknownLanguage,
            format!("locale `{tag}` in the file name names no known language, so no render uses this file"),
        )
        .in_file(path)
        .suggest(hint.or_else(|| {
            Some("use an ISO 639 language code such as `en`, `ja` or `zh-Hant`".to_owned())
        })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigSpec;

    #[test]
    fn file_names_split_a_locale_only_where_it_names_a_language() {
        let spec = ConfigSpec::builder("app")
            .keys(["planner.system", "chef"])
            .key_pattern("tool-*")
            .prompts_dir(".app")
            .build()
            .unwrap();
        let read = |stem| match file_key(&spec, stem) {
            FileKey::Key(id, locale) => {
                format!("{id} {}", locale.map_or("-".into(), |l| l.to_string()))
            }
            FileKey::Invalid(e) => format!("invalid: {e}"),
            FileKey::Unknown { key, .. } => format!("unknown {key}"),
        };
        assert_eq!(read("planner.system"), "planner.system -");
        assert_eq!(read("planner.system.ja"), "planner.system ja");
        // An exact key takes any well-formed locale (`check` warns about `jp`).
        assert_eq!(read("chef.jp"), "chef jp");
        assert_eq!(read("tool-x.ja"), "tool-x ja");
        assert_eq!(read("tool-x.zh-TW"), "tool-x zh-TW");
        assert_eq!(read("tool-x.system"), "tool-x.system -");
        // Well-formed but no language: part of a pattern key's id.
        assert_eq!(read("tool-x.jp"), "tool-x.jp -");
        assert_eq!(read("tool-x"), "tool-x -");
        assert_eq!(read("planer.system"), "unknown planer.system");
        assert_eq!(read("planer.system.ja"), "unknown planer.system");
    }

    #[test]
    fn markdown_names_are_sorted_and_a_missing_folder_is_none() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.md", "a.ja.md", "notes.txt", "c.md", ".md", "d.MD"] {
            fs::write(dir.path().join(name), "x").unwrap();
        }
        assert_eq!(
            markdown_names(dir.path()).unwrap().unwrap(),
            ["a.ja.md", "b.md", "c.md"]
        );
        assert_eq!(markdown_names(&dir.path().join("missing")).unwrap(), None);
    }
}
