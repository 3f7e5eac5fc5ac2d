//! The error type: one [`Error`], small to move, with an [`ErrorKind`] and
//! the id, locale and types involved.

use std::fmt;

use crate::diagnostic::Diagnostic;

/// What went wrong, in a form code can match on.
///
/// New kinds may be added in minor releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A prompt id breaks the rules of [`PromptId`](crate::PromptId).
    InvalidId,
    /// A locale is not a valid BCP-47 tag.
    InvalidLocale,
    /// No prompt is registered under the id.
    UnknownId,
    /// The id has locale overrides but none on the locale's fallback chain,
    /// and no default to fall back to.
    NoPromptForLocale,
    /// A renderer expects a context of another type than the one given.
    ContextType,
    /// A translation names a pinned block the prompt's default does not
    /// have.
    UnknownPin,
    /// A renderer panicked while rendering.
    RendererPanicked,
    /// A configuration (settings files, prompt files, a declaration) has
    /// errors; [`Error::diagnostics`] lists every one.
    Config,
    /// There is no user configuration to reload.
    NotLoaded,
    /// A template failed while rendering: a missing variable, no fuel left.
    Template,
    /// Following files failed (feature `watch`).
    Watch,
    /// A chat prompt was rendered as text: render its messages instead
    /// (`render_messages`), or ask for the text explicitly
    /// (`render_chat_as_text`).
    ChatPrompt,
    /// A chat declaration or a render's history is invalid: a chat with no
    /// message, rules attached past the last message, a history for a
    /// placeholder the prompt does not declare.
    InvalidChat,
    /// Following a server could not start (feature `remote`).
    Remote,
    /// A signing key, a trusted key or a release's signature is unusable,
    /// or a release is not signed as required (feature `signing`).
    Signature,
    /// A prompt's contract is invalid: a tool without a name, two tools of
    /// one name, a locale's contract that changes a name or a schema.
    InvalidContract,
}

impl ErrorKind {
    /// A stable, kebab-case name for programs (`unknown-id`), as
    /// `promptreg --json` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidId => "invalid-id",
            ErrorKind::InvalidLocale => "invalid-locale",
            ErrorKind::UnknownId => "unknown-id",
            ErrorKind::UnknownPin => "unknown-pin",
            ErrorKind::NoPromptForLocale => "no-prompt-for-locale",
            ErrorKind::ContextType => "context-type",
            ErrorKind::RendererPanicked => "renderer-panicked",
            ErrorKind::Config => "config",
            ErrorKind::NotLoaded => "not-loaded",
            ErrorKind::Template => "template",
            ErrorKind::Watch => "watch",
            ErrorKind::ChatPrompt => "chat-prompt",
            ErrorKind::InvalidChat => "invalid-chat",
            ErrorKind::Remote => "remote",
            ErrorKind::Signature => "signature",
            ErrorKind::InvalidContract => "invalid-contract",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            ErrorKind::InvalidId => "invalid prompt id",
            ErrorKind::InvalidLocale => "invalid locale",
            ErrorKind::UnknownId => "unknown prompt id",
            ErrorKind::NoPromptForLocale => "no prompt for locale",
            ErrorKind::ContextType => "wrong context type",
            ErrorKind::UnknownPin => "unknown pinned block",
            ErrorKind::RendererPanicked => "renderer panicked",
            ErrorKind::Config => "invalid configuration",
            ErrorKind::NotLoaded => "no configuration loaded",
            ErrorKind::Template => "template error",
            ErrorKind::Watch => "watch error",
            ErrorKind::ChatPrompt => "chat prompt rendered as text",
            ErrorKind::InvalidChat => "invalid chat prompt",
            ErrorKind::Remote => "remote error",
            ErrorKind::Signature => "signature error",
            ErrorKind::InvalidContract => "invalid contract",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// The error of every fallible promptreg call.
///
/// Its [`Display`](fmt::Display) is one sentence naming what was wrong and
/// where, followed by a suggestion when there is one
/// (`unknown prompt id `planer.system` (did you mean `planner.system`?)`).
/// The parts are also available one by one: [`kind`](Error::kind),
/// [`id`](Error::id), [`locale`](Error::locale),
/// [`suggestion`](Error::suggestion).
pub struct Error {
    repr: Box<Repr>,
}

struct Repr {
    kind: ErrorKind,
    detail: String,
    id: Option<String>,
    locale: Option<String>,
    suggestion: Option<String>,
    diagnostics: Vec<Diagnostic>,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl Error {
    /// An error of `kind` with a message saying what happened.
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        Error {
            repr: Box::new(Repr {
                kind,
                detail: detail.into(),
                id: None,
                locale: None,
                suggestion: None,
                diagnostics: Vec::new(),
                source: None,
            }),
        }
    }

