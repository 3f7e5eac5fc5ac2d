// Revisions: one numbered, immutable state of a label per change to it.
// Included in each backend module (see `backend/mod.rs`) after
// `prelude.rs`, whose imports it shares.

/// Records the revision of `label` that this transaction's moves made:
/// every entry the label now points at, and the digest of that state. The
/// label's moves this transaction wrote are attached to it. Returns its
/// number.
async fn record_revision(
    tx: &mut Tx,
    pack_id: i64,
    label: &str,
    cause: RevisionCause,
    actor: &str,
    reason: &str,
    now: Timestamp,
) -> Result<u64, OpError> {
    let state: Vec<(String, String)> = sqlx::query_as(
        "SELECT l.entry, v.digest FROM labels l JOIN versions v \
         ON v.pack_id = l.pack_id AND v.entry = l.entry AND v.number = l.number \
         WHERE l.pack_id = $1 AND l.label = $2",
    )
    .bind(pack_id)
    .bind(label)
    .fetch_all(&mut **tx)
    .await?;
    let digest = crate::files::state_digest(state.iter().map(|(e, d)| (e.as_str(), d.as_str())));
    let (newest,): (Option<i64>,) =
        sqlx::query_as("SELECT MAX(number) FROM revisions WHERE pack_id = $1 AND label = $2")
            .bind(pack_id)
            .bind(label)
            .fetch_one(&mut **tx)
            .await?;
    let number = newest.unwrap_or(0) + 1;
    let (revision_id,): (i64,) = sqlx::query_as(
        "INSERT INTO revisions (pack_id, label, number, digest, cause, actor, created_at, reason) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING revision_id",
    )
    .bind(pack_id)
    .bind(label)
    .bind(number)
    .bind(&digest)
    .bind(cause.as_str())
    .bind(actor)
    .bind(now.0)
    .bind(reason)
    .fetch_one(&mut **tx)
    .await?;
    sqlx::query(
        "INSERT INTO revision_entries (revision_id, entry, number) \
         SELECT $1, entry, number FROM labels WHERE pack_id = $2 AND label = $3",
    )
    .bind(revision_id)
    .bind(pack_id)
    .bind(label)
    .execute(&mut **tx)
    .await?;
    // Writers of a pack take turns, so the label's moves not yet in a
    // revision are this transaction's.
    sqlx::query(
        "UPDATE label_history SET revision_id = $1 \
         WHERE pack_id = $2 AND label = $3 AND revision_id IS NULL",
    )
    .bind(revision_id)
    .bind(pack_id)
    .bind(label)
    .execute(&mut **tx)
    .await?;
    Ok(number as u64)
}

/// Gives every label of the store its revision 1, its state now: run once,
/// by the migration that adds revisions.
async fn record_first_revisions(tx: &mut Tx) -> Result<(), OpError> {
    let labels: Vec<(i64, String)> =
        sqlx::query_as("SELECT DISTINCT pack_id, label FROM labels ORDER BY pack_id, label")
            .fetch_all(&mut **tx)
            .await?;
    let now = Timestamp::now();
    for (pack_id, label) in labels {
        record_revision(
            tx,
            pack_id,
            &label,
            RevisionCause::Migration,
            "promptreg",
            "the label as it stood when the store was migrated to revisions",
            now,
        )
        .await?;
    }
    Ok(())
}

/// revision_id, number, digest, cause, actor, created_at, reason
type RevisionRow = (i64, i64, String, String, String, i64, String);

/// The revisions of `label`, newest first, each with its entries and what
/// it changed.
pub(crate) async fn revisions(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &str,
) -> Result<Vec<Revision>, OpError> {
    let rows: Vec<RevisionRow> = sqlx::query_as(
        "SELECT revision_id, number, digest, cause, actor, created_at, reason FROM revisions \
         WHERE pack_id = $1 AND label = $2 ORDER BY number",
    )
    .bind(pack_id)
    .bind(label)
    .fetch_all(pool)
    .await?;
    let entries: Vec<(i64, String, i64)> = sqlx::query_as(
        "SELECT e.revision_id, e.entry, e.number FROM revision_entries e \
         JOIN revisions r ON r.revision_id = e.revision_id \
         WHERE r.pack_id = $1 AND r.label = $2",
    )
    .bind(pack_id)
    .bind(label)
    .fetch_all(pool)
    .await?;
    let mut by_revision: BTreeMap<i64, BTreeMap<String, u64>> = BTreeMap::new();
    for (revision_id, entry, number) in entries {
        by_revision
            .entry(revision_id)
            .or_default()
            .insert(entry, number as u64);
    }
    let mut out: Vec<Revision> = Vec::with_capacity(rows.len());
    let mut before = BTreeMap::new();
    for (revision_id, number, digest, cause, actor, at, reason) in rows {
        let entries = by_revision.remove(&revision_id).unwrap_or_default();
        let cause = RevisionCause::named(&cause).ok_or_else(|| {
            OpError::Store(Error::new(
                ErrorKind::Database,
                format!("revision {number} of label `{label}` has an unknown cause `{cause}`"),
            ))
        })?;
        out.push(Revision {
            label: label.to_owned(),
            number: number as u64,
            digest,
            cause,
            actor,
            at: Timestamp(at),
            reason,
            changes: revision_changes(&before, &entries),
            entries: entries.clone(),
        });
        before = entries;
    }
    out.reverse();
    Ok(out)
}

/// The entries whose version differs between `before` and `after`, sorted.
fn revision_changes(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
) -> Vec<RevisionChange> {
    let names: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    names
        .into_iter()
        .filter_map(|entry| {
            let (from, to) = (before.get(entry).copied(), after.get(entry).copied());
            (from != to).then(|| RevisionChange {
                entry: entry.clone(),
                from,
                to,
            })
        })
        .collect()
}
