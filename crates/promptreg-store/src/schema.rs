//! The tables, as versioned migrations embedded in the binary. One text
//! serves both dialects; only the auto-numbered key and the bytes type
//! differ, filled in per dialect.

/// The migrations, in order; the schema version is how many are applied.
/// Append only: a released migration never changes.
pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE packs (
    pack_id {id},
    name TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL
);
CREATE TABLE versions (
    version_id {id},
    pack_id BIGINT NOT NULL REFERENCES packs (pack_id),
    entry TEXT NOT NULL,
    number BIGINT NOT NULL,
    digest TEXT NOT NULL,
    author TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (pack_id, entry, number),
    UNIQUE (pack_id, entry, digest)
);
CREATE TABLE version_files (
    version_id BIGINT NOT NULL REFERENCES versions (version_id),
    path TEXT NOT NULL,
    content {bytes} NOT NULL,
    PRIMARY KEY (version_id, path)
);
CREATE TABLE labels (
    pack_id BIGINT NOT NULL REFERENCES packs (pack_id),
    entry TEXT NOT NULL,
    label TEXT NOT NULL,
    number BIGINT NOT NULL,
    PRIMARY KEY (pack_id, entry, label),
    FOREIGN KEY (pack_id, entry, number) REFERENCES versions (pack_id, entry, number)
);
CREATE TABLE protected_labels (
    pack_id BIGINT NOT NULL REFERENCES packs (pack_id),
    label TEXT NOT NULL,
    PRIMARY KEY (pack_id, label)
);
CREATE TABLE label_history (
    move_id {id},
    pack_id BIGINT NOT NULL REFERENCES packs (pack_id),
    entry TEXT NOT NULL,
    label TEXT NOT NULL,
    from_number BIGINT,
    to_number BIGINT,
    actor TEXT NOT NULL,
    moved_at BIGINT NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX label_history_by_entry ON label_history (pack_id, entry, label, move_id);
"#,
    r#"
-- The event log: one row per change, in commit order (see `Dialect::lock_events`).
-- `kind` is `version_created` (the version in `to_number`, its author in `actor`),
-- `label_moved` (like a `label_history` row), `released` (the prompts moved in
-- `event_prompts`), `label_protected` or `label_unprotected`.
CREATE TABLE events (
    event_id {id},
    pack_id BIGINT NOT NULL REFERENCES packs (pack_id),
    at BIGINT NOT NULL,
    kind TEXT NOT NULL,
    prompt TEXT,
    label TEXT,
    from_number BIGINT,
    to_number BIGINT,
    actor TEXT NOT NULL,
    reason TEXT
);
CREATE TABLE event_prompts (
    event_id BIGINT NOT NULL REFERENCES events (event_id),
    prompt TEXT NOT NULL,
    PRIMARY KEY (event_id, prompt)
);
-- API keys: only the SHA-256 of a secret is kept. A name is never reused,
-- so `key:NAME` in the history always means one key.
CREATE TABLE api_keys (
    key_id {id},
    name TEXT NOT NULL UNIQUE,
    pack TEXT,
    scope TEXT NOT NULL,
    secret_sha256 TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    revoked_at BIGINT,
    revoked_by TEXT
);
"#,
    r#"
-- A release is one `released` event carrying every move it made: where the
-- label pointed on each prompt before and after. Events written before
-- this migration leave both NULL; a `label_moved` per prompt follows them.
ALTER TABLE event_prompts ADD COLUMN from_number BIGINT;
ALTER TABLE event_prompts ADD COLUMN to_number BIGINT;
"#,
    r#"
-- A rollback names the move it undid, so the next rollback goes one step
-- further back instead of undoing the rollback. Moves written before this
-- migration undo nothing.
ALTER TABLE label_history ADD COLUMN undoes BIGINT;
"#,
];

/// The schema version this binary writes and understands.
pub(crate) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The table recording which migrations ran.
pub(crate) const SCHEMA_TABLE: &str = "CREATE TABLE IF NOT EXISTS promptreg_schema (version BIGINT NOT NULL PRIMARY KEY, applied_at BIGINT NOT NULL)";

/// What differs between the two databases.
pub(crate) struct Dialect {
    /// An auto-numbered primary key column.
    pub(crate) id: &'static str,
    /// A column of bytes.
    pub(crate) bytes: &'static str,
    /// Starts a transaction that writes: SQLite takes the write lock at
    /// once, so a transaction never fails upgrading a read to a write.
    pub(crate) begin_write: &'static str,
    /// Run first in a migration, so two processes opening a new database
    /// at once do not both migrate it.
    pub(crate) migration_lock: Option<&'static str>,
    /// Run in a writing transaction before it appends events, so that event
    /// ids commit in the order they are allocated (see `POSTGRES`).
    pub(crate) lock_events: Option<&'static str>,
    /// Announces the newest event id to other processes at commit.
    pub(crate) notify_events: Option<&'static str>,
    /// Run first in every transaction that changes a pack (bound to the
    /// pack's id), so that two writers of one pack take turns: the second
    /// reads what the first wrote, and numbers its versions after them.
    pub(crate) lock_pack: Option<&'static str>,
}

