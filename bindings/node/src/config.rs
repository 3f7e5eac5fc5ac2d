//! The user's configuration: what an application declares
//! ([`ConfigSpec`]), where it is read from ([`LoadOptions`]), what a load
//! reports, and `check`.

use std::collections::BTreeMap;

use napi::bindgen_prelude::Unknown;
use napi::{Env, Result};
use napi_derive::napi;
use promptreg::config;

use crate::args;
use crate::diagnostic::Diagnostic;
use crate::errors::OrThrow;

/// What an application declares about its users' configuration; a pack's
/// manifest declares the same (`Pack.configSpec()`).
#[napi(object)]
pub struct ConfigSpec {
    /// The application's name.
    pub name: String,
    /// The prompt keys users may configure.
    pub keys: Option<Vec<String>>,
    /// Key patterns with one `*`, such as `tool-*`.
    pub key_patterns: Option<Vec<String>>,
    /// The prompts folder, relative to home and to cwd (`.app/prompts`).
    pub prompts_dir: Option<String>,
    /// The settings file, relative to home (global) and to cwd (local).
    pub settings_file: Option<String>,
    /// The global settings file, relative to home, when it differs.
    pub global_settings_file: Option<String>,
    /// The local settings file, relative to cwd, when it differs.
    pub local_settings_file: Option<String>,
    /// An environment variable naming one more settings file.
    pub settings_env: Option<String>,
    /// Legacy flat settings keys and the path each stands for
    /// (`auditorPrompt` → `prompts.auditor.inline`).
    pub legacy_aliases: Option<BTreeMap<String, String>>,
    /// Legacy prompt files and the key each provides
    /// (`.pi/auditor-prompt.md` → `auditor`).
    pub legacy_files: Option<BTreeMap<String, String>>,
    /// The largest file read, in bytes.
    pub max_file_size: Option<f64>,
}

/// Where a configuration is read from.
#[napi(object)]
pub struct LoadOptions {
    /// The home folder: global settings and prompt files.
    pub home: String,
    /// The project folder: local settings and prompt files; none when
    /// left out or empty.
    pub cwd: Option<String>,
    /// The value of the spec's settings environment variable.
    pub settings_env: Option<String>,
}

impl ConfigSpec {
    /// The library's declaration, checked.
    fn build(self) -> std::result::Result<config::ConfigSpec, promptreg::Error> {
        let mut builder = config::ConfigSpec::builder(self.name)
            .keys(self.keys.unwrap_or_default())
            .prompts_dir(self.prompts_dir.unwrap_or_default());
        for pattern in self.key_patterns.unwrap_or_default() {
            builder = builder.key_pattern(pattern);
        }
        if let Some(file) = self.settings_file {
            builder = builder.settings_file(file);
        }
        if let Some(file) = self.global_settings_file {
            builder = builder.global_settings_file(file);
        }
        if let Some(file) = self.local_settings_file {
            builder = builder.local_settings_file(file);
        }
        if let Some(var) = self.settings_env {
            builder = builder.settings_env(var);
        }
        for (name, target) in self.legacy_aliases.unwrap_or_default() {
            builder = builder.legacy_alias(name, target);
        }
        for (path, key) in self.legacy_files.unwrap_or_default() {
            builder = builder.legacy_file(path, key);
        }
        if let Some(bytes) = self.max_file_size {
            // Negative and fractional sizes mean nothing: the nearest
            // whole number of bytes, at least 0.
            builder = builder.max_file_size(bytes.max(0.0).round() as u64);
        }
        builder.build()
    }
}

impl From<&config::ConfigSpec> for ConfigSpec {
    fn from(spec: &config::ConfigSpec) -> Self {
        ConfigSpec {
            name: spec.name().to_owned(),
            keys: Some(spec.keys().map(|k| k.to_string()).collect()),
            key_patterns: Some(spec.patterns().iter().map(|p| p.to_string()).collect()),
            prompts_dir: Some(spec.prompts_dir().to_owned()),
            settings_file: None,
            global_settings_file: spec.global_settings_file().map(str::to_owned),
            local_settings_file: spec.local_settings_file().map(str::to_owned),
            settings_env: spec.settings_env().map(str::to_owned),
            legacy_aliases: Some(
                spec.legacy_aliases()
                    .iter()
                    .map(|a| (a.name.clone(), a.target()))
                    .collect(),
            ),
            legacy_files: Some(
                spec.legacy_files()
                    .iter()
                    .map(|f| (f.path.clone(), f.key.to_string()))
                    .collect(),
            ),
            max_file_size: Some(spec.max_file_size() as f64),
        }
    }
}

/// A `ConfigSpec` argument, checked by the library.
pub(crate) fn spec_arg(env: &Env, value: Unknown<'_>, name: &str) -> Result<config::ConfigSpec> {
    let spec: ConfigSpec = args::object(env, value, name)?;
    spec.build().or_throw(env)
}

/// A `LoadOptions` argument.
pub(crate) fn options_arg(
    env: &Env,
    value: Unknown<'_>,
    name: &str,
) -> Result<config::LoadOptions> {
    let options: LoadOptions = args::object(env, value, name)?;
    Ok(
        config::LoadOptions::new(options.home, options.cwd.unwrap_or_default())
            .settings_env_value(options.settings_env),
    )
}

/// Every problem of the configuration `spec` declares, read under
/// `options`' home and cwd, without loading it anywhere: errors (which
/// would stop a load) and warnings (what loads but will not do what was
/// meant).
#[napi]
pub fn check(
    env: Env,
    #[napi(ts_arg_type = "ConfigSpec")] spec: Unknown<'_>,
    #[napi(ts_arg_type = "LoadOptions")] options: Unknown<'_>,
) -> Result<Vec<Diagnostic>> {
    let spec = spec_arg(&env, spec, "spec")?;
    let options = options_arg(&env, options, "options")?;
    Ok(config::check(&spec, &options)
        .iter()
        .map(Diagnostic::from)
        .collect())
}

/// Every problem of `text` as the settings file at `path`, without reading
/// anything: for an editor checking a buffer before it is saved.
#[napi]
pub fn check_settings(
    env: Env,
    #[napi(ts_arg_type = "ConfigSpec")] spec: Unknown<'_>,
    #[napi(ts_arg_type = "string")] path: Unknown<'_>,
    #[napi(ts_arg_type = "string")] text: Unknown<'_>,
) -> Result<Vec<Diagnostic>> {
    let spec = spec_arg(&env, spec, "spec")?;
    let path = args::string(&env, path, "path")?;
    let text = args::string(&env, text, "text")?;
    Ok(config::check_settings(&spec, path, &text)
        .iter()
        .map(Diagnostic::from)
        .collect())
}
