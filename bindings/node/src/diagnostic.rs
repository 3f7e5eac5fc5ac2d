//! Problems in a configuration, a pack or a settings file, and what a
//! load reports: the objects errors, loads and reloads all carry.

use napi_derive::napi;

use crate::js::saturating_u32;

/// What a load or reload changed.
#[napi(object)]
pub struct LoadReport {
    /// The keys whose configuration changed.
    pub changed: Vec<String>,
    /// Problems that did not stop the load.
    pub warnings: Vec<Diagnostic>,
}

/// A problem in a configuration, a pack or a settings file, and where.
#[napi(object)]
pub struct Diagnostic {
    /// `error` (stops a load), `warning`, or `note` (checks skipped because
    /// of an error reported already).
    pub severity: String,
    /// A stable kebab-case name (`unknown-prompt-key`, `invalid-mode`).
    pub code: String,
    /// What is wrong.
    pub message: String,
    /// The file.
    pub file: Option<String>,
    /// The line, from 1.
    pub line: Option<u32>,
    /// The column in characters, from 1.
    pub column: Option<u32>,
    /// The key path in a settings file (`prompts.auditor.mode`).
    pub key_path: Option<String>,
    /// The fix, when there is one (`did you mean \`append\`?`).
    pub suggestion: Option<String>,
}

impl From<&promptreg::Diagnostic> for Diagnostic {
    fn from(d: &promptreg::Diagnostic) -> Self {
        Diagnostic {
            severity: d.severity.to_string(),
            code: d.code.as_str().to_owned(),
            message: d.message.clone(),
            file: d.file.as_deref().map(|f| f.display().to_string()),
            line: d.position.map(|p| saturating_u32(p.line)),
            column: d.position.map(|p| saturating_u32(p.column)),
            key_path: d.key_path.clone(),
            suggestion: d.suggestion.clone(),
        }
    }
}

impl From<promptreg::config::LoadReport> for LoadReport {
    fn from(report: promptreg::config::LoadReport) -> Self {
        LoadReport {
            changed: report.changed.iter().map(|id| id.to_string()).collect(),
            warnings: report.warnings.iter().map(Diagnostic::from).collect(),
        }
    }
}