/// The channel of `notify_events`; its payload is the newest event id.
pub(crate) const EVENTS_CHANNEL: &str = "promptreg_events";

pub(crate) const SQLITE: Dialect = Dialect {
    id: "INTEGER PRIMARY KEY",
    bytes: "BLOB",
    begin_write: "BEGIN IMMEDIATE",
    migration_lock: None,
    // One writer at a time (`BEGIN IMMEDIATE`): ids commit in order already.
    lock_events: None,
    // Other processes poll the file.
    notify_events: None,
    // `BEGIN IMMEDIATE` already makes writers take turns.
    lock_pack: None,
};

pub(crate) const POSTGRES: Dialect = Dialect {
    id: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    bytes: "BYTEA",
    begin_write: "BEGIN",
    // An arbitrary constant: "promptrg" in ASCII.
    migration_lock: Some("SELECT pg_advisory_xact_lock(8101238574758242407)"),
    // An identity value is taken when a row is inserted, not when it
    // commits: without a lock, a transaction holding id 7 could commit after
    // one holding 8, and a reader that saw 8 would ask for events after 8
    // and never see 7. This lock serialises the transactions that append
    // events, from their first event to their commit, so ids commit in
    // order. It is the table's lock rather than an advisory one, so stores
    // in different schemas of one database do not wait for each other; it
    // does not conflict with reads. Taken last in each transaction, after
    // every check that can fail, so it is held only for the inserts and the
    // commit.
    lock_events: Some("LOCK TABLE events IN EXCLUSIVE MODE"),
    notify_events: Some("SELECT pg_notify($1, $2)"),
    // Without it, two pushes of one prompt both read version N as the
    // newest and both insert N + 1: the second fails on the unique number.
    // The row lock makes the second wait for the first's commit; under READ
    // COMMITTED its next statements then see the first's versions. Taken
    // before the events lock in every transaction, so the two never
    // deadlock.
    lock_pack: Some("SELECT pack_id FROM packs WHERE pack_id = $1 FOR UPDATE"),
};

impl Dialect {
    pub(crate) fn migration(&self, sql: &str) -> String {
        sql.replace("{id}", self.id).replace("{bytes}", self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};

    use super::*;
    use crate::{EventKind, ReleasedPrompt, Store};

    /// A database made at schema version 2 opens, is migrated, and reads
    /// its old release back as written: a `released` without versions,
    /// then a `label_moved` per prompt.
    #[tokio::test]
    async fn a_release_recorded_at_schema_version_2_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        let options = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true);
        let pool = SqlitePool::connect_with(options).await.unwrap();
        sqlx::raw_sql(SCHEMA_TABLE).execute(&pool).await.unwrap();
        for migration in &MIGRATIONS[..2] {
            sqlx::raw_sql(&SQLITE.migration(migration))
                .execute(&pool)
                .await
                .unwrap();
        }
        sqlx::raw_sql(
            "INSERT INTO promptreg_schema VALUES (1, 0), (2, 0);
             INSERT INTO packs (name, created_at) VALUES ('demo', 0);
             INSERT INTO events (pack_id, at, kind, label, actor, reason)
                 VALUES (1, 0, 'released', 'production', 'root', 'release latest');
             INSERT INTO event_prompts (event_id, prompt) VALUES (1, 'greeting');
             INSERT INTO events (pack_id, at, kind, prompt, label, to_number, actor, reason)
                 VALUES (1, 0, 'label_moved', 'greeting', 'production', 1, 'root', 'release latest');",
        )
        .execute(&pool)
        .await
        .unwrap();
        pool.close().await;

        let store = Store::open(path.to_str().unwrap()).await.unwrap();
        let events = store.events_since(0, 10).await.unwrap();
        let kinds: Vec<&EventKind> = events.iter().map(|e| &e.change).collect();
        assert_eq!(
            kinds,
            [
                &EventKind::Released {
                    label: "production".into(),
                    moves: vec![ReleasedPrompt {
                        prompt: "greeting".into(),
                        from: None,
                        to: None,
                    }],
                    actor: "root".into(),
                    reason: "release latest".into(),
                },
                &EventKind::LabelMoved {
                    prompt: "greeting".into(),
                    label: "production".into(),
                    from: None,
                    to: Some(1),
                    actor: "root".into(),
                    reason: "release latest".into(),
                },
            ]
        );
    }
}
