//! [`Diagnostic`]: one problem found in a configuration file, with where it
//! is: the file, the byte range, the line and column, the key path.
//!
//! The library keeps plain byte ranges; turning them into source snippets is
//! left to the edge (the command line tool).

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth fixing; does not stop a load.
    Warning,
    /// Stops a load; the previous configuration stays in force.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// What a diagnostic is about, in a form code can match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DiagnosticCode {
    /// The file is not valid JSON with comments.
    Syntax,
    /// The same key appears twice in one object.
    DuplicateKey,
    /// A key the settings format does not have.
    UnknownKey,
    /// A prompt key the application does not declare.
    UnknownPromptKey,
    /// A prompt key that is not a valid prompt id.
    InvalidPromptKey,
    /// A mode that does not exist.
    InvalidMode,
    /// A value of the wrong JSON type.
    WrongType,
    /// A file could not be read (other than not existing).
    Io,
    /// A file is not valid UTF-8.
    InvalidUtf8,
    /// A file is larger than the configured limit.
    FileTooLarge,
    /// A legacy key is ignored because the explicit block is present.
    LegacyShadowed,
    /// A prompt file whose name matches no declared key; it is never read.
    UnknownPromptFile,
    /// A prompt file that is empty or white space only; it counts as absent.
    EmptyPromptFile,
    /// A declaration (of an application or a pack) is invalid.
    InvalidDeclaration,
    /// A pack manifest does not parse or has invalid values.
    Manifest,
    /// Front matter that does not parse or has invalid values.
    FrontMatter,
    /// A template that does not compile.
    TemplateSyntax,
    /// A template uses a variable its front matter does not declare.
    UndeclaredVariable,
    /// Two files define the same prompt (or the same locale variant).
    DuplicateId,
    /// A default file for a prompt id the manifest does not declare.
    UndeclaredId,
    /// A file or folder named by a project's configuration resolves
    /// (symbolic links followed) outside the project, which is not trusted:
    /// it is not read.
    OutsideProject,
    /// A `trustedProjects` entry that is not `~/...` or absolute, or the
    /// list in a settings file other than the global one (ignored there).
    TrustedProjects,
}

/// A 1-based line and column (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` in `text` (clamped to the text).
    pub fn of_offset(text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Position {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }
}

/// One problem found in a configuration, with everything needed to find and
/// fix it.
///
/// Its [`Display`](fmt::Display) reads like
/// ``unknown prompt key `goal-runing` (did you mean `goal-running`?) at `prompts.goal-runing` in .pi/settings.json:3:5``.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// What kind of problem.
    pub code: DiagnosticCode,
    /// What is wrong, in one sentence.
    pub message: String,
    /// The file, when the problem is in one.
    pub file: Option<PathBuf>,
    /// The byte range in the file.
    pub span: Option<Range<usize>>,
    /// The line and column where the span starts.
    pub position: Option<Position>,
    /// The key path in a settings file, such as `prompts.auditor.mode`.
    pub key_path: Option<String>,
    /// How to fix it, when there is an idea.
    pub suggestion: Option<String>,
}

impl Diagnostic {
    /// An error diagnostic.
    pub fn error(code: DiagnosticCode, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, message)
    }

    /// A warning diagnostic.
    pub fn warning(code: DiagnosticCode, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, message)
    }

    fn new(severity: Severity, code: DiagnosticCode, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            code,
            message: message.into(),
            file: None,
            span: None,
            position: None,
            key_path: None,
            suggestion: None,
        }
    }

    /// Names the file.
    pub fn in_file(mut self, file: impl AsRef<Path>) -> Self {
        self.file = Some(file.as_ref().to_path_buf());
        self
    }

    /// Records the byte range in `text` (the file's contents) and the
    /// position it starts at.
    pub fn at(mut self, text: &str, span: Range<usize>) -> Self {
        self.position = Some(Position::of_offset(text, span.start));
        self.span = Some(span);
        self
    }

    /// Records the key path.
    pub fn key_path(mut self, path: impl Into<String>) -> Self {
        self.key_path = Some(path.into());
        self
    }

    /// Records a suggestion, when there is one.
    pub fn suggest(mut self, suggestion: impl Into<Option<String>>) -> Self {
        self.suggestion = suggestion.into();
        self
    }

    /// Whether this is an error (not a warning).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(suggestion) = &self.suggestion {
            write!(f, " ({suggestion})")?;
        }
        if let Some(key_path) = &self.key_path {
            write!(f, " at `{key_path}`")?;
        }
        if let Some(file) = &self.file {
            write!(f, " in {}", file.display())?;
            if let Some(Position { line, column }) = self.position {
                write!(f, ":{line}:{column}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters_from_one() {
        let text = "{\n  \"é\": 1,\n  \"x\": 2\n}";
        assert_eq!(
            Position::of_offset(text, 0),
            Position { line: 1, column: 1 }
        );
        let x = text.find("\"x\"").unwrap();
        assert_eq!(
            Position::of_offset(text, x),
            Position { line: 3, column: 3 }
        );
        let after_e = text.find("\": 1").unwrap();
        assert_eq!(
            Position::of_offset(text, after_e),
            Position { line: 2, column: 5 }
        );
        assert_eq!(
            Position::of_offset(text, 999),
            Position { line: 4, column: 2 }
        );
    }

    #[test]
    fn display_reads_as_one_sentence() {
        let text = "{\n  \"prompts\": {\n    \"goal-runing\": {}\n  }\n}";
        let start = text.find("\"goal-runing\"").unwrap();
        let d = Diagnostic::error(
            DiagnosticCode::UnknownPromptKey,
            "unknown prompt key `goal-runing`",
        )
        .in_file(".pi/settings.json")
        .at(text, start..start + 13)
        .key_path("prompts.goal-runing")
        .suggest(Some("did you mean `goal-running`?".to_string()));
        assert_eq!(
            d.to_string(),
            "unknown prompt key `goal-runing` (did you mean `goal-running`?) at `prompts.goal-runing` in .pi/settings.json:3:5"
        );
    }
}
