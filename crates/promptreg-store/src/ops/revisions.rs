// Revisions: one numbered, immutable state of a label per change to it.
// Included in each backend module (see `backend/mod.rs`) after
// `prelude.rs`, whose imports it shares.

/// What made a revision: its cause, who, why, when, and the revision a
/// restore brought back.
struct Made<'a> {
    cause: RevisionCause,
    restores: Option<u64>,
    actor: &'a str,
    /// Signs the revision, in its transaction.
    signer: Option<&'a promptreg::signing::SigningKey>,
    /// The actor moves gated labels past failing tests.
    forced: bool,
    /// The candidate states tested outside the transaction; `None`
    /// records the state as it stands, gated or not (a migration).
    tested: Option<&'a crate::gate::Tested>,
    reason: &'a str,
    now: Timestamp,
}

impl<'a> Made<'a> {
    fn by(
        cause: RevisionCause,
        actor: &'a Actor,
        reason: &'a str,
        now: Timestamp,
        tested: &'a crate::gate::Tested,
    ) -> Self {
        Made {
            tested: Some(tested),
            cause,
            restores: None,
            actor: &actor.name,
            signer: actor.signer(),
            forced: actor.forces_gates(),
            reason,
            now,
        }
    }
}

/// Records the revision of `label` that this transaction's moves made:
/// every entry the label now points at, and the digest of that state. The
/// label's moves this transaction wrote are attached to it. Returns its
/// number and the event announcing it, to append after the moves'.
async fn record_revision(
    tx: &mut Tx,
    pack_id: i64,
    label: &str,
    made: Made<'_>,
) -> Result<(u64, EventKind), OpError> {
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
    let manifests = label_manifests(tx, pack_id, label).await?;
    let admitted = admit_if_gated(tx, pack_id, label, &manifests, &made, &digest).await?;
    let (newest,): (Option<i64>,) =
        sqlx::query_as("SELECT MAX(number) FROM revisions WHERE pack_id = $1 AND label = $2")
            .bind(pack_id)
            .bind(label)
            .fetch_one(&mut **tx)
            .await?;
    let number = newest.unwrap_or(0) + 1;
    let (revision_id,): (i64,) = sqlx::query_as(
        "INSERT INTO revisions \
         (pack_id, label, number, digest, cause, actor, created_at, reason, restores, tests, forced) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING revision_id",
    )
    .bind(pack_id)
    .bind(label)
    .bind(number)
    .bind(&digest)
    .bind(made.cause.as_str())
    .bind(made.actor)
    .bind(made.now.0)
    .bind(made.reason)
    .bind(made.restores.map(|n| n as i64))
    .bind(admitted.map(|a| a.summary()))
    .bind(admitted.is_some_and(|a| a.forced && a.failed > 0))
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
    if made.tested.is_some() && number > 1 {
        let (before,): (i64,) = sqlx::query_as(
            "SELECT revision_id FROM revisions WHERE pack_id = $1 AND label = $2 AND number = $3",
        )
        .bind(pack_id)
        .bind(label)
        .bind(number - 1)
        .fetch_one(&mut **tx)
        .await?;
        let breaking = guard_contract(tx, pack_id, label, &manifests, (before, revision_id), made.forced).await?;
        if !breaking.is_empty() {
            sqlx::query("UPDATE revisions SET breaking = $1 WHERE revision_id = $2")
                .bind(breaking.join("\n"))
                .bind(revision_id)
                .execute(&mut **tx)
                .await?;
        }
    }
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
    sign_if_asked(tx, pack_id, label, (revision_id, number as u64, &digest), &manifests, &made).await?;
    let created = EventKind::RevisionCreated {
        label: label.to_owned(),
        revision: number as u64,
        digest,
        cause: made.cause,
        actor: made.actor.to_owned(),
        reason: made.reason.to_owned(),
    };
    Ok((number as u64, created))
}

