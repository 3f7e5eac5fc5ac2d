// Versions: pushes, and reads of versions, entries and files.
// Included in each backend module (see `backend/mod.rs`) after
// `prelude.rs`, whose imports it shares.

/// Records a version of every entry whose content is new, and moves
/// `latest`, in one transaction.
///
/// `whole`: the entries are the whole pack, so an entry missing from them
/// loses `latest`; otherwise only the entries given are touched. With a
/// `base` (entry -> the version the files were pulled or pushed at), an
/// entry whose `latest` moved since is not changed: the push is refused,
/// naming each.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn push(
    pool: &Pool<Db>,
    pack: &str,
    entries: &[Entry],
    whole: bool,
    base: Option<&BTreeMap<String, u64>>,
    actor: &Actor,
    message: &str,
    tested: &crate::gate::Tested,
) -> Result<Written<PushReport>, OpError> {
    let now = Timestamp::now();
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    sqlx::query(
        "INSERT INTO packs (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
    )
    .bind(pack)
    .bind(now.0)
    .execute(&mut *tx)
    .await?;
    let (pack_id,): (i64,) = sqlx::query_as("SELECT pack_id FROM packs WHERE name = $1")
        .bind(pack)
        .fetch_one(&mut *tx)
        .await?;
    lock_pack(&mut tx, pack_id).await?;
    let known: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT entry, digest, number FROM versions WHERE pack_id = $1")
            .bind(pack_id)
            .fetch_all(&mut *tx)
            .await?;
    let mut by_digest = BTreeMap::new();
    let mut newest: BTreeMap<String, i64> = BTreeMap::new();
    for (entry, digest, number) in known {
        let top = newest.entry(entry.clone()).or_default();
        *top = (*top).max(number);
        by_digest.insert((entry, digest), number);
    }
    let mut latest = labels_named(&mut tx, pack_id, "latest").await?;
    if let Some(base) = base {
        let changed = entries
            .iter()
            .filter(|e| by_digest.get(&(e.name.clone(), e.digest.clone())) != latest.get(&e.name))
            .map(|e| e.name.as_str());
        let names: BTreeSet<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        let removed = latest.keys().map(String::as_str).filter(|n| whole && !names.contains(n));
        let mut moved = Vec::new();
        for entry in changed.chain(removed) {
            let now_at = latest.get(entry).map(|&n| n as u64);
            if now_at != base.get(entry).copied() {
                moved.push(moved_since(&mut tx, pack_id, entry, now_at, base.get(entry)).await?);
            }
        }
        if !moved.is_empty() {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!(
                    "`latest` moved since these files were taken from the store: {}; pushing would undo that: nothing was written (pull again and redo your change, or push with --force to overwrite)",
                    moved.join("; ")
                ),
            )
            .into());
        }
    }
    let mut report = PushReport {
        pack: pack.to_owned(),
        prompts: Vec::new(),
        not_stored: Vec::new(),
    };
    let reason = if message.is_empty() {
        "push".to_owned()
    } else {
        format!("push: {message}")
    };
    let mut events = Vec::new();
    let mut moved_latest = false;
    for entry in entries {
        let current = latest.remove(&entry.name);
        let (number, change) = match by_digest.get(&(entry.name.clone(), entry.digest.clone())) {
            Some(&n) if Some(n) == current => (n, Change::Unchanged),
            Some(&n) => (n, Change::Restored),
            None => {
                let n = newest.get(&entry.name).copied().unwrap_or(0) + 1;
                insert_version(&mut tx, pack_id, entry, n, actor, message, now).await?;
                events.push(EventKind::VersionCreated {
                    prompt: entry.name.clone(),
                    version: n as u64,
                    author: actor.name.clone(),
                });
                if let (Some(before), false) = (current, entry.translations.stale.is_empty()) {
                    let before = files_in(&mut tx, pack_id, &entry.name, before).await?;
                    for locale in entry.translations.gone_stale(&before, &entry.files) {
                        events.push(EventKind::TranslationStale {
                            prompt: entry.name.clone(),
                            locale: locale.to_owned(),
                            version: n as u64,
                            actor: actor.name.clone(),
                        });
                    }
                }
                (
                    n,
                    if n == 1 {
                        Change::Added
                    } else {
                        Change::Changed
                    },
                )
            }
        };
        if change != Change::Unchanged {
            let to = Some(number);
            let moved = set_label(
                &mut tx,
                pack_id,
                &entry.name,
                "latest",
                current,
                to,
                actor,
                &reason,
                now,
            )
            .await?;
            events.push(EventKind::from(&moved));
            moved_latest = true;
        }
        report
            .prompts
            .push((entry.name.clone(), change, Some(number as u64)));
    }
    if !whole {
        latest.clear();
    }
    for (gone, number) in latest {
        let moved = set_label(
            &mut tx,
            pack_id,
            &gone,
            "latest",
            Some(number),
            None,
            actor,
            &reason,
            now,
        )
        .await?;
        events.push(EventKind::from(&moved));
        report.prompts.push((gone, Change::Removed, None));
        moved_latest = true;
    }
    if moved_latest {
        let made = Made::by(RevisionCause::Push, actor, &reason, now, tested);
        let (_, created) = record_revision(&mut tx, pack_id, "latest", made).await?;
        events.push(created);
    }
    let last_event = commit(tx, pack_id, &events, now).await?;
    report.prompts.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Written {
        value: report,
        last_event,
    })
}

