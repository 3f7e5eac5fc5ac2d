// Migrations, and the packs' names and ids.
// Included in each backend module (see `backend/mod.rs`) after
// `prelude.rs`, whose imports it shares.

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
    if version < REVISIONS_SINCE {
        record_first_revisions(&mut tx).await?;
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
