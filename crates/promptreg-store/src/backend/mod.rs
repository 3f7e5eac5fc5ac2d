//! The databases a store can live in, in one place: the [`Backend`] enum,
//! the dispatch of an operation to it (`raw!`, `on_backend!`), connecting
//! (`connect.rs`), what differs in their SQL (`dialect.rs`), their errors
//! in the user's words (`errors.rs`), and the operations compiled for each
//! (the files of `ops/`, included below).
//!
//! Adding a backend: a variant of [`Backend`] and an arm in each macro
//! below, its `Location` and connection in `connect.rs` (and its probe),
//! a `Dialect` in `dialect.rs`, its error codes in `errors.rs`, and a
//! module below including `ops/` with its sqlx database type. The tests'
//! `databases` (feature `test-support`) then runs every store and server
//! test on it too.

use sqlx::postgres::PgPool;
use sqlx::sqlite::SqlitePool;

mod connect;
mod dialect;
mod errors;

pub(crate) use connect::{connect, probe};
pub(crate) use dialect::{Dialect, EVENTS_CHANNEL, POSTGRES, SQLITE};
pub(crate) use errors::{OpError, in_user_words};

/// A store's database: a pool of connections to it.
#[derive(Clone)]
pub(crate) enum Backend {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Runs operation `$op` on the backend's pool, as `backend::sqlite::$op`
/// or `backend::postgres::$op`.
macro_rules! raw {
    ($self:expr, $op:ident ( $($arg:expr),* )) => {
        match &$self.backend {
            $crate::backend::Backend::Sqlite(pool) => $crate::backend::sqlite::$op(pool, $($arg),*).await,
            $crate::backend::Backend::Postgres(pool) => $crate::backend::postgres::$op(pool, $($arg),*).await,
        }
    };
}

/// As `raw!`, with database errors in the user's words.
macro_rules! on_backend {
    ($self:expr, $op:ident ( $($arg:expr),* )) => {
        raw!($self, $op($($arg),*)).map_err(|e| $self.error(e))
    };
}

/// The operations of `ops/`, compiled in the module of one backend.
macro_rules! operations {
    () => {
        include!("../ops/prelude.rs");
        include!("../ops/migrate.rs");
        include!("../ops/versions.rs");
        include!("../ops/labels.rs");
        include!("../ops/revisions.rs");
        include!("../ops/contracts.rs");
        include!("../ops/events.rs");
        include!("../ops/keys.rs");
        include!("../ops/fleet.rs");
        include!("../ops/splits.rs");
        include!("../ops/signatures.rs");
        include!("../ops/webhooks.rs");
        include!("../ops/outbox.rs");
    };
}

/// SQLite: one file, WAL mode.
pub(crate) mod sqlite {
    type Db = sqlx::Sqlite;
    const DIALECT: super::Dialect = super::SQLITE;
    operations!();
}

/// PostgreSQL: a server shared by several processes.
pub(crate) mod postgres {
    type Db = sqlx::Postgres;
    const DIALECT: super::Dialect = super::POSTGRES;
    operations!();
}
