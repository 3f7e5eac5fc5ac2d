//! A label of a pack: its revisions, newest first, and pointing it back at
//! any of them for the whole pack after a confirmation that shows what
//! changes and how the pack's tests fare against that state.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, Response};
use minijinja::context;
use promptreg_store::{Label, PackFiles, RevisionRef, Scope};
use serde::{Deserialize, Serialize};

use super::compare::{FileRows, compare_files};
use super::form::Fields;
use super::labels::{forced, may_move, moved_meanwhile, reason};
use super::packs::require_read;
use super::page::{PageError, Path, data, render, see_other, visitor};
use super::tests::TestResults;
use crate::extract::{LabelName, PackName, Query};
use crate::state::AppState;

/// One revision as the label page lists it.
#[derive(Debug, Serialize)]
struct Row {
    number: u64,
    digest: String,
    cause: &'static str,
    actor: String,
    at: String,
    reason: String,
    tests: Option<String>,
    forced: bool,
    /// The breaking contract changes an admin forced it past.
    breaking: Vec<String>,
    /// `greeting v1 -> v2`, per entry changed.
    changes: Vec<String>,
    /// Who signed it: each key's name (or fingerprint) and fingerprint.
    signed: Vec<(String, String)>,
}

/// `GET /packs/{pack}/labels/{label}`: the label's revisions.
pub(crate) async fn show(
    State(state): State<AppState>,
    Path((pack, name)): Path<(PackName, LabelName)>,
    Query(done): Query<Done>,
) -> Result<Html<String>, PageError> {
    let (pack, name) = (pack.as_str(), name.0);
    require_read(pack)?;
    let revisions = state.store.revisions(pack, &name).await?;
    let version = |n: Option<u64>| n.map_or("-".to_owned(), |n| format!("v{n}"));
    let rows: Vec<Row> = revisions
        .iter()
        .map(|r| Row {
            number: r.number,
            digest: r.digest.clone(),
            cause: r.cause.as_str(),
            actor: r.actor.clone(),
            at: r.at.to_string(),
            reason: r.reason.clone(),
            tests: r.tests.clone(),
            forced: r.forced,
            breaking: r.breaking.clone(),
            changes: r
                .changes
                .iter()
                .map(|c| format!("{} {} -> {}", c.entry, version(c.from), version(c.to)))
                .collect(),
            signed: r
                .signatures
                .iter()
                .map(|s| {
                    let name = s.key_name.clone().unwrap_or_else(|| s.fingerprint.clone());
                    (name, s.fingerprint.clone())
                })
                .collect(),
        })
        .collect();
    let may_move = may_move(&state, pack, &name).await.is_ok() && !name.is_latest();
    let fleet = super::fleet::view(&state, pack, &name).await?;
    let split = state
        .store
        .running_split(pack, &name)
        .await?
        .map(|s| SplitView::of(&s));
    render(
        "revisions.html",
        context! {
            pack, label => name.as_str(), may_move, restored => done.restored,
            revisions => data(&rows), fleet => data(&fleet), split => data(&split),
        },
    )
}

/// The split running, as the label page shows it: shares as `12.5%`.
#[derive(Debug, Serialize)]
struct SplitView {
    id: u64,
    from: String,
    revision: u64,
    digest: String,
    share: String,
    tests: Option<String>,
    forced: bool,
    /// `(time, step, share, who, why)`, oldest first.
    steps: Vec<(String, &'static str, String, String, String)>,
}

impl SplitView {
    fn of(split: &promptreg_store::Split) -> SplitView {
        SplitView {
            id: split.id,
            from: split.source_label.clone(),
            revision: split.source_revision,
            digest: split.digest.clone(),
            share: split.share.to_string(),
            tests: split.tests.clone(),
            forced: split.forced,
            steps: split
                .steps
                .iter()
                .map(|s| {
                    let share = s.share.to_string();
                    (
                        s.at.to_string(),
                        s.step.as_str(),
                        share,
                        s.actor.clone(),
                        s.reason.clone(),
                    )
                })
                .collect(),
        }
    }
}

/// `?restored=N` after a restore.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Done {
    #[serde(default)]
    restored: Option<u64>,
}

