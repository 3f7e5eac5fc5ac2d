// The store's operations, written once in SQL both databases accept and
// compiled once per backend: `backend.rs` includes this file in a module
// that defines `Db` (the sqlx database) and `DIALECT`.

use std::collections::{BTreeMap, BTreeSet};

use sqlx::{Pool, Transaction};

use crate::error::{Error, ErrorKind};
use crate::events::{Event, EventKind, ReleasedPrompt, Written};
use crate::files::Entry;
use crate::model::{
    Actor, Change, EntryVersion, Label, LabelMove, Permission, PushReport, Timestamp, VersionInfo,
    VersionRef,
};
use crate::schema::{EVENTS_CHANNEL, MIGRATIONS, SCHEMA_TABLE, SCHEMA_VERSION};
use crate::store::OpError;

type Tx = Transaction<'static, Db>;

/// Applies the migrations this database lacks; refuses a newer schema.
pub(crate) async fn migrate(pool: &Pool<Db>) -> Result<(), OpError> {
    // A database at the current version needs no write: a read-only file opens.
    let applied: Result<(Option<i64>,), sqlx::Error> =
        sqlx::query_as("SELECT MAX(version) FROM promptreg_schema")
            .fetch_one(pool)
            .await;
    match applied {
        Ok((version,)) => {
            check_version(version.unwrap_or(0))?;
            if version == Some(SCHEMA_VERSION) {
                return Ok(());
            }
        }
        // No schema table yet (or not a database): the migration says which.
        Err(sqlx::Error::Database(_)) => {}
        Err(e) => return Err(e.into()),
    }
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    if let Some(lock) = DIALECT.migration_lock {
        sqlx::query(lock).execute(&mut *tx).await?;
    }
    sqlx::raw_sql(SCHEMA_TABLE).execute(&mut *tx).await?;
    let (version,): (Option<i64>,) = sqlx::query_as("SELECT MAX(version) FROM promptreg_schema")
        .fetch_one(&mut *tx)
        .await?;
    let version = version.unwrap_or(0);
    check_version(version)?;
    for (n, migration) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        sqlx::raw_sql(&DIALECT.migration(migration))
            .execute(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO promptreg_schema (version, applied_at) VALUES ($1, $2)")
            .bind(n as i64 + 1)
            .bind(Timestamp::now().0)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

fn check_version(version: i64) -> Result<(), OpError> {
    if version > SCHEMA_VERSION {
        return Err(Error::new(
            ErrorKind::NewerSchema,
            format!("the database has schema version {version}, newer than the {SCHEMA_VERSION} this promptreg knows: upgrade promptreg to use it"),
        )
        .into());
    }
    Ok(())
}

/// The names of the packs, sorted.
pub(crate) async fn pack_names(pool: &Pool<Db>) -> Result<Vec<String>, OpError> {
    let rows: Vec<(String,)> = sqlx::query_as("SELECT name FROM packs ORDER BY name")
        .fetch_all(pool)
        .await?;
    Ok(rows.into_iter().map(|(n,)| n).collect())
}

/// The id of pack `name`, if the store has it.
pub(crate) async fn pack_id(pool: &Pool<Db>, name: &str) -> Result<Option<i64>, OpError> {
    let row: Option<(i64,)> = sqlx::query_as("SELECT pack_id FROM packs WHERE name = $1")
        .bind(name)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(|(id,)| id))
}

/// Records a version of every entry whose content is new, and moves
/// `latest`, in one transaction.
///
/// `whole`: the entries are the whole pack, so an entry missing from them
/// loses `latest`; otherwise only the entries given are touched.
pub(crate) async fn push(
    pool: &Pool<Db>,
    pack: &str,
    entries: &[Entry],
    whole: bool,
    actor: &Actor,
    message: &str,
) -> Result<Written<PushReport>, OpError> {
    let now = Timestamp::now();
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    sqlx::query(
        "INSERT INTO packs (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
    )
    .bind(pack)
    .bind(now.0)
    .execute(&mut *tx)
    .await?;
    let (pack_id,): (i64,) = sqlx::query_as("SELECT pack_id FROM packs WHERE name = $1")
        .bind(pack)
        .fetch_one(&mut *tx)
        .await?;
    lock_pack(&mut tx, pack_id).await?;
    let known: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT entry, digest, number FROM versions WHERE pack_id = $1")
            .bind(pack_id)
            .fetch_all(&mut *tx)
            .await?;
    let mut by_digest = BTreeMap::new();
    let mut newest: BTreeMap<String, i64> = BTreeMap::new();
    for (entry, digest, number) in known {
        let top = newest.entry(entry.clone()).or_default();
        *top = (*top).max(number);
        by_digest.insert((entry, digest), number);
    }
    let mut latest = labels_named(&mut tx, pack_id, "latest").await?;
    let mut report = PushReport {
        pack: pack.to_owned(),
        prompts: Vec::new(),
    };
    let reason = if message.is_empty() {
        "push".to_owned()
    } else {
        format!("push: {message}")
    };
    let mut events = Vec::new();
    for entry in entries {
        let current = latest.remove(&entry.name);
        let (number, change) = match by_digest.get(&(entry.name.clone(), entry.digest.clone())) {
            Some(&n) if Some(n) == current => (n, Change::Unchanged),
            Some(&n) => (n, Change::Restored),
            None => {
                let n = newest.get(&entry.name).copied().unwrap_or(0) + 1;
                insert_version(&mut tx, pack_id, entry, n, actor, message, now).await?;
                events.push(EventKind::VersionCreated {
                    prompt: entry.name.clone(),
                    version: n as u64,
                    author: actor.name.clone(),
                });
                (
                    n,
                    if n == 1 {
                        Change::Added
                    } else {
                        Change::Changed
                    },
                )
            }
        };
        if change != Change::Unchanged {
            let to = Some(number);
            let moved = set_label(
                &mut tx,
                pack_id,
                &entry.name,
                "latest",
                current,
                to,
                actor,
                &reason,
                now,
            )
            .await?;
            events.push(EventKind::from(&moved));
        }
        report
            .prompts
            .push((entry.name.clone(), change, Some(number as u64)));
    }
    if !whole {
        latest.clear();
    }
    for (gone, number) in latest {
        let moved = set_label(
            &mut tx,
            pack_id,
            &gone,
            "latest",
            Some(number),
            None,
            actor,
            &reason,
            now,
        )
        .await?;
        events.push(EventKind::from(&moved));
        report.prompts.push((gone, Change::Removed, None));
    }
    let last_event = commit(tx, pack_id, &events, now).await?;
    report.prompts.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Written {
        value: report,
        last_event,
    })
}

