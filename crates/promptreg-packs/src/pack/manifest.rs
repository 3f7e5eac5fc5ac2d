//! `promptreg.toml`: what a pack declares.
//!
//! ```toml
//! name = "goal-agent"
//! description = "Prompts of a goal-running coding agent"
//! keys = ["goal-running", "auditor"]
//! key_patterns = ["tool-*"]
//! default_locale = "en"
//! fallback_locale = "en"
//! extra_model_keys = ["safe_prompt"]
//!
//! [user]
//! prompts_dir = ".pi/pi-goal-xx/prompts/"
//! settings_file = ".pi/pi-goal-xx-settings.json"
//! settings_env = "PI_GOAL_SETTINGS_FILE"
//!
//! [legacy.aliases]
//! auditorPrompt = "prompts.auditor.inline"
//!
//! [legacy.files]
//! ".pi/auditor-prompt.md" = "auditor"
//!
//! [release]
//! gated = ["production"]
//! signed = ["production"]
//!
//! [l10n]
//! locales = ["ja", "zh-TW"]
//! required = ["ja"]
//! pseudo = true
//! ```

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::config::{ConfigSpec, ConfigSpecBuilder};
use crate::diagnostic::{Diagnostic, DiagnosticCode, Diagnostics, LineIndex};
use crate::id::PromptId;
use crate::locale::Locale;
use crate::suggest;

/// The file name of a pack's manifest.
pub const MANIFEST: &str = "promptreg.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    name: String,
    description: Option<String>,
    #[serde(default)]
    keys: Vec<Spanned<String>>,
    #[serde(default)]
    key_patterns: Vec<String>,
    default_locale: Option<Spanned<String>>,
    fallback_locale: Option<Spanned<String>>,
    #[serde(default)]
    extra_model_keys: Vec<String>,
    /// Where end users configure the prompts; without it, prompt files in
    /// `.<name>/prompts/` and no settings file.
    user: Option<UserSection>,
    #[serde(default)]
    legacy: LegacySection,
    #[serde(default)]
    release: ReleaseSection,
    #[serde(default)]
    l10n: L10nSection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct L10nSection {
    /// The locales the pack is translated into: what `l10n status`
    /// reports on, beside every locale that has a variant.
    #[serde(default)]
    locales: Vec<Spanned<String>>,
    /// Locales whose variants must all exist and be current for the
    /// pack's tests to pass.
    #[serde(default)]
    required: Vec<Spanned<String>>,
    /// Whether renders in the pseudo-locale `en-XA` get a pseudo-translation
    /// of every prompt that has no `en-XA` variant.
    #[serde(default)]
    pseudo: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReleaseSection {
    /// Labels that only move to a state that passes the pack's tests.
    #[serde(default)]
    gated: Vec<Spanned<String>>,
    /// Labels that only move with a signature by the releaser's key.
    #[serde(default)]
    signed: Vec<Spanned<String>>,
    /// Labels that refuse a breaking change to a prompt's contract.
    #[serde(default)]
    stable_contract: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserSection {
    prompts_dir: String,
    settings_file: Option<String>,
    global_settings_file: Option<String>,
    local_settings_file: Option<String>,
    settings_env: Option<String>,
    max_file_size: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LegacySection {
    #[serde(default)]
    aliases: BTreeMap<String, String>,
    #[serde(default)]
    files: BTreeMap<String, String>,
}

/// A parsed, validated manifest.
#[derive(Debug, Clone)]
pub(crate) struct Manifest {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    pub(crate) default_locale: Locale,
    pub(crate) fallback_locale: Locale,
    pub(crate) spec: ConfigSpec,
    /// Model setting keys the pack's provider takes beyond OpenAI's and
    /// Anthropic's request fields: not warned about.
    pub(crate) extra_model_keys: Vec<String>,
    /// What is worth fixing but loads (a locale of no known language).
    pub(crate) warnings: Vec<Diagnostic>,
    /// Where each declared key is written, for diagnostics about it.
    pub(crate) key_spans: BTreeMap<PromptId, std::ops::Range<usize>>,
    /// The labels `[release] gated` names, sorted.
    pub(crate) gated: Vec<String>,
    /// The labels `[release] signed` names, sorted.
    pub(crate) signed: Vec<String>,
    /// The labels `[release] stable_contract` names, sorted.
    pub(crate) stable_contract: Vec<String>,
    /// What `[l10n]` says.
    pub(crate) l10n: L10n,
}

/// A manifest's `[l10n]`: the locales translated into, those required
/// current, and the pseudo-locale.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct L10n {
    /// `locales` and `required` together, sorted, each once.
    pub locales: Vec<Locale>,
    /// `required`, sorted.
    pub required: Vec<Locale>,
    /// `pseudo`: renders in `en-XA` are pseudo-translated.
    pub pseudo: bool,
}

/// Parses `text`, the manifest at `path`, reporting every problem found
/// once it parses as TOML.
pub(crate) fn parse(text: &str, path: &Path) -> Result<Manifest, Vec<Diagnostic>> {
    let mut problems = Diagnostics::default();
    let at = Place {
        path,
        lines: LineIndex::new(text),
    };
    match validate(text, &at, &mut problems) {
        Some(mut manifest) if !problems.has_errors() => {
            manifest.warnings = problems.into_vec();
            Ok(manifest)
        }
        _ => Err(problems.into_vec()),
    }
}

/// Where a problem is: the manifest's file and its lines.
struct Place<'a> {
    path: &'a Path,
    lines: LineIndex<'a>,
}

impl Place<'_> {
    fn error(&self, message: String, span: std::ops::Range<usize>) -> Diagnostic {
        Diagnostic::error(DiagnosticCode::Manifest, message)
            .in_file(self.path)
            .at(&self.lines, span)
    }
}

