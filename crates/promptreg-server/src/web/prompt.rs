//! A prompt's page: its versions and labels, the locale matrix, pins,
//! model settings, variables and tests.

use axum::extract::State;
use axum::response::Html;
use minijinja::context;
use promptreg::pack::{PackPrompt, SourceText};
use promptreg_store::{LATEST, Label, LabelMove, Scope};
use serde::{Deserialize, Serialize};

use super::locales;
use super::packs::require_read;
use super::page::Path;
use super::page::{PageError, render, visitor};
use crate::extract::{PackName, PromptName, Query};
use crate::state::AppState;

/// What the page shows besides the prompt: typed-in locales, and the
/// outcome of the POST that led here.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Shown {
    #[serde(default)]
    locales: String,
    saved: Option<u64>,
    unchanged: Option<u64>,
    moved: Option<String>,
    to: Option<u64>,
}

/// One version in the timeline.
#[derive(Debug, Serialize)]
struct VersionRow {
    number: u64,
    author: String,
    message: String,
    time: String,
    labels: Vec<String>,
}

/// One label of the prompt, with what the visitor may do to it.
#[derive(Debug, Serialize)]
pub(crate) struct LabelRow {
    name: String,
    version: u64,
    protected: bool,
    may_move: bool,
    /// Where a move goes: `latest`'s version, when the label is elsewhere.
    move_to: Option<u64>,
    /// Whether a previous move can be undone.
    can_roll_back: bool,
}

/// `GET /packs/{pack}/prompts/{id}`.
pub(crate) async fn show(
    State(state): State<AppState>,
    Path((pack, id)): Path<(PackName, PromptName)>,
    Query(shown): Query<Shown>,
) -> Result<Html<String>, PageError> {
    let (pack, id) = (pack.as_str(), id.as_str());
    require_read(pack)?;
    let log = state.store.log(pack, id).await?;
    // Newest first, as `store log` lists them.
    let versions: Vec<VersionRow> = log
        .iter()
        .map(|v| VersionRow {
            number: v.number,
            author: v.author.clone(),
            message: v.message.clone(),
            time: v.created_at.to_string(),
            labels: v.labels.clone(),
        })
        .collect();
    let protected = state.store.protected_labels(pack).await?;
    let history = state.store.history(pack, Some(id)).await?;
    let latest = log
        .iter()
        .filter(|v| v.labels.iter().any(|l| l == LATEST))
        .map(|v| v.number)
        .next();
    let labels = label_rows(&log, &protected, &history, latest, pack);
    let view = state.cache.label(pack, &Label::latest()).await?;
    let renderer = view.renderer_in(&state.heavy).await?;
    let (pack_files, registry) = (&renderer.pack, &renderer.registry);
    let prompt = pack_files.prompt(id);
    let mut matrix = prompt
        .map(|_| locales::matrix(pack_files, registry, id, &shown.locales))
        .unwrap_or_default();
    for row in &mut matrix {
        if let Some(stale) = &row.stale {
            row.stale_since = stale_since(&state, pack, id, &log, &stale.from_digest).await;
        }
    }
    let may_write = visitor().is_some_and(|v| v.caller.may_write(pack));
    render(
        "prompt.html",
        context! {
            pack, id, may_write,
            versions => super::page::data(&versions),
            labels => super::page::data(&labels),
            matrix => super::page::data(&matrix),
            typed => shown.locales,
            saved => shown.saved,
            unchanged => shown.unchanged,
            moved => shown.moved,
            moved_to => shown.to,
            at_latest => prompt.is_some(),
            kind => prompt.and_then(|p| p.default_prompt()).map(|p| if p.is_chat() { "chat" } else { "text" }),
            description => prompt.and_then(|p| p.description()),
            pins => super::page::data(&prompt.map(pins).unwrap_or_default()),
            model => prompt.and_then(model_settings),
            variables => super::page::data(&prompt.map(variables).unwrap_or_default()),
        },
    )
}

/// The oldest version of `id` in a run, up to the newest, whose default
/// no longer has the text of digest `translated` (what a stale variant
/// translates): the version after the newest one that still has it. `None`
/// when no version looked at (the newest [`STALE_LOOKBACK`]) has it.
async fn stale_since(
    state: &AppState,
    pack: &str,
    id: &str,
    log: &[promptreg_store::VersionInfo],
    translated: &str,
) -> Option<u64> {
    let mut newer = None;
    for version in log.iter().take(STALE_LOOKBACK) {
        let reference = promptreg_store::VersionRef::Number(version.number);
        let (_, files) = state.store.files(pack, id, &reference).await.ok()?;
        let default = files.get(&format!("defaults/{id}.md"))?;
        let source = std::str::from_utf8(default)
            .ok()
            .and_then(SourceText::of_file)?;
        if source.digest() == translated {
            return newer;
        }
        newer = Some(version.number);
    }
    None
}

/// How many versions back `stale_since` looks.
const STALE_LOOKBACK: usize = 50;

fn label_rows(
    log: &[promptreg_store::VersionInfo],
    protected: &std::collections::BTreeSet<String>,
    history: &[LabelMove],
    latest: Option<u64>,
    pack: &str,
) -> Vec<LabelRow> {
    let caller = visitor().map(|v| v.caller);
    let may = |scope| {
        caller
            .as_ref()
            .is_some_and(|c| c.require(pack, scope).is_ok())
    };
    let mut rows: Vec<LabelRow> = log
        .iter()
        .flat_map(|v| v.labels.iter().map(move |l| (l, v.number)))
        .filter(|(l, _)| *l != LATEST)
        .map(|(name, version)| {
            let is_protected = protected.contains(name);
            LabelRow {
                name: name.clone(),
                version,
                protected: is_protected,
                may_move: may(if is_protected {
                    Scope::Admin
                } else {
                    Scope::Write
                }),
                move_to: latest.filter(|l| *l != version),
                can_roll_back: history
                    .iter()
                    .rev()
                    .find(|m| m.label == *name)
                    .is_some_and(|m| m.from.is_some()),
            }
        })
        .collect();
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    rows
}

/// The pinned blocks: head and tail, as text or as template source.
fn pins(prompt: &PackPrompt) -> Vec<(&'static str, String)> {
    let Some(default) = prompt.default_prompt() else {
        return Vec::new();
    };
    let text = |r: &promptreg::Renderer| {
        r.as_text()
            .map(str::to_owned)
            .or_else(|| r.template_source())
            .unwrap_or_else(|| "(computed when rendered)".to_owned())
    };
    default
        .head()
        .iter()
        .map(|r| ("head", text(r)))
        .chain(default.tail().iter().map(|r| ("tail", text(r))))
        .collect()
}

/// The default's model settings, as indented JSON.
fn model_settings(prompt: &PackPrompt) -> Option<String> {
    let settings = prompt.default_prompt()?.model_settings()?;
    serde_json::to_string_pretty(&settings.to_value()).ok()
}

/// The template variables: name, type, required, default.
fn variables(prompt: &PackPrompt) -> Vec<(String, String, bool, String)> {
    prompt
        .variables()
        .iter()
        .map(|v| {
            (
                v.name.clone(),
                v.kind.map(|k| k.as_str().to_owned()).unwrap_or_default(),
                v.required,
                v.default
                    .as_ref()
                    .map(|d| d.to_string())
                    .unwrap_or_default(),
            )
        })
        .collect()
}
