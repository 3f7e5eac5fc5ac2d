// Splits: a label serving a candidate state to a share of subjects.
// Included in each backend module (see `backend/mod.rs`) after
// `prelude.rs`, whose imports it shares.

/// Starts a split: the candidate's entries fixed from revision `wanted`
/// of `source` (its newest for `None`), gated like a move, recorded with
/// its first step and announced. Returns the split's id.
pub(crate) async fn start_split(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &Label,
    source: &Label,
    wanted: Option<&RevisionRef>,
    start: crate::splits::Step<'_>,
    tested: &crate::gate::Tested,
) -> Result<Written<u64>, OpError> {
    let (share, actor, reason) = (start.share, start.actor, start.reason);
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    lock_pack(&mut tx, pack_id).await?;
    check_protection(&mut tx, pack_id, label, actor).await?;
    if let Some(running) = running_split_id(&mut *tx, pack_id, label.as_str()).await? {
        return Err(split_running(label, running, &mut tx).await?.into());
    }
    let revision = match wanted {
        Some(wanted) => resolve_revision(&mut *tx, pack_id, source.as_str(), wanted).await?,
        None => match newest_revision(&mut tx, pack_id, source, None).await? {
            Some((newest, _)) => newest as u64,
            None => return Err(no_revision(source.as_str(), None).into()),
        },
    };
    let (digest,): (String,) = sqlx::query_as(
        "SELECT digest FROM revisions WHERE pack_id = $1 AND label = $2 AND number = $3",
    )
    .bind(pack_id)
    .bind(source.as_str())
    .bind(revision as i64)
    .fetch_one(&mut *tx)
    .await?;
    let proposed = Proposed { label, source, revision, digest: &digest };
    let admitted = admit_candidate(&mut tx, pack_id, proposed, (actor, reason), tested).await?;
    let breaking = guard_split_contract(&mut tx, pack_id, label, (source, revision), actor.forces_gates()).await?;
    let now = Timestamp::now();
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO splits (pack_id, label, source_label, source_revision, digest, basis_points, \
         state, started_at, actor, reason, tests, forced, breaking) \
         VALUES ($1, $2, $3, $4, $5, $6, 'running', $7, $8, $9, $10, $11, $12) RETURNING split_id",
    )
    .bind(pack_id)
    .bind(label.as_str())
    .bind(source.as_str())
    .bind(revision as i64)
    .bind(&digest)
    .bind(share.basis_points() as i64)
    .bind(now.0)
    .bind(&actor.name)
    .bind(reason)
    .bind(admitted.map(|a| a.summary()))
    .bind(admitted.is_some_and(|a| a.forced && a.failed > 0))
    .bind((!breaking.is_empty()).then(|| breaking.join("\n")))
    .fetch_one(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO split_entries (split_id, entry, number) \
         SELECT $1, e.entry, e.number FROM revision_entries e \
         JOIN revisions r ON r.revision_id = e.revision_id \
         WHERE r.pack_id = $2 AND r.label = $3 AND r.number = $4",
    )
    .bind(id)
    .bind(pack_id)
    .bind(source.as_str())
    .bind(revision as i64)
    .execute(&mut *tx)
    .await?;
    sign_split_if_asked(&mut tx, pack_id, label.as_str(), (id, &digest), actor, now).await?;
    let event = record_step(&mut tx, id as u64, label, start, &digest, now).await?;
    let last_event = commit(tx, pack_id, &[event], now).await?;
    Ok(Written {
        value: id as u64,
        last_event,
    })
}

