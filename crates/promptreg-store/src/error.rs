//! The store's error: one [`Error`], small to move, with an [`ErrorKind`]
//! and the pack, prompt, label and version involved in its message.

use std::fmt;

use promptreg::Diagnostic;

/// What went wrong, in a form code (and an HTTP server) can match on.
///
/// New kinds may be added in minor releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A label name breaks the rule `[a-z0-9][a-z0-9-]*`, or is reserved.
    InvalidLabel,
    /// A version is neither a number from 1 nor a label.
    InvalidVersion,
    /// No pack of that name is in the store, or the store holds several
    /// and none was named.
    UnknownPack,
    /// The pack has no prompt (or pack-level entry) of that id.
    UnknownPrompt,
    /// The prompt has no such version, or the label points nowhere.
    UnknownVersion,
    /// A label move expected another version than the one the label points
    /// at now; the message names the current one.
    Conflict,
    /// The actor lacks the permission the change needs (a protected label
    /// needs [`Permission::Admin`](crate::Permission::Admin)).
    Forbidden,
    /// The pack fails `check`; [`Error::diagnostics`] lists every problem.
    InvalidPack,
    /// A push holds more files per prompt or per pack than the store's
    /// [`FileLimits`](crate::FileLimits); the message names the limit and
    /// the count.
    TooManyFiles,
    /// A message, reason or file text the store does not keep: a NUL byte,
    /// or a message or reason longer than
    /// [`MAX_MESSAGE_BYTES`](crate::MAX_MESSAGE_BYTES). The message names
    /// the field (`the reason`, ``file `defaults/a.md` ``).
    InvalidInput,
    /// Reading or writing a pack folder failed.
    Io,
    /// The file is not a SQLite database.
    NotAStore,
    /// The database refuses writes (a read-only file or connection).
    ReadOnly,
    /// The database was made by a newer promptreg.
    NewerSchema,
    /// The database cannot be reached, or the connection was lost. Nothing
    /// half-done remains: writes are transactions; retrying is safe.
    Unavailable,
    /// Any other database error.
    Database,
    /// An API key's name or scope breaks the rules.
    InvalidKey,
    /// No API key has that name.
    UnknownKey,
    /// No API key has that secret (or none was given).
    Unauthorized,
    /// The API key was revoked.
    KeyRevoked,
    /// A gated label would move to a state whose tests fail, cannot be
    /// read, or run too long ([`Error::failed_cases`] lists the cases).
    TestsFailed,
    /// A fleet view is full for a new instance: its label, its pack or the
    /// key reporting it holds its most instances already
    /// ([`FleetLimits`](crate::FleetLimits)); the message names which.
    TooManyInstances,
    /// A report names a label nothing ever moved: no instance can follow
    /// it.
    UnknownLabel,
    /// A report names a revision its label never had.
    UnknownRevision,
    /// A report names an instance another key reported first: the id is
    /// that key's until the instance has been unseen for a day.
    InstanceTaken,
    /// A label the manifest requires signatures for (`[release] signed`)
    /// would move without one, or a signature does not verify.
    SignatureRequired,
    /// A label the manifest keeps stable (`[release] stable_contract`)
    /// would move to versions that break a prompt's contract: a tool or
    /// parameter removed, a type narrowed, an output property dropped. An
    /// admin forces the move with a reason; the revision records what it
    /// broke.
    BreakingChange,
    /// The host runs as much heavy work as it may (a server's bound of
    /// builds, renders and test runs), or is shutting down: a gated move
    /// whose tests found no turn moved nothing; retry shortly.
    Busy,
    /// A webhook's name, URL, event type, format or rotation breaks the
    /// rules.
    InvalidWebhook,
    /// No webhook has that name, or it has no such delivery.
    UnknownWebhook,
}

