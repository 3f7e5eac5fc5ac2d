// The outbox of webhooks (see `webhooks/outbox.rs`): events taken in as
// deliveries, leases, attempts, the delivery log.
// Included in each backend module (see `backend/mod.rs`) after
// `prelude.rs` and `webhooks.rs`, whose imports and constants it shares.

/// How many events one call takes in per webhook.
const ENQUEUE_BATCH: i64 = 500;

/// A claimed delivery with its webhook: id, event, kind, attempts,
/// retry_from, name, url, format, secret, previous secret (while it signs),
/// message prefix.
type ClaimRow = (
    i64,
    Option<i64>,
    String,
    i64,
    i64,
    String,
    String,
    String,
    String,
    Option<String>,
    String,
);

pub(crate) async fn insert_test_delivery(
    pool: &Pool<Db>,
    name: &str,
    at: Timestamp,
) -> Result<i64, OpError> {
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO webhook_deliveries (webhook_id, event_id, kind, state, attempts, created_at, retry_from, next_attempt_at) \
         SELECT webhook_id, NULL, $1, 'pending', 0, $2, $2, $2 FROM webhooks WHERE name = $3 RETURNING delivery_id",
    )
    .bind(crate::webhooks::TEST_EVENT_TYPE)
    .bind(at.0)
    .bind(name)
    .fetch_one(pool)
    .await?;
    Ok(id)
}