/// The manifests that rule a move of `label`: the one it points at in
/// this transaction, and the one of its newest revision (a move cannot
/// shed a rule by changing the manifest it moves to).
async fn label_manifests(tx: &mut Tx, pack_id: i64, label: &str) -> Result<Vec<Vec<u8>>, OpError> {
    let manifests: Vec<(Vec<u8>,)> = sqlx::query_as(
        "SELECT f.content FROM labels l \
         JOIN versions v ON v.pack_id = l.pack_id AND v.entry = l.entry AND v.number = l.number \
         JOIN version_files f ON f.version_id = v.version_id \
         WHERE l.pack_id = $1 AND l.label = $2 AND l.entry = $3 AND f.path = $4 \
         UNION ALL \
         SELECT f.content FROM revisions r \
         JOIN revision_entries e ON e.revision_id = r.revision_id \
         JOIN versions v ON v.pack_id = r.pack_id AND v.entry = e.entry AND v.number = e.number \
         JOIN version_files f ON f.version_id = v.version_id \
         WHERE r.pack_id = $1 AND r.label = $2 AND e.entry = $3 AND f.path = $4 \
         AND r.number = (SELECT MAX(number) FROM revisions WHERE pack_id = $1 AND label = $2)",
    )
    .bind(pack_id)
    .bind(label)
    .bind(crate::files::PACK_ENTRY)
    .bind(promptreg::pack::MANIFEST)
    .fetch_all(&mut **tx)
    .await?;
    Ok(manifests.into_iter().map(|(m,)| m).collect())
}

/// For a label its manifests gate, what the tests of the state this
/// transaction would leave it in (`digest`) admitted; `None` for a label
/// no manifest gates. A state not tested yet gives up the transaction
/// with its files (`OpError::Untested`): tests never run under its lock.
async fn admit_if_gated(
    tx: &mut Tx,
    pack_id: i64,
    label: &str,
    manifests: &[Vec<u8>],
    made: &Made<'_>,
    digest: &str,
) -> Result<Option<crate::gate::Admission>, OpError> {
    let Some(tested) = made.tested else {
        return Ok(None);
    };
    if !manifests.iter().any(|m| crate::gate::gates(m, label)) {
        return Ok(None);
    }
    if let Some(admission) = tested.admission(label, digest) {
        return Ok(Some(admission));
    }
    let rows: Vec<(String, String, Vec<u8>)> = sqlx::query_as(LABEL_FILES)
    .bind(pack_id)
    .bind(label)
    .fetch_all(&mut **tx)
    .await?;
    let files: crate::files::PackFiles = rows.into_iter().map(|(_, path, bytes)| (path, bytes)).collect();
    Err(untested(label, digest, files, (made.actor, made.reason), made.forced))
}

/// Gives up a transaction on a gated candidate state no run has tested.
fn untested(
    label: &str,
    digest: &str,
    files: crate::files::PackFiles,
    (actor, reason): (&str, &str),
    forced: bool,
) -> OpError {
    OpError::Untested(Box::new(crate::gate::Candidate {
        label: label.to_owned(),
        digest: digest.to_owned(),
        files,
        forced,
        actor: actor.to_owned(),
        reason: reason.to_owned(),
    }))
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
        let made = Made {
            cause: RevisionCause::Migration,
            restores: None,
            actor: "promptreg",
            signer: None,
            forced: false,
            tested: None,
            reason: "the label as it stood when the store was migrated to revisions",
            now,
        };
        record_revision(tx, pack_id, &label, made).await?;
    }
    Ok(())
}

/// revision_id, number, digest, cause, actor, created_at, reason, restores,
/// tests, forced, breaking
type RevisionRow = (
    i64,
    i64,
    String,
    String,
    String,
    i64,
    String,
    Option<i64>,
    Option<String>,
    bool,
    Option<String>,
);