/// Makes the other writers of the pack wait until this transaction ends
/// (see `Dialect::lock_pack`).
async fn lock_pack(tx: &mut Tx, pack_id: i64) -> Result<(), OpError> {
    if let Some(lock) = DIALECT.lock_pack {
        sqlx::query(lock).bind(pack_id).execute(&mut **tx).await?;
    }
    Ok(())
}

async fn insert_version(
    tx: &mut Tx,
    pack_id: i64,
    entry: &Entry,
    number: i64,
    actor: &Actor,
    message: &str,
    now: Timestamp,
) -> Result<(), OpError> {
    let (version_id,): (i64,) = sqlx::query_as(
        "INSERT INTO versions (pack_id, entry, number, digest, author, message, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING version_id",
    )
    .bind(pack_id)
    .bind(&entry.name)
    .bind(number)
    .bind(&entry.digest)
    .bind(&actor.name)
    .bind(message)
    .bind(now.0)
    .fetch_one(&mut **tx)
    .await?;
    for (path, bytes) in &entry.files {
        sqlx::query("INSERT INTO version_files (version_id, path, content) VALUES ($1, $2, $3)")
            .bind(version_id)
            .bind(path)
            .bind(bytes.as_slice())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Whether the pack has `entry`, with how many versions.
pub(crate) async fn version_count(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: &str,
) -> Result<u64, OpError> {
    let (count,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM versions WHERE pack_id = $1 AND entry = $2")
            .bind(pack_id)
            .bind(entry)
            .fetch_one(pool)
            .await?;
    Ok(count as u64)
}

/// The versions of `entry`, newest first, with their labels.
pub(crate) async fn versions(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: &str,
) -> Result<Vec<VersionInfo>, OpError> {
    let rows: Vec<(i64, String, String, String, i64)> = sqlx::query_as(
        "SELECT number, digest, author, message, created_at FROM versions \
         WHERE pack_id = $1 AND entry = $2 ORDER BY number DESC",
    )
    .bind(pack_id)
    .bind(entry)
    .fetch_all(pool)
    .await?;
    let labels: Vec<(String, i64)> = sqlx::query_as(
        "SELECT label, number FROM labels WHERE pack_id = $1 AND entry = $2 ORDER BY label",
    )
    .bind(pack_id)
    .bind(entry)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(number, digest, author, message, created_at)| VersionInfo {
                prompt: entry.to_owned(),
                number: number as u64,
                digest,
                author,
                message,
                created_at: Timestamp(created_at),
                labels: labels
                    .iter()
                    .filter(|(_, n)| *n == number)
                    .map(|(l, _)| l.clone())
                    .collect(),
            },
        )
        .collect())
}

/// Every entry of the pack with its labels (entries with no label too).
pub(crate) async fn entries(
    pool: &Pool<Db>,
    pack_id: i64,
) -> Result<BTreeMap<String, BTreeMap<String, u64>>, OpError> {
    let names: Vec<(String,)> =
        sqlx::query_as("SELECT DISTINCT entry FROM versions WHERE pack_id = $1")
            .bind(pack_id)
            .fetch_all(pool)
            .await?;
    let labels: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT entry, label, number FROM labels WHERE pack_id = $1")
            .bind(pack_id)
            .fetch_all(pool)
            .await?;
    let mut out: BTreeMap<String, BTreeMap<String, u64>> =
        names.into_iter().map(|(n,)| (n, BTreeMap::new())).collect();
    for (entry, label, number) in labels {
        out.entry(entry).or_default().insert(label, number as u64);
    }
    Ok(out)
}

/// The files of version `number` of `entry`.
pub(crate) async fn files(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: &str,
    number: u64,
) -> Result<Option<BTreeMap<String, Vec<u8>>>, OpError> {
    let version: Option<(i64,)> = sqlx::query_as(
        "SELECT version_id FROM versions WHERE pack_id = $1 AND entry = $2 AND number = $3",
    )
    .bind(pack_id)
    .bind(entry)
    .bind(number as i64)
    .fetch_optional(pool)
    .await?;
    let Some((version_id,)) = version else {
        return Ok(None);
    };
    let rows: Vec<(String, Vec<u8>)> =
        sqlx::query_as("SELECT path, content FROM version_files WHERE version_id = $1")
            .bind(version_id)
            .fetch_all(pool)
            .await?;
    Ok(Some(rows.into_iter().collect()))
}

/// The files of version `number` of `entry`, read in the transaction.
async fn files_in(
    tx: &mut Tx,
    pack_id: i64,
    entry: &str,
    number: i64,
) -> Result<BTreeMap<String, Vec<u8>>, OpError> {
    let rows: Vec<(String, Vec<u8>)> = sqlx::query_as(
        "SELECT f.path, f.content FROM versions v JOIN version_files f ON f.version_id = v.version_id \
         WHERE v.pack_id = $1 AND v.entry = $2 AND v.number = $3",
    )
    .bind(pack_id)
    .bind(entry)
    .bind(number)
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows.into_iter().collect())
}