/// Makes the other writers of the pack wait until this transaction ends
/// (see `Dialect::lock_pack`).
async fn lock_pack(tx: &mut Tx, pack_id: i64) -> Result<(), OpError> {
    if let Some(lock) = DIALECT.lock_pack {
        sqlx::query(lock).bind(pack_id).execute(&mut **tx).await?;
    }
    Ok(())
}

async fn insert_version(
    tx: &mut Tx,
    pack_id: i64,
    entry: &Entry,
    number: i64,
    actor: &Actor,
    message: &str,
    now: Timestamp,
) -> Result<(), OpError> {
    let (version_id,): (i64,) = sqlx::query_as(
        "INSERT INTO versions (pack_id, entry, number, digest, author, message, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING version_id",
    )
    .bind(pack_id)
    .bind(&entry.name)
    .bind(number)
    .bind(&entry.digest)
    .bind(&actor.name)
    .bind(message)
    .bind(now.0)
    .fetch_one(&mut **tx)
    .await?;
    for (path, bytes) in &entry.files {
        sqlx::query("INSERT INTO version_files (version_id, path, content) VALUES ($1, $2, $3)")
            .bind(version_id)
            .bind(path)
            .bind(bytes.as_slice())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Entry -> version of every entry carrying `label`.
async fn labels_named(
    tx: &mut Tx,
    pack_id: i64,
    label: &str,
) -> Result<BTreeMap<String, i64>, OpError> {
    let rows: Vec<(String, i64)> =
        sqlx::query_as("SELECT entry, number FROM labels WHERE pack_id = $1 AND label = $2")
            .bind(pack_id)
            .bind(label)
            .fetch_all(&mut **tx)
            .await?;
    Ok(rows.into_iter().collect())
}

/// Moves `label` of `entry` from `from` to `to` (`None`: absent) if it
/// points at `from` now, and appends the move to the history.
#[allow(clippy::too_many_arguments)]
async fn set_label(
    tx: &mut Tx,
    pack_id: i64,
    entry: &str,
    label: &str,
    from: Option<i64>,
    to: Option<i64>,
    actor: &Actor,
    reason: &str,
    now: Timestamp,
) -> Result<LabelMove, OpError> {
    let changed = match (from, to) {
        (Some(from), Some(to)) => sqlx::query(
            "UPDATE labels SET number = $1 WHERE pack_id = $2 AND entry = $3 AND label = $4 AND number = $5",
        )
        .bind(to)
        .bind(pack_id)
        .bind(entry)
        .bind(label)
        .bind(from)
        .execute(&mut **tx)
        .await?
        .rows_affected(),
        (None, Some(to)) => {
            let inserted = sqlx::query(
                "INSERT INTO labels (pack_id, entry, label, number) VALUES ($1, $2, $3, $4)",
            )
            .bind(pack_id)
            .bind(entry)
            .bind(label)
            .bind(to)
            .execute(&mut **tx)
            .await;
            match inserted {
                Ok(done) => done.rows_affected(),
                Err(e) if is_unique_violation(&e) => 0,
                Err(e) => return Err(e.into()),
            }
        }
        (Some(from), None) => sqlx::query(
            "DELETE FROM labels WHERE pack_id = $1 AND entry = $2 AND label = $3 AND number = $4",
        )
        .bind(pack_id)
        .bind(entry)
        .bind(label)
        .bind(from)
        .execute(&mut **tx)
        .await?
        .rows_affected(),
        (None, None) => 1,
    };
    if changed != 1 {
        return Err(OpError::Conflict {
            prompt: entry.to_owned(),
            label: label.to_owned(),
            expected: from,
        });
    }
    sqlx::query(
        "INSERT INTO label_history (pack_id, entry, label, from_number, to_number, actor, moved_at, reason) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(pack_id)
    .bind(entry)
    .bind(label)
    .bind(from)
    .bind(to)
    .bind(&actor.name)
    .bind(now.0)
    .bind(reason)
    .execute(&mut **tx)
    .await?;
    Ok(LabelMove {
        prompt: entry.to_owned(),
        label: label.to_owned(),
        from: from.map(|n| n as u64),
        to: to.map(|n| n as u64),
        actor: actor.name.clone(),
        at: now,
        reason: reason.to_owned(),
    })
}

fn is_unique_violation(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .is_some_and(|d| d.is_unique_violation())
}

/// Where `label` of `entry` points now.
pub(crate) async fn label_target(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: &str,
    label: &str,
) -> Result<Option<u64>, OpError> {
    let row: Option<(i64,)> = sqlx::query_as(
        "SELECT number FROM labels WHERE pack_id = $1 AND entry = $2 AND label = $3",
    )
    .bind(pack_id)
    .bind(entry)
    .bind(label)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|(n,)| n as u64))
}

/// Whether the pack has `entry`, with how many versions.
pub(crate) async fn version_count(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: &str,
) -> Result<u64, OpError> {
    let (count,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM versions WHERE pack_id = $1 AND entry = $2")
            .bind(pack_id)
            .bind(entry)
            .fetch_one(pool)
            .await?;
    Ok(count as u64)
}

/// The versions of `entry`, newest first, with their labels.
pub(crate) async fn versions(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: &str,
) -> Result<Vec<VersionInfo>, OpError> {
    let rows: Vec<(i64, String, String, String, i64)> = sqlx::query_as(
        "SELECT number, digest, author, message, created_at FROM versions \
         WHERE pack_id = $1 AND entry = $2 ORDER BY number DESC",
    )
    .bind(pack_id)
    .bind(entry)
    .fetch_all(pool)
    .await?;
    let labels: Vec<(String, i64)> = sqlx::query_as(
        "SELECT label, number FROM labels WHERE pack_id = $1 AND entry = $2 ORDER BY label",
    )
    .bind(pack_id)
    .bind(entry)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(number, digest, author, message, created_at)| VersionInfo {
                prompt: entry.to_owned(),
                number: number as u64,
                digest,
                author,
                message,
                created_at: Timestamp(created_at),
                labels: labels
                    .iter()
                    .filter(|(_, n)| *n == number)
                    .map(|(l, _)| l.clone())
                    .collect(),
            },
        )
        .collect())
}