/// A new share, a promotion or an abort of the split running on `label`
/// (with `expect`, only if it is that one). Returns the split's id and,
/// for a promotion, the label's new revision.
pub(crate) async fn step_split(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &Label,
    asked: crate::splits::Step<'_>,
    expect: Option<u64>,
    tested: &crate::gate::Tested,
) -> Result<Written<(u64, Option<u64>)>, OpError> {
    use crate::splits::SplitStep;
    let (step, share, actor, reason) = (asked.step, asked.share, asked.actor, asked.reason);
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    lock_pack(&mut tx, pack_id).await?;
    check_protection(&mut tx, pack_id, label, actor).await?;
    let running = running_split_id(&mut *tx, pack_id, label.as_str()).await?;
    let id = match (running, expect) {
        (Some(id), None) => id,
        (Some(id), Some(wanted)) if id == wanted => id,
        (Some(id), Some(wanted)) => {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!("label `{label}` runs split {id}, not split {wanted} as expected: check `promptreg store canary {label}`"),
            )
            .with_current(Some(id))
            .into());
        }
        (None, _) => return Err(no_split_running(label, expect, &mut tx, pack_id).await?.into()),
    };
    let (digest,): (String,) = sqlx::query_as("SELECT digest FROM splits WHERE split_id = $1")
        .bind(id as i64)
        .fetch_one(&mut *tx)
        .await?;
    let now = Timestamp::now();
    let mut events = Vec::new();
    let mut revision = None;
    match step {
        SplitStep::Share | SplitStep::Start => {
            sqlx::query("UPDATE splits SET basis_points = $1 WHERE split_id = $2")
                .bind(share.basis_points() as i64)
                .bind(id as i64)
                .execute(&mut *tx)
                .await?;
        }
        SplitStep::Promote | SplitStep::Abort => {
            let state = match step {
                SplitStep::Promote => "promoted",
                _ => "aborted",
            };
            if step == SplitStep::Promote {
                let wanted: Vec<(String, i64)> =
                    sqlx::query_as("SELECT entry, number FROM split_entries WHERE split_id = $1")
                        .bind(id as i64)
                        .fetch_all(&mut *tx)
                        .await?;
                let wanted: BTreeMap<String, i64> = wanted.into_iter().collect();
                let what = format!("promote split {id}");
                let why = recorded_reason(what, reason);
                let made = Made::by(RevisionCause::Promote, actor, &why, now, tested);
                let (number, _, moved) = point_at(&mut tx, pack_id, label, &wanted, actor, made).await?;
                revision = number;
                events.extend(moved);
            }
            sqlx::query(
                "UPDATE splits SET state = $1, promoted_to = $2, basis_points = $3 WHERE split_id = $4",
            )
            .bind(state)
            .bind(revision.map(|n| n as i64))
            .bind(share.basis_points() as i64)
            .bind(id as i64)
                .execute(&mut *tx)
                .await?;
        }
    }
    events.push(record_step(&mut tx, id, label, asked, &digest, now).await?);
    let last_event = commit(tx, pack_id, &events, now).await?;
    Ok(Written {
        value: (id, revision),
        last_event,
    })
}

/// The state a split would serve on `label`: revision `revision` of
/// `source`, whose digest is `digest`.
struct Proposed<'a> {
    label: &'a Label,
    source: &'a Label,
    revision: u64,
    digest: &'a str,
}

/// For a gated label, what the candidate's tests admitted, as for a move
/// to it; an untested candidate gives up the transaction, to be tested
/// outside it.
async fn admit_candidate(
    tx: &mut Tx,
    pack_id: i64,
    candidate: Proposed<'_>,
    (actor, reason): (&Actor, &str),
    tested: &crate::gate::Tested,
) -> Result<Option<crate::gate::Admission>, OpError> {
    let label = candidate.label.as_str();
    let files = revision_files(tx, pack_id, candidate.source.as_str(), candidate.revision).await?;
    let gated = |files: &crate::files::PackFiles| {
        files
            .get(promptreg::pack::MANIFEST)
            .is_some_and(|m| crate::gate::gates(m, label))
    };
    let current = label_files(tx, pack_id, label).await?;
    if !gated(&files) && !gated(&current) {
        return Ok(None);
    }
    match tested.admission(label, candidate.digest) {
        Some(admission) => Ok(Some(admission)),
        None => Err(untested(label, candidate.digest, files, (&actor.name, reason), actor.forces_gates())),
    }
}

async fn revision_files(
    tx: &mut Tx,
    pack_id: i64,
    label: &str,
    revision: u64,
) -> Result<crate::files::PackFiles, OpError> {
    let rows: Vec<(String, Vec<u8>)> = sqlx::query_as(
        "SELECT f.path, f.content FROM revisions r \
         JOIN revision_entries e ON e.revision_id = r.revision_id \
         JOIN versions v ON v.pack_id = r.pack_id AND v.entry = e.entry AND v.number = e.number \
         JOIN version_files f ON f.version_id = v.version_id \
         WHERE r.pack_id = $1 AND r.label = $2 AND r.number = $3",
    )
    .bind(pack_id)
    .bind(label)
    .bind(revision as i64)
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows.into_iter().collect())
}

async fn label_files(
    tx: &mut Tx,
    pack_id: i64,
    label: &str,
) -> Result<crate::files::PackFiles, OpError> {
    let rows: Vec<(String, String, Vec<u8>)> = sqlx::query_as(LABEL_FILES)
        .bind(pack_id)
        .bind(label)
        .fetch_all(&mut **tx)
        .await?;
    Ok(rows.into_iter().map(|(_, path, bytes)| (path, bytes)).collect())
}

