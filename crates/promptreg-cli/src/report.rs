//! Failures and diagnostics as a person or a program reads them: source
//! snippets with a caret (miette), or JSON; an exit code.
//!
//! Snippets come from the [`Excerpt`] each diagnostic carries: the library
//! cuts a bounded, printable window around the span when it locates the
//! problem, so a report never reads a file again, never shows more than a
//! few hundred characters of it and cannot be steered by what the file
//! holds. Everything else printed from a file or a name goes through
//! [`printable`] too.

use std::borrow::Cow;
use std::fmt;
use std::io::IsTerminal;
use std::process::ExitCode;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, MietteError,
    MietteSpanContents, Report, SourceCode, SourceSpan, SpanContents,
};
use promptreg::{Diagnostic, Excerpt, Severity, printable};
use serde_json::{Value, json};
use textwrap::core::Word;
use textwrap::{WordSeparator, WordSplitter};

/// Exit code for usage and configuration errors.
pub const USAGE: u8 = 2;
/// Exit code for `check` findings.
pub const FINDINGS: u8 = 1;

/// Why a command stopped: what it says and the exit code.
#[derive(Debug)]
pub struct Failure {
    /// A stable, kebab-case name of what went wrong (`usage`,
    /// `unknown-id`, or a diagnostic's code).
    kind: Cow<'static, str>,
    /// One sentence, printable.
    message: String,
    /// Every problem found, when the failure is an invalid configuration.
    diagnostics: Vec<Diagnostic>,
    /// A line after the diagnostics saying what they stopped.
    summary: Option<String>,
    /// Lines after the message (a gate's failing cases), each printable.
    details: Box<[String]>,
    pub code: u8,
}

impl Failure {
    /// A usage or configuration error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            kind: Cow::Borrowed("usage"),
            message: printable(&message.into()).into_owned(),
            diagnostics: Vec::new(),
            summary: None,
            details: Box::default(),
            code: USAGE,
        }
    }

    /// A failure of `err`'s diagnostics, followed by a line saying what
    /// they stopped (`the pack fails check: nothing was pushed`).
    pub fn stopped(err: promptreg::Error, summary: impl Into<String>) -> Self {
        let mut failure = Failure::from(err);
        failure.summary = Some(summary.into());
        failure
    }

    /// This failure with lines after its message, as `kind`: what a
    /// person reads below the sentence (each line made printable).
    pub fn with_details(
        mut self,
        kind: &'static str,
        lines: impl IntoIterator<Item = String>,
    ) -> Self {
        self.kind = Cow::Borrowed(kind);
        self.details = lines
            .into_iter()
            .map(|l| printable(&l).into_owned())
            .collect();
        self
    }

    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.code)
    }

    /// The failure for a program (`--json`): `{"error": {...}}`, with every
    /// diagnostic under `"diagnostics"` when there are any.
    pub fn to_json(&self) -> Value {
        let Some(first) = self.diagnostics.first() else {
            let mut error = json!({
                "code": self.kind,
                "message": self.message,
                "file": null,
                "line": null,
                "column": null,
                "key_path": null,
            });
            if !self.details.is_empty() {
                error["details"] = json!(self.details);
            }
            return json!({ "error": error });
        };
        json!({
            "error": diagnostic_json(first),
            "diagnostics": self.diagnostics.iter().map(diagnostic_json).collect::<Vec<_>>(),
        })
    }

    /// The failure for a person, as standard error shows it.
    pub fn to_text(&self) -> String {
        if self.diagnostics.is_empty() {
            let details: String = self.details.iter().map(|l| format!("\n{l}")).collect();
            return format!("error: {}{details}", self.message);
        }
        let text = render(&self.diagnostics, false, Wrap::stderr());
        match &self.summary {
            Some(summary) => format!("{text}error: {summary}"),
            None => text.trim_end().to_owned(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

impl From<promptreg::Error> for Failure {
    fn from(err: promptreg::Error) -> Self {
        let diagnostics = err.diagnostics().to_vec();
        let kind = match diagnostics.first() {
            Some(first) => first.code.as_str(),
            None => err.kind().as_str(),
        };
        Failure {
            kind: Cow::Borrowed(kind),
            message: printable(&err.to_string()).into_owned(),
            diagnostics,
            summary: None,
            details: Box::default(),
            code: USAGE,
        }
    }
}

/// One diagnostic for a program, as the library serialises it, with every
/// string printable (control characters escaped) like the text a person
/// sees.
pub fn diagnostic_json(d: &Diagnostic) -> Value {
    printable_strings(serde_json::to_value(d).unwrap_or_default())
}

/// `value` with every string made printable.
fn printable_strings(value: Value) -> Value {
    match value {
        Value::String(s) => Value::String(printable(&s).into_owned()),
        Value::Array(items) => Value::Array(items.into_iter().map(printable_strings).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k, printable_strings(v)))
                .collect(),
        ),
        other => other,
    }
}

/// How reports wrap their messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrap {
    /// Not at all: one line per message, whole, for pipes and files.
    Never,
    /// At this many columns, never inside a word, a path or a code span.
    At(usize),
}

