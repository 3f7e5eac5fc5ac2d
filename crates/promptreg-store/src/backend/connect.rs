//! Connecting to each database, and the probe `Store::ready` runs.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};

use super::Backend;
use crate::location::Location;

/// How long an operation waits for SQLite's write lock.
const WAIT: Duration = Duration::from_secs(10);

/// How long [`Store::ready`] waits for SQLite's write lock: a probe
/// answers quickly, and a lock held this long already delays writers.
const READY_WAIT: Duration = Duration::from_secs(1);

/// How long an operation waits for a connection to PostgreSQL (sqlx retries
/// in the meantime), before reporting the server unreachable.
const CONNECT_WAIT: Duration = Duration::from_secs(5);

/// A pool for the database at `location`, connecting lazily: the first
/// operation reports an unreachable server.
pub(crate) fn connect(location: &Location) -> Result<Backend, sqlx::Error> {
    match location {
        Location::Sqlite { path, url } => sqlite(path, url.as_deref()),
        Location::Postgres(url) => postgres(url),
    }
}

/// Whether the database answers, and for SQLite whether its write lock
/// can be taken. Nothing is written.
pub(crate) async fn probe(backend: &Backend) -> Result<(), sqlx::Error> {
    match backend {
        Backend::Sqlite(pool) => sqlite_writable(pool).await,
        Backend::Postgres(pool) => sqlx::query("SELECT 1").execute(pool).await.map(drop),
    }
}

fn sqlite(path: &std::path::Path, url: Option<&str>) -> Result<Backend, sqlx::Error> {
    let options = match url {
        Some(url) => SqliteConnectOptions::from_str(url)?,
        None => SqliteConnectOptions::new().filename(path),
    };
    let options = options
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(WAIT)
        .foreign_keys(true);
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .acquire_timeout(WAIT)
        .connect_lazy_with(options);
    Ok(Backend::Sqlite(pool))
}

/// Takes SQLite's write lock and gives it back, waiting at most
/// [`READY_WAIT`] for it.
async fn sqlite_writable(pool: &SqlitePool) -> Result<(), sqlx::Error> {
    use sqlx::Connection;
    let mut connection = pool.acquire().await?;
    let busy_timeout = |wait: Duration| format!("PRAGMA busy_timeout = {}", wait.as_millis());
    sqlx::query(&busy_timeout(READY_WAIT))
        .execute(&mut *connection)
        .await?;
    let locked = match connection.begin_with("BEGIN IMMEDIATE").await {
        Ok(tx) => tx.rollback().await,
        Err(e) => Err(e),
    };
    // The connection goes back to the pool with the wait writers expect.
    sqlx::query(&busy_timeout(WAIT))
        .execute(&mut *connection)
        .await?;
    locked
}

fn postgres(url: &str) -> Result<Backend, sqlx::Error> {
    let options = PgConnectOptions::from_str(url)?;
    let pool = PgPoolOptions::new()
        .max_connections(8)
        .acquire_timeout(CONNECT_WAIT)
        .connect_lazy_with(options);
    Ok(Backend::Postgres(pool))
}