impl ErrorKind {
    fn describe(self) -> &'static str {
        match self {
            ErrorKind::InvalidLabel => "invalid label",
            ErrorKind::InvalidVersion => "invalid version",
            ErrorKind::UnknownPack => "unknown pack",
            ErrorKind::UnknownPrompt => "unknown prompt",
            ErrorKind::UnknownVersion => "unknown version",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Forbidden => "forbidden",
            ErrorKind::InvalidPack => "invalid pack",
            ErrorKind::TooManyFiles => "too many files",
            ErrorKind::InvalidInput => "invalid input",
            ErrorKind::Io => "i/o error",
            ErrorKind::NotAStore => "not a store",
            ErrorKind::ReadOnly => "read-only database",
            ErrorKind::NewerSchema => "newer database schema",
            ErrorKind::Unavailable => "database unavailable",
            ErrorKind::Database => "database error",
            ErrorKind::InvalidKey => "invalid API key",
            ErrorKind::UnknownKey => "unknown API key",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::KeyRevoked => "revoked API key",
            ErrorKind::TestsFailed => "tests failed",
            ErrorKind::TooManyInstances => "too many instances",
            ErrorKind::UnknownLabel => "unknown label",
            ErrorKind::UnknownRevision => "unknown revision",
            ErrorKind::InstanceTaken => "instance taken",
            ErrorKind::SignatureRequired => "signature required",
            ErrorKind::Busy => "busy",
            ErrorKind::BreakingChange => "breaking contract change",
            ErrorKind::InvalidWebhook => "invalid webhook",
            ErrorKind::UnknownWebhook => "unknown webhook",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// The error of every fallible store call. Its [`Display`](fmt::Display)
/// is one sentence naming the pack, prompt, label or version involved, with
/// a suggestion when there is one.
pub struct Error {
    repr: Box<Repr>,
}

struct Repr {
    kind: ErrorKind,
    detail: String,
    current: Option<u64>,
    diagnostics: Vec<Diagnostic>,
    failed_cases: Vec<crate::gate::FailedCase>,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl Error {
    /// An error of `kind` with a message saying what happened.
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        Error {
            repr: Box::new(Repr {
                kind,
                detail: detail.into(),
                current: None,
                diagnostics: Vec::new(),
                failed_cases: Vec::new(),
                source: None,
            }),
        }
    }

    pub(crate) fn with_source(
        mut self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        self.repr.source = Some(Box::new(source));
        self
    }

    pub(crate) fn with_current(mut self, current: Option<u64>) -> Self {
        self.repr.current = current;
        self
    }

    pub(crate) fn tests_failed(detail: String, cases: Vec<crate::gate::FailedCase>) -> Self {
        let mut this = Error::new(ErrorKind::TestsFailed, detail);
        this.repr.failed_cases = cases;
        this
    }

    /// A move of `label` refused for the breaking contract changes
    /// `breaking`, one line each.
    pub(crate) fn breaking_change(label: &str, breaking: &[String]) -> Self {
        Error::new(
            ErrorKind::BreakingChange,
            format!(
                "label `{label}` keeps its prompts' contracts stable (`[release] stable_contract`) and this move breaks them: {}; nothing moved. Keep the old contract beside the new one, or have an admin force the move with a reason",
                breaking.join("; ")
            ),
        )
    }

    pub(crate) fn set_diagnostics(&mut self, diagnostics: Vec<Diagnostic>) {
        self.repr.diagnostics = diagnostics;
    }

    pub(crate) fn invalid_pack(err: promptreg::Error) -> Self {
        let mut this = Error::new(
            ErrorKind::InvalidPack,
            format!("the pack fails check, nothing was written: {err}"),
        );
        this.repr.diagnostics = err.diagnostics().to_vec();
        this
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.repr.kind
    }

    /// The message, without the kind.
    pub fn detail(&self) -> &str {
        &self.repr.detail
    }

    /// For [`ErrorKind::Conflict`]: the version the label points at now
    /// (`None` when it points nowhere).
    pub fn current_version(&self) -> Option<u64> {
        self.repr.current
    }

    /// For [`ErrorKind::InvalidPack`]: every diagnostic of the check.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.repr.diagnostics
    }

    /// The test cases that failed, for [`ErrorKind::TestsFailed`].
    pub fn failed_cases(&self) -> &[crate::gate::FailedCase] {
        &self.repr.failed_cases
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr.detail)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.repr.kind)
            .field("detail", &self.repr.detail)
            .finish_non_exhaustive()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.repr
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_error_is_one_pointer() {
        assert_eq!(
            std::mem::size_of::<super::Error>(),
            std::mem::size_of::<usize>()
        );
    }
}