    /// An [`ErrorKind::Config`] error carrying `diagnostics` (errors first,
    /// warnings after). Its message is the first error's, with a count of
    /// the others.
    pub fn from_diagnostics(mut diagnostics: Vec<Diagnostic>) -> Self {
        diagnostics.sort_by_key(|d| std::cmp::Reverse(d.severity));
        let errors = diagnostics.iter().filter(|d| d.is_error()).count();
        let detail = match (diagnostics.first(), errors) {
            (None, _) => "invalid configuration".to_owned(),
            (Some(first), 0 | 1) => first.to_string(),
            (Some(first), n) => format!("{first} (and {} more errors)", n - 1),
        };
        let mut err = Error::new(ErrorKind::Config, detail);
        err.repr.diagnostics = diagnostics;
        err
    }

    /// Records the prompt id involved.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.repr.id = Some(id.into());
        self
    }

    /// Records the locale involved.
    pub fn with_locale(mut self, locale: impl Into<String>) -> Self {
        self.repr.locale = Some(locale.into());
        self
    }

    /// Records a suggestion for fixing the error, shown after the message.
    pub fn with_suggestion(mut self, suggestion: impl Into<String>) -> Self {
        self.repr.suggestion = Some(suggestion.into());
        self
    }

    /// Records the lower-level error that caused this one.
    pub fn with_source(
        mut self,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        self.repr.source = Some(source.into());
        self
    }

    /// What kind of error this is.
    pub fn kind(&self) -> ErrorKind {
        self.repr.kind
    }

    /// The message without the suggestion.
    pub fn detail(&self) -> &str {
        &self.repr.detail
    }

    /// The prompt id involved, if any.
    pub fn id(&self) -> Option<&str> {
        self.repr.id.as_deref()
    }

    /// The locale involved, if any.
    pub fn locale(&self) -> Option<&str> {
        self.repr.locale.as_deref()
    }

    /// How to fix it, when promptreg has an idea (`did you mean ...?`).
    pub fn suggestion(&self) -> Option<&str> {
        self.repr.suggestion.as_deref()
    }

    /// Every problem found, for [`ErrorKind::Config`] errors: all errors
    /// first, then the warnings; empty for other kinds.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.repr.diagnostics
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr.detail)?;
        if let Some(suggestion) = &self.repr.suggestion {
            write!(f, " ({suggestion})")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Error");
        s.field("kind", &self.repr.kind)
            .field("detail", &self.repr.detail);
        if let Some(id) = &self.repr.id {
            s.field("id", id);
        }
        if let Some(locale) = &self.repr.locale {
            s.field("locale", locale);
        }
        if let Some(suggestion) = &self.repr.suggestion {
            s.field("suggestion", suggestion);
        }
        if !self.repr.diagnostics.is_empty() {
            s.field("diagnostics", &self.repr.diagnostics);
        }
        if let Some(source) = &self.repr.source {
            s.field("source", source);
        }
        s.finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.repr.source.as_deref().map(|e| e as _)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_one_pointer_wide() {
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn display_appends_the_suggestion() {
        let err = Error::new(ErrorKind::UnknownId, "unknown prompt id `planer`")
            .with_suggestion("did you mean `planner`?");
        assert_eq!(
            err.to_string(),
            "unknown prompt id `planer` (did you mean `planner`?)"
        );
        assert_eq!(err.detail(), "unknown prompt id `planer`");
    }
}
