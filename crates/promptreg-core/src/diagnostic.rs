//! [`Diagnostic`]: one problem found in a configuration file, with where it
//! is: the file, the byte range, the line and column, the key path.
//!
//! The library keeps plain byte ranges; turning them into source snippets is
//! left to the edge (the command line tool).

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// How serious a diagnostic is; serialises as `"note"`, `"warning"` or
/// `"error"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Not a problem: what a check did not do, and why (checks skipped
    /// because of an error reported already). Counts as neither.
    Note,
    /// Worth fixing; does not stop a load.
    Warning,
    /// Stops a load; the previous configuration stays in force.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Note => "note",
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
    /// Model settings in front matter (`model:`) with a well-known key of
    /// the wrong type or out of range, or a response format whose schema
    /// is not a JSON Schema.
    ModelSettings,
    /// A model setting key that neither OpenAI nor Anthropic takes, and the
    /// pack does not list in `extra_model_keys`: most often a typo.
    UnknownModelSetting,
    /// A chat file's messages: an unknown role, an empty message, a
    /// history placeholder without a name, text before the first role
    /// heading, rules attached to a message it does not have.
    Chat,
    /// A template that does not compile.
    TemplateSyntax,
    /// A template uses a variable its front matter does not declare.
    UndeclaredVariable,
    /// Stands for the diagnostics of one file past the first
    /// [`MAX_DIAGNOSTICS_PER_FILE`], which are not reported one by one.
    MoreProblems,
    /// Checks that were not made because of an error reported already (the
    /// locale variants of a default file that fails to load); a note.
    SkippedChecks,
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
    /// An `inline` setting with a mode other than `override`: inline text
    /// replaces the body in every mode, so the mode has no effect.
    InlineIgnoresMode,
    /// A `file` setting names a file that does not exist or is blank; the
    /// setting is skipped and the prompt directories are used.
    MissingSettingFile,
    /// A file not marked as a template contains `{{` or `{%`, which is sent
    /// to the model as written.
    TemplateSyntaxInText,
    /// The locale in a file name is well-formed but names no known
    /// language (`jp` for `ja`); no render uses the file.
    UnknownLanguage,
    /// A variable declared in front matter that no part of the file uses.
    UnusedVariable,
    /// A key the pack declares has no default file, so it cannot be
    /// rendered unless the application registers a default in code.
    MissingDefault,
    /// Overrides or appenders registered for an id that has no default
    /// (often a misspelt id); see [`Snapshot::problems`](crate::Snapshot::problems).
    NoDefault,
    /// A snippet include that cannot be resolved: a missing snippet, a
    /// cycle, a name that is a path, an include where none is allowed.
    Snippet,
    /// A prompt test file (`tests/*.toml`) that cannot be read as tests:
    /// an unknown key, a regex that does not compile, an unknown prompt.
    PromptTest,
    /// A locale variant translated from an older text of its default: the
    /// default changed since (`promptreg l10n mark-current` records a
    /// variant as current).
    StaleTranslation,
    /// Locale variants that record no source, so whether they are
    /// current is unknown.
    UntrackedTranslation,
    /// A translation file (XLIFF or PO) that cannot be imported: malformed,
    /// for another pack or locale, out of date, or changing a template's
    /// syntax.
    Translation,
    /// Text holds a bidirectional-text override or isolate (U+202A to
    /// U+202E, U+2066 to U+2069): it shows in another order than a model
    /// reads it, so a reviewer may not see what is sent.
    BidiControl,
    /// A prompt's tools or output schema: a missing name, two tools of one
    /// name, a schema that is not a JSON Schema (checked against the
    /// 2020-12 meta-schema), a `$ref` that leaves the schema, a schema too
    /// deep or too large, a locale variant that changes more than
    /// descriptions.
    Contract,
    /// A tool or output schema a provider would refuse or not enforce: a
    /// tool name outside `^[a-zA-Z0-9_-]{1,64}$`, parameters that are not an
    /// object schema (Anthropic's `input_schema`), an object not closed for
    /// OpenAI's strict mode.
    ProviderRule,
    /// A key in a JSON Schema that is no keyword of the 2020-12 vocabulary:
    /// most often a typo (`requried`), which validation would ignore.
    UnknownSchemaKeyword,
}

