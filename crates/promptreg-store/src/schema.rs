//! The tables, as versioned migrations embedded in the binary. One text
//! serves both dialects; only the auto-numbered key and the bytes type
//! differ, filled in per dialect.

/// The migrations, in order; the schema version is how many are applied.
/// Append only: a released migration never changes.
pub(crate) const MIGRATIONS: &[&str] = &[r#"
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
"#];

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
}

pub(crate) const SQLITE: Dialect = Dialect {
    id: "INTEGER PRIMARY KEY",
    bytes: "BLOB",
    begin_write: "BEGIN IMMEDIATE",
    migration_lock: None,
};

pub(crate) const POSTGRES: Dialect = Dialect {
    id: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    bytes: "BYTEA",
    begin_write: "BEGIN",
    // An arbitrary constant: "promptrg" in ASCII.
    migration_lock: Some("SELECT pg_advisory_xact_lock(8101238574758242407)"),
};

impl Dialect {
    pub(crate) fn migration(&self, sql: &str) -> String {
        sql.replace("{id}", self.id).replace("{bytes}", self.bytes)
    }
}
