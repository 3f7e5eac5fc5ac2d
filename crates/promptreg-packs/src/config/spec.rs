//! [`ConfigSpec`]: what an application declares about its user
//! configuration: keys, directories, settings files, legacy names.

use std::collections::BTreeSet;
use std::fmt;

use crate::diagnostic::{Diagnostic, DiagnosticCode, Diagnostics};
use crate::error::Error;
use crate::id::{self, PromptId};
use crate::prompt_file::{DeclaredIds, non_blank};
use crate::suggest;

/// The largest prompt or settings file read by default: 1 MiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1024 * 1024;

/// A field of a `prompts.<key>` settings block: what a settings file sets
/// for a key, and what a legacy flat key stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PromptField {
    /// `prompts.<key>.inline`
    Inline,
    /// `prompts.<key>.mode`
    Mode,
    /// `prompts.<key>.file`
    File,
}

impl PromptField {
    /// The field named `name` in a `prompts.<key>` block.
    pub(crate) fn parse(name: &str) -> Option<Self> {
        match name {
            "inline" => Some(PromptField::Inline),
            "mode" => Some(PromptField::Mode),
            "file" => Some(PromptField::File),
            _ => None,
        }
    }

    /// The field's name in a `prompts.<key>` block.
    pub fn as_str(self) -> &'static str {
        match self {
            PromptField::Inline => "inline",
            PromptField::Mode => "mode",
            PromptField::File => "file",
        }
    }
}

/// A legacy flat settings key, such as `auditorPrompt`, that stands for a
/// field of a `prompts.<key>` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyAlias {
    /// The flat key in the settings file.
    pub name: String,
    /// The prompt key it configures.
    pub key: PromptId,
    /// The field it sets.
    pub field: PromptField,
}

impl LegacyAlias {
    /// The path it stands for, such as `prompts.auditor.inline`.
    pub fn target(&self) -> String {
        format!("prompts.{}.{}", self.key, self.field.as_str())
    }
}

/// A legacy prompt file, such as `.pi/auditor-prompt.md`, read under home
/// and under cwd when the unified lookup for its key finds nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyFile {
    /// The path relative to home and to cwd.
    pub path: String,
    /// The prompt key it provides.
    pub key: PromptId,
}

/// A key pattern such as `tool-*`: one `*` standing for one or more
/// characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyPattern {
    prefix: String,
    suffix: String,
}

impl KeyPattern {
    fn parse(pattern: &str) -> Result<Self, String> {
        let Some((prefix, suffix)) = pattern.split_once('*') else {
            return Err(format!("key pattern `{pattern}` has no `*`"));
        };
        if suffix.contains('*') {
            return Err(format!("key pattern `{pattern}` has more than one `*`"));
        }
        // The fixed parts must be able to occur in a valid id.
        let sample = format!("{prefix}x{suffix}");
        id::validate(&sample)
            .map_err(|e| format!("key pattern `{pattern}` can never match: {e}"))?;
        Ok(KeyPattern {
            prefix: prefix.to_owned(),
            suffix: suffix.to_owned(),
        })
    }

    /// Whether `key` matches: the fixed parts around one or more characters.
    pub fn matches(&self, key: &str) -> bool {
        key.len() > self.prefix.len() + self.suffix.len()
            && key.starts_with(&self.prefix)
            && key.ends_with(&self.suffix)
    }
}

impl fmt::Display for KeyPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}*{}", self.prefix, self.suffix)
    }
}