/// A code serialises as its stable name (`"unknown-prompt-key"`).
impl serde::Serialize for DiagnosticCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A diagnostic serialises as a program reads it: `severity`, `code`,
/// `message`, `file`, `line`, `column`, `key_path`, `suggestion` (absent
/// values are `null`), the shape of `promptreg check --json`.
impl serde::Serialize for Diagnostic {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("Diagnostic", 9)?;
        out.serialize_field("severity", &self.severity)?;
        out.serialize_field("code", &self.code)?;
        out.serialize_field("message", &self.message)?;
        out.serialize_field("file", &self.file)?;
        out.serialize_field("line", &self.position.map(|p| p.line))?;
        out.serialize_field("column", &self.position.map(|p| p.column))?;
        out.serialize_field("key_path", &self.key_path)?;
        out.serialize_field("suggestion", &self.suggestion)?;
        if self.detail.is_some() {
            out.serialize_field("detail", &self.detail)?;
        } else {
            out.skip_field("detail")?;
        }
        out.end()
    }
}

impl DiagnosticCode {
    /// A stable, kebab-case name for programs (`unknown-prompt-key`), as
    /// `promptreg --json` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticCode::Syntax => "syntax",
            DiagnosticCode::DuplicateKey => "duplicate-key",
            DiagnosticCode::UnknownKey => "unknown-key",
            DiagnosticCode::UnknownPromptKey => "unknown-prompt-key",
            DiagnosticCode::InvalidPromptKey => "invalid-prompt-key",
            DiagnosticCode::InvalidMode => "invalid-mode",
            DiagnosticCode::WrongType => "wrong-type",
            DiagnosticCode::Io => "io",
            DiagnosticCode::InvalidUtf8 => "invalid-utf8",
            DiagnosticCode::FileTooLarge => "file-too-large",
            DiagnosticCode::LegacyShadowed => "legacy-shadowed",
            DiagnosticCode::UnknownPromptFile => "unknown-prompt-file",
            DiagnosticCode::EmptyPromptFile => "empty-prompt-file",
            DiagnosticCode::InvalidDeclaration => "invalid-declaration",
            DiagnosticCode::Manifest => "manifest",
            DiagnosticCode::FrontMatter => "front-matter",
            DiagnosticCode::ModelSettings => "model-settings",
            DiagnosticCode::UnknownModelSetting => "unknown-model-setting",
            DiagnosticCode::Chat => "chat",
            DiagnosticCode::TemplateSyntax => "template-syntax",
            DiagnosticCode::UndeclaredVariable => "undeclared-variable",
            DiagnosticCode::MoreProblems => "more-problems",
            DiagnosticCode::SkippedChecks => "skipped-checks",
            DiagnosticCode::DuplicateId => "duplicate-id",
            DiagnosticCode::UndeclaredId => "undeclared-id",
            DiagnosticCode::OutsideProject => "outside-project",
            DiagnosticCode::TrustedProjects => "trusted-projects",
            DiagnosticCode::InlineIgnoresMode => "inline-ignores-mode",
            DiagnosticCode::MissingSettingFile => "missing-setting-file",
            DiagnosticCode::TemplateSyntaxInText => "template-syntax-in-text",
            DiagnosticCode::UnknownLanguage => "unknown-language",
            DiagnosticCode::UnusedVariable => "unused-variable",
            DiagnosticCode::MissingDefault => "missing-default",
            DiagnosticCode::NoDefault => "no-default",
            DiagnosticCode::Snippet => "snippet",
            DiagnosticCode::PromptTest => "prompt-test",
            DiagnosticCode::StaleTranslation => "stale-translation",
            DiagnosticCode::UntrackedTranslation => "untracked-translation",
            DiagnosticCode::Translation => "translation",
            DiagnosticCode::BidiControl => "bidi-control",
            DiagnosticCode::Contract => "contract",
            DiagnosticCode::ProviderRule => "provider-rule",
            DiagnosticCode::UnknownSchemaKeyword => "unknown-schema-keyword",
        }
    }
}

