// The event log: appending events with a change, and reading them.
// Included in each backend module (see `backend/mod.rs`) after
// `prelude.rs`, whose imports it shares.

/// Appends `events` of the pack (none: nothing to append), announces the
/// last one to other processes, and commits: the events exist exactly
/// when the change does. Returns the last event's id.
async fn commit(
    mut tx: Tx,
    pack_id: i64,
    events: &[EventKind],
    at: Timestamp,
) -> Result<Option<u64>, OpError> {
    if events.is_empty() {
        tx.commit().await?;
        return Ok(None);
    }
    if let Some(lock) = DIALECT.lock_events {
        sqlx::query(lock).execute(&mut *tx).await?;
    }
    let mut last = 0;
    for event in events {
        last = insert_event(&mut tx, pack_id, event, at).await?;
    }
    if let Some(notify) = DIALECT.notify_events {
        sqlx::query(notify)
            .bind(EVENTS_CHANNEL)
            .bind(last.to_string())
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(Some(last as u64))
}

/// Appends `events` of the pack in a transaction of their own: for what
/// is recorded without a change (a refusal).
pub(crate) async fn append_events(
    pool: &Pool<Db>,
    pack_id: i64,
    events: &[EventKind],
    at: Timestamp,
) -> Result<Option<u64>, OpError> {
    let tx = pool.begin_with(DIALECT.begin_write).await?;
    commit(tx, pack_id, events, at).await
}

/// An event as the columns of `events`: prompt, label, from, to, actor, reason.
type EventColumns<'a> = (
    Option<&'a str>,
    Option<&'a str>,
    Option<i64>,
    Option<i64>,
    &'a str,
    Option<&'a str>,
);

fn event_columns(event: &EventKind) -> EventColumns<'_> {
    let number = |n: &Option<u64>| n.map(|n| n as i64);
    match event {
        EventKind::VersionCreated {
            prompt,
            version,
            author,
        } => (Some(prompt), None, None, Some(*version as i64), author, None),
        EventKind::LabelMoved {
            prompt,
            label,
            from,
            to,
            actor,
            reason,
        } => (
            Some(prompt),
            Some(label),
            number(from),
            number(to),
            actor,
            Some(reason),
        ),
        EventKind::Released {
            label,
            actor,
            reason,
            ..
        } => (None, Some(label), None, None, actor, Some(reason)),
        // Its digest and cause are the revision's, read back from it.
        EventKind::RevisionCreated {
            label,
            revision,
            actor,
            reason,
            ..
        } => (None, Some(label), None, Some(*revision as i64), actor, Some(reason)),
        // Its digest is the revision's, read back from it.
        EventKind::RevisionSigned {
            label,
            revision,
            fingerprint,
            actor,
            ..
        } => (None, Some(label), None, Some(*revision as i64), actor, Some(fingerprint)),
        // Its digest is the split's, read back from it.
        EventKind::SplitChanged {
            label,
            split,
            share,
            actor,
            reason,
            ..
        } => (
            None,
            Some(label),
            Some(*split as i64),
            Some(i64::from(share.basis_points())),
            actor,
            Some(reason),
        ),
        // The locale in `label`, the new version in `to_number`.
        EventKind::TranslationStale {
            prompt,
            locale,
            version,
            actor,
        } => (Some(prompt), Some(locale), None, Some(*version as i64), actor, None),
        // The number of failing cases in `from_number`.
        EventKind::GateRefused {
            label,
            failed,
            actor,
            reason,
        } => (None, Some(label), Some(*failed as i64), None, actor, Some(reason)),
        EventKind::LabelProtected { label, actor } | EventKind::LabelUnprotected { label, actor } => {
            (None, Some(label), None, None, actor, None)
        }
    }
}

