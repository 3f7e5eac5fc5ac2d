//! The user's configuration: what an application declares
//! ([`ConfigSpec`]), what a load reports ([`LoadReport`], [`Diagnostic`]),
//! and `check`/`check_settings`.

use std::collections::BTreeMap;

use promptreg::config;
use pyo3::prelude::*;

use crate::errors::OrRaise;
use crate::record::record;

/// A problem in a configuration, a pack or a settings file, and where.
#[pyclass(frozen, get_all, module = "promptreg")]
#[derive(Clone)]
pub struct Diagnostic {
    /// `error` (stops a load), `warning`, or `note`.
    pub severity: String,
    /// A stable kebab-case name (`unknown-prompt-key`, `invalid-mode`).
    pub code: String,
    /// What is wrong.
    pub message: String,
    /// The file.
    pub file: Option<String>,
    /// The line, from 1.
    pub line: Option<usize>,
    /// The column in characters, from 1.
    pub column: Option<usize>,
    /// The key path in a settings file (`prompts.auditor.mode`).
    pub key_path: Option<String>,
    /// The fix, when there is one.
    pub suggestion: Option<String>,
}

record!(Diagnostic[severity, code, message, file, line, column, key_path, suggestion] {
    fn __str__(&self) -> String {
        let place = match (&self.file, self.line, self.column) {
            (Some(file), Some(line), Some(column)) => format!("{file}:{line}:{column}: "),
            (Some(file), _, _) => format!("{file}: "),
            _ => String::new(),
        };
        let fix = self.suggestion.as_deref().map(|s| format!(" ({s})")).unwrap_or_default();
        format!("{place}{}: {}{fix}", self.severity, self.message)
    }
});

impl From<&promptreg::Diagnostic> for Diagnostic {
    fn from(d: &promptreg::Diagnostic) -> Self {
        Diagnostic {
            severity: d.severity.to_string(),
            code: d.code.as_str().to_owned(),
            message: d.message.clone(),
            file: d.file.as_deref().map(|f| f.display().to_string()),
            line: d.position.map(|p| p.line),
            column: d.position.map(|p| p.column),
            key_path: d.key_path.clone(),
            suggestion: d.suggestion.clone(),
        }
    }
}

/// The diagnostics of a list of the library's.
pub(crate) fn diagnostics(list: &[promptreg::Diagnostic]) -> Vec<Diagnostic> {
    list.iter().map(Diagnostic::from).collect()
}

/// What a load or reload changed.
#[pyclass(frozen, get_all, module = "promptreg")]
#[derive(Clone)]
pub struct LoadReport {
    /// The keys whose configuration changed.
    pub changed: Vec<String>,
    /// Problems that did not stop the load.
    pub warnings: Vec<Diagnostic>,
}

record!(LoadReport[changed, warnings]);

impl From<config::LoadReport> for LoadReport {
    fn from(report: config::LoadReport) -> Self {
        LoadReport {
            changed: report.changed.iter().map(|id| id.to_string()).collect(),
            warnings: diagnostics(&report.warnings),
        }
    }
}

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
