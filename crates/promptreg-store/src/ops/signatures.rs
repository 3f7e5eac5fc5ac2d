// Signatures of revisions, and the names admins give signing keys.
// Included in each backend module (see `backend/mod.rs`) after
// `prelude.rs`, whose imports it shares.

/// Signs the revision this transaction records (`revision`: its row id,
/// number and digest) when its actor signs; refuses it when a manifest
/// requires signatures for the label and the actor does not sign.
async fn sign_if_asked(
    tx: &mut Tx,
    pack_id: i64,
    label: &str,
    revision: (i64, u64, &str),
    manifests: &[Vec<u8>],
    made: &Made<'_>,
) -> Result<(), OpError> {
    let (revision_id, number, digest) = revision;
    let required = made.cause != RevisionCause::Migration;
    let Some(key) = signer_for(made.signer, manifests, label, required)? else {
        return Ok(());
    };
    let pack = pack_name(tx, pack_id).await?;
    let statement = promptreg::signing::Statement::revision(&pack, label, number, digest);
    let signature = crate::signatures::sign(key, &statement)?;
    insert_signature(tx, revision_id, &signature, made.actor, made.now).await
}

/// Signs the candidate of the split this transaction starts (`split`: its
/// id and digest) when the actor signs; refuses it, as a move, when a
/// manifest requires signatures for the label and the actor does not sign.
async fn sign_split_if_asked(
    tx: &mut Tx,
    pack_id: i64,
    label: &str,
    split: (i64, &str),
    actor: &Actor,
    now: Timestamp,
) -> Result<(), OpError> {
    let (split_id, digest) = split;
    let manifests = label_manifests(tx, pack_id, label).await?;
    let Some(key) = signer_for(actor.signer(), &manifests, label, true)? else {
        return Ok(());
    };
    let pack = pack_name(tx, pack_id).await?;
    let statement = promptreg::signing::Statement::split(&pack, label, split_id as u64, digest);
    let signature = crate::signatures::sign(key, &statement)?;
    sqlx::query(
        "INSERT INTO split_signatures (split_id, fingerprint, signature, actor, signed_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(split_id)
    .bind(signature.fingerprint())
    .bind(signature.to_armored())
    .bind(&actor.name)
    .bind(now.0)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The key to sign a change of `label` with; `None` when there is none
/// and none is needed; the refusal when `manifests` require one (and the
/// requirement `applies` to this change).
fn signer_for<'k>(
    signer: Option<&'k promptreg::signing::SigningKey>,
    manifests: &[Vec<u8>],
    label: &str,
    applies: bool,
) -> Result<Option<&'k promptreg::signing::SigningKey>, OpError> {
    let required = || {
        applies
            && manifests
                .iter()
                .any(|m| crate::signatures::requires_signature(m, label))
    };
    match signer {
        Some(key) => Ok(Some(key)),
        None if required() => Err(crate::signatures::unsigned(label).into()),
        None => Ok(None),
    }
}

async fn pack_name(tx: &mut Tx, pack_id: i64) -> Result<String, OpError> {
    let (pack,): (String,) = sqlx::query_as("SELECT name FROM packs WHERE pack_id = $1")
        .bind(pack_id)
        .fetch_one(&mut **tx)
        .await?;
    Ok(pack)
}

/// The signatures of split `split_id`'s candidate, as OpenSSH writes
/// them, oldest first.
pub(crate) async fn split_signatures(pool: &Pool<Db>, split_id: u64) -> Result<Vec<String>, OpError> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT signature FROM split_signatures WHERE split_id = $1 ORDER BY signed_at, fingerprint",
    )
    .bind(split_id as i64)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|(s,)| s).collect())
}

