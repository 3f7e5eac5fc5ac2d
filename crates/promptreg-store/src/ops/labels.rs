// Labels: moves, rollbacks, releases, protection and history.
// Included in each backend module (see `backend/mod.rs`) after
// `prelude.rs`, whose imports it shares.

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
        revision: None,
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
    tested: &crate::gate::Tested,
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
    commit_move(tx, pack_id, moved, RevisionCause::Move, actor, tested).await
}

/// Commits one label move with its event.
async fn commit_move(
    mut tx: Tx,
    pack_id: i64,
    moved: LabelMove,
    cause: RevisionCause,
    actor: &Actor,
    tested: &crate::gate::Tested,
) -> Result<Written<LabelMove>, OpError> {
    let made = Made::by(cause, actor, &moved.reason, moved.at, tested);
    let (number, created) = record_revision(&mut tx, pack_id, &moved.label, made).await?;
    let moved = LabelMove {
        revision: Some(number),
        ..moved
    };
    let last_event = commit(tx, pack_id, &[EventKind::from(&moved), created], moved.at).await?;
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
    tested: &crate::gate::Tested,
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
    commit_move(tx, pack_id, moved, RevisionCause::Rollback, actor, tested).await
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
#[allow(clippy::too_many_arguments)]
pub(crate) async fn release(
    pool: &Pool<Db>,
    pack_id: i64,
    from: &Label,
    to: &Label,
    expect: Option<u64>,
    actor: &Actor,
    why: &str,
    tested: &crate::gate::Tested,
) -> Result<Written<Vec<LabelMove>>, OpError> {
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    lock_pack(&mut tx, pack_id).await?;
    check_protection(&mut tx, pack_id, to, actor).await?;
    newest_revision(&mut tx, pack_id, to, expect).await?;
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
        let made = Made::by(RevisionCause::Release, actor, &reason, now, tested);
        let (number, created) = record_revision(&mut tx, pack_id, to.as_str(), made).await?;
        for m in &mut moves {
            m.revision = Some(number);
        }
        events.push(EventKind::Released {
            label: to.as_str().to_owned(),
            moves: moves.iter().map(ReleasedPrompt::from).collect(),
            actor: actor.name.clone(),
            reason,
        });
        events.push(created);
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

/// entry, label, from, to, actor, moved_at, reason, revision
type HistoryRow = (
    String,
    String,
    Option<i64>,
    Option<i64>,
    String,
    i64,
    String,
    Option<i64>,
);

/// The label moves of the pack (of one entry if given), oldest first.
pub(crate) async fn history(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: Option<&str>,
) -> Result<Vec<LabelMove>, OpError> {
    let rows: Vec<HistoryRow> = sqlx::query_as(
        "SELECT h.entry, h.label, h.from_number, h.to_number, h.actor, h.moved_at, h.reason, r.number \
         FROM label_history h LEFT JOIN revisions r ON r.revision_id = h.revision_id \
         WHERE h.pack_id = $1 AND ($2 = '' OR h.entry = $2) ORDER BY h.move_id",
    )
    .bind(pack_id)
    .bind(entry.unwrap_or(""))
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(prompt, label, from, to, actor, at, reason, revision)| LabelMove {
            prompt,
            label,
            from: from.map(|n| n as u64),
            to: to.map(|n| n as u64),
            actor,
            at: Timestamp(at),
            reason,
            revision: revision.map(|n| n as u64),
        })
        .collect())
}