/// What an application declares about its user configuration.
///
/// Build one with [`ConfigSpec::builder`]; a pack's manifest declares the
/// same things in a file.
///
/// ```
/// use promptreg_packs::config::{ConfigSpec, PromptField};
///
/// let spec = ConfigSpec::builder("pi-goal-xx")
///     .keys(["goal-running", "auditor"])
///     .key_pattern("tool-*")
///     .prompts_dir(".pi/pi-goal-xx/prompts/")
///     .settings_file(".pi/pi-goal-xx-settings.json")
///     .settings_env("PI_GOAL_SETTINGS_FILE")
///     .legacy_alias("auditorPrompt", "prompts.auditor.inline")
///     .legacy_file(".pi/auditor-prompt.md", "auditor")
///     .build()?;
///
/// assert!(spec.is_known_key("tool-get-goal"));
/// assert!(!spec.is_known_key("goal-runing"));
/// assert_eq!(spec.legacy_aliases()[0].field, PromptField::Inline);
/// # Ok::<(), promptreg_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigSpec {
    name: String,
    keys: BTreeSet<PromptId>,
    patterns: Vec<KeyPattern>,
    prompts_dir: String,
    global_settings: Option<String>,
    local_settings: Option<String>,
    settings_env: Option<String>,
    aliases: Vec<LegacyAlias>,
    legacy_files: Vec<LegacyFile>,
    max_file_size: u64,
}

impl ConfigSpec {
    /// Starts declaring the configuration of application `name`.
    pub fn builder(name: impl Into<String>) -> ConfigSpecBuilder {
        ConfigSpecBuilder {
            name: name.into(),
            keys: Vec::new(),
            patterns: Vec::new(),
            prompts_dir: None,
            global_settings: None,
            local_settings: None,
            settings_env: None,
            aliases: Vec::new(),
            legacy_files: Vec::new(),
            max_file_size: DEFAULT_MAX_FILE_SIZE,
        }
    }

    /// The application's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The exact keys, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &PromptId> {
        self.keys.iter()
    }

    /// The key patterns.
    pub fn patterns(&self) -> &[KeyPattern] {
        &self.patterns
    }

    /// Whether `key` is an exact key or matches a pattern.
    pub fn is_known_key(&self, key: &str) -> bool {
        self.keys.contains(key) || self.patterns.iter().any(|p| p.matches(key))
    }

    /// `did you mean ...?` for an unknown key: the nearest exact key.
    pub(crate) fn suggest_key(&self, key: &str) -> Option<String> {
        suggest::did_you_mean(key, self.keys.iter().map(PromptId::as_str))
    }

    /// The prompts directory as declared (relative, `~/...` or absolute).
    pub fn prompts_dir(&self) -> &str {
        &self.prompts_dir
    }

    /// The settings file under home, as declared.
    pub fn global_settings_file(&self) -> Option<&str> {
        self.global_settings.as_deref()
    }

    /// The settings file under cwd, as declared.
    pub fn local_settings_file(&self) -> Option<&str> {
        self.local_settings.as_deref()
    }

    /// The environment variable that can name a settings file.
    pub fn settings_env(&self) -> Option<&str> {
        self.settings_env.as_deref()
    }

    /// The legacy flat settings keys.
    pub fn legacy_aliases(&self) -> &[LegacyAlias] {
        &self.aliases
    }

    /// The legacy prompt files.
    pub fn legacy_files(&self) -> &[LegacyFile] {
        &self.legacy_files
    }

    /// The largest file read, in bytes.
    pub fn max_file_size(&self) -> u64 {
        self.max_file_size
    }
}

/// A pack's and a user's prompt files are named after the declared keys.
impl DeclaredIds for ConfigSpec {
    fn is_exact(&self, id: &str) -> bool {
        self.keys.contains(id)
    }

    fn is_known(&self, id: &str) -> bool {
        self.is_known_key(id)
    }
}

/// Builds a [`ConfigSpec`]; every problem is reported by
/// [`build`](Self::build), all at once.
#[derive(Debug, Clone)]
pub struct ConfigSpecBuilder {
    name: String,
    keys: Vec<String>,
    patterns: Vec<String>,
    prompts_dir: Option<String>,
    global_settings: Option<String>,
    local_settings: Option<String>,
    settings_env: Option<String>,
    aliases: Vec<(String, String)>,
    legacy_files: Vec<(String, String)>,
    max_file_size: u64,
}