/// A 1-based line and column (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Position {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` in `text` (clamped to the text).
    ///
    /// This reads `text` from the start; to locate many offsets in one
    /// text, build a [`LineIndex`] once.
    pub fn of_offset(text: &str, offset: usize) -> Position {
        LineIndex::new(text).position(offset)
    }
}

/// Characters shown before the start of a span in an [`Excerpt`].
const EXCERPT_BEFORE: usize = 80;
/// Characters of the span itself shown in an [`Excerpt`], at most.
const EXCERPT_SPAN: usize = 120;
/// Characters shown after the end of a span in an [`Excerpt`].
const EXCERPT_AFTER: usize = 80;
/// Characters of a neighbouring line shown as context in an [`Excerpt`].
const EXCERPT_CONTEXT: usize = EXCERPT_BEFORE + EXCERPT_SPAN + EXCERPT_AFTER;
/// Bytes between two character counts kept by a [`LineIndex`].
const CHAR_MARK_STRIDE: usize = 256;

/// The lines of one text, indexed once, to turn byte offsets into
/// [`Position`]s and [`Excerpt`]s without reading the text from the start
/// for each one.
///
/// Building it reads the text once; each position then costs a binary
/// search and at most a few hundred bytes of counting, so a file with many
/// problems is located in linear time.
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    text: &'a str,
    /// The byte offset where each line starts; the first is 0.
    line_starts: Vec<usize>,
    /// The number of characters before byte `i * CHAR_MARK_STRIDE`, so a
    /// column on a very long line is counted from a mark, not from the
    /// line's start.
    char_marks: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes the lines of `text` (lines end at `\n`).
    pub fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let line_starts = std::iter::once(0)
            .chain(newlines(bytes).map(|i| i + 1))
            .collect();
        let mut char_marks = Vec::with_capacity(bytes.len() / CHAR_MARK_STRIDE + 1);
        let mut chars = 0;
        for chunk in bytes.chunks(CHAR_MARK_STRIDE) {
            char_marks.push(chars);
            chars += count_char_starts(chunk);
        }
        char_marks.push(chars);
        LineIndex {
            text,
            line_starts,
            char_marks,
        }
    }

    /// The text indexed.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The position of byte `offset` (clamped to the text, and moved back
    /// to the start of the character it falls in).
    pub fn position(&self, offset: usize) -> Position {
        let offset = self.char_boundary(offset);
        let line = self.line_of(offset);
        let line_start = self.line_starts[line];
        Position {
            line: line + 1,
            column: self.chars_before(offset) - self.chars_before(line_start) + 1,
        }
    }

    /// The byte offset of `position` (clamped to its line and to the text).
    pub fn offset(&self, position: Position) -> usize {
        let line = position.line.clamp(1, self.line_starts.len()) - 1;
        let (start, end) = self.line_bounds(line);
        self.text[start..end]
            .char_indices()
            .nth(position.column.saturating_sub(1))
            .map_or(end, |(i, _)| start + i)
    }

    /// A bounded window of the text around `span`, for showing it: see
    /// [`Excerpt`].
    pub fn excerpt(&self, span: Range<usize>) -> Excerpt {
        let start = self.char_boundary(span.start);
        let line = self.line_of(start);
        let (line_start, line_end) = self.shown_line_bounds(line);
        // A span starting on a line break is shown at the end of its line.
        let start = start.min(line_end);
        let end = self.char_boundary(span.end).clamp(start, line_end);
        let end = advance_chars(self.text, start, end, EXCERPT_SPAN);
        let from = retreat_chars(self.text, line_start, start, EXCERPT_BEFORE);
        let to = advance_chars(self.text, end, line_end, EXCERPT_AFTER);

        let mut text = String::new();
        let mut first_line = line + 1;
        if line > 0 {
            let (start, end) = self.shown_line_bounds(line - 1);
            push_cut(&mut text, &self.text[start..end], EXCERPT_CONTEXT);
            text.push('\n');
            first_line -= 1;
        }
        if from > line_start {
            text.push_str(ELLIPSIS);
        }
        push_printable(&mut text, &self.text[from..start], true);
        let span_start = text.len();
        push_printable(&mut text, &self.text[start..end], true);
        let span = span_start..text.len();
        push_printable(&mut text, &self.text[end..to], true);
        if to < line_end {
            text.push_str(ELLIPSIS);
        }
        if line + 1 < self.line_starts.len() {
            let (start, end) = self.shown_line_bounds(line + 1);
            text.push('\n');
            push_cut(&mut text, &self.text[start..end], EXCERPT_CONTEXT);
        }
        Excerpt {
            text,
            first_line,
            span,
        }
    }

    fn char_boundary(&self, offset: usize) -> usize {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    /// The 0-based line that byte `offset` is on.
    fn line_of(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&start| start <= offset) - 1
    }

    /// The byte range of 0-based `line`, without its `\n`.
    fn line_bounds(&self, line: usize) -> (usize, usize) {
        let start = self.line_starts[line];
        let end = self
            .line_starts
            .get(line + 1)
            .map_or(self.text.len(), |next| next - 1);
        (start, end)
    }

    /// The byte range of 0-based `line` as shown: without `\n` or `\r\n`.
    fn shown_line_bounds(&self, line: usize) -> (usize, usize) {
        let (start, end) = self.line_bounds(line);
        match self.text[start..end].strip_suffix('\r') {
            Some(_) => (start, end - 1),
            None => (start, end),
        }
    }

    fn chars_before(&self, offset: usize) -> usize {
        let mark = offset / CHAR_MARK_STRIDE;
        let counted = &self.text.as_bytes()[mark * CHAR_MARK_STRIDE..offset];
        self.char_marks[mark] + count_char_starts(counted)
    }
}

