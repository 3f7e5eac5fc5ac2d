// Webhooks: made, listed, changed, rotated, enabled, deleted (see
// `webhooks/mod.rs`); their outbox is `outbox.rs`.
// Included in each backend module (see `backend/mod.rs`) after
// `prelude.rs`, whose imports it shares.

const WEBHOOK_COLUMNS: &str = "name, url, packs, events, format, created_at, created_by, \
     previous_until, disabled_at, disabled_reason";

/// The newest event's id, as a subquery: where a webhook starts hearing.
const NEWEST_EVENT: &str = "(SELECT COALESCE(MAX(event_id), 0) FROM events)";

pub(crate) async fn insert_webhook(
    pool: &Pool<Db>,
    spec: &crate::webhooks::WebhookSpec,
    (secret, prefix): (&str, &str),
    at: Timestamp,
    by: &str,
) -> Result<(), OpError> {
    let sql = format!(
        "INSERT INTO webhooks (name, url, packs, events, format, secret, event_cursor, created_at, created_by, message_prefix) \
         VALUES ($1, $2, $3, $4, $5, $6, {NEWEST_EVENT}, $7, $8, $9)"
    );
    let inserted = sqlx::query(&sql)
        .bind(&spec.name)
        .bind(&spec.url)
        .bind(spec.packs.join(" "))
        .bind(spec.events.join(" "))
        .bind(spec.format.as_str())
        .bind(secret)
        .bind(at.0)
        .bind(by)
        .bind(prefix)
        .execute(pool)
        .await;
    match inserted {
        Ok(_) => Ok(()),
        Err(e) if is_unique_violation(&e) => Err(Error::new(
            ErrorKind::Conflict,
            format!("a webhook named `{}` exists already: choose another name, or delete it first", spec.name),
        )
        .into()),
        Err(e) => Err(e.into()),
    }
}

pub(crate) async fn webhooks(pool: &Pool<Db>) -> Result<Vec<crate::webhooks::WebhookRow>, OpError> {
    let sql = format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks ORDER BY name");
    Ok(sqlx::query_as(&sql).fetch_all(pool).await?)
}

/// Deletes the webhook, its deliveries and their attempts, at once.
pub(crate) async fn delete_webhook(pool: &Pool<Db>, name: &str) -> Result<(), OpError> {
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    sqlx::query(
        "DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT d.delivery_id \
         FROM webhook_deliveries d JOIN webhooks w ON w.webhook_id = d.webhook_id WHERE w.name = $1)",
    )
    .bind(name)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "DELETE FROM webhook_deliveries WHERE webhook_id IN (SELECT webhook_id FROM webhooks WHERE name = $1)",
    )
    .bind(name)
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM webhooks WHERE name = $1")
        .bind(name)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Sets the webhook's URL, packs, event types and format to `spec`'s.
pub(crate) async fn update_webhook(
    pool: &Pool<Db>,
    spec: &crate::webhooks::WebhookSpec,
) -> Result<(), OpError> {
    sqlx::query("UPDATE webhooks SET url = $1, packs = $2, events = $3, format = $4 WHERE name = $5")
        .bind(&spec.url)
        .bind(spec.packs.join(" "))
        .bind(spec.events.join(" "))
        .bind(spec.format.as_str())
        .bind(&spec.name)
        .execute(pool)
        .await?;
    Ok(())
}

pub(crate) async fn rotate_webhook(
    pool: &Pool<Db>,
    name: &str,
    secret: &str,
    previous_until: Timestamp,
) -> Result<(), OpError> {
    sqlx::query(
        "UPDATE webhooks SET previous_secret = secret, previous_until = $1, secret = $2 WHERE name = $3",
    )
    .bind(previous_until.0)
    .bind(secret)
    .bind(name)
    .execute(pool)
    .await?;
    Ok(())
}

pub(crate) async fn enable_webhook(pool: &Pool<Db>, name: &str) -> Result<(), OpError> {
    let sql = format!(
        "UPDATE webhooks SET disabled_at = NULL, disabled_reason = NULL, event_cursor = {NEWEST_EVENT} \
         WHERE name = $1 AND disabled_at IS NOT NULL"
    );
    sqlx::query(&sql).bind(name).execute(pool).await?;
    Ok(())
}