/// One step per concern: the TOML, the keys, the locales, the user
/// configuration.
fn validate(text: &str, at: &Place<'_>, problems: &mut Diagnostics) -> Option<Manifest> {
    let raw = problems.ok(parse_toml(text, at))?;
    check_keys(&raw.keys, at, problems);
    let gated = release_labels("gated", &raw.release.gated, at, problems);
    let signed = release_labels("signed", &raw.release.signed, at, problems);
    let stable_contract = release_labels(
        "stable_contract",
        &raw.release.stable_contract,
        at,
        problems,
    );
    let default_locale = locale("default_locale", raw.default_locale.as_ref(), at, problems);
    let fallback_locale = locale(
        "fallback_locale",
        raw.fallback_locale.as_ref(),
        at,
        problems,
    );
    let spec = user_spec(&raw, at.path, problems);
    let l10n = l10n(&raw.l10n, at, problems);
    Some(Manifest {
        key_spans: key_spans(&raw.keys),
        name: raw.name,
        description: raw.description,
        extra_model_keys: raw.extra_model_keys,
        default_locale: default_locale?,
        fallback_locale: fallback_locale?,
        spec: spec?,
        warnings: Vec::new(),
        gated,
        signed,
        stable_contract,
        l10n,
    })
}

/// `[l10n]`, its locales parsed; `required` locales count as translated
/// into.
fn l10n(raw: &L10nSection, at: &Place<'_>, problems: &mut Diagnostics) -> L10n {
    let mut parse = |list: &str, tags: &[Spanned<String>]| -> Vec<Locale> {
        let mut locales: Vec<Locale> = Vec::new();
        for tag in tags {
            let key = format!("[l10n] {list}");
            if let Some(locale) = locale(&key, Some(tag), at, problems) {
                if locales.contains(&locale) {
                    let message = format!("`{key}`: `{locale}` is listed twice");
                    problems.push(at.error(message, tag.span()));
                } else {
                    locales.push(locale);
                }
            }
        }
        locales.sort_by(|a, b| a.key().cmp(b.key()));
        locales
    };
    let required = parse("required", &raw.required);
    let mut locales = parse("locales", &raw.locales);
    for locale in &required {
        if !locales.contains(locale) {
            locales.push(locale.clone());
        }
    }
    locales.sort_by(|a, b| a.key().cmp(b.key()));
    L10n {
        locales,
        required,
        pseudo: raw.pseudo,
    }
}

/// The labels of `[release] <list>` (`gated`, `signed`): label names
/// (`production`, `[a-z0-9][a-z0-9-]*`), each once, never `latest`, which
/// follows pushes.
fn release_labels(
    list: &str,
    labels: &[Spanned<String>],
    at: &Place<'_>,
    problems: &mut Diagnostics,
) -> Vec<String> {
    let mut named: Vec<String> = Vec::new();
    for label in labels {
        let name = label.get_ref();
        let valid = name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        let problem = if !valid {
            Some(format!(
                "`[release] {list}`: `{name}` is not a label name: lowercase letters, digits and `-`, starting with a letter or digit"
            ))
        } else if name == "latest" {
            let rule = match list {
                "gated" => "cannot be gated; gate the label you release to",
                "signed" => "cannot be signed; sign the label you release to",
                _ => "cannot keep a stable contract; name the label you release to",
            };
            Some(format!(
                "`[release] {list}`: `latest` follows pushes and {rule}"
            ))
        } else if named.contains(name) {
            Some(format!("`[release] {list}`: `{name}` is listed twice"))
        } else {
            None
        };
        match problem {
            Some(message) => problems.push(at.error(message, label.span())),
            None => named.push(name.clone()),
        }
    }
    named.sort_unstable();
    named
}