/// Every entry of the pack with its labels (entries with no label too).
pub(crate) async fn entries(
    pool: &Pool<Db>,
    pack_id: i64,
) -> Result<BTreeMap<String, BTreeMap<String, u64>>, OpError> {
    let names: Vec<(String,)> =
        sqlx::query_as("SELECT DISTINCT entry FROM versions WHERE pack_id = $1")
            .bind(pack_id)
            .fetch_all(pool)
            .await?;
    let labels: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT entry, label, number FROM labels WHERE pack_id = $1")
            .bind(pack_id)
            .fetch_all(pool)
            .await?;
    let mut out: BTreeMap<String, BTreeMap<String, u64>> =
        names.into_iter().map(|(n,)| (n, BTreeMap::new())).collect();
    for (entry, label, number) in labels {
        out.entry(entry).or_default().insert(label, number as u64);
    }
    Ok(out)
}

/// The files of version `number` of `entry`.
pub(crate) async fn files(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: &str,
    number: u64,
) -> Result<Option<BTreeMap<String, Vec<u8>>>, OpError> {
    let version: Option<(i64,)> = sqlx::query_as(
        "SELECT version_id FROM versions WHERE pack_id = $1 AND entry = $2 AND number = $3",
    )
    .bind(pack_id)
    .bind(entry)
    .bind(number as i64)
    .fetch_optional(pool)
    .await?;
    let Some((version_id,)) = version else {
        return Ok(None);
    };
    let rows: Vec<(String, Vec<u8>)> =
        sqlx::query_as("SELECT path, content FROM version_files WHERE version_id = $1")
            .bind(version_id)
            .fetch_all(pool)
            .await?;
    Ok(Some(rows.into_iter().collect()))
}

