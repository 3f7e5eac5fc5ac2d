//! The list of packs, a pack's prompts (grouped by id prefix, filtered),
//! and its label history.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::response::Html;
use minijinja::context;
use promptreg::l10n::Status;
use promptreg_store::{Label, LabelMove, Scope, is_pack_level};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::page::Path;
use super::page::{PageError, render, visitor};
use crate::body::TranslationStatus;
use crate::cache::Cached;
use crate::extract::{PackName, Query};
use crate::state::AppState;

/// A cached JSON document, read back.
pub(crate) fn json(cached: &Cached) -> Value {
    serde_json::from_slice(&cached.body).unwrap_or_default()
}

/// `GET /`: the packs the visitor may read.
pub(crate) async fn index(State(state): State<AppState>) -> Result<Html<String>, PageError> {
    let only = visitor().and_then(|v| v.caller.pack_filter());
    let packs: Vec<String> = json(&*state.cache.packs().await?)["packs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|p| only.as_deref().is_none_or(|only| only == *p))
        .map(str::to_owned)
        .collect();
    render("packs.html", context! { packs })
}

/// The list's filters, from the GET form.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Filter {
    #[serde(default)]
    q: String,
    #[serde(default)]
    label: String,
    #[serde(default)]
    locale: String,
}

/// One row of the prompt list.
#[derive(Debug, Serialize)]
struct Row {
    id: String,
    kind: &'static str,
    description: Option<String>,
    labels: BTreeMap<String, u64>,
    locales: Vec<String>,
    /// Of those, the variants translated from an older default.
    stale: Vec<String>,
}

/// `GET /packs/{pack}`: the prompts, grouped by the part of the id before
/// its first `-`.
pub(crate) async fn prompts(
    State(state): State<AppState>,
    Path(pack): Path<PackName>,
    Query(filter): Query<Filter>,
) -> Result<Html<String>, PageError> {
    let pack = pack.as_str();
    require_read(pack)?;
    let listing = json(&*state.cache.listing(pack).await?);
    let latest = state.cache.label(pack, &Label::latest()).await?;
    let renderer = latest.renderer_in(&state.heavy).await?;
    let rows: Vec<Row> = listing["prompts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| !p["id"].as_str().is_some_and(is_pack_level))
        .map(|p| row(p, &renderer.pack))
        .filter(|r| filter.keeps(r))
        .collect();
    let mut groups: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for row in rows {
        groups.entry(group_of(&row.id)).or_default().push(row);
    }
    let groups: Vec<(String, Vec<Row>)> = groups.into_iter().collect();
    let labels: Vec<String> = all_labels(&listing);
    let coverage = TranslationStatus::from(&Status::of(&renderer.pack, &renderer.registry, &[]));
    render(
        "prompts.html",
        context! {
            pack, labels,
            coverage => super::page::data(&coverage.locales),
            groups => super::page::data(&groups),
            protected => super::page::data(&listing["protected"]),
            filter => context! { q => filter.q, label => filter.label, locale => filter.locale },
        },
    )
}

fn row(summary: &Value, pack: &promptreg::pack::Pack) -> Row {
    let id = summary["id"].as_str().unwrap_or_default().to_owned();
    let prompt = pack.prompt(&id);
    let chat = prompt
        .and_then(|p| p.default_prompt())
        .is_some_and(|p| p.is_chat());
    let locales: Vec<String> =
        serde_json::from_value(summary["locales"].clone()).unwrap_or_default();
    let stale = locales
        .iter()
        .filter(|tag| {
            let translation = promptreg::Locale::parse(tag)
                .ok()
                .and_then(|l| prompt?.translation(&l).cloned());
            translation.is_some_and(|t| t.is_stale())
        })
        .cloned()
        .collect();
    Row {
        kind: if chat { "chat" } else { "text" },
        stale,
        description: prompt.and_then(|p| p.description()).map(str::to_owned),
        labels: serde_json::from_value(summary["labels"].clone()).unwrap_or_default(),
        locales,
        id,
    }
}

/// `webagent-` for `webagent-cot.system`; `other` for ids without `-`.
pub(crate) fn group_of(id: &str) -> String {
    match id.split_once('-') {
        Some((prefix, _)) => format!("{prefix}-"),
        None => "other".to_owned(),
    }
}

fn all_labels(listing: &Value) -> Vec<String> {
    let mut labels: Vec<String> = listing["prompts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["labels"].as_object())
        .flat_map(|l| l.keys().cloned())
        .collect();
    labels.sort();
    labels.dedup();
    labels
}

impl Filter {
    fn keeps(&self, row: &Row) -> bool {
        let text = self.q.trim().to_lowercase();
        let matches_text = text.is_empty()
            || row.id.to_lowercase().contains(&text)
            || row
                .description
                .as_deref()
                .is_some_and(|d| d.to_lowercase().contains(&text));
        let label = self.label.trim();
        let locale = self.locale.trim();
        matches_text
            && (label.is_empty() || row.labels.contains_key(label))
            && (locale.is_empty() || row.locales.iter().any(|l| l.eq_ignore_ascii_case(locale)))
    }
}

/// Refuses a visitor whose key does not reach `pack`.
pub(crate) fn require_read(pack: &str) -> Result<(), PageError> {
    if let Some(v) = visitor() {
        v.caller.require(pack, Scope::Read)?;
    }
    Ok(())
}

/// One row of the label history.
#[derive(Debug, Clone, Serialize)]
struct HistoryRow {
    time: String,
    label: String,
    prompt: String,
    from: Option<u64>,
    to: Option<u64>,
    actor: String,
    reason: String,
    /// The label's revision the change made.
    revision: Option<u64>,
    /// For a change of several entries (a release, a push, a pack
    /// rollback): every move it made (this row stands for them all).
    moves: Vec<HistoryRow>,
}

impl HistoryRow {
    fn of(m: &LabelMove) -> Self {
        HistoryRow {
            time: m.at.to_string(),
            label: m.label.clone(),
            prompt: m.prompt.clone(),
            from: m.from,
            to: m.to,
            actor: m.actor.clone(),
            reason: m.reason.clone(),
            revision: m.revision,
            moves: Vec::new(),
        }
    }
}

/// `GET /packs/{pack}/history`: every label move, newest first, a
/// revision at a time.
pub(crate) async fn history(
    State(state): State<AppState>,
    Path(pack): Path<PackName>,
) -> Result<Html<String>, PageError> {
    let pack = pack.as_str();
    require_read(pack)?;
    let moves = state.store.history(pack, None).await?;
    let rows = by_revision(&moves);
    render(
        "history.html",
        context! { pack, rows => super::page::data(&rows) },
    )
}

/// The moves (oldest first) as rows, newest first: the moves of one
/// revision of a label (one change, in one transaction) folded into one.
fn by_revision(moves: &[LabelMove]) -> Vec<HistoryRow> {
    moves
        .chunk_by(LabelMove::same_change)
        .rev()
        .map(|change| match change {
            [one] => HistoryRow::of(one),
            _ => HistoryRow {
                moves: change.iter().map(HistoryRow::of).collect(),
                ..HistoryRow::of(&change[0])
            },
        })
        .collect()
}