/// The revisions of `label` numbered `numbers`, newest first, each with
/// its entries and what it changed (since the one before, when `numbers`
/// holds it: the first one read lists every entry as changed).
pub(crate) async fn revisions(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &str,
    numbers: std::ops::RangeInclusive<u64>,
) -> Result<Vec<Revision>, OpError> {
    let (first, last) = (*numbers.start() as i64, (*numbers.end()).min(i64::MAX as u64) as i64);
    let rows: Vec<RevisionRow> = sqlx::query_as(
        "SELECT revision_id, number, digest, cause, actor, created_at, reason, restores, tests, forced, breaking \
         FROM revisions \
         WHERE pack_id = $1 AND label = $2 AND number BETWEEN $3 AND $4 ORDER BY number",
    )
    .bind(pack_id)
    .bind(label)
    .bind(first)
    .bind(last)
    .fetch_all(pool)
    .await?;
    let entries: Vec<(i64, String, i64)> = sqlx::query_as(
        "SELECT e.revision_id, e.entry, e.number FROM revision_entries e \
         JOIN revisions r ON r.revision_id = e.revision_id \
         WHERE r.pack_id = $1 AND r.label = $2 AND r.number BETWEEN $3 AND $4",
    )
    .bind(pack_id)
    .bind(label)
    .bind(first)
    .bind(last)
    .fetch_all(pool)
    .await?;
    let mut signatures = revision_signatures(pool, pack_id, label, numbers.clone()).await?;
    let mut by_revision: BTreeMap<i64, BTreeMap<String, u64>> = BTreeMap::new();
    for (revision_id, entry, number) in entries {
        by_revision
            .entry(revision_id)
            .or_default()
            .insert(entry, number as u64);
    }
    let mut out: Vec<Revision> = Vec::with_capacity(rows.len());
    let mut before = BTreeMap::new();
    for (revision_id, number, digest, cause, actor, at, reason, restores, tests, forced, breaking) in rows {
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
            restores: restores.map(|n| n as u64),
            tests,
            forced,
            breaking: breaking.map_or_else(Vec::new, |b| b.lines().map(str::to_owned).collect()),
            changes: revision_changes(&before, &entries),
            entries: entries.clone(),
            signatures: signatures.remove(&(number as u64)).unwrap_or_default(),
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

/// Points `label` at what revision `target` of it held, on every entry, in
/// one transaction, and records that as a new revision restoring it; with
/// `expect`, only if the label's newest revision is that one. `None` for
/// `target`: the revision a rollback goes back to (one step back from the
/// revision the label stands on, so rollbacks walk back). Returns the new
/// revision's number (none when the label already held that state) and
/// the moves, after the revision restored.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn restore(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &Label,
    target: Option<&RevisionRef>,
    expect: Option<u64>,
    actor: &Actor,
    why: &str,
    tested: &crate::gate::Tested,
) -> Result<Written<(u64, Option<u64>, Vec<LabelMove>)>, OpError> {
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    lock_pack(&mut tx, pack_id).await?;
    check_protection(&mut tx, pack_id, label, actor).await?;
    let Some((newest, restored)) = newest_revision(&mut tx, pack_id, label, expect).await? else {
        return Err(no_revision(label.as_str(), None).into());
    };
    let (target, what) = match target {
        Some(wanted) => {
            let n = resolve_revision(&mut *tx, pack_id, label.as_str(), wanted).await?;
            (n, format!("restore revision {n}"))
        }
        None => {
            let stands_on = restored.unwrap_or(newest);
            if stands_on <= 1 {
                return Err(Error::new(
                    ErrorKind::UnknownVersion,
                    format!(
                        "label `{label}` stands on its first revision: there is no earlier one to roll back to"
                    ),
                )
                .into());
            }
            // Revisions are numbered without gaps: the one before exists.
            let n = (stands_on - 1) as u64;
            (n, format!("rollback to revision {n}"))
        }
    };
    let wanted: Vec<(String, i64)> = sqlx::query_as(
        "SELECT e.entry, e.number FROM revision_entries e \
         JOIN revisions r ON r.revision_id = e.revision_id \
         WHERE r.pack_id = $1 AND r.label = $2 AND r.number = $3",
    )
    .bind(pack_id)
    .bind(label.as_str())
    .bind(target as i64)
    .fetch_all(&mut *tx)
    .await?;
    let wanted: BTreeMap<String, i64> = wanted.into_iter().collect();
    let reason = recorded_reason(what, why);
    let now = Timestamp::now();
    let made = Made {
        restores: Some(target),
        ..Made::by(RevisionCause::Restore, actor, &reason, now, tested)
    };
    let (number, moves, events) = point_at(&mut tx, pack_id, label, &wanted, actor, made).await?;
    let last_event = commit(tx, pack_id, &events, now).await?;
    Ok(Written {
        value: (target, number, moves),
        last_event,
    })
}

/// Points `label` at `wanted` (entry -> version) on every entry, dropping
/// it from entries `wanted` lacks, and records the new revision `made`
/// describes; its number (none when the label held that state already),
/// the moves and the events to append: one `released` listing the moves,
/// as for a release (followers sync the whole label), then the revision's.
async fn point_at(
    tx: &mut Tx,
    pack_id: i64,
    label: &Label,
    wanted: &BTreeMap<String, i64>,
    actor: &Actor,
    made: Made<'_>,
) -> Result<(Option<u64>, Vec<LabelMove>, Vec<EventKind>), OpError> {
    let current = labels_named(tx, pack_id, label.as_str()).await?;
    let names: BTreeSet<&String> = wanted.keys().chain(current.keys()).collect();
    let (reason, now) = (made.reason, made.now);
    let mut moves = Vec::new();
    for entry in names {
        let (from, to) = (current.get(entry).copied(), wanted.get(entry).copied());
        if from != to {
            let name = label.as_str();
            moves.push(set_label(tx, pack_id, entry, name, from, to, actor, reason, now).await?);
        }
    }
    if moves.is_empty() {
        return Ok((None, moves, Vec::new()));
    }
    let (recorded, created) = record_revision(tx, pack_id, label.as_str(), made).await?;
    for m in &mut moves {
        m.revision = Some(recorded);
    }
    let events = vec![
        EventKind::Released {
            label: label.as_str().to_owned(),
            moves: moves.iter().map(ReleasedPrompt::from).collect(),
            actor: actor.name.clone(),
            reason: reason.to_owned(),
        },
        created,
    ];
    Ok((Some(recorded), moves, events))
}

/// The newest revision of `label` and the one it restores (`None`: the
/// label has none); with `expect`, a conflict naming the newest when it is
/// not that one (0: the label has no revision yet). In a writing
/// transaction with the pack locked, the answer holds until it commits.
async fn newest_revision(
    tx: &mut Tx,
    pack_id: i64,
    label: &Label,
    expect: Option<u64>,
) -> Result<Option<(i64, Option<i64>)>, OpError> {
    let newest: Option<(i64, Option<i64>)> = sqlx::query_as(
        "SELECT number, restores FROM revisions WHERE pack_id = $1 AND label = $2 \
         ORDER BY number DESC LIMIT 1",
    )
    .bind(pack_id)
    .bind(label.as_str())
    .fetch_optional(&mut **tx)
    .await?;
    let current = newest.map_or(0, |(n, _)| n as u64);
    if let Some(expected) = expect.filter(|&e| e != current) {
        return Err(Error::new(
            ErrorKind::Conflict,
            format!(
                "label `{label}` is at revision {current}, not {expected} as expected: someone changed it meanwhile; check `promptreg store revisions {label}` and retry"
            ),
        )
        .with_current(Some(current))
        .into());
    }
    Ok(newest)
}

/// The number of the revision `wanted` names, or the error naming the
/// revisions there are.
async fn resolve_revision<'e>(
    executor: impl sqlx::Executor<'e, Database = Db>,
    pack_id: i64,
    label: &str,
    wanted: &RevisionRef,
) -> Result<u64, OpError> {
    let (number, prefix) = match wanted {
        RevisionRef::Number(n) => (*n as i64, String::new()),
        RevisionRef::Digest(d) => (0, format!("{d}%")),
    };
    // The newest revision, and the newest two digests `wanted` names,
    // with the newest revision of each.
    let rows: Vec<(Option<i64>, Option<String>, Option<i64>)> = sqlx::query_as(
        "SELECT (SELECT MAX(number) FROM revisions WHERE pack_id = $1 AND label = $2), \
         m.digest, m.number FROM (SELECT 1) one LEFT JOIN ( \
           SELECT digest, MAX(number) AS number FROM revisions \
           WHERE pack_id = $1 AND label = $2 AND (number = $3 OR ($4 <> '' AND digest LIKE $4)) \
           GROUP BY digest ORDER BY MAX(number) DESC LIMIT 2 \
         ) m ON TRUE",
    )
    .bind(pack_id)
    .bind(label)
    .bind(number)
    .bind(&prefix)
    .fetch_all(executor)
    .await?;
    let newest = rows.first().and_then(|r| r.0);
    let found: Vec<(String, i64)> = rows
        .into_iter()
        .filter_map(|(_, digest, number)| Some((digest?, number?)))
        .collect();
    match (&found[..], newest) {
        ([(_, number)], _) => Ok(*number as u64),
        ([(a, _), (b, _), ..], _) => Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "`{wanted}` starts more than one digest of label `{label}` ({a}, {b}, ...): give more of it"
            ),
        )
        .into()),
        (_, Some(newest)) => Err(no_revision(label, Some((wanted, newest as u64))).into()),
        (_, None) => Err(no_revision(label, None).into()),
    }
}

