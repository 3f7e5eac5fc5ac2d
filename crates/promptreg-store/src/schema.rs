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
    r#"
-- A label's revisions: every change to what a label of a pack resolves to
-- (a move, a release, a rollback, a push that moves `latest`) is one
-- numbered, immutable revision of it, holding the version of every entry
-- the label then points at and the digest of that state. Labels that
-- existed before this migration get their revision 1 when the store opens
-- (cause `migration`); the moves made before it belong to no revision (0).
-- `restores` is the revision a restore (a pack rollback, a label pointed
-- at a revision) brought back; `tests`, for a gated label, the results it
-- was admitted with, and `forced` whether an admin moved it past failures.
CREATE TABLE revisions (
    revision_id {id},
    pack_id BIGINT NOT NULL REFERENCES packs (pack_id),
    label TEXT NOT NULL,
    number BIGINT NOT NULL,
    digest TEXT NOT NULL,
    cause TEXT NOT NULL,
    actor TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    reason TEXT NOT NULL,
    restores BIGINT,
    tests TEXT,
    forced BOOLEAN NOT NULL DEFAULT FALSE,
    UNIQUE (pack_id, label, number)
);
CREATE TABLE revision_entries (
    revision_id BIGINT NOT NULL REFERENCES revisions (revision_id),
    entry TEXT NOT NULL,
    number BIGINT NOT NULL,
    PRIMARY KEY (revision_id, entry)
);
ALTER TABLE label_history ADD COLUMN revision_id BIGINT;
UPDATE label_history SET revision_id = 0;
-- A revision takes its label's moves not yet in one: found by this index,
-- not by a scan of the pack's history.
CREATE INDEX label_history_unrevised ON label_history (pack_id, label) WHERE revision_id IS NULL;
"#,
    r#"
-- What running instances serve, as they report it (see `fleet.rs`): one row
-- per instance and label, dropped a day after its last report. Times are
-- milliseconds since the epoch; `reporter` is who sent the report.
CREATE TABLE fleet_instances (
    pack_id BIGINT NOT NULL REFERENCES packs (pack_id),
    label TEXT NOT NULL,
    instance TEXT NOT NULL,
    name TEXT,
    library TEXT NOT NULL,
    source TEXT NOT NULL,
    revision BIGINT,
    digest TEXT,
    last_error TEXT,
    interval_ms BIGINT NOT NULL,
    reporter TEXT NOT NULL,
    first_seen BIGINT NOT NULL,
    last_seen BIGINT NOT NULL,
    PRIMARY KEY (pack_id, label, instance)
);
CREATE INDEX fleet_instances_by_last_seen ON fleet_instances (last_seen);
"#,
    r#"
-- Gradual releases (see `splits.rs`): a label serving a candidate state,
-- every entry's version fixed when the split starts (`split_entries`), to
-- a share of subjects (`basis_points` of 10,000). One split at a time runs
-- per label; promoted and aborted ones stay, for the record, with every
-- step in `split_steps`. `promoted_to` is the label's revision a
-- promotion made.
CREATE TABLE splits (
    split_id {id},
    pack_id BIGINT NOT NULL REFERENCES packs (pack_id),
    label TEXT NOT NULL,
    source_label TEXT NOT NULL,
    source_revision BIGINT NOT NULL,
    digest TEXT NOT NULL,
    basis_points BIGINT NOT NULL,
    state TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    actor TEXT NOT NULL,
    reason TEXT NOT NULL,
    tests TEXT,
    forced BOOLEAN NOT NULL DEFAULT FALSE,
    promoted_to BIGINT
);
CREATE UNIQUE INDEX splits_one_running ON splits (pack_id, label) WHERE state = 'running';
CREATE TABLE split_entries (
    split_id BIGINT NOT NULL REFERENCES splits (split_id),
    entry TEXT NOT NULL,
    number BIGINT NOT NULL,
    PRIMARY KEY (split_id, entry)
);
-- An instance reports which split's candidate it holds, if any.
ALTER TABLE fleet_instances ADD COLUMN split BIGINT;
CREATE TABLE split_steps (
    step_id {id},
    split_id BIGINT NOT NULL REFERENCES splits (split_id),
    step TEXT NOT NULL,
    basis_points BIGINT NOT NULL,
    actor TEXT NOT NULL,
    at BIGINT NOT NULL,
    reason TEXT NOT NULL
);
"#,
    r#"
