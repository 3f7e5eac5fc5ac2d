//! [`check`]: every problem of a configuration, without loading it.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use icu_locale::subtags::{Language, Region};
use icu_locale::{LanguageIdentifier, LocaleCanonicalizer, LocaleExpander, TransformResult};

use super::layer::UserLayer;
use super::options::LoadOptions;
use super::settings;
use super::spec::ConfigSpec;
use crate::diagnostic::{Diagnostic, DiagnosticCode, LineIndex};
use crate::front_matter::Document;
use crate::id::PromptId;
use crate::locale::Locale;
use crate::renderer::Renderer;
use crate::template::Template;

/// Reads `spec`'s configuration for `options` and returns every diagnostic,
/// errors and warnings, without loading anything anywhere.
///
/// Besides the settings problems that stop a load, it warns about prompt
/// files whose name matches no key (a typo such as `goal-runing.md` is
/// otherwise never read), legacy keys shadowed by an explicit block, empty
/// prompt files, `inline` text beside a mode other than `override` (the
/// mode has no effect), a `file` setting naming a missing or empty file,
/// `{{` or `{%` in a file not marked as a template, a file-name locale that
/// names no language, and declared template variables nothing uses.
///
/// ```
/// use promptreg::config::{check, ConfigSpec, LoadOptions};
/// use promptreg::DiagnosticCode;
/// # let home = tempfile::tempdir()?;
/// # let cwd = tempfile::tempdir()?;
/// std::fs::create_dir_all(cwd.path().join(".app/prompts"))?;
/// std::fs::write(cwd.path().join(".app/prompts/goal-runing.md"), "Be brief.")?;
///
/// let spec = ConfigSpec::builder("app").key("goal-running").prompts_dir(".app/prompts").build()?;
/// let diagnostics = check(&spec, &LoadOptions::new(home.path(), cwd.path()));
///
/// assert_eq!(diagnostics[0].code, DiagnosticCode::UnknownPromptFile);
/// assert_eq!(diagnostics[0].suggestion.as_deref(), Some("did you mean `goal-running.md`?"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check(spec: &ConfigSpec, options: &LoadOptions) -> Vec<Diagnostic> {
    UserLayer::load(Arc::new(spec.clone()), options.clone()).1
}

/// Validates `text` as the settings file at `path` would be, without
/// reading anything: every diagnostic, for an editor checking a buffer
/// before it is saved.
///
/// ```
/// use promptreg::config::{check_settings, ConfigSpec};
///
/// let spec = ConfigSpec::builder("app").key("auditor").prompts_dir(".app/prompts").build()?;
/// let diagnostics = check_settings(&spec, "settings.json", r#"{ "prompts": { "auditor": { "mode": "apend" } } }"#);
/// assert_eq!(diagnostics[0].suggestion.as_deref(), Some("did you mean `append`?"));
/// # Ok::<(), promptreg::Error>(())
/// ```
pub fn check_settings(spec: &ConfigSpec, path: impl AsRef<Path>, text: &str) -> Vec<Diagnostic> {
    settings::parse(text, path.as_ref(), spec).1
}

// --- Warnings about prompt files, shared by user files and pack files -----

/// Warnings about one prompt file that loads but will not do what its
/// author meant: template syntax in a file that is not a template, and
/// declared variables that none of `parts` (the file's body and pinned
/// blocks, compiled) uses.
pub(crate) fn prompt_file_warnings(
    doc: &Document<'_>,
    text: &str,
    path: &Path,
    parts: &[&Renderer],
) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    warnings.extend(literal_template_syntax(doc, text, path));
    warnings.extend(unused_variables(doc, text, path, parts));
    warnings
}

/// `{{` or `{%` in a file that does not say whether it is a template: it
/// is sent as those characters, most likely not what was meant.
fn literal_template_syntax(doc: &Document<'_>, text: &str, path: &Path) -> Option<Diagnostic> {
    if doc.meta.template.is_some() {
        return None;
    }
    let (at, marker) = ["{{", "{%"]
        .into_iter()
        .filter_map(|marker| Some((doc.body.find(marker)?, marker)))
        .min()?;
    let start = doc.body_offset(text) + at;
    let d = Diagnostic::warning(
        DiagnosticCode::TemplateSyntaxInText,
        format!("`{marker}` is sent as written: the file is not marked as a template"),
    )
    .in_file(path)
    .at(&LineIndex::new(text), start..start + marker.len())
    .suggest(Some(
        "to fill it in, give the file front matter with `template: true`; to send the braces as they are, say `template: false`".to_owned(),
    ));
    Some(d)
}

/// A warning for every declared variable that no part of the file uses.
fn unused_variables(
    doc: &Document<'_>,
    text: &str,
    path: &Path,
    parts: &[&Renderer],
) -> Vec<Diagnostic> {
    let used: BTreeSet<String> = parts
        .iter()
        .filter_map(|part| part.template())
        .flat_map(Template::used_variables)
        .collect();
    let suggestion = match doc.is_template() {
        true => "use it in the text, or remove its declaration",
        false => "the file is not a template: add `template: true` to use it, or remove it",
    };
    let lines = LineIndex::new(text);
    doc.variables()
        .into_iter()
        .filter(|v| !used.contains(&v.name))
        .map(|v| {
            let d = Diagnostic::warning(
                DiagnosticCode::UnusedVariable,
                format!(
                    "variable `{}` is declared but no part of the file uses it",
                    v.name
                ),
            )
            .in_file(path)
            .key_path(format!("variables.{}", v.name))
            .suggest(Some(suggestion.to_owned()));
            match doc.variable_span(&v.name) {
                Some(span) => d.at(&lines, span),
                None => d,
            }
        })
        .collect()
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
    if names_known_language(locale) {
        return None;
    }
    let tag = locale.as_str();
    let written = tag.split('-').next().unwrap_or(tag);
    let hint = language_hint(written).map(|language| {
        let rest = &tag[written.len()..];
        format!("did you mean `{language}`? name the file `{id}.{language}{rest}.md`")
    });
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

/// Whether the language of `locale` is one ICU knows.
pub(crate) fn names_known_language(locale: &Locale) -> bool {
    let tag = locale.as_str();
    let code = tag.split('-').next().unwrap_or(tag);
    matches!(likely_language(code), Some(Some(_)))
}

/// `Some(Some(language))` when `code` is a language ICU knows,
/// `Some(None)` when it is well-formed but unknown, `None` when it is not a
/// language subtag at all.
fn likely_language(code: &str) -> Option<Option<Language>> {
    let language: Language = code.parse().ok()?;
    let mut id = LanguageIdentifier::from((language, None, None));
    let known = LocaleExpander::new_extended().maximize(&mut id) == TransformResult::Modified;
    Some(known.then_some(language))
}

/// The language an unknown code most likely stands for: the canonical
/// code of an alias (`jpn` -> `ja`), or the language of a country code
/// (`jp` -> `ja`).
fn language_hint(code: &str) -> Option<Language> {
    let mut alias: icu_locale::Locale = code.parse().ok()?;
    if LocaleCanonicalizer::new_extended().canonicalize(&mut alias) == TransformResult::Modified
        && alias.id.language.as_str() != code
        && likely_language(alias.id.language.as_str()) == Some(Some(alias.id.language))
    {
        return Some(alias.id.language);
    }
    let region: Region = code.to_ascii_uppercase().parse().ok()?;
    let mut id = LanguageIdentifier::from((Language::UNKNOWN, None, Some(region)));
    let found = LocaleExpander::new_extended().maximize(&mut id) == TransformResult::Modified;
    (found && !id.language.is_unknown()).then_some(id.language)
}