/// Records a step and returns its event.
async fn record_step(
    tx: &mut Tx,
    id: u64,
    label: &Label,
    done: crate::splits::Step<'_>,
    digest: &str,
    now: Timestamp,
) -> Result<EventKind, OpError> {
    let (step, share, actor, reason) = (done.step, done.share, done.actor, done.reason);
    sqlx::query(
        "INSERT INTO split_steps (split_id, step, basis_points, actor, at, reason) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(id as i64)
    .bind(step.as_str())
    .bind(share.basis_points() as i64)
    .bind(&actor.name)
    .bind(now.0)
    .bind(reason)
    .execute(&mut **tx)
    .await?;
    Ok(EventKind::SplitChanged {
        label: label.as_str().to_owned(),
        split: id,
        step,
        share,
        digest: digest.to_owned(),
        actor: actor.name.clone(),
        reason: reason.to_owned(),
    })
}

/// The id of the split running on `label`, if one is.
pub(crate) async fn running_split_id<'e>(
    executor: impl sqlx::Executor<'e, Database = Db>,
    pack_id: i64,
    label: &str,
) -> Result<Option<u64>, OpError> {
    let row: Option<(i64,)> = sqlx::query_as(
        "SELECT split_id FROM splits WHERE pack_id = $1 AND label = $2 AND state = 'running'",
    )
    .bind(pack_id)
    .bind(label)
    .fetch_optional(executor)
    .await?;
    Ok(row.map(|(id,)| id as u64))
}

/// The ids of the splits of `label`, newest first.
pub(crate) async fn split_ids(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &str,
) -> Result<Vec<u64>, OpError> {
    let rows: Vec<(i64,)> = sqlx::query_as(
        "SELECT split_id FROM splits WHERE pack_id = $1 AND label = $2 ORDER BY split_id DESC",
    )
    .bind(pack_id)
    .bind(label)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|(id,)| id as u64).collect())
}

/// Split `id` of the pack, whole.
pub(crate) async fn split_by_id(
    pool: &Pool<Db>,
    pack_id: i64,
    id: u64,
) -> Result<crate::splits::Split, OpError> {
    use crate::splits::{Share, Split, SplitChange, SplitState, SplitStep};
    type Row = (String, String, i64, String, i64, String, Option<String>, bool, Option<i64>, Option<String>);
    let row: Option<Row> = sqlx::query_as(
        "SELECT label, source_label, source_revision, digest, basis_points, state, tests, forced, \
         promoted_to, breaking FROM splits WHERE pack_id = $1 AND split_id = $2",
    )
    .bind(pack_id)
    .bind(id as i64)
    .fetch_optional(pool)
    .await?;
    let Some((label, source_label, source_revision, digest, bp, state, tests, forced, promoted_to, breaking)) = row
    else {
        return Err(Error::new(ErrorKind::UnknownVersion, format!("there is no split {id}")).into());
    };
    let damaged = |what: &str| {
        OpError::Store(Error::new(
            ErrorKind::Database,
            format!("split {id} {what}: the splits table was changed by hand"),
        ))
    };
    let share = |bp: i64| {
        u32::try_from(bp)
            .ok()
            .and_then(Share::from_basis_points)
            .ok_or_else(|| damaged("has a share outside 0 to 100 %"))
    };
    let entries: Vec<(String, i64)> =
        sqlx::query_as("SELECT entry, number FROM split_entries WHERE split_id = $1 ORDER BY entry")
            .bind(id as i64)
            .fetch_all(pool)
            .await?;
    let steps: Vec<(String, i64, String, i64, String)> = sqlx::query_as(
        "SELECT step, basis_points, actor, at, reason FROM split_steps WHERE split_id = $1 ORDER BY step_id",
    )
    .bind(id as i64)
    .fetch_all(pool)
    .await?;
    let mut changes = Vec::with_capacity(steps.len());
    for (step, bp, actor, at, reason) in steps {
        changes.push(SplitChange {
            step: SplitStep::named(&step).ok_or_else(|| damaged("has a step of an unknown kind"))?,
            share: share(bp)?,
            actor,
            at: Timestamp(at),
            reason,
        });
    }
    Ok(Split {
        id,
        label,
        source_label,
        source_revision: source_revision as u64,
        digest,
        entries: entries.into_iter().map(|(e, n)| (e, n as u64)).collect(),
        share: share(bp)?,
        state: SplitState::named(&state).ok_or_else(|| damaged("is in an unknown state"))?,
        tests,
        forced,
        breaking: breaking.map_or_else(Vec::new, |b| b.lines().map(str::to_owned).collect()),
        steps: changes,
        promoted_to: promoted_to.map(|n| n as u64),
    })
}