/// Every file of every entry at `label`, in one read.
pub(crate) async fn checkout(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &str,
) -> Result<Vec<(String, String, Vec<u8>)>, OpError> {
    let rows: Vec<(String, String, Vec<u8>)> = sqlx::query_as(
        "SELECT l.entry, f.path, f.content FROM labels l \
         JOIN versions v ON v.pack_id = l.pack_id AND v.entry = l.entry AND v.number = l.number \
         JOIN version_files f ON f.version_id = v.version_id \
         WHERE l.pack_id = $1 AND l.label = $2",
    )
    .bind(pack_id)
    .bind(label)
    .fetch_all(pool)
    .await?;
    Ok(rows)
}

/// entry, number, digest, path, content
type EntryFileRow = (String, i64, String, String, Vec<u8>);

/// Every entry at `label` with its version, address and files, in one read.
pub(crate) async fn entries_at(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &str,
) -> Result<Vec<EntryVersion>, OpError> {
    let rows: Vec<EntryFileRow> = sqlx::query_as(
        "SELECT l.entry, v.number, v.digest, f.path, f.content FROM labels l \
         JOIN versions v ON v.pack_id = l.pack_id AND v.entry = l.entry AND v.number = l.number \
         JOIN version_files f ON f.version_id = v.version_id \
         WHERE l.pack_id = $1 AND l.label = $2 ORDER BY l.entry, f.path",
    )
    .bind(pack_id)
    .bind(label)
    .fetch_all(pool)
    .await?;
    let mut out: Vec<EntryVersion> = Vec::new();
    for (entry, number, digest, path, content) in rows {
        match out.last_mut() {
            Some(last) if last.prompt == entry => last.files.insert(path, content),
            _ => {
                let mut files = crate::files::PackFiles::default();
                files.insert(path, content);
                out.push(EntryVersion {
                    prompt: entry,
                    number: number as u64,
                    digest,
                    files,
                });
            }
        }
    }
    Ok(out)
}

