//! Compare two versions or labels of a prompt: side by side per file
//! (per locale), per message for chat prompts, and the model settings.

use std::path::PathBuf;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Html;
use minijinja::context;
use promptreg::pack::Pack;
use promptreg_store::{Label, PackFiles, VersionRef};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::diff::{self, Row};
use super::packs::require_read;
use super::page::Path;
use super::page::{PageError, render};
use crate::extract::{PackName, PromptName, Query};
use crate::state::AppState;
use promptreg_store::file_locale;

/// The compare form's fields.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Which {
    from: Option<String>,
    to: Option<String>,
    locale: Option<String>,
}

/// A version as the page names it: `v3` (or `3`), or a label.
pub(crate) fn version_ref(text: &str) -> Result<VersionRef, PageError> {
    let text = text.trim();
    let number = text
        .strip_prefix('v')
        .filter(|n| n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty());
    Ok(number.unwrap_or(text).parse::<VersionRef>()?)
}

/// One file compared.
#[derive(Debug, Serialize)]
pub(crate) struct FileRows {
    pub(crate) path: String,
    pub(crate) locale: Option<String>,
    /// Whole-file rows (text prompts, and a chat file's front matter).
    pub(crate) rows: Vec<Row>,
    /// Per message, for chat files: the heading and its rows.
    pub(crate) messages: Vec<(String, Vec<Row>)>,
    pub(crate) changed: bool,
}

/// `GET /packs/{pack}/prompts/{id}/compare?from=A&to=B&locale=L`.
pub(crate) async fn show(
    State(state): State<AppState>,
    Path((pack, id)): Path<(PackName, PromptName)>,
    Query(which): Query<Which>,
) -> Result<Html<String>, PageError> {
    let (pack, id) = (pack.as_str(), id.as_str());
    require_read(pack)?;
    let latest = state
        .store
        .resolve(pack, id, &VersionRef::Label(Label::latest()))
        .await?;
    let from = which
        .from
        .clone()
        .filter(|f| !f.trim().is_empty())
        .unwrap_or_else(|| format!("v{}", latest.saturating_sub(1).max(1)));
    let to = which
        .to
        .clone()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| format!("v{latest}"));
    let locale = which.locale.clone().unwrap_or_default();
    let (a, a_files) = state.store.files(pack, id, &version_ref(&from)?).await?;
    let (b, b_files) = state.store.files(pack, id, &version_ref(&to)?).await?;
    let chat = is_chat(&state, pack, id, &b_files).await;
    let files = compare_files(id, &a_files, &b_files, locale.trim(), chat);
    if files.is_empty() {
        return Err(PageError::new(
            StatusCode::NOT_FOUND,
            format!(
                "`{id}` has no file for locale `{}` in v{a} or v{b}",
                locale.trim()
            ),
        ));
    }
    let model = model_changes(
        model_of(&state, pack, id, &a_files).await,
        model_of(&state, pack, id, &b_files).await,
    );
    let (va, vb) = (VersionRef::Number(a), VersionRef::Number(b));
    let contract: Vec<(bool, String)> = state
        .store
        .contract_changes(pack, id, &va, &vb)
        .await?
        .iter()
        .map(|c| (c.breaking, c.to_string()))
        .collect();
    render(
        "compare.html",
        context! {
            pack, id, from, to, locale, a, b, chat,
            files => super::page::data(&files), model => super::page::data(&model),
            contract => super::page::data(&contract),
        },
    )
}

/// Every file of either version (of `locale` only, when given), compared.
pub(crate) fn compare_files(
    id: &str,
    old: &PackFiles,
    new: &PackFiles,
    locale: &str,
    chat: bool,
) -> Vec<FileRows> {
    let mut paths: Vec<&str> = old.iter().chain(new.iter()).map(|(p, _)| p).collect();
    paths.sort_unstable();
    paths.dedup();
    paths
        .into_iter()
        .map(|path| (path, file_locale(id, path).map(|l| l.to_string())))
        .filter(|(_, l)| {
            locale.is_empty()
                || l.as_deref().is_some_and(|l| l.eq_ignore_ascii_case(locale))
                || (locale == "default" && l.is_none())
        })
        .map(|(path, locale)| {
            let text = |files: &PackFiles| {
                String::from_utf8_lossy(files.get(path).unwrap_or_default()).into_owned()
            };
            let (o, n) = (text(old), text(new));
            file_rows(path, locale, &o, &n, chat)
        })
        .collect()
}