async fn insert_signature(
    tx: &mut Tx,
    revision_id: i64,
    signature: &promptreg::signing::Signature,
    actor: &str,
    now: Timestamp,
) -> Result<(), OpError> {
    sqlx::query(
        "INSERT INTO revision_signatures (revision_id, fingerprint, signature, actor, signed_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (revision_id, fingerprint) DO NOTHING",
    )
    .bind(revision_id)
    .bind(signature.fingerprint())
    .bind(signature.to_armored())
    .bind(actor)
    .bind(now.0)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The signatures of `label`'s revisions numbered `numbers`, by revision,
/// each oldest first, with the names given to their keys.
pub(crate) async fn revision_signatures<'e>(
    executor: impl sqlx::Executor<'e, Database = Db>,
    pack_id: i64,
    label: &str,
    numbers: std::ops::RangeInclusive<u64>,
) -> Result<BTreeMap<u64, Vec<RevisionSignature>>, OpError> {
    let (first, last) = (*numbers.start() as i64, (*numbers.end()).min(i64::MAX as u64) as i64);
    let rows: Vec<(i64, String, Option<String>, String, String, i64)> = sqlx::query_as(
        "SELECT r.number, s.fingerprint, k.name, s.signature, s.actor, s.signed_at \
         FROM revision_signatures s JOIN revisions r ON r.revision_id = s.revision_id \
         LEFT JOIN signing_keys k ON k.fingerprint = s.fingerprint \
         WHERE r.pack_id = $1 AND r.label = $2 AND r.number BETWEEN $3 AND $4 \
         ORDER BY r.number, s.signed_at, s.fingerprint",
    )
    .bind(pack_id)
    .bind(label)
    .bind(first)
    .bind(last)
    .fetch_all(executor)
    .await?;
    let mut out: BTreeMap<u64, Vec<RevisionSignature>> = BTreeMap::new();
    for (number, fingerprint, key_name, signature, actor, at) in rows {
        out.entry(number as u64).or_default().push(RevisionSignature {
            fingerprint,
            key_name,
            signature,
            actor,
            at: Timestamp(at),
        });
    }
    Ok(out)
}

/// Signs revision `wanted` of `label` with the actor's key, after the
/// fact; announced as `revision_signed`. Returns the revision's number
/// and the signature's key fingerprint.
pub(crate) async fn sign_revision(
    pool: &Pool<Db>,
    pack_id: i64,
    label: &Label,
    wanted: &RevisionRef,
    actor: &Actor,
) -> Result<Written<(u64, String)>, OpError> {
    let Some(key) = actor.signer() else {
        return Err(Error::new(ErrorKind::InvalidInput, "signing a revision needs the releaser's key").into());
    };
    let mut tx = pool.begin_with(DIALECT.begin_write).await?;
    lock_pack(&mut tx, pack_id).await?;
    let number = resolve_revision(&mut *tx, pack_id, label.as_str(), wanted).await?;
    let (revision_id, digest, pack): (i64, String, String) = sqlx::query_as(
        "SELECT r.revision_id, r.digest, p.name FROM revisions r JOIN packs p ON p.pack_id = r.pack_id \
         WHERE r.pack_id = $1 AND r.label = $2 AND r.number = $3",
    )
    .bind(pack_id)
    .bind(label.as_str())
    .bind(number as i64)
    .fetch_one(&mut *tx)
    .await?;
    let statement = promptreg::signing::Statement::revision(&pack, label.as_str(), number, &digest);
    let signature = crate::signatures::sign(key, &statement)?;
    let now = Timestamp::now();
    insert_signature(&mut tx, revision_id, &signature, &actor.name, now).await?;
    let signed = EventKind::RevisionSigned {
        label: label.as_str().to_owned(),
        revision: number,
        digest,
        fingerprint: signature.fingerprint().to_owned(),
        actor: actor.name.clone(),
    };
    let last_event = commit(tx, pack_id, &[signed], now).await?;
    Ok(Written {
        value: (number, signature.fingerprint().to_owned()),
        last_event,
    })
}

/// Names the signing key of `fingerprint` (a new name replaces the old).
pub(crate) async fn name_signing_key(
    pool: &Pool<Db>,
    fingerprint: &str,
    name: &str,
    actor: &str,
) -> Result<(), OpError> {
    sqlx::query(
        "INSERT INTO signing_keys (fingerprint, name, actor, named_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (fingerprint) DO UPDATE SET name = excluded.name, actor = excluded.actor, named_at = excluded.named_at",
    )
    .bind(fingerprint)
    .bind(name)
    .bind(actor)
    .bind(Timestamp::now().0)
    .execute(pool)
    .await?;
    Ok(())
}

/// Every named signing key: fingerprint and name, by fingerprint.
pub(crate) async fn signing_keys(pool: &Pool<Db>) -> Result<Vec<(String, String)>, OpError> {
    Ok(sqlx::query_as("SELECT fingerprint, name FROM signing_keys ORDER BY fingerprint")
        .fetch_all(pool)
        .await?)
}
