// Stable contracts: a label the manifest names in `[release]
// stable_contract` refuses a move that breaks a prompt's contract (its
// tools and output schema), unless an admin forces it with a reason.
// Included in each backend module (see `backend/mod.rs`) after
// `prelude.rs`, whose imports it shares.

/// The prompt files of each entry two revisions both hold, at different
/// versions unless `$4`: entry, version and default file in `$2`,
/// version and default file in `$3` (revision ids, of pack `$1`).
const DEFAULT_FILES: &str = "SELECT b.entry, a.number, fa.content, b.number, fb.content \
     FROM revision_entries a \
     JOIN revision_entries b ON b.entry = a.entry AND (b.number <> a.number OR $4) \
     JOIN versions va ON va.pack_id = $1 AND va.entry = a.entry AND va.number = a.number \
     JOIN versions vb ON vb.pack_id = $1 AND vb.entry = b.entry AND vb.number = b.number \
     LEFT JOIN version_files fa ON fa.version_id = va.version_id AND fa.path = 'defaults/' || a.entry || '.md' \
     LEFT JOIN version_files fb ON fb.version_id = vb.version_id AND fb.path = 'defaults/' || b.entry || '.md' \
     WHERE a.revision_id = $2 AND b.revision_id = $3 ORDER BY b.entry";

/// The shared tools and schemas of revision `revision` (its id): the
/// files of its pack entry under `tools/` and `schemas/`, by path.
async fn shared_files(
    tx: &mut Tx,
    pack_id: i64,
    revision: i64,
) -> Result<Vec<(String, String)>, OpError> {
    let rows: Vec<(String, Vec<u8>)> = sqlx::query_as(
        "SELECT f.path, f.content FROM revision_entries e \
         JOIN versions v ON v.pack_id = $1 AND v.entry = e.entry AND v.number = e.number \
         JOIN version_files f ON f.version_id = v.version_id \
         WHERE e.revision_id = $2 AND e.entry = $3 ORDER BY f.path",
    )
    .bind(pack_id)
    .bind(revision)
    .bind(crate::files::PACK_ENTRY)
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows
        .into_iter()
        .filter(|(path, _)| crate::diff::is_shared_file(path))
        .map(|(path, bytes)| (path, String::from_utf8_lossy(&bytes).into_owned()))
        .collect())
}

/// Whether the manifests that rule a move of `label` keep its contracts
/// stable.
fn keeps_contract_stable(manifests: &[Vec<u8>], label: &str) -> bool {
    manifests
        .iter()
        .any(|m| crate::gate::rules::rules(m).stable_contract().iter().any(|l| l == label))
}

/// The breaking contract changes from revision `from` to revision `to`
/// (their ids), one line each: ``auditor v1 -> v2: output `audit_verdict`,
/// property `verdict` removed``.
async fn breaking_changes(
    tx: &mut Tx,
    pack_id: i64,
    from: i64,
    to: i64,
) -> Result<Vec<String>, OpError> {
    type Row = (String, i64, Option<Vec<u8>>, i64, Option<Vec<u8>>);
    let (shared_from, shared_to) = (
        shared_files(tx, pack_id, from).await?,
        shared_files(tx, pack_id, to).await?,
    );
    // A shared tool or schema that changed may change any prompt: then
    // every prompt is compared, not only those that moved.
    let every_prompt = shared_from != shared_to;
    let rows: Vec<Row> = sqlx::query_as(DEFAULT_FILES)
        .bind(pack_id)
        .bind(from)
        .bind(to)
        .bind(every_prompt)
        .fetch_all(&mut **tx)
        .await?;
    let mut lines = Vec::new();
    for (entry, was, was_file, is, is_file) in rows {
        let changes = crate::diff::default_file_contract_changes(
            &entry,
            (was_file.as_deref(), shared_from.clone()),
            (is_file.as_deref(), shared_to.clone()),
        );
        lines.extend(
            changes
                .iter()
                .filter(|c| c.breaking)
                .map(|c| match was == is {
                    true => format!("{entry} v{is}, by a shared file: {} {}", c.subject, c.what),
                    false => format!("{entry} v{was} -> v{is}: {} {}", c.subject, c.what),
                }),
        );
    }
    Ok(lines)
}

/// For a label its manifests keep stable, the breaking contract changes
/// from revision `from` to revision `to` (their ids): refused
/// ([`ErrorKind::BreakingChange`]) unless the actor forces them, and
/// then returned, for the record. None for any other label.
async fn guard_contract(
    tx: &mut Tx,
    pack_id: i64,
    label: &str,
    manifests: &[Vec<u8>],
    (from, to): (i64, i64),
    forced: bool,
) -> Result<Vec<String>, OpError> {
    if !keeps_contract_stable(manifests, label) {
        return Ok(Vec::new());
    }
    let breaking = breaking_changes(tx, pack_id, from, to).await?;
    if breaking.is_empty() || forced {
        return Ok(breaking);
    }
    Err(Error::breaking_change(label, &breaking).into())
}