/// Every file of every entry at `label`, in one read.
pub(crate) async fn checkout(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &str,
) -> Result<Vec<(String, String, Vec<u8>)>, OpError> {
    let rows: Vec<(String, String, Vec<u8>)> = sqlx::query_as(LABEL_FILES)
    .bind(pack_id)
    .bind(label)
    .fetch_all(pool)
    .await?;
    Ok(rows)
}

/// entry, number, digest, path, content
type EntryFileRow = (String, i64, String, String, Vec<u8>);

/// Every entry at `label` with its version, address and files, in one read.
pub(crate) async fn entries_at(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &str,
) -> Result<Vec<EntryVersion>, OpError> {
    let rows: Vec<EntryFileRow> = sqlx::query_as(
        "SELECT l.entry, v.number, v.digest, f.path, f.content FROM labels l \
         JOIN versions v ON v.pack_id = l.pack_id AND v.entry = l.entry AND v.number = l.number \
         JOIN version_files f ON f.version_id = v.version_id \
         WHERE l.pack_id = $1 AND l.label = $2 ORDER BY l.entry, f.path",
    )
    .bind(pack_id)
    .bind(label)
    .fetch_all(pool)
    .await?;
    Ok(grouped(rows))
}

/// Rows of (entry, number, digest, path, content), ordered by entry, as
/// one `EntryVersion` per entry.
fn grouped(rows: Vec<EntryFileRow>) -> Vec<EntryVersion> {
    let mut out: Vec<EntryVersion> = Vec::new();
    for (entry, number, digest, path, content) in rows {
        match out.last_mut() {
            Some(last) if last.prompt == entry => last.files.insert(path, content),
            _ => {
                let mut files = crate::files::PackFiles::default();
                files.insert(path, content);
                out.push(EntryVersion {
                    prompt: entry,
                    number: number as u64,
                    digest,
                    files,
                });
            }
        }
    }
    out
}