/// Turns the events after each enabled webhook's cursor into its
/// deliveries, and moves the cursor past them, in one transaction. The
/// events are read first: they commit in id order, so a batch read is
/// every event up to its last. On PostgreSQL a webhook another server is
/// taking events in for is skipped, not waited for.
pub(crate) async fn enqueue_events(pool: &Pool<Db>, at: Timestamp) -> Result<(), OpError> {
    let (oldest,): (Option<i64>,) =
        sqlx::query_as("SELECT MIN(event_cursor) FROM webhooks WHERE disabled_at IS NULL")
            .fetch_one(pool)
            .await?;
    let Some(oldest) = oldest else {
        return Ok(());
    };
    let events = events_since(pool, oldest, ENQUEUE_BATCH).await?;
    let Some(last) = events.last().map(|e| e.id as i64) else {
        return Ok(());
    };
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    let sql = format!(
        "SELECT webhook_id, packs, events, event_cursor FROM webhooks \
         WHERE disabled_at IS NULL AND event_cursor < $1 ORDER BY webhook_id{}",
        DIALECT.skip_locked
    );
    let hooks: Vec<(i64, String, String, i64)> =
        sqlx::query_as(&sql).bind(last).fetch_all(&mut *tx).await?;
    for (webhook_id, packs, types, cursor) in hooks {
        let words = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        let (packs, types) = (words(&packs), words(&types));
        for event in events.iter().filter(|e| e.id as i64 > cursor) {
            let kind = crate::webhooks::event_type(&event.change);
            if !crate::webhooks::wants(&packs, &types, &event.pack, kind) {
                continue;
            }
            sqlx::query(
                "INSERT INTO webhook_deliveries (webhook_id, event_id, kind, state, attempts, created_at, retry_from, next_attempt_at) \
                 VALUES ($1, $2, $3, 'pending', 0, $4, $4, $4) ON CONFLICT DO NOTHING",
            )
            .bind(webhook_id)
            .bind(event.id as i64)
            .bind(kind)
            .bind(at.0)
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query("UPDATE webhooks SET event_cursor = $1 WHERE webhook_id = $2")
            .bind(last)
            .bind(webhook_id)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Leases at most `limit` due deliveries of enabled webhooks to `worker`
/// until `until`, counting the attempt, and returns them with their
/// webhook's address, format and signing secrets. `only` takes that
/// delivery alone; the webhooks named in `busy` are left alone.
pub(crate) async fn claim_deliveries(
    pool: &Pool<Db>,
    worker: &str,
    now: Timestamp,
    until: Timestamp,
    limit: i64,
    only: Option<i64>,
    busy: &[String],
) -> Result<Vec<ClaimRow>, OpError> {
    // Most polls find nothing due: a read says so without the write lock.
    let due: Option<(i64,)> = sqlx::query_as(
        "SELECT delivery_id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= $1 LIMIT 1",
    )
    .bind(now.0)
    .fetch_optional(pool)
    .await?;
    if due.is_none() {
        return Ok(Vec::new());
    }
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    let only_one = match only {
        Some(_) => " AND delivery_id = $3",
        None => " AND $3 = 0",
    };
    let skipped = match busy.is_empty() {
        true => String::new(),
        false => {
            format!(
                " AND webhook_id NOT IN (SELECT webhook_id FROM webhooks WHERE name IN ({}))",
                placeholders(4, busy.len())
            )
        }
    };
    let sql = format!(
        "SELECT delivery_id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= $1 \
         AND (lease_until IS NULL OR lease_until <= $1) \
         AND webhook_id IN (SELECT webhook_id FROM webhooks WHERE disabled_at IS NULL){only_one}{skipped} \
         ORDER BY next_attempt_at, delivery_id LIMIT $2{}",
        DIALECT.skip_locked
    );
    let mut query = sqlx::query_as(&sql).bind(now.0).bind(limit).bind(only.unwrap_or(0));
    for name in busy {
        query = query.bind(name);
    }
    let due: Vec<(i64,)> = query.fetch_all(&mut *tx).await?;
    if due.is_empty() {
        tx.commit().await?;
        return Ok(Vec::new());
    }
    // Every due row at once: two statements, however many.
    let update = format!(
        "UPDATE webhook_deliveries SET lease_until = $1, leased_by = $2, attempts = attempts + 1 \
         WHERE delivery_id IN ({})",
        placeholders(3, due.len())
    );
    let mut lease = sqlx::query(&update).bind(until.0).bind(worker);
    for (id,) in &due {
        lease = lease.bind(id);
    }
    lease.execute(&mut *tx).await?;
    let select = format!(
        "SELECT d.delivery_id, d.event_id, d.kind, d.attempts, d.retry_from, w.name, w.url, w.format, \
         w.secret, CASE WHEN w.previous_until > $1 THEN w.previous_secret END, w.message_prefix \
         FROM webhook_deliveries d JOIN webhooks w ON w.webhook_id = d.webhook_id \
         WHERE d.delivery_id IN ({}) ORDER BY d.next_attempt_at, d.delivery_id",
        placeholders(2, due.len())
    );
    let mut read = sqlx::query_as::<_, ClaimRow>(&select).bind(now.0);
    for (id,) in &due {
        read = read.bind(id);
    }
    let claimed = read.fetch_all(&mut *tx).await?;
    tx.commit().await?;
    Ok(claimed)
}

/// `$first, …` for `n` values bound in a list.
fn placeholders(first: usize, n: usize) -> String {
    let marks: Vec<String> = (first..first + n).map(|k| format!("${k}")).collect();
    marks.join(", ")
}

/// Logs an attempt; if `worker` still holds the delivery's lease, applies
/// the outcome. Giving up fails every pending delivery of the webhook and
/// disables it.
pub(crate) async fn record_attempt(
    pool: &Pool<Db>,
    id: i64,
    worker: &str,
    attempt: &crate::webhooks::Attempt,
    next: crate::webhooks::Attempted,
) -> Result<(), OpError> {
    use crate::webhooks::Attempted;
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    sqlx::query(
        "INSERT INTO webhook_attempts (delivery_id, at, duration_ms, status, error, response, worker) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(id)
    .bind(attempt.at.0)
    .bind(i64::try_from(attempt.duration_ms).unwrap_or(i64::MAX))
    .bind(attempt.status.map(i64::from))
    .bind(&attempt.error)
    .bind(&attempt.response)
    .bind(&attempt.by)
    .execute(&mut *tx)
    .await?;
    let now = Timestamp::now().0;
    let (state, next_at, finished) = match next {
        Attempted::Delivered => ("delivered", now, Some(now)),
        Attempted::RetryAt(at) => ("pending", at.0, None),
        Attempted::GiveUp => ("failed", now, Some(now)),
    };
    let changed = sqlx::query(
        "UPDATE webhook_deliveries SET state = $1, next_attempt_at = $2, finished_at = $3, \
         lease_until = NULL, leased_by = NULL WHERE delivery_id = $4 AND leased_by = $5",
    )
    .bind(state)
    .bind(next_at)
    .bind(finished)
    .bind(id)
    .bind(worker)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if changed > 0 && next == Attempted::GiveUp {
        let reason = match (attempt.status, &attempt.error) {
            // The scheme's way for a receiver to ask for no more.
            (Some(410), _) => "the receiver answered 410 Gone: it asks for no more deliveries".to_owned(),
            (Some(status), _) => {
                format!("deliveries failed for a day; the last attempt: the receiver answered {status}")
            }
            (None, Some(error)) => format!("deliveries failed for a day; the last attempt: {error}"),
            (None, None) => "deliveries failed for a day; the last attempt had no answer".to_owned(),
        };
        let webhook = "(SELECT webhook_id FROM webhook_deliveries WHERE delivery_id = $1)";
        sqlx::query(&format!(
            "UPDATE webhook_deliveries SET state = 'failed', finished_at = $2, lease_until = NULL, leased_by = NULL \
             WHERE webhook_id = {webhook} AND state = 'pending'"
        ))
        .bind(id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        sqlx::query(&format!(
            "UPDATE webhooks SET disabled_at = $2, disabled_reason = $3 \
             WHERE webhook_id = {webhook} AND disabled_at IS NULL"
        ))
        .bind(id)
        .bind(now)
        .bind(reason)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// The webhook's deliveries below `before`, newest first, and their
/// attempts, oldest first.
pub(crate) async fn deliveries(
    pool: &Pool<Db>,
    name: &str,
    before: i64,
    limit: i64,
) -> Result<
    (
        Vec<crate::webhooks::DeliveryRow>,
        Vec<crate::webhooks::AttemptRow>,
    ),
    OpError,
> {
    let rows: Vec<crate::webhooks::DeliveryRow> = sqlx::query_as(
        "SELECT d.delivery_id, d.event_id, d.kind, d.state, d.created_at, d.next_attempt_at, w.message_prefix \
         FROM webhook_deliveries d JOIN webhooks w ON w.webhook_id = d.webhook_id \
         WHERE w.name = $1 AND d.delivery_id < $2 ORDER BY d.delivery_id DESC LIMIT $3",
    )
    .bind(name)
    .bind(before)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    let (Some(first), Some(last)) = (rows.last().map(|r| r.0), rows.first().map(|r| r.0)) else {
        return Ok((rows, Vec::new()));
    };
    let attempts = sqlx::query_as(
        "SELECT a.delivery_id, a.at, a.duration_ms, a.status, a.error, a.response, a.worker \
         FROM webhook_attempts a JOIN webhook_deliveries d ON d.delivery_id = a.delivery_id \
         JOIN webhooks w ON w.webhook_id = d.webhook_id \
         WHERE w.name = $1 AND a.delivery_id >= $2 AND a.delivery_id <= $3 ORDER BY a.attempt_id",
    )
    .bind(name)
    .bind(first)
    .bind(last)
    .fetch_all(pool)
    .await?;
    Ok((rows, attempts))
}

/// Makes deliveries of the webhook due again at `now` with a new day of
/// retries: delivery `id`, or every failed one queued since `since`.
pub(crate) async fn redeliver(
    pool: &Pool<Db>,
    name: &str,
    id: Option<i64>,
    since: Option<Timestamp>,
    now: Timestamp,
) -> Result<u64, OpError> {
    let which = match id {
        Some(_) => "delivery_id = $3",
        None => "state = 'failed' AND created_at >= $3",
    };
    let sql = format!(
        "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, retry_from = $1, next_attempt_at = $1, \
         finished_at = NULL, lease_until = NULL, leased_by = NULL \
         WHERE webhook_id = (SELECT webhook_id FROM webhooks WHERE name = $2) AND {which}"
    );
    let bound = id.or(since.map(|t| t.0)).unwrap_or_default();
    let done = sqlx::query(&sql)
        .bind(now.0)
        .bind(name)
        .bind(bound)
        .execute(pool)
        .await?;
    Ok(done.rows_affected())
}

/// Drops finished deliveries queued before `before`, with their attempts.
pub(crate) async fn prune_deliveries(pool: &Pool<Db>, before: Timestamp) -> Result<u64, OpError> {
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    let finished = "SELECT delivery_id FROM webhook_deliveries WHERE state <> 'pending' AND created_at < $1";
    sqlx::query(&format!(
        "DELETE FROM webhook_attempts WHERE delivery_id IN ({finished})"
    ))
    .bind(before.0)
    .execute(&mut *tx)
    .await?;
    let done = sqlx::query(&format!(
        "DELETE FROM webhook_deliveries WHERE delivery_id IN ({finished})"
    ))
    .bind(before.0)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(done.rows_affected())
}