/// `?revision=N` (or a digest).
#[derive(Debug, Deserialize)]
pub(crate) struct Wanted {
    revision: String,
}

/// `GET /packs/{pack}/labels/{label}/restore?revision=N`: the
/// confirmation, with what changes and the tests of that state.
pub(crate) async fn confirm(
    State(state): State<AppState>,
    Path((pack, name)): Path<(PackName, LabelName)>,
    Query(wanted): Query<Wanted>,
) -> Result<Html<String>, PageError> {
    let (pack, name) = (pack.as_str(), name.0);
    require_read(pack)?;
    may_move(&state, pack, &name).await?;
    let wanted: RevisionRef = wanted.revision.parse()?;
    let revision = state.store.revision(pack, &name, wanted).await?;
    let newest = state.store.revisions(pack, &name).await?[0].number;
    let then = state
        .store
        .checkout_revision(pack, &name, revision.number)
        .await?;
    let now = state
        .store
        .checkout_revision(pack, &name, newest)
        .await
        .unwrap_or_default();
    let files = changes(&now, &then);
    let gated = gated_by(&now, &name) || gated_by(&then, &name);
    let tests = TestResults::of(&state.heavy, Ok(then)).await;
    render(
        "restore.html",
        context! {
            pack, label => name.as_str(), revision => revision.number, newest, gated,
            may_force => is_admin(pack),
            files => data(&files), tests => data(&tests),
        },
    )
}

/// `POST /packs/{pack}/labels/{label}/restore`: `revision`, `expect` (the
/// newest revision the confirmation showed), `reason`, `force`.
pub(crate) async fn restore(
    State(state): State<AppState>,
    Path((pack, name)): Path<(PackName, LabelName)>,
    fields: Fields,
) -> Result<Response, PageError> {
    let (pack, name) = (pack.as_str(), name.0);
    fields.check_csrf()?;
    let permit = may_move(&state, pack, &name).await?;
    let reason = reason(&fields)?;
    let number = |field: &str| fields.get(field).parse::<u64>().ok();
    let revision = number("revision").ok_or_else(|| {
        PageError::new(
            StatusCode::BAD_REQUEST,
            "The form lacks the revision to restore",
        )
    })?;
    let gates = forced(&fields);
    let restored = state
        .store
        .restore(
            pack,
            &name,
            revision,
            number("expect"),
            &gates.permit(permit),
            reason,
        )
        .await
        .map_err(|e| moved_meanwhile(e.into(), &name))?;
    state.cache.invalidate(pack);
    Ok(see_other(&format!(
        "/packs/{pack}/labels/{name}?restored={}",
        restored.restores
    )))
}

/// Every file that differs between the label now and the revision.
fn changes(now: &PackFiles, then: &PackFiles) -> Vec<FileRows> {
    let differs = |path: &str| now.get(path) != then.get(path);
    let only = |files: &PackFiles| -> PackFiles {
        files
            .iter()
            .filter(|(path, _)| differs(path))
            .map(|(path, bytes)| (path.to_owned(), bytes.to_vec()))
            .collect()
    };
    compare_files("", &only(now), &only(then), "", false)
}

/// Whether the manifest of `files` gates `label`.
pub(super) fn gated_by(files: &PackFiles, label: &Label) -> bool {
    names(files, label, promptreg::pack::gated_labels)
}

/// Whether the manifest among `files` keeps `label`'s contracts stable
/// (`[release] stable_contract`).
pub(super) fn keeps_contract_stable(files: &PackFiles, label: &Label) -> bool {
    names(files, label, promptreg::pack::stable_contract_labels)
}

/// Whether the `[release]` list `list` reads from the manifest among
/// `files` names `label`.
fn names(files: &PackFiles, label: &Label, list: fn(&str) -> Vec<String>) -> bool {
    let manifest = files
        .get(promptreg::pack::MANIFEST)
        .map(String::from_utf8_lossy)
        .unwrap_or_default();
    list(&manifest).iter().any(|l| l == label.as_str())
}

/// Whether the visitor is an admin of `pack`: an admin may force a gated
/// move past failing tests, with a reason.
pub(super) fn is_admin(pack: &str) -> bool {
    visitor().is_some_and(|v| v.caller.require(pack, Scope::Admin).is_ok())
}
