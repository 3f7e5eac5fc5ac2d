//! What the API and the web page both do to the store: save a version,
//! move a label, roll one back, render with the trace. Each returns domain
//! values or the server's [`Problem`], which the API sends as a problem
//! document and the web page shows as an error page; neither calls the
//! other's handlers.

use promptreg::{Locale, Traced};
use promptreg_store::{Change, Label, PackFiles, Permit, Scope};

use crate::auth::Caller;
use crate::body::{Created, RenderRequest};
use crate::extract::shown;
use crate::problem::{Problem, ProblemCode};
use crate::state::AppState;

/// Records a new version of `id` from its files (path in the pack ->
/// text), as `POST …/versions` and the web page's editor do.
pub(crate) async fn save_version(
    state: &AppState,
    caller: &Caller,
    pack: &str,
    id: &str,
    new: impl IntoIterator<Item = (String, String)>,
    message: &str,
) -> Result<Created, Problem> {
    caller.require(pack, Scope::Write)?;
    let mut files = PackFiles::default();
    for (path, text) in new {
        files.insert(prompt_file_path(id, &path)?, text);
    }
    // The store checks the pack on a blocking thread; the slot bounds how
    // many such checks run at once.
    let _slot = state.heavy.slot().await?;
    let report = state
        .store
        .push_prompt(pack, id, &files, &caller.actor(), message)
        .await?;
    state.cache.invalidate(pack);
    let (_, change, version) = report
        .prompts
        .iter()
        .find(|(p, ..)| p == id)
        .cloned()
        .unwrap_or((id.to_owned(), Change::Unchanged, None));
    Ok(Created {
        pack: pack.to_owned(),
        id: id.to_owned(),
        change: change.as_str().to_owned(),
        version: version.unwrap_or_default(),
    })
}

/// A file path of a new version: `defaults/<name>.md`, one segment under
/// `defaults/`, nothing that could leave the pack.
pub(crate) fn prompt_file_path(id: &str, path: &str) -> Result<String, Problem> {
    let name = path
        .strip_prefix("defaults/")
        .filter(|name| {
            name.ends_with(".md")
                && name.starts_with(id)
                && !name.contains(['/', '\\'])
                && !name.contains("..")
                && !name.chars().any(char::is_control)
        })
        .ok_or_else(|| {
            Problem::bad_request(
                ProblemCode::InvalidFilePath,
                format!(
                    "`{}` is not a file of prompt `{id}`: its files are `defaults/{id}.md` and `defaults/{id}.<locale>.md`",
                    shown(path, 200)
                ),
            )
        })?;
    Ok(format!("defaults/{name}"))
}

/// Whether a move of a gated label may go past failing tests: an admin
/// key's forced move, with a reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Gates {
    /// A failing state is refused.
    #[default]
    Respect,
    /// A failing state is admitted, and the revision says so.
    Force,
}

impl Gates {
    /// `force` as a request's body says it.
    pub(crate) fn forced(force: bool) -> Gates {
        match force {
            true => Gates::Force,
            false => Gates::Respect,
        }
    }

    /// The caller's actor, forcing gates when asked.
    pub(crate) fn actor(self, caller: &Caller) -> promptreg_store::Actor {
        match self {
            Gates::Force => caller.actor().forcing_gates(),
            Gates::Respect => caller.actor(),
        }
    }

    /// The caller's permit, forcing gates when asked.
    pub(crate) fn permit(self, permit: Permit) -> Permit {
        match self {
            Gates::Force => permit.forcing_gates(),
            Gates::Respect => permit,
        }
    }
}

/// Where a label moves, from where.
pub(crate) struct Target<'a> {
    pub(crate) label: &'a Label,
    pub(crate) to: u64,
    /// The version it must point at now (`None`: it must not exist).
    pub(crate) expect: Option<u64>,
    pub(crate) gates: Gates,
}

/// Moves a label as `PUT …/labels/{label}` and the web page do: 412 when
/// it no longer points at `expect`. `permit` is the request's one check of
/// the write scope ([`Caller::permit`]), made before anything was read.
pub(crate) async fn move_to(
    state: &AppState,
    permit: Permit,
    pack: &str,
    id: &str,
    target: Target<'_>,
    reason: &str,
) -> Result<promptreg_store::LabelMove, Problem> {
    let moved = state
        .store
        .move_label(
            pack,
            id,
            target.label,
            target.to,
            target.expect,
            &target.gates.permit(permit),
            reason,
        )
        .await?;
    state.cache.invalidate(pack);
    Ok(moved)
}

/// Moves `name` one step back in its history, as `POST …/rollback` and
/// the web page do, with the request's permit ([`Caller::permit`]).
pub(crate) async fn roll_back(
    state: &AppState,
    permit: Permit,
    pack: &str,
    id: &str,
    name: &Label,
    reason: &str,
    gates: Gates,
) -> Result<promptreg_store::LabelMove, Problem> {
    let moved = state
        .store
        .rollback(pack, id, name, &gates.permit(permit), reason)
        .await?;
    state.cache.invalidate(pack);
    Ok(moved)
}

/// Renders `id` with its trace, as `POST …/explain` and the web page's
/// playground do: text or messages, as the core decides.
pub(crate) fn explained(
    registry: &promptreg::PromptRegistry,
    id: &str,
    request: &RenderRequest,
    locale: &Locale,
) -> Result<Traced, Problem> {
    Ok(registry.snapshot().render_any_traced_in(
        id,
        &request.context,
        locale,
        &request.histories(),
    )?)
}