/// The address of version `number` of `entry`.
pub(crate) async fn digest_of(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: &str,
    number: u64,
) -> Result<Option<String>, OpError> {
    let row: Option<(String,)> = sqlx::query_as(
        "SELECT digest FROM versions WHERE pack_id = $1 AND entry = $2 AND number = $3",
    )
    .bind(pack_id)
    .bind(entry)
    .bind(number as i64)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|(d,)| d))
}

/// Every version's stored digest and files, for [`verify`](crate::Store::verify).
pub(crate) async fn all_versions(
    pool: &Pool<Db>,
    pack_id: i64,
) -> Result<Vec<(String, i64, String, BTreeMap<String, Vec<u8>>)>, OpError> {
    let versions: Vec<(i64, String, i64, String)> =
        sqlx::query_as("SELECT version_id, entry, number, digest FROM versions WHERE pack_id = $1")
            .bind(pack_id)
            .fetch_all(pool)
            .await?;
    let files: Vec<(i64, String, Vec<u8>)> = sqlx::query_as(
        "SELECT f.version_id, f.path, f.content FROM version_files f \
         JOIN versions v ON v.version_id = f.version_id WHERE v.pack_id = $1",
    )
    .bind(pack_id)
    .fetch_all(pool)
    .await?;
    let mut by_version: BTreeMap<i64, BTreeMap<String, Vec<u8>>> = BTreeMap::new();
    for (id, path, content) in files {
        by_version.entry(id).or_default().insert(path, content);
    }
    Ok(versions
        .into_iter()
        .map(|(id, entry, number, digest)| {
            (
                entry,
                number,
                digest,
                by_version.remove(&id).unwrap_or_default(),
            )
        })
        .collect())
}

/// Resolves a version reference of `entry` to a number that exists.
pub(crate) async fn resolve(
    pool: &Pool<Db>,
    pack_id: i64,
    entry: &str,
    version: &VersionRef,
) -> Result<Option<u64>, OpError> {
    match version {
        VersionRef::Label(label) => label_target(pool, pack_id, entry, label.as_str()).await,
        VersionRef::Number(n) => {
            let row: Option<(i64,)> = sqlx::query_as(
                "SELECT number FROM versions WHERE pack_id = $1 AND entry = $2 AND number = $3",
            )
            .bind(pack_id)
            .bind(entry)
            .bind(*n as i64)
            .fetch_optional(pool)
            .await?;
            Ok(row.map(|(n,)| n as u64))
        }
    }
}

/// How `entry` moved since the base a push names: its version now, by
/// whom, against the version the files were taken at.
async fn moved_since(
    tx: &mut Tx,
    pack_id: i64,
    entry: &str,
    now_at: Option<u64>,
    base: Option<&u64>,
) -> Result<String, OpError> {
    let was = base.map_or("the files hold none taken from it".to_owned(), |v| {
        format!("the files hold v{v}")
    });
    let Some(number) = now_at else {
        return Ok(format!("`{entry}` was removed ({was})"));
    };
    let (author,): (String,) = sqlx::query_as(
        "SELECT author FROM versions WHERE pack_id = $1 AND entry = $2 AND number = $3",
    )
    .bind(pack_id)
    .bind(entry)
    .bind(number as i64)
    .fetch_one(&mut **tx)
    .await?;
    Ok(format!("`{entry}` is at v{number} by {author} ({was})"))
}