impl Wrap {
    /// For standard error: see [`Wrap::for_terminal`].
    pub fn stderr() -> Wrap {
        let stream = std::io::stderr();
        Wrap::for_terminal(
            stream.is_terminal(),
            terminal_size::terminal_size_of(stream),
        )
    }

    /// For standard output: see [`Wrap::for_terminal`].
    pub fn stdout() -> Wrap {
        let stream = std::io::stdout();
        Wrap::for_terminal(
            stream.is_terminal(),
            terminal_size::terminal_size_of(stream),
        )
    }

    /// The terminal's width on a terminal; no wrapping elsewhere, so a
    /// message piped to a file or `grep` stays on one line.
    fn for_terminal(
        is_terminal: bool,
        size: Option<(terminal_size::Width, terminal_size::Height)>,
    ) -> Wrap {
        match size {
            Some((terminal_size::Width(width), _)) if is_terminal && width > 0 => {
                Wrap::At(width.into())
            }
            _ => Wrap::Never,
        }
    }
}

/// Every diagnostic, each as a report with a source snippet when it carries
/// an excerpt.
pub fn render(diagnostics: &[Diagnostic], color: bool, wrap: Wrap) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        // The header names the file with the library's line:column, which
        // count in the whole file, not in the excerpt.
        .without_primary_span_start()
        .with_break_words(false)
        .with_word_splitter(WordSplitter::NoHyphenation)
        .with_word_separator(WordSeparator::Custom(words_outside_code_spans));
    let handler = match wrap {
        Wrap::Never => handler.with_wrap_lines(false),
        Wrap::At(width) => handler.with_width(width),
    };
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
        Severity::Note => miette::Severity::Advice,
    };
    let snippet = d.excerpt.as_ref().zip(d.file.as_ref());
    let message = match (snippet, &d.key_path) {
        (Some(_), Some(key)) => format!("{} at `{}`", printable(&d.message), printable(key)),
        (Some(_), None) => printable(&d.message).into_owned(),
        (None, _) => {
            let mut plain = d.clone();
            plain.suggestion = None;
            plain.to_string()
        }
    };
    let mut message = message;
    for line in d.detail.iter().flat_map(|detail| detail.lines()) {
        message.push('\n');
        message.push_str(&printable(line));
    }
    let mut diagnostic = MietteDiagnostic::new(message).with_severity(severity);
    if let Some(help) = &d.suggestion {
        diagnostic = diagnostic.with_help(printable(help));
    }
    let Some((excerpt, file)) = snippet else {
        return Report::new(diagnostic);
    };
    let label = d
        .key_path
        .as_deref()
        .map_or(Cow::Borrowed("here"), printable);
    let diagnostic =
        diagnostic.with_labels([LabeledSpan::at(excerpt.span.clone(), label.into_owned())]);
    let mut name = printable(&file.display().to_string()).into_owned();
    if let Some(p) = d.position {
        name.push_str(&format!(":{}:{}", p.line, p.column));
    }
    Report::new(diagnostic).with_source_code(Snippet {
        name,
        excerpt: excerpt.clone(),
    })
}

/// An [`Excerpt`] as miette reads source: its lines numbered as in the file.
#[derive(Debug)]
struct Snippet {
    name: String,
    excerpt: Excerpt,
}

impl SourceCode for Snippet {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner = self
            .excerpt
            .text
            .read_span(span, context_lines_before, context_lines_after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            inner.line() + self.excerpt.first_line - 1,
            inner.column(),
            inner.line_count(),
        )))
    }
}

