//! Publishing: move a label after a confirmation showing the diff it
//! publishes, or roll it back. Protected labels need an admin key.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, Response};
use minijinja::context;
use promptreg_store::{Label, PackFiles, Permission, Permit, VersionRef};
use serde::{Deserialize, Serialize};

use super::compare::{FileRows, compare_files, version_ref};
use super::form::Fields;
use super::packs::require_read;
use super::page::Path;
use super::page::{PageError, render, require_write, see_other, visitor};
use super::tests::TestResults;
use crate::actions::{self, Target};
use crate::extract::{LabelName, PackName, PromptName, Query};
use crate::state::AppState;

/// The longest reason accepted.
const MAX_REASON: usize = 1024;

/// `?to=vN`.
#[derive(Debug, Deserialize)]
pub(crate) struct To {
    to: String,
}

/// Checks the visitor may move `name`: write, and admin when protected.
/// The permit is the request's one check of the write scope.
pub(super) async fn may_move(
    state: &AppState,
    pack: &str,
    name: &Label,
) -> Result<Permit, PageError> {
    let caller = visitor()
        .map(|v| v.caller)
        .ok_or_else(|| PageError::new(StatusCode::UNAUTHORIZED, "Sign in first"))?;
    let permit = require_write(&caller, pack)?;
    let protected = state.store.protected_labels(pack).await?;
    if protected.contains(name.as_str()) && !permit.actor().may(Permission::Admin) {
        return Err(PageError::new(
            StatusCode::FORBIDDEN,
            format!("Only admin keys may move {name}: it is a protected label"),
        ));
    }
    Ok(permit)
}

