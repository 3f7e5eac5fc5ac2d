//! Failures and diagnostics as a person reads them: one message on
//! standard error, source snippets with a caret (miette), an exit code.

use std::fmt;
use std::path::Path;
use std::process::ExitCode;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource, Report,
};
use promptreg::{Diagnostic, Severity};

/// Exit code for usage and configuration errors.
pub const USAGE: u8 = 2;
/// Exit code for `check` findings.
pub const FINDINGS: u8 = 1;

/// Why a command stopped: the text for standard error and the exit code.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: u8,
}

impl Failure {
    /// A usage or configuration error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            message: format!("error: {}", message.into()),
            code: USAGE,
        }
    }

    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.code)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message.trim_end())
    }
}

impl From<promptreg::Error> for Failure {
    fn from(err: promptreg::Error) -> Self {
        if err.diagnostics().is_empty() {
            return Failure::usage(err.to_string());
        }
        Failure {
            message: render(err.diagnostics(), false),
            code: USAGE,
        }
    }
}

/// Every diagnostic, each as a report with a source snippet when the file
/// and position are known.
pub fn render(diagnostics: &[Diagnostic], color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(100);
    let mut out = String::new();
    for d in diagnostics {
        // Writing to a String cannot fail.
        let _ = handler.render_report(&mut out, report(d).as_ref());
    }
    out
}

fn report(d: &Diagnostic) -> Report {
    let severity = match d.severity {
        Severity::Error => miette::Severity::Error,
        Severity::Warning => miette::Severity::Warning,
    };
    let source = d.file.as_deref().and_then(|file| snippet(file, d));
    let message = match (&source, &d.key_path) {
        (Some(_), Some(key)) => format!("{} at `{key}`", d.message),
        (Some(_), None) => d.message.clone(),
        (None, _) => {
            let mut plain = d.clone();
            plain.suggestion = None;
            plain.to_string()
        }
    };
    let mut diagnostic = MietteDiagnostic::new(message).with_severity(severity);
    if let Some(help) = &d.suggestion {
        diagnostic = diagnostic.with_help(help.clone());
    }
    match source {
        Some((name, text, span)) => {
            let label = d.key_path.clone().unwrap_or_else(|| "here".to_owned());
            let diagnostic = diagnostic.with_labels([LabeledSpan::at(span, label)]);
            Report::new(diagnostic).with_source_code(NamedSource::new(name, text))
        }
        None => Report::new(diagnostic),
    }
}

/// The file's text and the span to underline, when there is a position.
fn snippet(file: &Path, d: &Diagnostic) -> Option<(String, String, std::ops::Range<usize>)> {
    let position = d.position?;
    let text = std::fs::read_to_string(file).ok()?;
    let span = match &d.span {
        Some(span) if span.end <= text.len() => span.clone(),
        _ => {
            let start = offset_of(&text, position.line, position.column)?;
            start..start
        }
    };
    Some((file.display().to_string(), text, span))
}

fn offset_of(text: &str, line: usize, column: usize) -> Option<usize> {
    let line_start = if line <= 1 {
        0
    } else {
        text.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let rest = &text[line_start..];
    let within = rest
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(rest.len(), |(i, _)| i);
    Some(line_start + within)
}