-- Signed releases (see `signatures.rs`): signatures of a label's revisions
-- and of splits' candidates, made with the releaser's key where the
-- releaser runs (the store never holds a private key), at most one per
-- key; and the names admins give the keys.
CREATE TABLE revision_signatures (
    revision_id BIGINT NOT NULL REFERENCES revisions (revision_id),
    fingerprint TEXT NOT NULL,
    signature TEXT NOT NULL,
    actor TEXT NOT NULL,
    signed_at BIGINT NOT NULL,
    PRIMARY KEY (revision_id, fingerprint)
);
CREATE TABLE split_signatures (
    split_id BIGINT NOT NULL REFERENCES splits (split_id),
    fingerprint TEXT NOT NULL,
    signature TEXT NOT NULL,
    actor TEXT NOT NULL,
    signed_at BIGINT NOT NULL,
    PRIMARY KEY (split_id, fingerprint)
);
CREATE TABLE signing_keys (
    fingerprint TEXT NOT NULL PRIMARY KEY,
    name TEXT NOT NULL,
    actor TEXT NOT NULL,
    named_at BIGINT NOT NULL
);
"#,
    r#"
-- The fleet view bounded per reporter as well as per label and pack (see
-- `fleet.rs`, `FleetLimits`): its instances are counted by reporter.
CREATE INDEX fleet_instances_by_reporter ON fleet_instances (reporter);
"#,
    r#"
-- Stable contracts (see `ops/contracts.rs`): the breaking contract changes
-- an admin forced a label past, one per line, with the revision.
ALTER TABLE revisions ADD COLUMN breaking TEXT;
ALTER TABLE splits ADD COLUMN breaking TEXT;
"#,
    r#"
-- Webhooks (see `webhooks/`): subscriptions to the event log, with their
-- signing secrets (kept, since every delivery is signed with them; a
-- rotated-out one signs beside the new one until `previous_until`). The
-- event log is the outbox: `event_cursor` is the last event a webhook took
-- in; each event it wants becomes one delivery, leased by one worker at a
-- time (`lease_until`, `leased_by`) and retried until a day after
-- `retry_from`. Packs and event types are space-separated; empty: all.
-- A delivery's message id is `msg_`, the webhook's random `message_prefix`
-- and the delivery's number: unique across stores, so a receiver hearing
-- from two never drops one's message as the other's.
CREATE TABLE webhooks (
    webhook_id {id},
    name TEXT NOT NULL UNIQUE,
    message_prefix TEXT NOT NULL,
    url TEXT NOT NULL,
    packs TEXT NOT NULL,
    events TEXT NOT NULL,
    format TEXT NOT NULL,
    secret TEXT NOT NULL,
    previous_secret TEXT,
    previous_until BIGINT,
    event_cursor BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    disabled_at BIGINT,
    disabled_reason TEXT
);
CREATE TABLE webhook_deliveries (
    delivery_id {id},
    webhook_id BIGINT NOT NULL REFERENCES webhooks (webhook_id),
    event_id BIGINT,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    retry_from BIGINT NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    lease_until BIGINT,
    leased_by TEXT,
    finished_at BIGINT,
    UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
CREATE TABLE webhook_attempts (
    attempt_id {id},
    delivery_id BIGINT NOT NULL REFERENCES webhook_deliveries (delivery_id),
    at BIGINT NOT NULL,
    duration_ms BIGINT NOT NULL,
    status BIGINT,
    error TEXT,
    response TEXT NOT NULL,
    worker TEXT NOT NULL
);
CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id);
"#,
];

/// The schema version whose migration adds revisions: a store migrated
/// past it gives each of its labels a first revision.
pub(crate) const REVISIONS_SINCE: i64 = 5;