/// Where the label points now, if anywhere.
async fn current(
    state: &AppState,
    pack: &str,
    id: &str,
    name: &Label,
) -> Result<Option<(u64, PackFiles)>, PageError> {
    match state
        .store
        .files(pack, id, &VersionRef::Label(name.clone()))
        .await
    {
        Ok(found) => Ok(Some(found)),
        Err(e) if e.kind() == promptreg_store::ErrorKind::UnknownVersion => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// `GET …/labels/{label}/move?to=vN`: the confirmation.
pub(crate) async fn confirm_move(
    State(state): State<AppState>,
    Path((pack, id, name)): Path<(PackName, PromptName, LabelName)>,
    Query(to): Query<To>,
) -> Result<Html<String>, PageError> {
    let (pack, id, name) = (pack.as_str(), id.as_str(), name.0);
    require_read(pack)?;
    may_move(&state, pack, &name).await?;
    let (target, new) = state.store.files(pack, id, &version_ref(&to.to)?).await?;
    let now = current(&state, pack, id, &name).await?;
    let files = changes(id, now.as_ref(), &new);
    let candidate = Candidate::of(&state, (pack, id), &name, now.as_ref(), target).await;
    render(
        "label.html",
        context! {
            pack, id,
            files => super::page::data(&files),
            label => name.as_str(),
            action => "move",
            heading => format!("Publish v{target} to {name}?"),
            button => "Publish",
            to => target,
            expect => now.map(|(n, _)| n),
            candidate => super::page::data(&candidate),
        },
    )
}

/// The state a move would publish, tested: what the confirmation shows
/// before its button.
#[derive(Serialize)]
struct Candidate {
    tests: TestResults,
    /// The pack's manifest there gates the label.
    gated: bool,
    /// What the move changes in the prompt's contract, each change with
    /// whether it breaks it.
    contract: Vec<ContractLine>,
    /// The pack's manifest there keeps the label's contracts stable, and
    /// the move breaks one.
    breaks_stable: bool,
    /// The visitor may force a gated move (an admin).
    may_force: bool,
}

/// One contract change, as the confirmation lists it.
#[derive(Serialize)]
struct ContractLine {
    text: String,
    breaking: bool,
}

impl Candidate {
    async fn of(
        state: &AppState,
        (pack, id): (&str, &str),
        name: &Label,
        now: Option<&(u64, PackFiles)>,
        to: u64,
    ) -> Candidate {
        let files = state.store.state_with(pack, name, id, to).await;
        let gated = files
            .as_ref()
            .is_ok_and(|f| super::revisions::gated_by(f, name));
        let stable = files
            .as_ref()
            .is_ok_and(|f| super::revisions::keeps_contract_stable(f, name));
        let changes = match now {
            Some((number, _)) => {
                let (from, to) = (VersionRef::Number(*number), VersionRef::Number(to));
                state
                    .store
                    .contract_changes(pack, id, &from, &to)
                    .await
                    .unwrap_or_default()
            }
            None => Vec::new(),
        };
        let contract: Vec<ContractLine> = changes
            .iter()
            .map(|c| ContractLine {
                text: c.to_string(),
                breaking: c.breaking,
            })
            .collect();
        Candidate {
            breaks_stable: stable && contract.iter().any(|c| c.breaking),
            contract,
            tests: TestResults::of(&state.heavy, files).await,
            gated,
            may_force: super::revisions::is_admin(pack),
        }
    }
}

/// `POST …/labels/{label}/move`: `to`, `expect` (`none` for a new label), `reason`.
pub(crate) async fn publish(
    State(state): State<AppState>,
    Path((pack, id, name)): Path<(PackName, PromptName, LabelName)>,
    fields: Fields,
) -> Result<Response, PageError> {
    let (pack, id, name) = (pack.as_str(), id.as_str(), name.0);
    fields.check_csrf()?;
    let permit = may_move(&state, pack, &name).await?;
    let reason = reason(&fields)?;
    let number = |field: &str| fields.get(field).parse::<u64>().ok();
    let to = number("to").ok_or_else(|| {
        PageError::new(
            StatusCode::BAD_REQUEST,
            "The form lacks the version to publish",
        )
    })?;
    let target = Target {
        label: &name,
        to,
        expect: number("expect"),
        gates: forced(&fields),
    };
    let moved = actions::move_to(&state, permit, pack, id, target, reason)
        .await
        .map_err(|p| moved_meanwhile(p, &name))?;
    Ok(after_move(pack, id, &name, moved.to))
}

/// `GET …/labels/{label}/rollback`: the confirmation.
pub(crate) async fn confirm_rollback(
    State(state): State<AppState>,
    Path((pack, id, name)): Path<(PackName, PromptName, LabelName)>,
) -> Result<Html<String>, PageError> {
    let (pack, id, name) = (pack.as_str(), id.as_str(), name.0);
    require_read(pack)?;
    may_move(&state, pack, &name).await?;
    let back = state.store.rollback_target(pack, id, &name).await?;
    let now = current(&state, pack, id, &name).await?;
    let (_, old) = state
        .store
        .files(pack, id, &VersionRef::Number(back))
        .await?;
    let files = changes(id, now.as_ref(), &old);
    let candidate = Candidate::of(&state, (pack, id), &name, now.as_ref(), back).await;
    render(
        "label.html",
        context! {
            pack, id,
            files => super::page::data(&files),
            label => name.as_str(),
            action => "rollback",
            heading => format!("Roll back {name}?"),
            detail => format!("{name} goes back to v{back}"),
            button => "Roll back",
            candidate => super::page::data(&candidate),
        },
    )
}

/// What moving the label changes: its version now (none for a new label)
/// against `to`, every file.
fn changes(id: &str, now: Option<&(u64, PackFiles)>, to: &PackFiles) -> Vec<FileRows> {
    let empty = PackFiles::default();
    let from = now.map_or(&empty, |(_, files)| files);
    compare_files(id, from, to, "", false)
}

/// `POST …/labels/{label}/rollback`.
pub(crate) async fn roll_back(
    State(state): State<AppState>,
    Path((pack, id, name)): Path<(PackName, PromptName, LabelName)>,
    fields: Fields,
) -> Result<Response, PageError> {
    let (pack, id, name) = (pack.as_str(), id.as_str(), name.0);
    fields.check_csrf()?;
    let reason = reason(&fields)?;
    let permit = may_move(&state, pack, &name).await?;
    let moved = actions::roll_back(&state, permit, pack, id, &name, reason, forced(&fields))
        .await
        .map_err(|p| moved_meanwhile(p, &name))?;
    Ok(after_move(pack, id, &name, moved.to))
}

/// The form's `force` box: an admin moving a gated label past failing
/// tests (the store refuses anyone else, and a move without a reason).
pub(super) fn forced(fields: &Fields) -> actions::Gates {
    actions::Gates::forced(fields.get("force") == "on")
}

pub(super) fn reason(fields: &Fields) -> Result<&str, PageError> {
    let reason = fields.get("reason").trim();
    if reason.len() > MAX_REASON {
        return Err(super::form::too_large("Reason", reason.len()));
    }
    Ok(reason)
}

/// A conflict: someone moved the label since the confirmation was shown.
pub(super) fn moved_meanwhile(p: crate::problem::Problem, name: &Label) -> PageError {
    if p.details().status == 412 {
        return PageError::new(
            StatusCode::CONFLICT,
            format!(
                "{name} was moved by someone else meanwhile: {}. Open the page again to see where it points now",
                p.details().detail
            ),
        );
    }
    p.into()
}

fn after_move(pack: &str, id: &str, name: &Label, to: Option<u64>) -> Response {
    see_other(&format!(
        "/packs/{pack}/prompts/{id}?moved={name}&to={}",
        to.unwrap_or_default()
    ))
}
