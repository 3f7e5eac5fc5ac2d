// API keys, stored by the SHA-256 of their secret.
// Included in each backend module (see `backend/mod.rs`) after
// `prelude.rs`, whose imports it shares.

const KEY_COLUMNS: &str = "name, pack, scope, created_at, created_by, revoked_at";

/// Records a key by the SHA-256 of its secret.
pub(crate) async fn insert_key(
    pool: &Pool<Db>,
    key: &crate::keys::KeyRow,
    secret_sha256: &str,
) -> Result<(), OpError> {
    let (name, pack, scope, created_at, created_by, _) = key;
    let inserted = sqlx::query(
        "INSERT INTO api_keys (name, pack, scope, secret_sha256, created_at, created_by) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(name)
    .bind(pack)
    .bind(scope)
    .bind(secret_sha256)
    .bind(created_at)
    .bind(created_by)
    .execute(pool)
    .await;
    match inserted {
        Ok(_) => Ok(()),
        Err(e) if is_unique_violation(&e) => Err(Error::new(
            ErrorKind::Conflict,
            format!("an API key named `{name}` exists already (names are never reused, even once revoked): choose another name"),
        )
        .into()),
        Err(e) => Err(e.into()),
    }
}

/// Every key, by name.
pub(crate) async fn keys(pool: &Pool<Db>) -> Result<Vec<crate::keys::KeyRow>, OpError> {
    let sql = format!("SELECT {KEY_COLUMNS} FROM api_keys ORDER BY name");
    Ok(sqlx::query_as(&sql).fetch_all(pool).await?)
}

/// The key named `name`, revoked now unless it was already.
pub(crate) async fn revoke_key(
    pool: &Pool<Db>,
    name: &str,
    at: Timestamp,
    by: &str,
) -> Result<Option<crate::keys::KeyRow>, OpError> {
    sqlx::query(
        "UPDATE api_keys SET revoked_at = $1, revoked_by = $2 WHERE name = $3 AND revoked_at IS NULL",
    )
    .bind(at.0)
    .bind(by)
    .bind(name)
    .execute(pool)
    .await?;
    let sql = format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE name = $1");
    Ok(sqlx::query_as(&sql).bind(name).fetch_optional(pool).await?)
}

/// The key whose secret has this SHA-256.
pub(crate) async fn key_by_secret(
    pool: &Pool<Db>,
    secret_sha256: &str,
) -> Result<Option<crate::keys::KeyRow>, OpError> {
    let sql = format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE secret_sha256 = $1");
    Ok(sqlx::query_as(&sql)
        .bind(secret_sha256)
        .fetch_optional(pool)
        .await?)
}