fn newlines(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .map(|(i, _)| i)
}

/// Characters that start in `bytes` (every byte but UTF-8 continuations).
fn count_char_starts(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

/// The offset `n` characters after `from`, no further than `limit`.
fn advance_chars(text: &str, from: usize, limit: usize, n: usize) -> usize {
    text[from..limit]
        .char_indices()
        .nth(n)
        .map_or(limit, |(i, _)| from + i)
}

/// The offset `n` characters before `to`, no further back than `limit`.
fn retreat_chars(text: &str, limit: usize, to: usize, n: usize) -> usize {
    if n == 0 {
        return to;
    }
    text[limit..to]
        .char_indices()
        .rev()
        .nth(n - 1)
        .map_or(limit, |(i, _)| limit + i)
}

/// A bounded, printable window of a file around a diagnostic's span: what
/// a report shows, so that showing a diagnostic never reads the file again
/// and never prints more than a few hundred characters of it.
///
/// It holds the span's line, cut to at most 80 characters before the span,
/// 120 of the span and 80 after (an ellipsis marks each cut), with the lines
/// before and after it as context (each cut to 280 characters). A span that
/// runs over several lines is shown on its first line. Control characters
/// (other than tabs) and bidirectional-text controls are escaped
/// (`\u{1b}`), so a hostile file cannot drive the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Excerpt {
    /// The lines shown, joined by `\n`.
    pub text: String,
    /// The line number of the first line of `text`, from 1.
    pub first_line: usize,
    /// The span to underline, as a byte range in `text`.
    pub span: Range<usize>,
}

/// Marks text left out.
const ELLIPSIS: &str = "…";

/// Names and values quoted in a message are cut to this many characters.
pub const NAME_MAX: usize = 160;

/// Whether `c` must not reach a terminal as it is: control characters
/// and the invisible controls of bidirectional text.
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\0' => out.push_str("\\0"),
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c => {
            use std::fmt::Write;
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

fn push_printable(out: &mut String, text: &str, keep_tabs: bool) {
    for c in text.chars() {
        if is_unsafe(c) && !(keep_tabs && c == '\t') {
            push_escaped(out, c);
        } else {
            out.push(c);
        }
    }
}

/// Pushes at most `max` characters of `line`, printable, with an ellipsis
/// when cut.
fn push_cut(out: &mut String, line: &str, max: usize) {
    let end = advance_chars(line, 0, line.len(), max);
    push_printable(out, &line[..end], true);
    if end < line.len() {
        out.push_str(ELLIPSIS);
    }
}

/// `text` with control characters and bidirectional-text controls escaped
/// the way Rust writes them (`\n`, `\0`, `\u{1b}`), so that text from a
/// file or a file name can be printed to a terminal safely. Everything else,
/// quotes and backslashes included, is left as it is.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    push_printable(&mut out, text, false);
    Cow::Owned(out)
}