async fn insert_event(
    tx: &mut Tx,
    pack_id: i64,
    event: &EventKind,
    at: Timestamp,
) -> Result<i64, OpError> {
    let (prompt, label, from, to, actor, reason) = event_columns(event);
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO events (pack_id, at, kind, prompt, label, from_number, to_number, actor, reason) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING event_id",
    )
    .bind(pack_id)
    .bind(at.0)
    .bind(event.name())
    .bind(prompt)
    .bind(label)
    .bind(from)
    .bind(to)
    .bind(actor)
    .bind(reason)
    .fetch_one(&mut **tx)
    .await?;
    if let EventKind::Released { moves, .. } = event {
        for moved in moves {
            sqlx::query(
                "INSERT INTO event_prompts (event_id, prompt, from_number, to_number) VALUES ($1, $2, $3, $4)",
            )
            .bind(id)
            .bind(&moved.prompt)
            .bind(moved.from.map(|n| n as i64))
            .bind(moved.to.map(|n| n as i64))
            .execute(&mut **tx)
            .await?;
        }
    }
    Ok(id)
}

/// The newest event's id; 0 when there is none.
pub(crate) async fn last_event_id(pool: &Pool<Db>) -> Result<u64, OpError> {
    let (id,): (i64,) = sqlx::query_as("SELECT COALESCE(MAX(event_id), 0) FROM events")
        .fetch_one(pool)
        .await?;
    Ok(id as u64)
}

