//! The user's configuration: what an application declares
//! ([`ConfigSpec`]), where it is read from, and `check`/`check_settings`.

use std::collections::BTreeMap;

use promptreg::config;
use pyo3::prelude::*;

use crate::diagnostic::{Diagnostic, diagnostics};
use crate::errors::OrRaise;

/// What an application declares about its users' configuration: the
/// prompt keys they may configure, the prompts folder, the settings files.
/// A pack's manifest declares the same (`Pack.config_spec()`).
#[pyclass(frozen, module = "promptreg")]
#[derive(Clone)]
pub struct ConfigSpec {
    pub(crate) inner: config::ConfigSpec,
}

#[pymethods]
impl ConfigSpec {
    /// Checks the declaration; raises `ConfigError` naming what is wrong.
    #[new]
    #[pyo3(signature = (
        name,
        *,
        keys = Vec::new(),
        key_patterns = Vec::new(),
        prompts_dir = String::new(),
        settings_file = None,
        global_settings_file = None,
        local_settings_file = None,
        settings_env = None,
        legacy_aliases = BTreeMap::new(),
        legacy_files = BTreeMap::new(),
        max_file_size = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: String,
        keys: Vec<String>,
        key_patterns: Vec<String>,
        prompts_dir: String,
        settings_file: Option<String>,
        global_settings_file: Option<String>,
        local_settings_file: Option<String>,
        settings_env: Option<String>,
        legacy_aliases: BTreeMap<String, String>,
        legacy_files: BTreeMap<String, String>,
        max_file_size: Option<u64>,
    ) -> PyResult<Self> {
        let mut builder = config::ConfigSpec::builder(name)
            .keys(keys)
            .prompts_dir(prompts_dir);
        for pattern in key_patterns {
            builder = builder.key_pattern(pattern);
        }
        if let Some(file) = settings_file {
            builder = builder.settings_file(file);
        }
        if let Some(file) = global_settings_file {
            builder = builder.global_settings_file(file);
        }
        if let Some(file) = local_settings_file {
            builder = builder.local_settings_file(file);
        }
        if let Some(var) = settings_env {
            builder = builder.settings_env(var);
        }
        for (name, target) in legacy_aliases {
            builder = builder.legacy_alias(name, target);
        }
        for (path, key) in legacy_files {
            builder = builder.legacy_file(path, key);
        }
        if let Some(bytes) = max_file_size {
            builder = builder.max_file_size(bytes);
        }
        Ok(ConfigSpec {
            inner: builder.build().or_raise()?,
        })
    }

    /// The application's name.
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// The prompt keys users may configure.
    #[getter]
    fn keys(&self) -> Vec<String> {
        self.inner.keys().map(|k| k.to_string()).collect()
    }

    /// Key patterns with one `*`.
    #[getter]
    fn key_patterns(&self) -> Vec<String> {
        self.inner
            .patterns()
            .iter()
            .map(|p| p.to_string())
            .collect()
    }

    /// The prompts folder, relative to home and to cwd.
    #[getter]
    fn prompts_dir(&self) -> &str {
        self.inner.prompts_dir()
    }

    /// The global settings file, relative to home.
    #[getter]
    fn global_settings_file(&self) -> Option<&str> {
        self.inner.global_settings_file()
    }

    /// The local settings file, relative to cwd.
    #[getter]
    fn local_settings_file(&self) -> Option<&str> {
        self.inner.local_settings_file()
    }

    /// The environment variable naming one more settings file.
    #[getter]
    fn settings_env(&self) -> Option<&str> {
        self.inner.settings_env()
    }

    fn __repr__(&self) -> String {
        format!(
            "ConfigSpec({:?}, keys={:?}, prompts_dir={:?})",
            self.inner.name(),
            self.keys(),
            self.inner.prompts_dir()
        )
    }
}

/// Where a configuration is read from.
pub(crate) fn load_options(
    home: String,
    cwd: Option<String>,
    settings_env: Option<String>,
) -> config::LoadOptions {
    config::LoadOptions::new(home, cwd.unwrap_or_default()).settings_env_value(settings_env)
}

/// Every problem of the configuration `spec` declares, read under `home`
/// and `cwd`, without loading it anywhere: errors (which would stop a
/// load) and warnings (what loads but will not do what was meant).
#[pyfunction]
#[pyo3(signature = (spec, *, home, cwd = None, settings_env = None))]
pub fn check(
    py: Python<'_>,
    spec: &ConfigSpec,
    home: String,
    cwd: Option<String>,
    settings_env: Option<String>,
) -> Vec<Diagnostic> {
    let options = load_options(home, cwd, settings_env);
    py.detach(|| diagnostics(&config::check(&spec.inner, &options)))
}

/// Every problem of `text` as the settings file at `path`, without reading
/// anything: for an editor checking a buffer before it is saved.
#[pyfunction]
pub fn check_settings(spec: &ConfigSpec, path: String, text: &str) -> Vec<Diagnostic> {
    diagnostics(&config::check_settings(&spec.inner, path, text))
}