/// The address of version `number` of `entry`.
pub(crate) async fn digest_of(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: &str,
    number: u64,
) -> Result<Option<String>, OpError> {
    let row: Option<(String,)> = sqlx::query_as(
        "SELECT digest FROM versions WHERE pack_id = $1 AND entry = $2 AND number = $3",
    )
    .bind(pack_id)
    .bind(entry)
    .bind(number as i64)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|(d,)| d))
}

/// Every version's stored digest and files, for [`verify`](crate::Store::verify).
pub(crate) async fn all_versions(
    pool: &Pool<Db>,
    pack_id: i64,
) -> Result<Vec<(String, i64, String, BTreeMap<String, Vec<u8>>)>, OpError> {
    let versions: Vec<(i64, String, i64, String)> =
        sqlx::query_as("SELECT version_id, entry, number, digest FROM versions WHERE pack_id = $1")
            .bind(pack_id)
            .fetch_all(pool)
            .await?;
    let files: Vec<(i64, String, Vec<u8>)> = sqlx::query_as(
        "SELECT f.version_id, f.path, f.content FROM version_files f \
         JOIN versions v ON v.version_id = f.version_id WHERE v.pack_id = $1",
    )
    .bind(pack_id)
    .fetch_all(pool)
    .await?;
    let mut by_version: BTreeMap<i64, BTreeMap<String, Vec<u8>>> = BTreeMap::new();
    for (id, path, content) in files {
        by_version.entry(id).or_default().insert(path, content);
    }
    Ok(versions
        .into_iter()
        .map(|(id, entry, number, digest)| {
            (
                entry,
                number,
                digest,
                by_version.remove(&id).unwrap_or_default(),
            )
        })
        .collect())
}

/// Moves `label` of `entry` to version `to`, if it points at `expect`.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn move_label(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: &str,
    label: &Label,
    to: u64,
    expect: Option<u64>,
    actor: &Actor,
    reason: &str,
) -> Result<Written<LabelMove>, OpError> {
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    lock_pack(&mut tx, pack_id).await?;
    check_protection(&mut tx, pack_id, label, actor).await?;
    let moved = set_label(
        &mut tx,
        pack_id,
        entry,
        label.as_str(),
        expect.map(|n| n as i64),
        Some(to as i64),
        actor,
        reason,
        Timestamp::now(),
    )
    .await?;
    commit_move(tx, pack_id, moved).await
}

/// Commits one label move with its event.
async fn commit_move(tx: Tx, pack_id: i64, moved: LabelMove) -> Result<Written<LabelMove>, OpError> {
    let last_event = commit(tx, pack_id, &[EventKind::from(&moved)], moved.at).await?;
    Ok(Written {
        value: moved,
        last_event,
    })
}

async fn check_protection(
    tx: &mut Tx,
    pack_id: i64,
    label: &Label,
    actor: &Actor,
) -> Result<(), OpError> {
    let protected: Option<(i64,)> =
        sqlx::query_as("SELECT pack_id FROM protected_labels WHERE pack_id = $1 AND label = $2")
            .bind(pack_id)
            .bind(label.as_str())
            .fetch_optional(&mut **tx)
            .await?;
    if protected.is_some() {
        actor.require(
            Permission::Admin,
            &format!("move the protected label `{label}`"),
        )?;
    }
    Ok(())
}

/// Moves `label` of `entry` back to where its last move took it from.
pub(crate) async fn rollback(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: &str,
    label: &Label,
    actor: &Actor,
    why: &str,
) -> Result<Written<LabelMove>, OpError> {
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    lock_pack(&mut tx, pack_id).await?;
    check_protection(&mut tx, pack_id, label, actor).await?;
    let moves = label_moves(&mut *tx, pack_id, entry, label).await?;
    let (move_id, previous, to) = rollback_step(&moves, entry, label)?;
    let reason = recorded_reason(
        format!(
            "rollback from {}",
            to.map_or("nothing".to_owned(), |n| n.to_string())
        ),
        why,
    );
    let moved = set_label(
        &mut tx,
        pack_id,
        entry,
        label.as_str(),
        to,
        Some(previous),
        actor,
        &reason,
        Timestamp::now(),
    )
    .await?;
    // The move just written is the newest of this label (the pack is
    // locked): it undoes `move_id`.
    sqlx::query(
        "UPDATE label_history SET undoes = $1 WHERE move_id = \
         (SELECT MAX(move_id) FROM label_history WHERE pack_id = $2 AND entry = $3 AND label = $4)",
    )
    .bind(move_id)
    .bind(pack_id)
    .bind(entry)
    .bind(label.as_str())
    .execute(&mut *tx)
    .await?;
    commit_move(tx, pack_id, moved).await
}