/// Why a split cannot start: split `running` runs on `label`.
async fn split_running(label: &Label, running: u64, tx: &mut Tx) -> Result<Error, OpError> {
    let (bp, actor): (i64, String) =
        sqlx::query_as("SELECT basis_points, actor FROM splits WHERE split_id = $1")
            .bind(running as i64)
            .fetch_one(&mut **tx)
            .await?;
    let share = crate::splits::Share::from_basis_points(bp as u32).unwrap_or(crate::splits::Share::ALL);
    Ok(Error::new(
        ErrorKind::Conflict,
        format!("label `{label}` runs split {running} already ({share}, started by {actor}): promote or abort it first (`promptreg store canary {label} --promote` or `--abort`)"),
    )
    .with_current(Some(running)))
}

/// Why no split can change: none runs; when `expect` names one that
/// ended, who ended it and how.
async fn no_split_running(
    label: &Label,
    expect: Option<u64>,
    tx: &mut Tx,
    pack_id: i64,
) -> Result<Error, OpError> {
    let ended: Option<(i64, String, String, i64)> = sqlx::query_as(
        "SELECT s.split_id, s.state, t.actor, t.at FROM splits s \
         JOIN split_steps t ON t.split_id = s.split_id \
         WHERE s.pack_id = $1 AND s.label = $2 AND ($3 < 0 OR s.split_id = $3) \
         ORDER BY s.split_id DESC, t.step_id DESC LIMIT 1",
    )
    .bind(pack_id)
    .bind(label.as_str())
    .bind(expect.map_or(-1, |e| e as i64))
    .fetch_optional(&mut **tx)
    .await?;
    Ok(match ended {
        Some((id, state, actor, at)) => Error::new(
            ErrorKind::Conflict,
            format!("label `{label}` runs no split: split {id} was {state} by {actor} at {}", Timestamp(at)),
        ),
        None => Error::new(
            ErrorKind::UnknownVersion,
            format!("label `{label}` runs no split: start one with `promptreg store canary {label} --from LABEL --percent P`"),
        ),
    })
}

/// Every entry of split `id`'s candidate, with its files.
pub(crate) async fn split_entry_versions(
    pool: &Pool<Db>,
    pack_id: i64,
    id: u64,
) -> Result<Vec<EntryVersion>, OpError> {
    let rows: Vec<EntryFileRow> = sqlx::query_as(
        "SELECT e.entry, v.number, v.digest, f.path, f.content FROM split_entries e \
         JOIN splits s ON s.split_id = e.split_id \
         JOIN versions v ON v.pack_id = s.pack_id AND v.entry = e.entry AND v.number = e.number \
         JOIN version_files f ON f.version_id = v.version_id \
         WHERE s.pack_id = $1 AND e.split_id = $2 ORDER BY e.entry, f.path",
    )
    .bind(pack_id)
    .bind(id as i64)
    .fetch_all(pool)
    .await?;
    Ok(grouped(rows))
}

/// The breaking contract changes a split's candidate (revision `revision`
/// of `source`) makes to what `label` serves, for a label its manifests
/// keep stable: refused unless `forced` ([`guard_contract`]).
async fn guard_split_contract(
    tx: &mut Tx,
    pack_id: i64,
    label: &Label,
    (source, revision): (&Label, u64),
    forced: bool,
) -> Result<Vec<String>, OpError> {
    let manifests = label_manifests(tx, pack_id, label.as_str()).await?;
    let Some((newest, _)) = newest_revision(tx, pack_id, label, None).await? else {
        return Ok(Vec::new());
    };
    let ids: Vec<(i64,)> = sqlx::query_as(
        "SELECT revision_id FROM revisions WHERE pack_id = $1 \
         AND ((label = $2 AND number = $3) OR (label = $4 AND number = $5)) \
         ORDER BY CASE WHEN label = $2 AND number = $3 THEN 0 ELSE 1 END",
    )
    .bind(pack_id)
    .bind(label.as_str())
    .bind(newest)
    .bind(source.as_str())
    .bind(revision as i64)
    .fetch_all(&mut **tx)
    .await?;
    let [(from,), (to,)] = ids[..] else {
        return Ok(Vec::new());
    };
    guard_contract(tx, pack_id, label.as_str(), &manifests, (from, to), forced).await
}