impl ConfigSpecBuilder {
    /// Declares one exact key.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.keys.push(key.into());
        self
    }

    /// Declares several exact keys.
    pub fn keys<I: IntoIterator<Item = S>, S: Into<String>>(mut self, keys: I) -> Self {
        self.keys.extend(keys.into_iter().map(Into::into));
        self
    }

    /// Declares a key pattern such as `tool-*`.
    pub fn key_pattern(mut self, pattern: impl Into<String>) -> Self {
        self.patterns.push(pattern.into());
        self
    }

    /// The prompts directory: relative (joined to home and to cwd), `~/...`
    /// or absolute (one directory, read as the global one).
    pub fn prompts_dir(mut self, dir: impl Into<String>) -> Self {
        self.prompts_dir = Some(dir.into());
        self
    }

    /// The settings file name, relative, read under home and under cwd.
    pub fn settings_file(self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.global_settings_file(path.clone())
            .local_settings_file(path)
    }

    /// The settings file read under home.
    pub fn global_settings_file(mut self, path: impl Into<String>) -> Self {
        self.global_settings = Some(path.into());
        self
    }

    /// The settings file read under cwd.
    pub fn local_settings_file(mut self, path: impl Into<String>) -> Self {
        self.local_settings = Some(path.into());
        self
    }

    /// The environment variable that can name a settings file, read after
    /// (and so winning over) the global and local ones.
    pub fn settings_env(mut self, var: impl Into<String>) -> Self {
        self.settings_env = Some(var.into());
        self
    }

    /// A legacy flat key and the path it stands for, such as
    /// `("auditorPrompt", "prompts.auditor.inline")`.
    pub fn legacy_alias(mut self, name: impl Into<String>, target: impl Into<String>) -> Self {
        self.aliases.push((name.into(), target.into()));
        self
    }

    /// A legacy prompt file (relative to home and to cwd) for `key`.
    pub fn legacy_file(mut self, path: impl Into<String>, key: impl Into<String>) -> Self {
        self.legacy_files.push((path.into(), key.into()));
        self
    }

    /// The largest prompt or settings file read, in bytes (default 1 MiB).
    pub fn max_file_size(mut self, bytes: u64) -> Self {
        self.max_file_size = bytes;
        self
    }

    /// Checks the declaration.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) with a diagnostic for
    /// every problem: an invalid key or pattern, a missing prompts
    /// directory, a legacy alias whose target is not `prompts.<key>.<field>`
    /// of a declared key or whose name is a settings key.
    pub fn build(self) -> Result<ConfigSpec, Error> {
        let mut problems = Diagnostics::default();
        let keys = self.declared_keys(&mut problems);
        let patterns = self.declared_patterns(&mut problems);
        let prompts_dir = self.declared_prompts_dir(&mut problems);
        let is_known = |key: &str| keys.contains(key) || patterns.iter().any(|p| p.matches(key));
        let aliases = self.declared_aliases(&is_known, &mut problems);
        let legacy_files = self.declared_legacy_files(&is_known, &mut problems);
        let problems = problems.into_vec();
        if !problems.is_empty() {
            return Err(Error::from_diagnostics(problems));
        }
        Ok(ConfigSpec {
            name: self.name,
            keys,
            patterns,
            prompts_dir,
            global_settings: self.global_settings,
            local_settings: self.local_settings,
            settings_env: self.settings_env,
            aliases,
            legacy_files,
            max_file_size: self.max_file_size,
        })
    }

    fn declared_keys(&self, problems: &mut Diagnostics) -> BTreeSet<PromptId> {
        let valid = |key: &String| match PromptId::new(key) {
            Ok(id) => Some(id),
            Err(e) => {
                problems.push(invalid(format!("declared key: {e}")));
                None
            }
        };
        self.keys.iter().filter_map(valid).collect()
    }

    fn declared_patterns(&self, problems: &mut Diagnostics) -> Vec<KeyPattern> {
        let valid = |pattern: &String| KeyPattern::parse(pattern).map_err(invalid);
        self.patterns
            .iter()
            .filter_map(|pattern| problems.ok(valid(pattern)))
            .collect()
    }

    fn declared_prompts_dir(&self, problems: &mut Diagnostics) -> String {
        let prompts_dir = self.prompts_dir.clone().unwrap_or_default();
        if non_blank(&prompts_dir).is_none() {
            problems.push(invalid(format!(
                "application `{}` declares no prompts directory",
                self.name
            )));
        }
        prompts_dir
    }

    fn declared_aliases(
        &self,
        is_known: &dyn Fn(&str) -> bool,
        problems: &mut Diagnostics,
    ) -> Vec<LegacyAlias> {
        let alias = |(name, target): &(String, String)| {
            problems.ok(legacy_alias(name, target, is_known).map_err(invalid))
        };
        self.aliases.iter().filter_map(alias).collect()
    }

    fn declared_legacy_files(
        &self,
        is_known: &dyn Fn(&str) -> bool,
        problems: &mut Diagnostics,
    ) -> Vec<LegacyFile> {
        let file = |(path, key): &(String, String)| {
            let file = match PromptId::new(key) {
                Ok(key) if is_known(&key) => Ok(LegacyFile {
                    path: path.clone(),
                    key,
                }),
                Ok(key) => Err(format!(
                    "legacy file `{path}` is for `{key}`, which is not a declared key"
                )),
                Err(e) => Err(format!("legacy file `{path}`: {e}")),
            };
            problems.ok(file.map_err(invalid))
        };
        self.legacy_files.iter().filter_map(file).collect()
    }
}