/// Where a rollback of `label` of `entry` would take it, without moving it.
pub(crate) async fn rollback_target(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: &str,
    label: &Label,
) -> Result<u64, OpError> {
    let moves = label_moves(pool, pack_id, entry, label).await?;
    let (_, previous, _) = rollback_step(&moves, entry, label)?;
    Ok(previous as u64)
}

/// The moves of one label, newest first.
async fn label_moves<'e>(
    executor: impl sqlx::Executor<'e, Database = Db>,
    pack_id: i64,
    entry: &str,
    label: &Label,
) -> Result<Vec<MoveRow>, OpError> {
    Ok(sqlx::query_as(
        "SELECT move_id, from_number, to_number, undoes FROM label_history \
         WHERE pack_id = $1 AND entry = $2 AND label = $3 ORDER BY move_id DESC",
    )
    .bind(pack_id)
    .bind(entry)
    .bind(label.as_str())
    .fetch_all(executor)
    .await?)
}

/// The step a rollback takes, from the label's moves (newest first): the
/// move it undoes, the version it goes back to and the one it leaves.
fn rollback_step(
    moves: &[MoveRow],
    entry: &str,
    label: &Label,
) -> Result<(i64, i64, Option<i64>), Error> {
    let Some((move_id, from, to)) = last_standing_move(moves) else {
        let message = match moves.is_empty() {
            true => format!(
                "`{entry}` has no label `{label}` to roll back (`promptreg store log {entry}` lists its labels)"
            ),
            false => format!(
                "label `{label}` of `{entry}` has no earlier move to roll back (see `promptreg store history {entry}`)"
            ),
        };
        return Err(Error::new(ErrorKind::UnknownVersion, message));
    };
    let Some(previous) = from else {
        let first = to.map_or("no version".to_owned(), |n| format!("version {n}"));
        return Err(Error::new(
            ErrorKind::UnknownVersion,
            format!("label `{label}` of `{entry}` is back at {first}, where it was created: there is nothing before it to roll back to (`promptreg store history {entry}` shows its moves)"),
        ));
    };
    Ok((move_id, previous, to))
}

/// One move of a label: `move_id`, `from_number`, `to_number`, `undoes`.
type MoveRow = (i64, Option<i64>, Option<i64>, Option<i64>);

/// The newest move of a label that is not undone (its id, from, to),
/// given the label's moves newest first (`move_id`, `from_number`,
/// `to_number`, `undoes`): rollbacks are skipped with the moves they undid,
/// so rollbacks walk the history back one step each.
fn last_standing_move(moves: &[MoveRow]) -> Option<(i64, Option<i64>, Option<i64>)> {
    let mut undone = BTreeSet::new();
    for &(move_id, from, to, undoes) in moves {
        if let Some(undid) = undoes {
            undone.insert(undid);
        } else if !undone.contains(&move_id) {
            return Some((move_id, from, to));
        }
    }
    None
}

/// The reason the history records for a move the store makes itself:
/// what it did, then the caller's reason when one was given.
fn recorded_reason(what: String, why: &str) -> String {
    match why.trim() {
        "" => what,
        why => format!("{what}: {why}"),
    }
}