/// `text` cut to at most `max` characters, an ellipsis (`…`) standing for
/// the rest.
pub fn abbreviate(text: &str, max: usize) -> Cow<'_, str> {
    let end = advance_chars(text, 0, text.len(), max);
    if end == text.len() {
        return Cow::Borrowed(text);
    }
    let end = advance_chars(text, 0, text.len(), max.saturating_sub(1));
    Cow::Owned(format!("{}{ELLIPSIS}", &text[..end]))
}

/// A name or value from a file, as a message quotes it: cut to
/// [`NAME_MAX`] characters and printable.
pub fn quoted(text: &str) -> String {
    printable(&abbreviate(text, NAME_MAX)).into_owned()
}

/// Diagnostics reported per file, at most; the rest are counted.
pub const MAX_DIAGNOSTICS_PER_FILE: usize = 100;

/// Keeps the first [`MAX_DIAGNOSTICS_PER_FILE`] of one file's diagnostics
/// (in the order given) and replaces the rest by one that counts them: an
/// error when any of them is one.
pub fn cap_per_file(diagnostics: &mut Vec<Diagnostic>, file: &Path) {
    if let Some(more) = cap(diagnostics) {
        diagnostics.push(more.in_file(file));
    }
}

/// Keeps the first [`MAX_DIAGNOSTICS_PER_FILE`] of `diagnostics` and
/// returns the one that counts the rest, to push in their place.
pub fn cap(diagnostics: &mut Vec<Diagnostic>) -> Option<Diagnostic> {
    if diagnostics.len() <= MAX_DIAGNOSTICS_PER_FILE {
        return None;
    }
    let rest = diagnostics.split_off(MAX_DIAGNOSTICS_PER_FILE);
    let errors = rest.iter().filter(|d| d.is_error()).count();
    let warnings = rest.iter().filter(|d| d.is_warning()).count();
    let severity = if errors > 0 {
        Severity::Error
    } else {
        Severity::Warning
    };
    let message = format!(
        "{} more problems in this file are not shown ({errors} errors, {warnings} warnings)",
        rest.len(),
    );
    Some(
        Diagnostic::new(severity, DiagnosticCode::MoreProblems, message)
            .suggest(Some("fix the problems above and check again".to_owned())),
    )
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
    /// The source around the span, bounded and printable, for showing it
    /// without reading the file again.
    pub excerpt: Option<Excerpt>,
    /// How to fix it, when there is an idea.
    pub suggestion: Option<String>,
    /// Lines to show after the message, such as the diff a stale
    /// translation must carry over (each line made printable when shown).
    pub detail: Option<String>,
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

    /// A note: not a problem, but what a check left out.
    pub fn note(code: DiagnosticCode, message: impl Into<String>) -> Self {
        Self::new(Severity::Note, code, message)
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
            excerpt: None,
            suggestion: None,
            detail: None,
        }
    }

    /// Adds lines to show after the message (a diff).
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// Names the file.
    pub fn in_file(mut self, file: impl AsRef<Path>) -> Self {
        self.file = Some(file.as_ref().to_path_buf());
        self
    }

    /// Records the byte range in the file indexed by `lines`, the position
    /// it starts at and an [`Excerpt`] of the source around it.
    pub fn at(mut self, lines: &LineIndex<'_>, span: Range<usize>) -> Self {
        self.span = Some(span);
        self.locate(lines);
        self
    }

    /// Records the position and the excerpt of the span already recorded.
    pub fn locate(&mut self, lines: &LineIndex<'_>) {
        if let Some(span) = &self.span {
            self.position = Some(lines.position(span.start));
            self.excerpt = Some(lines.excerpt(span.clone()));
        }
    }

    /// Records an [`Excerpt`] at the position already recorded, for a
    /// problem located by line and column only. `lines` indexes the part of
    /// the file that starts after its first `line_offset` lines (a template
    /// body after its front matter). Nothing changes without a position or
    /// when there is an excerpt already.
    pub fn with_excerpt(mut self, lines: &LineIndex<'_>, line_offset: usize) -> Self {
        let (None, Some(position)) = (&self.excerpt, self.position) else {
            return self;
        };
        let local = Position {
            line: position.line.saturating_sub(line_offset).max(1),
            column: position.column,
        };
        let offset = lines.offset(local);
        let mut excerpt = lines.excerpt(offset..offset);
        excerpt.first_line += line_offset;
        self.excerpt = Some(excerpt);
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

    /// Whether this is an error (not a warning or a note).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Whether it is a warning.
    pub fn is_warning(&self) -> bool {
        self.severity == Severity::Warning
    }
}