/// Splits a message into words at spaces, except inside a `code span`: a
/// key, an id or a file name quoted in backticks stays on one line.
fn words_outside_code_spans(line: &str) -> Box<dyn Iterator<Item = Word<'_>> + '_> {
    let mut words = Vec::new();
    let mut start = 0;
    let mut in_code = false;
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'`' => in_code = !in_code,
            b' ' if !in_code && bytes.get(i + 1).is_some_and(|&next| next != b' ') => {
                words.push(Word::from(&line[start..=i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < line.len() {
        words.push(Word::from(&line[start..]));
    }
    Box::new(words.into_iter())
}

#[cfg(test)]
mod tests {
    use super::*;
    use promptreg::{DiagnosticCode, LineIndex};

    fn sample() -> Vec<Diagnostic> {
        let text = "{\n  \"prompts\": { \"goal-tweak\": { \"mode\": \"apend\" } }\n}\n";
        let start = text.find("\"apend\"").unwrap();
        let lines = LineIndex::new(text);
        vec![
            Diagnostic::error(
                DiagnosticCode::InvalidMode,
                "invalid mode `apend`; valid modes are `override`, `append`, `global-local`, `local`, `global-local-merge`, `off`",
            )
            .in_file("/home/someone/projects/a-long-project-name/.pi/pi-goal-xx/prompts/goal-tweak.md")
            .at(&lines, start..start + 7)
            .key_path("prompts.goal-tweak.mode")
            .suggest(Some("did you mean `append`? see `promptreg schema --help`".to_owned())),
            Diagnostic::warning(
                DiagnosticCode::UnknownPromptFile,
                "prompt file `goal-tweak-with-a-long-name.md` matches no prompt key and is never read",
            )
            .in_file("/home/someone/projects/a-long-project-name/.pi/pi-goal-xx/prompts/goal-tweak-with-a-long-name.md"),
        ]
    }

    #[test]
    fn only_a_terminal_wraps_and_at_its_width() {
        use terminal_size::{Height, Width};
        let size = Some((Width(120), Height(40)));
        assert_eq!(Wrap::for_terminal(true, size), Wrap::At(120));
        assert_eq!(Wrap::for_terminal(false, size), Wrap::Never);
        assert_eq!(Wrap::for_terminal(true, None), Wrap::Never);
    }

    #[test]
    fn without_wrapping_each_message_is_one_line() {
        let text = render(&sample(), false, Wrap::Never);
        assert!(text.contains(
            "  × invalid mode `apend`; valid modes are `override`, `append`, `global-local`, `local`, `global-local-merge`, `off` at `prompts.goal-tweak.mode`\n"
        ), "{text}");
        assert!(
            text.contains("prompts/goal-tweak-with-a-long-name.md\n"),
            "{text}"
        );
    }

    #[test]
    fn wrapping_never_breaks_a_path_a_key_or_a_code_span() {
        for width in [30, 50, 80, 100] {
            let text = render(&sample(), false, Wrap::At(width));
            for whole in [
                "/home/someone/projects/a-long-project-name/.pi/pi-goal-xx/prompts/goal-tweak-with-a-long-name.md",
                "`prompts.goal-tweak.mode`",
                "`promptreg schema --help`",
                "`goal-tweak-with-a-long-name.md`",
                "`global-local-merge`",
            ] {
                assert!(
                    text.contains(whole),
                    "width {width}: `{whole}` broken in\n{text}"
                );
            }
        }
    }

    #[test]
    fn a_span_far_along_a_line_renders_a_bounded_snippet() {
        let text = format!(
            "{{\"prompts\":{{\"x\":{{\"inline\":\"{}\",\"mode\":\"apend\"}}}}}}",
            "A".repeat(70_000)
        );
        let start = text.find("\"apend\"").unwrap();
        let d = Diagnostic::error(DiagnosticCode::InvalidMode, "invalid mode `apend`")
            .in_file("s.json")
            .at(&LineIndex::new(&text), start..start + 7);
        let shown = render(&[d], false, Wrap::Never);
        assert!(shown.contains("[s.json:1:70037]"), "{shown}");
        assert!(shown.len() < 2000, "{}", shown.len());
    }

    #[test]
    fn json_names_the_first_error_and_lists_every_diagnostic() {
        let failure = Failure::from(promptreg::Error::from_diagnostics(sample()));
        let value = failure.to_json();
        assert_eq!(value["error"]["code"], "invalid-mode");
        assert_eq!(value["error"]["line"], 2);
        assert_eq!(value["error"]["key_path"], "prompts.goal-tweak.mode");
        assert_eq!(value["diagnostics"].as_array().unwrap().len(), 2);
        let usage = Failure::usage("no pack at \u{1b}]0;x\u{7}").to_json();
        assert_eq!(usage["error"]["code"], "usage");
        assert_eq!(usage["error"]["message"], "no pack at \\u{1b}]0;x\\u{7}");
    }
}
