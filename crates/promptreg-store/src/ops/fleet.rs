// The fleet view: what each instance following a label reports it serves.
// Included in each backend module (see `backend/mod.rs`) after
// `prelude.rs`, whose imports it shares.

const FLEET_COLUMNS: &str = "instance, name, library, source, revision, digest, last_error, \
     interval_ms, reporter, first_seen, last_seen, split";

type FleetRow = (
    String,
    Option<String>,
    String,
    String,
    Option<i64>,
    Option<String>,
    Option<String>,
    i64,
    String,
    i64,
    i64,
    Option<i64>,
);

/// The label's newest revision and its digest.
pub(crate) async fn label_head(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &str,
) -> Result<Option<(u64, String)>, OpError> {
    let head: Option<(i64, String)> = sqlx::query_as(
        "SELECT number, digest FROM revisions WHERE pack_id = $1 AND label = $2 \
         ORDER BY number DESC LIMIT 1",
    )
    .bind(pack_id)
    .bind(label)
    .fetch_optional(pool)
    .await?;
    Ok(head.map(|(n, d)| (n as u64, d)))
}

/// Drops the instances last seen before `kept_since`, of every pack.
pub(crate) async fn prune_fleet(pool: &Pool<Db>, kept_since: i64) -> Result<(), OpError> {
    sqlx::query("DELETE FROM fleet_instances WHERE last_seen < $1")
        .bind(kept_since)
        .execute(pool)
        .await?;
    Ok(())
}

/// Records reports (pack id, label, report, reporter) in one transaction;
/// for each, why it was not recorded: a new instance its label, pack or
/// reporter has no room for, or an instance another reporter holds.
pub(crate) async fn report_instances(
    pool: &Pool<Db>,
    rows: &[(i64, &str, &crate::fleet::InstanceReport, &str)],
    horizon: &crate::fleet::Horizon,
    limits: &crate::fleet::FleetLimits,
) -> Result<Vec<Option<crate::fleet::Refused>>, OpError> {
    // A writing transaction from its start: on SQLite, one that reads
    // first could not take the write lock after another writer.
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    let mut held = crate::fleet::Held::default();
    let mut outcomes = Vec::with_capacity(rows.len());
    for &(pack_id, label, report, reporter) in rows {
        let row = (pack_id, label, report, reporter);
        outcomes.push(report_one(&mut tx, row, horizon.at, limits, &mut held).await?);
    }
    tx.commit().await?;
    Ok(outcomes)
}

async fn report_one(
    tx: &mut Tx,
    (pack_id, label, report, reporter): (i64, &str, &crate::fleet::InstanceReport, &str),
    at: i64,
    limits: &crate::fleet::FleetLimits,
    held: &mut crate::fleet::Held,
) -> Result<Option<crate::fleet::Refused>, OpError> {
    let owner = instance_owner(tx, pack_id, label, &report.instance).await?;
    match owner {
        Some(owner) if owner != reporter => return Ok(Some(crate::fleet::Refused::Taken(owner))),
        Some(_) => {}
        None => {
            if let Some(full) = room_for_one(tx, pack_id, label, reporter, limits, held).await? {
                return Ok(Some(full));
            }
        }
    }
    // Another server may record the same new instance meanwhile: the
    // later report of its reporter wins, its first sighting stays, and
    // another reporter's changes nothing.
    let written = sqlx::query(
        "INSERT INTO fleet_instances (pack_id, label, instance, name, library, source, revision, \
         digest, last_error, interval_ms, reporter, first_seen, last_seen, split) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13) \
         ON CONFLICT (pack_id, label, instance) DO UPDATE SET name = $4, library = $5, \
         source = $6, revision = $7, digest = $8, last_error = $9, interval_ms = $10, \
         last_seen = $12, split = $13 WHERE fleet_instances.reporter = $11",
    )
    .bind(pack_id)
    .bind(label)
    .bind(&report.instance)
    .bind(&report.name)
    .bind(&report.library)
    .bind(report.source.as_str())
    .bind(report.revision.map(|r| r as i64))
    .bind(&report.digest)
    .bind(&report.last_error)
    .bind(report.interval.as_millis() as i64)
    .bind(reporter)
    .bind(at)
    .bind(report.split.map(|s| s as i64))
    .execute(&mut **tx)
    .await?;
    if written.rows_affected() == 0 {
        let owner = instance_owner(tx, pack_id, label, &report.instance).await?;
        return Ok(Some(crate::fleet::Refused::Taken(owner.unwrap_or_default())));
    }
    if owner.is_none() {
        held.recorded(pack_id, label, reporter);
    }
    Ok(None)
}

/// Who reported `instance` of `label` first, if it is kept.
async fn instance_owner(
    tx: &mut Tx,
    pack_id: i64,
    label: &str,
    instance: &str,
) -> Result<Option<String>, OpError> {
    let owner: Option<(String,)> = sqlx::query_as(
        "SELECT reporter FROM fleet_instances WHERE pack_id = $1 AND label = $2 AND instance = $3",
    )
    .bind(pack_id)
    .bind(label)
    .bind(instance)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(owner.map(|(o,)| o))
}