/// Printable: a message may quote a file name or a key from a file.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&printable(&self.message))?;
        if let Some(suggestion) = &self.suggestion {
            write!(f, " ({})", printable(suggestion))?;
        }
        if let Some(key_path) = &self.key_path {
            write!(f, " at `{}`", printable(key_path))?;
        }
        if let Some(file) = &self.file {
            write!(f, " in {}", printable(&file.display().to_string()))?;
            if let Some(Position { line, column }) = self.position {
                write!(f, ":{line}:{column}")?;
            }
        }
        Ok(())
    }
}

/// The diagnostics of one load or check, collected as each step finds
/// them: every step pushes into one collector, so no problem is lost and
/// the order is the order found.
#[derive(Debug, Default)]
pub struct Diagnostics(Vec<Diagnostic>);

impl Diagnostics {
    /// Collects `diagnostic`.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.0.push(diagnostic);
    }

    /// Collects every one of `diagnostics`.
    pub fn extend(&mut self, diagnostics: impl IntoIterator<Item = Diagnostic>) {
        self.0.extend(diagnostics);
    }

    /// The value of `result`, or `None` with its error collected.
    pub fn ok<T>(&mut self, result: Result<T, Diagnostic>) -> Option<T> {
        result.map_err(|d| self.push(d)).ok()
    }

    /// Whether any diagnostic collected is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }

    /// The diagnostics collected, in the order found.
    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collector_keeps_every_diagnostic_in_the_order_found() {
        let mut collected = Diagnostics::default();
        let warning = Diagnostic::warning(DiagnosticCode::UnusedVariable, "w");
        collected.push(warning.clone());
        assert!(!collected.has_errors());
        let failed: Result<(), Diagnostic> = Err(Diagnostic::error(DiagnosticCode::Io, "e"));
        assert_eq!(collected.ok(failed), None);
        assert_eq!(collected.ok(Ok::<_, Diagnostic>(7)), Some(7));
        assert!(collected.has_errors());
        let messages: Vec<String> = collected
            .into_vec()
            .into_iter()
            .map(|d| d.message)
            .collect();
        assert_eq!(messages, ["w", "e"]);
    }

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

    /// The reading the index replaces: count from the start.
    fn naive_position(text: &str, offset: usize) -> Position {
        let before = &text[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Position {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }

    #[test]
    fn the_line_index_agrees_with_counting_from_the_start() {
        let line = "é日x\t".repeat(200);
        let text = format!("{line}\n\n{line}\r\nz{line}");
        let lines = LineIndex::new(&text);
        for (offset, _) in text.char_indices() {
            assert_eq!(lines.position(offset), naive_position(&text, offset));
            assert_eq!(lines.offset(lines.position(offset)), offset);
        }
        assert_eq!(
            lines.position(text.len()),
            naive_position(&text, text.len())
        );
        // Inside a character: the start of that character.
        assert_eq!(lines.position(1), Position { line: 1, column: 1 });
    }

    #[test]
    fn an_excerpt_of_a_huge_line_is_a_window_around_the_span() {
        let text = format!(
            "{{\"k\": \"{}\", \"bad\": 1, \"x\": \"{}\"}}",
            "A".repeat(600_000),
            "B".repeat(600_000)
        );
        let start = text.find("\"bad\"").unwrap();
        let excerpt = LineIndex::new(&text).excerpt(start..start + 5);
        assert!(
            excerpt.text.chars().count() <= 300,
            "{}",
            excerpt.text.len()
        );
        assert_eq!(&excerpt.text[excerpt.span.clone()], "\"bad\"");
        assert!(excerpt.text.starts_with('…') && excerpt.text.ends_with('…'));
        assert_eq!(excerpt.first_line, 1);
    }

    #[test]
    fn an_excerpt_shows_the_lines_around_and_cuts_a_long_span_to_its_line() {
        let text = "one\ntwo \u{1b}]0;x\u{7}\tthree\nfour\nfive";
        let start = text.find("two").unwrap();
        let excerpt = LineIndex::new(text).excerpt(start..text.len());
        assert_eq!(excerpt.text, "one\ntwo \\u{1b}]0;x\\u{7}\tthree\nfour");
        assert_eq!(
            &excerpt.text[excerpt.span.clone()],
            "two \\u{1b}]0;x\\u{7}\tthree"
        );
        assert_eq!(excerpt.first_line, 1);
    }

    #[test]
    fn an_excerpt_for_a_position_counts_lines_from_the_whole_file() {
        let body = "line one\n{% if %}\n";
        let mut d = Diagnostic::error(DiagnosticCode::TemplateSyntax, "bad");
        d.position = Some(Position { line: 5, column: 1 });
        let d = d.with_excerpt(&LineIndex::new(body), 3);
        let excerpt = d.excerpt.unwrap();
        assert_eq!(excerpt.first_line, 4);
        assert_eq!(excerpt.text, "line one\n{% if %}\n");
        assert_eq!(excerpt.span, 9..9);
    }

    #[test]
    fn a_span_on_a_line_break_is_shown_at_the_end_of_its_line() {
        let text = "ab\r\ncd";
        for start in [2, 3] {
            let excerpt = LineIndex::new(text).excerpt(start..start);
            assert_eq!(excerpt.text, "ab\ncd");
            assert_eq!(excerpt.span, 2..2);
        }
    }

    #[test]
    fn printable_escapes_controls_and_bidi_and_nothing_else() {
        assert_eq!(printable("plain \"é\" \\"), "plain \"é\" \\");
        assert_eq!(
            printable("a\u{1b}]0;PWNED\u{7}b\0\n\u{202e}"),
            "a\\u{1b}]0;PWNED\\u{7}b\\0\\n\\u{202e}"
        );
    }

    #[test]
    fn abbreviate_cuts_with_an_ellipsis() {
        assert_eq!(abbreviate("short", 5), "short");
        assert_eq!(abbreviate("toolong", 5), "tool…");
        assert_eq!(abbreviate(&"日".repeat(100), 3), "日日…");
    }

    #[test]
    fn diagnostics_past_the_cap_are_counted_in_one() {
        let mut diagnostics: Vec<Diagnostic> = (0..MAX_DIAGNOSTICS_PER_FILE + 50)
            .map(|i| Diagnostic::warning(DiagnosticCode::UnknownKey, format!("w{i}")))
            .collect();
        diagnostics.push(Diagnostic::error(DiagnosticCode::UnknownKey, "e"));
        cap_per_file(&mut diagnostics, Path::new("s.json"));
        assert_eq!(diagnostics.len(), MAX_DIAGNOSTICS_PER_FILE + 1);
        let last = diagnostics.last().unwrap();
        assert_eq!(last.code, DiagnosticCode::MoreProblems);
        assert!(last.is_error());
        assert_eq!(
            last.message,
            "51 more problems in this file are not shown (1 errors, 50 warnings)"
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
        .at(&LineIndex::new(text), start..start + 13)
        .key_path("prompts.goal-runing")
        .suggest(Some("did you mean `goal-running`?".to_string()));
        assert_eq!(
            d.to_string(),
            "unknown prompt key `goal-runing` (did you mean `goal-running`?) at `prompts.goal-runing` in .pi/settings.json:3:5"
        );
    }
}