/// The number of the revision `wanted` names (see `resolve_revision`).
pub(crate) async fn revision_number(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &str,
    wanted: &RevisionRef,
) -> Result<u64, OpError> {
    resolve_revision(pool, pack_id, label, wanted).await
}

/// There is no revision `asked` of `label` (with the newest), or none at all.
fn no_revision(label: &str, asked: Option<(&RevisionRef, u64)>) -> Error {
    let message = match asked {
        Some((RevisionRef::Number(n), newest)) => format!(
            "label `{label}` has no revision {n}: its revisions are 1 to {newest} (`promptreg store revisions {label}`)"
        ),
        Some((RevisionRef::Digest(d), newest)) => format!(
            "label `{label}` has no revision of digest `{d}`: none of its revisions 1 to {newest} holds that state (`promptreg store revisions {label}` lists their digests)"
        ),
        None => format!("label `{label}` has no revisions: nothing ever moved it"),
    };
    Error::new(ErrorKind::UnknownVersion, message)
}

/// Every file of every entry revision `number` of `label` held, in one read.
pub(crate) async fn checkout_revision(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &str,
    wanted: &RevisionRef,
) -> Result<(u64, Vec<(String, String, Vec<u8>)>), OpError> {
    let number = resolve_revision(pool, pack_id, label, wanted).await?;
    let rows: Vec<(String, String, Vec<u8>)> = sqlx::query_as(
        "SELECT e.entry, f.path, f.content FROM revisions r \
         JOIN revision_entries e ON e.revision_id = r.revision_id \
         JOIN versions v ON v.pack_id = r.pack_id AND v.entry = e.entry AND v.number = e.number \
         JOIN version_files f ON f.version_id = v.version_id \
         WHERE r.pack_id = $1 AND r.label = $2 AND r.number = $3",
    )
    .bind(pack_id)
    .bind(label)
    .bind(number as i64)
    .fetch_all(pool)
    .await?;
    Ok((number, rows))
}

/// The label and number of the pack's newest revision, of any label: the
/// last change that moved anything in it.
pub(crate) async fn newest_pack_revision(
    pool: &Pool<Db>,
    pack_id: i64,
) -> Result<Option<(String, u64)>, OpError> {
    let newest: Option<(String, i64)> = sqlx::query_as(
        "SELECT label, number FROM revisions WHERE pack_id = $1 ORDER BY revision_id DESC LIMIT 1",
    )
    .bind(pack_id)
    .fetch_optional(pool)
    .await?;
    Ok(newest.map(|(label, number)| (label, number as u64)))
}
