//! Edit a prompt: one text area per file at `latest`, `check`'s
//! diagnostics at their line, save as a new version; a stale edit (a
//! version saved since the edit began) is a conflict shown with its diff.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use minijinja::context;
use promptreg::Diagnostic;
use promptreg_store::{ErrorKind, Label, PackFiles, VersionRef};
use serde::Serialize;

use super::compare::compare_files;
use super::form::{Fields, MAX_FIELD, too_large};
use super::packs::require_read;
use super::page::Path;
use super::page::{PageError, require_write, see_other, visitor, with_status};
use crate::actions::{prompt_file_path, save_version};
use crate::extract::{PackName, PromptName};
use crate::state::AppState;

/// The longest commit message accepted.
const MAX_MESSAGE: usize = 4096;

/// One file in the editor, with the diagnostics that fall in it.
#[derive(Debug, Serialize)]
struct FileView {
    path: String,
    text: String,
    /// Numbered lines, with whether a diagnostic points at each.
    lines: Vec<(usize, String, bool)>,
}

/// A diagnostic as the page lists it.
#[derive(Debug, Serialize)]
struct Finding {
    path: Option<String>,
    line: Option<usize>,
    column: Option<usize>,
    message: String,
    suggestion: Option<String>,
    error: bool,
}

/// `GET /packs/{pack}/prompts/{id}/edit`.
pub(crate) async fn show(
    State(state): State<AppState>,
    Path((pack, id)): Path<(PackName, PromptName)>,
) -> Result<Response, PageError> {
    let (pack, id) = (pack.as_str(), id.as_str());
    require_read(pack)?;
    require_write(&caller()?, pack)?;
    let (base, files) = state
        .store
        .files(pack, id, &VersionRef::Label(Label::latest()))
        .await?;
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(p, b)| (p.to_owned(), String::from_utf8_lossy(b).into_owned()))
        .collect();
    Ok(editor(
        StatusCode::OK,
        pack,
        id,
        base,
        &files,
        "",
        &[],
        None,
    ))
}

/// `POST …/edit`: `action=check` or `action=save`.
pub(crate) async fn submit(
    State(state): State<AppState>,
    Path((pack, id)): Path<(PackName, PromptName)>,
    fields: Fields,
) -> Result<Response, PageError> {
    let (pack, id) = (pack.as_str(), id.as_str());
    fields.check_csrf()?;
    require_write(&caller()?, pack)?;
    fields.check_sizes()?;
    let message = fields.get("message");
    if message.len() > MAX_MESSAGE {
        return Err(too_large("Message", message.len()));
    }
    let base: u64 = fields.get("base").parse().map_err(|_| {
        PageError::new(
            StatusCode::BAD_REQUEST,
            "The form lacks the version the edit began from: open the editor again",
        )
    })?;
    let files: Vec<(String, String)> = fields
        .with_prefix("file:")
        .map(|(p, t)| Ok((prompt_file_path(id, p)?, t.replace("\r\n", "\n"))))
        .collect::<Result<_, crate::problem::Problem>>()?;
    if let Some((path, text)) = files.iter().find(|(_, t)| t.len() > MAX_FIELD) {
        return Err(too_large(path, text.len()));
    }
    let mut pack_files = PackFiles::default();
    for (path, text) in &files {
        pack_files.insert(path.clone(), text.clone());
    }
    if fields.get("action") == "add" {
        return Ok(with_locale_file(
            pack,
            id,
            base,
            files,
            message,
            fields.get("new_locale"),
        ));
    }
    if fields.get("action") == "check" {
        return Ok(
            match state.store.check_prompt(pack, id, &pack_files).await {
                Ok(()) => editor(
                    StatusCode::OK,
                    pack,
                    id,
                    base,
                    &files,
                    message,
                    &[],
                    Some("No problems found: the prompt passes check."),
                ),
                Err(e) => refused(pack, id, base, &files, message, e)?,
            },
        );
    }
    let latest = state
        .store
        .resolve(pack, id, &VersionRef::Label(Label::latest()))
        .await?;
    if latest != base {
        return stale(&state, pack, id, base, latest, &files, message).await;
    }
    // Checked first, so a failing save shows each diagnostic at its line.
    if let Err(e) = state.store.check_prompt(pack, id, &pack_files).await {
        return refused(pack, id, base, &files, message, e);
    }
    let created = save_version(&state, &caller()?, pack, id, files.clone(), message).await?;
    let outcome = if created.change == "unchanged" {
        "unchanged"
    } else {
        "saved"
    };
    Ok(see_other(&format!(
        "/packs/{pack}/prompts/{id}?{outcome}={}",
        created.version
    )))
}

