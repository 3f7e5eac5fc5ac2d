//! Database errors in the user's words: what a refusal or a lost
//! connection means for the operation, never a table's or constraint's
//! name.

use crate::error::{Error, ErrorKind};
use crate::location::Location;

/// An operation's failure: the database's, or the store's own.
pub(crate) enum OpError {
    Db(sqlx::Error),
    Store(Error),
    /// A label did not point where the move expected.
    Conflict {
        prompt: String,
        label: String,
        expected: Option<i64>,
    },
    /// A gated label would move to a state no test run admitted yet: the
    /// transaction gave up so that the tests run outside it (`gate.rs`).
    Untested(Box<crate::gate::Candidate>),
}

impl From<sqlx::Error> for OpError {
    fn from(e: sqlx::Error) -> Self {
        OpError::Db(e)
    }
}

impl From<Error> for OpError {
    fn from(e: Error) -> Self {
        OpError::Store(e)
    }
}

/// An operation's failure as the store reports it, naming the store.
pub(crate) fn in_user_words(location: &Location, e: OpError) -> Error {
    match e {
        OpError::Store(e) => e,
        OpError::Conflict { prompt, label, .. } => Error::new(
            ErrorKind::Conflict,
            format!(
                "label `{label}` of `{prompt}` was moved by someone else: nothing was written; retry"
            ),
        ),
        OpError::Db(e) => database_error(location, e),
        // `Store::through_gates` tests every candidate; a write run
        // outside it never meets a gate.
        OpError::Untested(candidate) => Error::new(
            ErrorKind::TestsFailed,
            format!(
                "label `{}` is gated and its candidate state was not tested: nothing moved",
                candidate.label
            ),
        ),
    }
}

/// A database error in the user's words, naming the store. The database's
/// own message is only the error's source: it may name tables and
/// constraints, which mean nothing to a user and are not shown.
fn database_error(location: &Location, e: sqlx::Error) -> Error {
    let (kind, detail) = match &e {
        sqlx::Error::Database(db) => {
            let code = db.code().unwrap_or_default();
            database_refusal(location, code.as_ref(), db.is_unique_violation())
        }
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Protocol(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => (
            ErrorKind::Unavailable,
            format!(
                "cannot reach {location} ({e}): the operation was all or nothing; retrying is safe"
            ),
        ),
        sqlx::Error::Configuration(_) => (
            ErrorKind::Unavailable,
            format!("invalid database {location}: {e}"),
        ),
        _ => (
            ErrorKind::Database,
            format!("database error in {location}: {e}"),
        ),
    };
    Error::new(kind, detail).with_source(e)
}

/// The kind and message of an error the database answered with `code`.
fn database_refusal(location: &Location, code: &str, unique: bool) -> (ErrorKind, String) {
    let sqlite = matches!(location, Location::Sqlite { .. });
    match code {
        // SQLITE_NOTADB
        "26" if sqlite => (
            ErrorKind::NotAStore,
            format!(
                "{location} is not a promptreg store: it is not a SQLite database; pass --database with the store's file or URL"
            ),
        ),
        // SQLITE_READONLY and its extended codes
        c if sqlite && (c == "8" || c.parse::<u32>().is_ok_and(|c| c & 0xff == 8)) => (
            ErrorKind::ReadOnly,
            format!(
                "{location} is read-only: nothing was written; make the file writable or use another --database"
            ),
        ),
        // PostgreSQL: read_only_sql_transaction, insufficient_privilege
        "25006" | "42501" if !sqlite => (
            ErrorKind::ReadOnly,
            format!("{location} refuses writes (SQLSTATE {code}): nothing was written"),
        ),
        // Writers of one pack take turns (`Dialect::lock_pack`), so a unique
        // violation, a serialisation failure or a deadlock is a race the
        // store lost, not the user's conflict: retrying succeeds.
        _ if unique || (!sqlite && matches!(code, "40001" | "40P01")) => (
            ErrorKind::Unavailable,
            format!(
                "another writer changed the store {location} at the same time: nothing was written; retrying is safe"
            ),
        ),
        // SQLITE_BUSY: another process holds the write lock too long.
        "5" | "517" if sqlite => (
            ErrorKind::Unavailable,
            format!(
                "{location} is locked by another writer: nothing was written; retrying is safe"
            ),
        ),
        // Connection failures: class 08, shutdown 57P*
        c if !sqlite && (c.starts_with("08") || c.starts_with("57P")) => (
            ErrorKind::Unavailable,
            format!(
                "lost the connection to {location}: the operation was all or nothing; retrying is safe"
            ),
        ),
        _ => (
            ErrorKind::Database,
            format!("database error in {location} (code {code}): nothing was written"),
        ),
    }
}