/// The schema version this binary writes and understands.
pub(crate) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The table recording which migrations ran.
pub(crate) const SCHEMA_TABLE: &str = "CREATE TABLE IF NOT EXISTS promptreg_schema (version BIGINT NOT NULL PRIMARY KEY, applied_at BIGINT NOT NULL)";

#[cfg(test)]
mod tests {
    use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};

    use super::*;
    use crate::backend::SQLITE;
    use crate::{EventKind, ReleasedPrompt, Store};

    /// A SQLite store in `dir` made at schema `version`, holding `rows`.
    async fn store_at_version(
        dir: &std::path::Path,
        version: i64,
        rows: &str,
    ) -> std::path::PathBuf {
        let path = dir.join("old.db");
        let options = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true);
        let pool = SqlitePool::connect_with(options).await.unwrap();
        sqlx::raw_sql(SCHEMA_TABLE).execute(&pool).await.unwrap();
        for migration in &MIGRATIONS[..version as usize] {
            sqlx::raw_sql(&SQLITE.migration(migration))
                .execute(&pool)
                .await
                .unwrap();
        }
        sqlx::raw_sql(rows).execute(&pool).await.unwrap();
        pool.close().await;
        path
    }

    /// A database made at schema version 2 opens, is migrated, and reads
    /// its old release back as written: a `released` without versions,
    /// then a `label_moved` per prompt.
    #[tokio::test]
    async fn a_release_recorded_at_schema_version_2_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = store_at_version(dir.path(), 2, "INSERT INTO promptreg_schema VALUES (1, 0), (2, 0);
             INSERT INTO packs (name, created_at) VALUES ('demo', 0);
             INSERT INTO events (pack_id, at, kind, label, actor, reason)
                 VALUES (1, 0, 'released', 'production', 'root', 'release latest');
             INSERT INTO event_prompts (event_id, prompt) VALUES (1, 'greeting');
             INSERT INTO events (pack_id, at, kind, prompt, label, to_number, actor, reason)
                 VALUES (1, 0, 'label_moved', 'greeting', 'production', 1, 'root', 'release latest');").await;

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

    /// A store made before revisions gives each of its labels revision 1,
    /// the label as it stood, when it is migrated; the moves made before
    /// belong to no revision.
    #[tokio::test]
    async fn labels_made_before_revisions_get_their_first_revision() {
        let dir = tempfile::tempdir().unwrap();
        let path = store_at_version(dir.path(), REVISIONS_SINCE - 1, "INSERT INTO promptreg_schema VALUES (1, 0), (2, 0), (3, 0), (4, 0);
             INSERT INTO packs (name, created_at) VALUES ('demo', 0);
             INSERT INTO versions (pack_id, entry, number, digest, author, message, created_at)
                 VALUES (1, 'greeting', 1, 'aa', 'ada', '', 0), (1, 'greeting', 2, 'bb', 'ada', '', 0);
             INSERT INTO labels VALUES (1, 'greeting', 'production', 1), (1, 'greeting', 'latest', 2);
             INSERT INTO label_history (pack_id, entry, label, from_number, to_number, actor, moved_at, reason)
                 VALUES (1, 'greeting', 'production', NULL, 1, 'ada', 0, 'ship');").await;

        let store = Store::open(path.to_str().unwrap()).await.unwrap();
        let production = crate::Label::new("production").unwrap();
        let revisions = store.revisions("demo", &production).await.unwrap();
        assert_eq!(revisions.len(), 1);
        let first = &revisions[0];
        assert_eq!(
            (first.number, first.cause),
            (1, crate::RevisionCause::Migration)
        );
        assert_eq!(first.entries, [("greeting".to_owned(), 1)].into());
        assert_eq!(first.digest, crate::state_digest([("greeting", "aa")]));
        let latest = store
            .revisions("demo", &crate::Label::latest())
            .await
            .unwrap();
        assert_eq!(latest[0].entries["greeting"], 2);
        // Opening again migrates nothing: still one revision.
        drop(store);
        let store = Store::open(path.to_str().unwrap()).await.unwrap();
        assert_eq!(store.revisions("demo", &production).await.unwrap().len(), 1);
    }
}
