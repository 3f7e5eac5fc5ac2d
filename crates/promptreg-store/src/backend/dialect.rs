//! What differs between the two databases' SQL, filled in per backend.

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
    /// Ends a `SELECT` of queued rows a worker is about to take, so that
    /// two workers never take one row and neither waits for the other.
    pub(crate) skip_locked: &'static str,
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
    // `BEGIN IMMEDIATE`: one worker claims at a time.
    skip_locked: "",
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
    skip_locked: " FOR UPDATE SKIP LOCKED",
};

impl Dialect {
    pub(crate) fn migration(&self, sql: &str) -> String {
        sql.replace("{id}", self.id).replace("{bytes}", self.bytes)
    }
}
