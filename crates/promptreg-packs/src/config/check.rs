//! [`check`]: every problem of a configuration, without loading it.

use std::path::Path;
use std::sync::Arc;

use super::layer::UserLayer;
use super::options::LoadOptions;
use super::settings;
use super::spec::ConfigSpec;
use crate::diagnostic::Diagnostic;

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
/// use promptreg_packs::config::{check, ConfigSpec, LoadOptions};
/// use promptreg_core::DiagnosticCode;
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
/// use promptreg_packs::config::{check_settings, ConfigSpec};
///
/// let spec = ConfigSpec::builder("app").key("auditor").prompts_dir(".app/prompts").build()?;
/// let diagnostics = check_settings(&spec, "settings.json", r#"{ "prompts": { "auditor": { "mode": "apend" } } }"#);
/// assert_eq!(diagnostics[0].suggestion.as_deref(), Some("did you mean `append`?"));
/// # Ok::<(), promptreg_core::Error>(())
/// ```
pub fn check_settings(spec: &ConfigSpec, path: impl AsRef<Path>, text: &str) -> Vec<Diagnostic> {
    settings::parse(text, path.as_ref(), spec).1
}