/// A problem with what the application declares.
fn invalid(message: String) -> Diagnostic {
    Diagnostic::error(DiagnosticCode::InvalidDeclaration, message)
}

/// A legacy alias `name` for `target`, which must be `prompts.<key>.<field>`
/// of a declared key; its name must not hide a settings key.
fn legacy_alias(
    name: &str,
    target: &str,
    is_known: &dyn Fn(&str) -> bool,
) -> Result<LegacyAlias, String> {
    if matches!(
        name,
        "prompts" | "promptsDir" | "trustedProjects" | "$schema"
    ) {
        return Err(format!(
            "legacy alias `{name}` would hide the settings key of the same name"
        ));
    }
    match parse_target(target) {
        Some((key, field)) if is_known(&key) => match PromptId::new(&key) {
            Ok(key) => Ok(LegacyAlias {
                name: name.to_owned(),
                key,
                field,
            }),
            Err(e) => Err(format!("legacy alias `{name}`: {e}")),
        },
        Some((key, _)) => Err(format!(
            "legacy alias `{name}` targets `{key}`, which is not a declared key"
        )),
        None => Err(format!(
            "legacy alias `{name}` targets `{target}`; expected `prompts.<key>.inline`, `.mode` or `.file`"
        )),
    }
}

/// `prompts.<key>.<field>` -> (key, field); keys may contain dots.
fn parse_target(target: &str) -> Option<(String, PromptField)> {
    let rest = target.strip_prefix("prompts.")?;
    let (key, field) = rest.rsplit_once('.')?;
    Some((key.to_owned(), PromptField::parse(field)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn patterns_need_at_least_one_character_for_the_star() {
        let p = KeyPattern::parse("tool-*").unwrap();
        assert!(p.matches("tool-get-goal"));
        assert!(!p.matches("tool-"));
        assert!(!p.matches("tools"));
        let p = KeyPattern::parse("*.system").unwrap();
        assert!(p.matches("planner.system"));
        assert!(!p.matches(".system"));
    }

    #[test]
    fn targets_may_name_keys_with_dots() {
        assert_eq!(
            parse_target("prompts.planner.system.mode"),
            Some(("planner.system".into(), PromptField::Mode))
        );
        assert_eq!(parse_target("prompts.auditor"), None);
        assert_eq!(parse_target("auditor.inline"), None);
    }

    #[test]
    fn every_declaration_problem_is_reported_at_once() {
        let err = ConfigSpec::builder("app")
            .keys(["ok", "../bad"])
            .key_pattern("tool-**")
            .key_pattern("nostar")
            .legacy_alias("oldPrompt", "prompts.missing.inline")
            .legacy_alias("prompts", "prompts.ok.inline")
            .legacy_alias("weird", "prompts.ok.colour")
            .legacy_file(".old.md", "missing")
            .build()
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config);
        let messages: Vec<String> = err
            .diagnostics()
            .iter()
            .map(|d| d.message.clone())
            .collect();
        assert_eq!(messages.len(), 8, "{messages:#?}");
        assert!(messages.iter().any(|m| m.contains("no prompts directory")));
    }
}