/// Points `to` at what `from` points at, on every entry, in one transaction.
pub(crate) async fn release(
    pool: &Pool<Db>,
    pack_id: i64,
    from: &Label,
    to: &Label,
    actor: &Actor,
    why: &str,
) -> Result<Written<Vec<LabelMove>>, OpError> {
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    lock_pack(&mut tx, pack_id).await?;
    check_protection(&mut tx, pack_id, to, actor).await?;
    let source = labels_named(&mut tx, pack_id, from.as_str()).await?;
    let target = labels_named(&mut tx, pack_id, to.as_str()).await?;
    let reason = recorded_reason(format!("release {from}"), why);
    let now = Timestamp::now();
    let mut moves = Vec::new();
    for (entry, number) in source {
        let current = target.get(&entry).copied();
        if current != Some(number) {
            moves.push(
                set_label(
                    &mut tx,
                    pack_id,
                    &entry,
                    to.as_str(),
                    current,
                    Some(number),
                    actor,
                    &reason,
                    now,
                )
                .await?,
            );
        }
    }
    // One event however many prompts moved: readers of the event stream
    // keep up with a release of any size.
    let mut events = Vec::new();
    if !moves.is_empty() {
        events.push(EventKind::Released {
            label: to.as_str().to_owned(),
            moves: moves.iter().map(ReleasedPrompt::from).collect(),
            actor: actor.name.clone(),
            reason,
        });
    }
    let last_event = commit(tx, pack_id, &events, now).await?;
    Ok(Written {
        value: moves,
        last_event,
    })
}

/// Marks `label` protected (or not) in the pack; an event only if that
/// changed anything.
pub(crate) async fn protect(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &Label,
    protected: bool,
    actor: &Actor,
) -> Result<Written<()>, OpError> {
    let sql = if protected {
        "INSERT INTO protected_labels (pack_id, label) VALUES ($1, $2) ON CONFLICT (pack_id, label) DO NOTHING"
    } else {
        "DELETE FROM protected_labels WHERE pack_id = $1 AND label = $2"
    };
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    lock_pack(&mut tx, pack_id).await?;
    let changed = sqlx::query(sql)
        .bind(pack_id)
        .bind(label.as_str())
        .execute(&mut *tx)
        .await?
        .rows_affected();
    let (label, actor) = (label.as_str().to_owned(), actor.name.clone());
    let event = match protected {
        true => EventKind::LabelProtected { label, actor },
        false => EventKind::LabelUnprotected { label, actor },
    };
    let events = if changed > 0 { vec![event] } else { Vec::new() };
    let last_event = commit(tx, pack_id, &events, Timestamp::now()).await?;
    Ok(Written {
        value: (),
        last_event,
    })
}

/// The protected labels of the pack.
pub(crate) async fn protected(pool: &Pool<Db>, pack_id: i64) -> Result<BTreeSet<String>, OpError> {
    let rows: Vec<(String,)> =
        sqlx::query_as("SELECT label FROM protected_labels WHERE pack_id = $1")
            .bind(pack_id)
            .fetch_all(pool)
            .await?;
    Ok(rows.into_iter().map(|(l,)| l).collect())
}

/// entry, label, from, to, actor, moved_at, reason
type HistoryRow = (
    String,
    String,
    Option<i64>,
    Option<i64>,
    String,
    i64,
    String,
);

/// The label moves of the pack (of one entry if given), oldest first.
pub(crate) async fn history(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: Option<&str>,
) -> Result<Vec<LabelMove>, OpError> {
    let rows: Vec<HistoryRow> = sqlx::query_as(
        "SELECT entry, label, from_number, to_number, actor, moved_at, reason FROM label_history \
         WHERE pack_id = $1 AND ($2 = '' OR entry = $2) ORDER BY move_id",
    )
    .bind(pack_id)
    .bind(entry.unwrap_or(""))
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(prompt, label, from, to, actor, at, reason)| LabelMove {
            prompt,
            label,
            from: from.map(|n| n as u64),
            to: to.map(|n| n as u64),
            actor,
            at: Timestamp(at),
            reason,
        })
        .collect())
}

/// Resolves a version reference of `entry` to a number that exists.
pub(crate) async fn resolve(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: &str,
    version: &VersionRef,
) -> Result<Option<u64>, OpError> {
    match version {
        VersionRef::Label(label) => label_target(pool, pack_id, entry, label.as_str()).await,
        VersionRef::Number(n) => {
            let row: Option<(i64,)> = sqlx::query_as(
                "SELECT number FROM versions WHERE pack_id = $1 AND entry = $2 AND number = $3",
            )
            .bind(pack_id)
            .bind(entry)
            .bind(*n as i64)
            .fetch_optional(pool)
            .await?;
            Ok(row.map(|(n,)| n as u64))
        }
    }
}