/// Which bound, if any, a new instance of `label` reported by `reporter`
/// would pass. Each count is read once a batch, then kept in `held`.
async fn room_for_one(
    tx: &mut Tx,
    pack_id: i64,
    label: &str,
    reporter: &str,
    limits: &crate::fleet::FleetLimits,
    held: &mut crate::fleet::Held,
) -> Result<Option<crate::fleet::Refused>, OpError> {
    use crate::fleet::{Holder, Refused};
    let bounds = [
        (Holder::Label(pack_id, label.to_owned()), limits.per_label, Refused::Label),
        (Holder::Pack(pack_id), limits.per_pack, Refused::Pack),
        (Holder::Reporter(reporter.to_owned()), limits.per_key, Refused::Key),
    ];
    for (holder, most, refusal) in bounds {
        let count = match held.count(&holder) {
            Some(count) => count,
            None => {
                let count = count_held(tx, &holder).await?;
                held.set(holder, count);
                count
            }
        };
        if count >= most as u64 {
            return Ok(Some(refusal));
        }
    }
    Ok(None)
}

/// How many instances `holder` holds. Counted on an index alone: rows a
/// day old count until the next prune, at most a minute away.
async fn count_held(tx: &mut Tx, holder: &crate::fleet::Holder) -> Result<u64, OpError> {
    use crate::fleet::Holder;
    let query = match holder {
        Holder::Label(pack_id, label) => sqlx::query_as::<_, (i64,)>(
            "SELECT COUNT(*) FROM fleet_instances WHERE pack_id = $1 AND label = $2",
        )
        .bind(*pack_id)
        .bind(label.as_str()),
        Holder::Pack(pack_id) => {
            sqlx::query_as("SELECT COUNT(*) FROM fleet_instances WHERE pack_id = $1").bind(*pack_id)
        }
        Holder::Reporter(reporter) => {
            sqlx::query_as("SELECT COUNT(*) FROM fleet_instances WHERE reporter = $1")
                .bind(reporter.as_str())
        }
    };
    let (count,) = query.fetch_one(&mut **tx).await?;
    Ok(count as u64)
}

/// The instances kept, online and reporting, per revision served.
pub(crate) async fn fleet_counts(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &str,
    horizon: &crate::fleet::Horizon,
) -> Result<Vec<crate::fleet::FleetCount>, OpError> {
    let rows: Vec<(Option<i64>, i64, i64, i64)> = sqlx::query_as(
        "SELECT revision, COUNT(*), \
         CAST(SUM(CASE WHEN last_seen + interval_ms * 3 >= $3 THEN 1 ELSE 0 END) AS BIGINT), \
         CAST(SUM(CASE WHEN last_seen + (interval_ms * 3) / 2 >= $3 THEN 1 ELSE 0 END) AS BIGINT) \
         FROM fleet_instances WHERE pack_id = $1 AND label = $2 AND last_seen >= $4 \
         GROUP BY revision",
    )
    .bind(pack_id)
    .bind(label)
    .bind(horizon.at)
    .bind(horizon.kept_since)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(revision, total, online, reporting)| crate::fleet::FleetCount {
            revision: revision.map(|r| r as u64),
            total: total as u64,
            online: online as u64,
            reporting: reporting as u64,
        })
        .collect())
}

/// One page of the instances kept, by id.
pub(crate) async fn fleet_instances(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &str,
    horizon: &crate::fleet::Horizon,
    query: &crate::fleet::FleetQuery,
    newest: Option<u64>,
    limit: usize,
) -> Result<Vec<crate::fleet::Instance>, OpError> {
    // `behind` < 0: every instance; else those reporting on an older
    // revision than it, or on none known.
    // A revision past the label's newest, `$8`, is one it never had: behind.
    let behind = query.behind.map_or(-1, |r| r.min(i64::MAX as u64) as i64);
    let sql = format!(
        "SELECT {FLEET_COLUMNS} FROM fleet_instances \
         WHERE pack_id = $1 AND label = $2 AND last_seen >= $3 AND instance > $4 \
         AND ($5 < 0 OR (last_seen + (interval_ms * 3) / 2 >= $6 \
         AND (revision IS NULL OR revision < $5 OR revision > $8))) \
         ORDER BY instance LIMIT $7"
    );
    let rows: Vec<FleetRow> = sqlx::query_as(&sql)
        .bind(pack_id)
        .bind(label)
        .bind(horizon.kept_since)
        .bind(query.after.as_deref().unwrap_or(""))
        .bind(behind)
        .bind(horizon.at)
        .bind(limit as i64)
        .bind(newest.map_or(0, |n| n.min(i64::MAX as u64) as i64))
        .fetch_all(pool)
        .await?;
    let mut instances = Vec::with_capacity(rows.len());
    for row in rows {
        let (instance, name, library, source, revision, digest, last_error) =
            (row.0, row.1, row.2, row.3, row.4, row.5, row.6);
        let (interval_ms, reporter, first_seen, last_seen, split) =
            (row.7, row.8, row.9, row.10, row.11);
        instances.push(crate::fleet::Instance {
            instance,
            name,
            library,
            source: source.parse().map_err(OpError::from)?,
            revision: revision.map(|r| r as u64),
            digest,
            last_error,
            interval_ms: interval_ms as u64,
            split: split.map(|s| s as u64),
            reporter,
            first_seen: Timestamp(first_seen),
            last_seen: Timestamp(last_seen),
            online: last_seen.saturating_add(interval_ms.saturating_mul(3)) >= horizon.at,
        });
    }
    Ok(instances)
}

/// How many instances online hold split `split`'s candidate.
pub(crate) async fn holding_split(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &str,
    split: u64,
    horizon: &crate::fleet::Horizon,
) -> Result<u64, OpError> {
    let (count,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM fleet_instances WHERE pack_id = $1 AND label = $2 AND split = $3 \
         AND last_seen + interval_ms * 3 >= $4",
    )
    .bind(pack_id)
    .bind(label)
    .bind(split as i64)
    .bind(horizon.at)
    .fetch_one(pool)
    .await?;
    Ok(count as u64)
}