fn parse_toml(text: &str, at: &Place<'_>) -> Result<RawManifest, Diagnostic> {
    toml::from_str(text).map_err(|e| {
        let message = format!("invalid manifest: {}", e.message().trim());
        let suggestion = suggest::for_serde_message(e.message());
        match e.span() {
            Some(span) => at.error(message, span),
            None => Diagnostic::error(DiagnosticCode::Manifest, message).in_file(at.path),
        }
        .suggest(suggestion)
    })
}

/// Every declared key is a valid id, declared once.
fn check_keys(keys: &[Spanned<String>], at: &Place<'_>, problems: &mut Diagnostics) {
    let mut seen = HashSet::new();
    for key in keys {
        if let Err(e) = PromptId::new(key.get_ref()) {
            problems.push(at.error(format!("declared key: {}", e.detail()), key.span()));
        } else if !seen.insert(key.get_ref().as_str()) {
            let message = format!("key `{}` is declared twice", key.get_ref());
            problems.push(at.error(message, key.span()));
        }
    }
}

/// A declared locale, `en` when absent.
fn locale(
    key: &str,
    tag: Option<&Spanned<String>>,
    at: &Place<'_>,
    problems: &mut Diagnostics,
) -> Option<Locale> {
    let Some(tag) = tag else {
        return Locale::parse("en").ok();
    };
    let parsed = Locale::parse(tag.get_ref()).map_err(|e| at.error(e.to_string(), tag.span()));
    let locale = problems.ok(parsed)?;
    let place = format!("`{key}` in {MANIFEST}");
    if let Some(warning) = locale.unknown_language_warning(&place) {
        problems.push(
            Diagnostic::warning(DiagnosticCode::UnknownLanguage, warning)
                .in_file(at.path)
                .at(&at.lines, tag.span()),
        );
    }
    Some(locale)
}

/// The user configuration the manifest declares, its problems reported
/// as the manifest's.
fn user_spec(raw: &RawManifest, path: &Path, problems: &mut Diagnostics) -> Option<ConfigSpec> {
    match builder(raw).build() {
        Ok(spec) => Some(spec),
        Err(e) => {
            problems.extend(e.diagnostics().iter().map(|d| {
                let mut d = d.clone().in_file(path);
                d.code = DiagnosticCode::Manifest;
                d
            }));
            None
        }
    }
}

/// The span of each valid key's string in the manifest.
fn key_spans(keys: &[Spanned<String>]) -> BTreeMap<PromptId, std::ops::Range<usize>> {
    keys.iter()
        .filter_map(|key| Some((PromptId::new(key.get_ref()).ok()?, key.span())))
        .collect()
}

fn builder(raw: &RawManifest) -> ConfigSpecBuilder {
    let Some(user) = &raw.user else {
        return declared_keys(raw).prompts_dir(format!(".{}/prompts/", raw.name));
    };
    let mut b = declared_keys(raw).prompts_dir(user.prompts_dir.clone());
    if let Some(file) = &user.settings_file {
        b = b.settings_file(file.clone());
    }
    if let Some(file) = &user.global_settings_file {
        b = b.global_settings_file(file.clone());
    }
    if let Some(file) = &user.local_settings_file {
        b = b.local_settings_file(file.clone());
    }
    if let Some(var) = &user.settings_env {
        b = b.settings_env(var.clone());
    }
    if let Some(bytes) = user.max_file_size {
        b = b.max_file_size(bytes);
    }
    b
}

/// The keys, patterns and legacy names the manifest declares.
fn declared_keys(raw: &RawManifest) -> ConfigSpecBuilder {
    let mut b = ConfigSpec::builder(raw.name.clone())
        // Invalid keys were reported with their position already.
        .keys(
            raw.keys
                .iter()
                .map(|k| k.get_ref())
                .filter(|k| PromptId::new(k).is_ok())
                .cloned(),
        );
    for pattern in &raw.key_patterns {
        b = b.key_pattern(pattern.clone());
    }
    for (name, target) in &raw.legacy.aliases {
        b = b.legacy_alias(name.clone(), target.clone());
    }
    for (file, key) in &raw.legacy.files {
        b = b.legacy_file(file.clone(), key.clone());
    }
    b
}