/// The editor with one more file, `defaults/ID.TAG.md`, holding the
/// default's text to translate; nothing is saved until Save. A tag that
/// is not a locale, or a variant the prompt has, is said in the notice.
fn with_locale_file(
    pack: &str,
    id: &str,
    base: u64,
    mut files: Vec<(String, String)>,
    message: &str,
    tag: &str,
) -> Response {
    let shown = |files: &[(String, String)], notice: &str| {
        editor(
            StatusCode::OK,
            pack,
            id,
            base,
            files,
            message,
            &[],
            Some(notice),
        )
    };
    let locale = match promptreg::Locale::parse(tag) {
        Ok(locale) => locale,
        Err(e) => return shown(&files, &format!("Cannot add a locale file: {}", e.detail())),
    };
    let path = format!("defaults/{id}.{locale}.md");
    if files.iter().any(|(p, _)| *p == path) {
        return shown(&files, &format!("{path} is in the editor already"));
    }
    let default_path = format!("defaults/{id}.md");
    let text = files
        .iter()
        .find(|(p, _)| *p == default_path)
        .map(|(_, t)| t.clone())
        .unwrap_or_default();
    files.push((path.clone(), text));
    let mut notice = format!("Added {path} with the default's text: translate it, then Save");
    if let Some(warning) = locale.unknown_language_warning("the new file's locale") {
        notice.push_str(&format!(" (note: {warning})"));
    }
    shown(&files, &notice)
}

fn caller() -> Result<crate::auth::Caller, PageError> {
    visitor()
        .map(|v| v.caller)
        .ok_or_else(|| PageError::new(StatusCode::UNAUTHORIZED, "Sign in first"))
}

/// The check failed: the editor again, 422, with every diagnostic.
fn refused(
    pack: &str,
    id: &str,
    base: u64,
    files: &[(String, String)],
    message: &str,
    e: promptreg_store::Error,
) -> Result<Response, PageError> {
    if e.kind() != ErrorKind::InvalidPack {
        return Err(e.into());
    }
    Ok(shown_with(
        pack,
        id,
        base,
        files,
        message,
        e.diagnostics(),
        e.detail(),
    ))
}

fn shown_with(
    pack: &str,
    id: &str,
    base: u64,
    files: &[(String, String)],
    message: &str,
    diagnostics: &[Diagnostic],
    detail: &str,
) -> Response {
    let summary = if diagnostics.is_empty() {
        Some(detail)
    } else {
        None
    };
    editor(
        StatusCode::UNPROCESSABLE_ENTITY,
        pack,
        id,
        base,
        files,
        message,
        diagnostics,
        summary,
    )
}

/// A stale edit: 409, naming the version saved meanwhile, with its diff.
async fn stale(
    state: &AppState,
    pack: &str,
    id: &str,
    base: u64,
    latest: u64,
    files: &[(String, String)],
    message: &str,
) -> Result<Response, PageError> {
    let (_, old) = state
        .store
        .files(pack, id, &VersionRef::Number(base))
        .await?;
    let (_, new) = state
        .store
        .files(pack, id, &VersionRef::Number(latest))
        .await?;
    let theirs = compare_files(id, &old, &new, "", false);
    let views = file_views(files, &[]);
    Ok(with_status(
        StatusCode::CONFLICT,
        "edit.html",
        context! { pack, id, base => latest, message, conflict => latest, began => base, files => super::page::data(&views), theirs => super::page::data(&theirs) },
    ))
}

/// The editor page.
#[allow(clippy::too_many_arguments)]
fn editor(
    status: StatusCode,
    pack: &str,
    id: &str,
    base: u64,
    files: &[(String, String)],
    message: &str,
    diagnostics: &[Diagnostic],
    notice: Option<&str>,
) -> Response {
    let findings: Vec<Finding> = diagnostics.iter().map(|d| finding(d, files)).collect();
    let views = file_views(files, &findings);
    with_status(status, "edit.html", context! { pack, id, base, message, notice, files => super::page::data(&views), findings => super::page::data(&findings) }).into_response()
}

fn finding(d: &Diagnostic, files: &[(String, String)]) -> Finding {
    let shown = d.file.as_ref().map(|f| f.to_string_lossy().into_owned());
    let path = shown.as_deref().and_then(|f| {
        files
            .iter()
            .find(|(p, _)| f.ends_with(p.as_str()))
            .map(|(p, _)| p.clone())
    });
    Finding {
        path: path.or(shown),
        line: d.position.map(|p| p.line),
        column: d.position.map(|p| p.column),
        message: d.message.clone(),
        suggestion: d.suggestion.clone(),
        error: d.is_error(),
    }
}

fn file_views(files: &[(String, String)], findings: &[Finding]) -> Vec<FileView> {
    // The default file first, then the locale variants by name: of one
    // prompt's files, the default's name has the fewest dots.
    let mut files: Vec<&(String, String)> = files.iter().collect();
    files.sort_by_key(|(path, _)| (path.matches('.').count(), path.clone()));
    files
        .into_iter()
        .map(|(path, text)| {
            let marked = |n: usize| {
                findings
                    .iter()
                    .any(|f| f.path.as_deref() == Some(path) && f.line == Some(n))
            };
            FileView {
                path: path.clone(),
                text: text.clone(),
                lines: text
                    .lines()
                    .enumerate()
                    .map(|(i, l)| (i + 1, l.to_owned(), marked(i + 1)))
                    .collect(),
            }
        })
        .collect()
}