fn file_rows(path: &str, locale: Option<String>, old: &str, new: &str, chat: bool) -> FileRows {
    let changed = old != new;
    if !chat {
        return FileRows {
            path: path.to_owned(),
            locale,
            rows: diff::side_by_side(old, new),
            messages: Vec::new(),
            changed,
        };
    }
    let (old_messages, new_messages) = (diff::messages(old), diff::messages(new));
    let count = old_messages.len().max(new_messages.len());
    let messages = (0..count)
        .map(|i| {
            let (o, n) = (old_messages.get(i), new_messages.get(i));
            let heading = match (o, n) {
                (Some((a, _)), Some((b, _))) if a != b => format!("message {}: {a} → {b}", i + 1),
                (_, Some((b, _))) => format!("message {}: {b}", i + 1),
                (Some((a, _)), None) => format!("message {}: {a} (removed)", i + 1),
                (None, None) => String::new(),
            };
            let text = |m: Option<&(String, String)>| m.map(|(_, t)| t.clone()).unwrap_or_default();
            (heading, diff::side_by_side(&text(o), &text(n)))
        })
        .collect();
    FileRows {
        path: path.to_owned(),
        locale,
        rows: diff::side_by_side(diff::front_matter(old), diff::front_matter(new)),
        messages,
        changed,
    }
}

/// The pack at `latest` with `files` in place of the prompt's files there.
pub(crate) async fn pack_with(
    state: &AppState,
    pack: &str,
    id: &str,
    files: &PackFiles,
) -> Result<Pack, PageError> {
    let latest = Label::latest();
    let base = state.store.checkout(pack, &latest).await?;
    let current = state
        .store
        .files(pack, id, &VersionRef::Label(latest.clone()))
        .await
        .map(|(_, f)| f)
        .unwrap_or_default();
    let mut merged: PackFiles = base
        .iter()
        .filter(|(p, _)| current.get(p).is_none())
        .map(|(p, b)| (p.to_owned(), b.to_vec()))
        .collect();
    for (path, bytes) in files.iter() {
        merged.insert(path, bytes);
    }
    let root = PathBuf::from(format!("{}#{pack}@{latest}", state.store.location()));
    Ok(merged.to_pack(root)?)
}

async fn is_chat(state: &AppState, pack: &str, id: &str, files: &PackFiles) -> bool {
    pack_with(state, pack, id, files)
        .await
        .ok()
        .and_then(|p| Some(p.prompt(id)?.default_prompt()?.is_chat()))
        .unwrap_or(false)
}

async fn model_of(state: &AppState, pack: &str, id: &str, files: &PackFiles) -> Value {
    pack_with(state, pack, id, files)
        .await
        .ok()
        .and_then(|p| Some(p.prompt(id)?.default_prompt()?.model_settings()?.to_value()))
        .unwrap_or(Value::Null)
}

/// The model settings that differ: key, old value, new value.
fn model_changes(old: Value, new: Value) -> Vec<(String, String, String)> {
    let (old, new) = (
        old.as_object().cloned().unwrap_or_default(),
        new.as_object().cloned().unwrap_or_default(),
    );
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    let shown = |v: Option<&Value>| {
        v.map(Value::to_string)
            .unwrap_or_else(|| "(none)".to_owned())
    };
    keys.into_iter()
        .filter(|k| old.get(*k) != new.get(*k))
        .map(|k| (k.clone(), shown(old.get(k)), shown(new.get(k))))
        .collect()
}