/// id, pack, at, kind, prompt, label, from, to, actor, reason, and for a
/// `revision_created` the revision's digest and cause
type EventRow = (
    i64,
    String,
    i64,
    String,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<i64>,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// At most `limit` events with ids above `after`, oldest first.
pub(crate) async fn events_since(
    pool: &Pool<Db>,
    after: i64,
    limit: i64,
) -> Result<Vec<Event>, OpError> {
    let rows: Vec<EventRow> = sqlx::query_as(
        "SELECT e.event_id, p.name, e.at, e.kind, e.prompt, e.label, e.from_number, e.to_number, e.actor, e.reason, \
         COALESCE(r.digest, s.digest), r.cause \
         FROM events e JOIN packs p ON p.pack_id = e.pack_id \
         LEFT JOIN revisions r ON e.kind IN ('revision_created', 'revision_signed') AND r.pack_id = e.pack_id \
         AND r.label = e.label AND r.number = e.to_number \
         LEFT JOIN splits s ON e.kind IN ('split_start', 'split_share', 'split_promote', 'split_abort') \
         AND s.split_id = e.from_number \
         WHERE e.event_id > $1 ORDER BY e.event_id LIMIT $2",
    )
    .bind(after)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    let mut released = match rows.iter().filter(|r| r.3 == "released").map(|r| r.0).max() {
        Some(last) => released_prompts(pool, after, last).await?,
        None => BTreeMap::new(),
    };
    rows.into_iter()
        .map(|row| {
            let moves = released.remove(&row.0).unwrap_or_default();
            event_of(row, moves)
        })
        .collect()
}

/// The moves of the releases among events `after + 1 ..= last`.
async fn released_prompts(
    pool: &Pool<Db>,
    after: i64,
    last: i64,
) -> Result<BTreeMap<i64, Vec<ReleasedPrompt>>, OpError> {
    let rows: Vec<(i64, String, Option<i64>, Option<i64>)> = sqlx::query_as(
        "SELECT event_id, prompt, from_number, to_number FROM event_prompts \
         WHERE event_id > $1 AND event_id <= $2 ORDER BY event_id, prompt",
    )
    .bind(after)
    .bind(last)
    .fetch_all(pool)
    .await?;
    let mut out: BTreeMap<i64, Vec<ReleasedPrompt>> = BTreeMap::new();
    for (id, prompt, from, to) in rows {
        out.entry(id).or_default().push(ReleasedPrompt {
            prompt,
            from: from.map(|n| n as u64),
            to: to.map(|n| n as u64),
        });
    }
    Ok(out)
}

fn event_of(row: EventRow, moves: Vec<ReleasedPrompt>) -> Result<Event, OpError> {
    let (id, pack, at, kind, prompt, label, from, to, actor, reason, digest, cause) = row;
    let number = |n: Option<i64>| n.map(|n| n as u64);
    let damaged = |what: &str| {
        OpError::Store(Error::new(
            ErrorKind::Database,
            format!("event {id} (`{kind}`) of pack `{pack}` {what}: the events table was changed by hand"),
        ))
    };
    let change = match kind.as_str() {
        "version_created" => EventKind::VersionCreated {
            prompt: prompt.ok_or_else(|| damaged("has no prompt"))?,
            version: number(to).ok_or_else(|| damaged("has no version"))?,
            author: actor,
        },
        "label_moved" => EventKind::LabelMoved {
            prompt: prompt.ok_or_else(|| damaged("has no prompt"))?,
            label: label.ok_or_else(|| damaged("has no label"))?,
            from: number(from),
            to: number(to),
            actor,
            reason: reason.unwrap_or_default(),
        },
        "released" => EventKind::Released {
            label: label.ok_or_else(|| damaged("has no label"))?,
            moves,
            actor,
            reason: reason.unwrap_or_default(),
        },
        "revision_created" => EventKind::RevisionCreated {
            label: label.ok_or_else(|| damaged("has no label"))?,
            revision: number(to).ok_or_else(|| damaged("has no revision"))?,
            digest: digest.ok_or_else(|| damaged("names a revision that does not exist"))?,
            cause: cause
                .as_deref()
                .and_then(RevisionCause::named)
                .ok_or_else(|| damaged("names a revision of an unknown cause"))?,
            actor,
            reason: reason.unwrap_or_default(),
        },
        "revision_signed" => EventKind::RevisionSigned {
            label: label.ok_or_else(|| damaged("has no label"))?,
            revision: number(to).ok_or_else(|| damaged("has no revision"))?,
            digest: digest.ok_or_else(|| damaged("names a revision that does not exist"))?,
            fingerprint: reason.ok_or_else(|| damaged("names no key"))?,
            actor,
        },
        "split_start" | "split_share" | "split_promote" | "split_abort" => EventKind::SplitChanged {
            label: label.ok_or_else(|| damaged("has no label"))?,
            split: number(from).ok_or_else(|| damaged("has no split"))?,
            step: crate::splits::SplitStep::named(&kind["split_".len()..])
                .ok_or_else(|| damaged("is of an unknown step"))?,
            share: to
                .and_then(|bp| u32::try_from(bp).ok())
                .and_then(crate::splits::Share::from_basis_points)
                .ok_or_else(|| damaged("has a share outside 0 to 100 %"))?,
            digest: digest.ok_or_else(|| damaged("names a split that does not exist"))?,
            actor,
            reason: reason.unwrap_or_default(),
        },
        "translation_stale" => EventKind::TranslationStale {
            prompt: prompt.ok_or_else(|| damaged("has no prompt"))?,
            locale: label.ok_or_else(|| damaged("has no locale"))?,
            version: number(to).ok_or_else(|| damaged("has no version"))?,
            actor,
        },
        "gate_refused" => EventKind::GateRefused {
            label: label.ok_or_else(|| damaged("has no label"))?,
            failed: number(from).ok_or_else(|| damaged("has no count of failing cases"))?,
            actor,
            reason: reason.unwrap_or_default(),
        },
        "label_protected" => EventKind::LabelProtected {
            label: label.ok_or_else(|| damaged("has no label"))?,
            actor,
        },
        "label_unprotected" => EventKind::LabelUnprotected {
            label: label.ok_or_else(|| damaged("has no label"))?,
            actor,
        },
        _ => {
            return Err(OpError::Store(Error::new(
                ErrorKind::NewerSchema,
                format!("event {id} of pack `{pack}` is of kind `{kind}`, which this promptreg does not know: upgrade promptreg to read it"),
            )));
        }
    };
    Ok(Event {
        id: id as u64,
        at: Timestamp(at),
        pack,
        change,
    })
}
