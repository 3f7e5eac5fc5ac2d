//! Problems in a configuration, a pack or a settings file ([`Diagnostic`]),
//! and what a load reports ([`LoadReport`]): what errors, loads and
//! reloads all carry.

use pyo3::prelude::*;

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

impl From<promptreg::config::LoadReport> for LoadReport {
    fn from(report: promptreg::config::LoadReport) -> Self {
        LoadReport {
            changed: report.changed.iter().map(|id| id.to_string()).collect(),
            warnings: diagnostics(&report.warnings),
        }
    }
}
