//! The `/v1` routes: reads from the cache, writes through the store.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use promptreg::Locale;
use promptreg_store::{Change, Label, PackFiles, Scope, VersionRef};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::auth::Caller;
use crate::body::{
    Created, DiffResponse, ExplainResponse, Health, MoveLabel, Moves, NewVersion, Release,
    RenderRequest, RenderResponse, Rollback, VersionList, VersionSummary,
};
use crate::cache::{Cached, Renderer};
use crate::extract::{JsonBody, Path, Query, label, pack_name, prompt_id, shown};
use crate::problem::{Problem, ProblemDetails};
use crate::serve::AppState;

/// A cached document, or `304 Not Modified` when the client has it.
fn conditional(headers: &HeaderMap, cached: &Cached) -> Response {
    let etag = HeaderValue::from_str(&cached.etag).unwrap_or(HeaderValue::from_static("\"\""));
    if if_none_match(headers, &cached.etag) {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response();
    }
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::ETAG, etag),
            // Clients may keep it, but must ask (cheaply, with the ETag) before using it.
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        cached.body.clone(),
    )
        .into_response()
}

/// Whether `If-None-Match` names `etag` (weak comparison, as RFC 9110
/// says for this header) or is `*`.
fn if_none_match(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|tag| tag.trim())
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

/// The entity tags of `If-Match`: `None` when absent, `Some([])` for `*`.
fn if_match(headers: &HeaderMap) -> Option<Vec<String>> {
    let values: Vec<&str> = headers
        .get_all(header::IF_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if values.is_empty() {
        return None;
    }
    let tags: Vec<String> = values
        .iter()
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_owned())
        .collect();
    if tags.iter().any(|t| t == "*") {
        return Some(Vec::new());
    }
    Some(tags)
}

/// `GET /v1/packs`.
#[utoipa::path(
    get, path = "/v1/packs", tag = "packs",
    responses(
        (status = 200, description = "The packs in the store", body = crate::body::PackList,
            headers(("ETag" = String, description = "Strong entity tag"))),
        (status = 304, description = "Not modified"),
        crate::responses::KeyOrStore,
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn list_packs(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let all = state.cache.packs().await?;
    match caller.pack_filter() {
        None => Ok(conditional(&headers, &all)),
        Some(only) => {
            let list: crate::body::PackList =
                serde_json::from_slice::<serde_json::Value>(&all.body)
                    .ok()
                    .map(|v| crate::body::PackList {
                        packs: v["packs"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|p| p.as_str())
                            .filter(|p| *p == only)
                            .map(str::to_owned)
                            .collect(),
                    })
                    .unwrap_or(crate::body::PackList { packs: Vec::new() });
            Ok(Json(list).into_response())
        }
    }
}

/// `GET /v1/packs/{pack}/prompts`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/prompts", tag = "packs",
    params(("pack" = String, Path, description = "The pack's name")),
    responses(
        (status = 200, description = "Every prompt with its labels, versions, locales and kind", body = crate::body::PromptList,
            headers(("ETag" = String, description = "Strong entity tag"))),
        (status = 304, description = "Not modified"),
        (status = 400, description = "Invalid pack name", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn list_prompts(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(pack): Path<String>,
) -> Result<Response, Problem> {
    let pack = pack_name(&pack)?;
    caller.require(pack, Scope::Read)?;
    let listing = state.cache.listing(pack).await?;
    Ok(conditional(&headers, &listing))
}

/// Which version of a prompt: a label (default `production`) or a number.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct Which {
    /// A label; `production` when neither is given.
    label: Option<String>,
    /// A version number.
    version: Option<u64>,
}

impl Which {
    fn version(&self) -> Result<VersionRef, Problem> {
        match (&self.label, self.version) {
            (Some(_), Some(_)) => Err(Problem::bad_request(
                "invalid-query",
                "give `label` or `version`, not both",
            )),
            (_, Some(0)) => Err(Problem::bad_request(
                "invalid-version",
                "versions are numbered from 1",
            )),
            (_, Some(n)) => Ok(VersionRef::Number(n)),
            (Some(l), None) => Ok(VersionRef::Label(label(l)?)),
            (None, None) => Ok(VersionRef::Label(label("production")?)),
        }
    }
}

/// `GET /v1/packs/{pack}/prompts/{id}`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/prompts/{id}", tag = "prompts",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("id" = String, Path, description = "The prompt id (`@pack`: the manifest)"),
        Which,
        ("If-None-Match" = Option<String>, Header, description = "The ETag the client holds"),
    ),
    responses(
        (status = 200, description = "The prompt's files at that version", body = crate::body::PromptVersion,
            headers(("ETag" = String, description = "The version's content digest, quoted"))),
        (status = 304, description = "The client's copy is current"),
        (status = 400, description = "Invalid pack, id, label or version", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack, prompt, label or version", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn get_prompt(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path((pack, id)): Path<(String, String)>,
    Query(which): Query<Which>,
) -> Result<Response, Problem> {
    let (pack, id) = (pack_name(&pack)?, prompt_id(&id)?);
    let version = which.version()?;
    caller.require(pack, Scope::Read)?;
    let cached = state.cache.version(pack, id, &version).await?;
    Ok(conditional(&headers, &cached))
}

/// `GET /v1/packs/{pack}/labels/{label}`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/labels/{label}", tag = "packs",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("label" = String, Path, description = "The label"),
        ("If-None-Match" = Option<String>, Header, description = "The ETag the client holds"),
    ),
    responses(
        (status = 200, description = "Every entry of the pack at the label, with its files and version", body = crate::body::Bundle,
            headers(("ETag" = String, description = "A digest of every entry's digest"))),
        (status = 304, description = "The client's copy is current"),
        (status = 400, description = "Invalid pack or label", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack, or no manifest at that label", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn get_bundle(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path((pack, name)): Path<(String, String)>,
) -> Result<Response, Problem> {
    let (pack, name) = (pack_name(&pack)?, label(&name)?);
    caller.require(pack, Scope::Read)?;
    let view = state.cache.label(pack, &name).await?;
    Ok(conditional(&headers, &view.bundle))
}

/// `GET /v1/packs/{pack}/prompts/{id}/versions`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/prompts/{id}/versions", tag = "prompts",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("id" = String, Path, description = "The prompt id"),
    ),
    responses(
        (status = 200, description = "The versions, newest first", body = VersionList),
        (status = 400, description = "Invalid pack or id", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack or prompt", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn list_versions(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, id)): Path<(String, String)>,
) -> Result<Json<VersionList>, Problem> {
    let (pack, id) = (pack_name(&pack)?, prompt_id(&id)?);
    caller.require(pack, Scope::Read)?;
    let versions = state.store.log(pack, id).await?;
    Ok(Json(VersionList {
        pack: pack.to_owned(),
        id: id.to_owned(),
        versions: versions.iter().map(VersionSummary::from).collect(),
    }))
}

/// `POST /v1/packs/{pack}/prompts/{id}/versions`.
#[utoipa::path(
    post, path = "/v1/packs/{pack}/prompts/{id}/versions", tag = "prompts",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("id" = String, Path, description = "The prompt id"),
    ),
    request_body = NewVersion,
    responses(
        (status = 201, description = "A new version (or earlier content restored); `latest` points at it", body = Created,
            headers(("Location" = String, description = "The version's URL"))),
        (status = 200, description = "The same content as `latest`: nothing written", body = Created),
        (status = 400, description = "Malformed JSON, unknown fields, or an invalid pack, id or file path", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key cannot write to this pack", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No such pack, or the manifest does not declare the prompt", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
        (status = 422, description = "The prompt fails `check` (`invalid-pack`: every diagnostic), or has more files than the server's limits (`too-many-files`)", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn create_version(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, id)): Path<(String, String)>,
    JsonBody(new): JsonBody<NewVersion>,
) -> Result<Response, Problem> {
    let (pack, id) = (pack_name(&pack)?, prompt_id(&id)?);
    let created = save_version(&state, &caller, pack, id, new.files, &new.message).await?;
    if created.change == Change::Unchanged.as_str() {
        return Ok(Json(created).into_response());
    }
    let location = format!("/v1/packs/{pack}/prompts/{id}?version={}", created.version);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(created),
    )
        .into_response())
}

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
                "invalid-file-path",
                format!(
                    "`{}` is not a file of prompt `{id}`: its files are `defaults/{id}.md` and `defaults/{id}.<locale>.md`",
                    shown(path, 200)
                ),
            )
        })?;
    Ok(format!("defaults/{name}"))
}

/// `PUT /v1/packs/{pack}/prompts/{id}/labels/{label}`.
#[utoipa::path(
    put, path = "/v1/packs/{pack}/prompts/{id}/labels/{label}", tag = "labels",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("id" = String, Path, description = "The prompt id (`@pack`: the manifest)"),
        ("label" = String, Path, description = "The label to move"),
        ("If-Match" = Option<String>, Header, description = "The ETag of the version the label points at now (from `GET …/prompts/{id}?label=…`), or `*`"),
        ("If-None-Match" = Option<String>, Header, description = "`*`: create the label, which must not exist yet"),
    ),
    request_body = MoveLabel,
    responses(
        (status = 200, description = "The label moved; the move is in the history", body = crate::body::Move,
            headers(("ETag" = String, description = "The ETag of the version it points at now"))),
        (status = 400, description = "Invalid input", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key cannot write, or the label is protected and the key is not admin", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No such pack, prompt or version", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 412, description = "The label points elsewhere now: `current` names its version", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
        (status = 428, description = "Neither If-Match nor If-None-Match", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn move_label(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path((pack, id, name)): Path<(String, String, String)>,
    JsonBody(request): JsonBody<MoveLabel>,
) -> Result<Response, Problem> {
    let (pack, id, name) = (pack_name(&pack)?, prompt_id(&id)?, label(&name)?);
    caller.require(pack, Scope::Write)?;
    let expect = expected_version(&state, &headers, pack, id, &name).await?;
    let target = Target {
        label: &name,
        to: request.version,
        expect,
    };
    let moved = move_to(&state, &caller, pack, id, target, &request.reason).await?;
    let now = state
        .cache
        .version(pack, id, &VersionRef::Number(request.version))
        .await?;
    let etag = HeaderValue::from_str(&now.etag).unwrap_or(HeaderValue::from_static("\"\""));
    Ok((
        [(header::ETAG, etag)],
        Json(crate::body::Move::from(&moved)),
    )
        .into_response())
}

/// Where a label moves, from where.
pub(crate) struct Target<'a> {
    pub(crate) label: &'a Label,
    pub(crate) to: u64,
    /// The version it must point at now (`None`: it must not exist).
    pub(crate) expect: Option<u64>,
}

/// Moves a label as `PUT …/labels/{label}` and the web page do: 412 when
/// it no longer points at `expect`.
pub(crate) async fn move_to(
    state: &AppState,
    caller: &Caller,
    pack: &str,
    id: &str,
    target: Target<'_>,
    reason: &str,
) -> Result<promptreg_store::LabelMove, Problem> {
    caller.require(pack, Scope::Write)?;
    let moved = state
        .store
        .move_label(
            pack,
            id,
            target.label,
            target.to,
            target.expect,
            &caller.actor(),
            reason,
        )
        .await?;
    state.cache.invalidate(pack);
    Ok(moved)
}

/// The version the label must point at now, from `If-Match` (a version's
/// ETag, or `*`) or `If-None-Match: *` (none); 412 when it does not.
async fn expected_version(
    state: &AppState,
    headers: &HeaderMap,
    pack: &str,
    id: &str,
    name: &Label,
) -> Result<Option<u64>, Problem> {
    let creating = headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|v| v.as_bytes() == b"*");
    let tags = match (if_match(headers), creating) {
        (None, true) => return Ok(None),
        (Some(tags), false) => tags,
        (None, false) => {
            return Err(Problem::new(
                StatusCode::PRECONDITION_REQUIRED,
                "precondition-required",
                format!(
                    "moving label `{name}` needs `If-Match` with the ETag of the version it points at now (GET /v1/packs/{pack}/prompts/{id}?label={name}), or `If-None-Match: *` to create it"
                ),
            ));
        }
        (Some(_), true) => {
            return Err(Problem::bad_request(
                "invalid-precondition",
                "send `If-Match` or `If-None-Match: *`, not both",
            ));
        }
    };
    let current = match state
        .store
        .entry_version(pack, id, &VersionRef::Label(name.clone()))
        .await
    {
        Ok(current) => current,
        Err(e) if e.kind() == promptreg_store::ErrorKind::UnknownVersion => {
            return Err(precondition_failed(pack, id, name, None));
        }
        Err(e) => return Err(e.into()),
    };
    let quoted = format!("\"{}\"", current.digest);
    if tags.is_empty() || tags.contains(&quoted) {
        return Ok(Some(current.number));
    }
    Err(precondition_failed(
        pack,
        id,
        name,
        Some((current.number, &quoted)),
    ))
}

fn precondition_failed(
    pack: &str,
    id: &str,
    name: &Label,
    current: Option<(u64, &str)>,
) -> Problem {
    let detail = match current {
        Some((n, etag)) => format!(
            "label `{name}` of `{id}` in pack `{pack}` points at version {n} (ETag {etag}), not the version your If-Match names: someone moved it; read it again and retry"
        ),
        None => format!(
            "label `{name}` of `{id}` in pack `{pack}` points at no version: create it with `If-None-Match: *`"
        ),
    };
    Problem::new(StatusCode::PRECONDITION_FAILED, "conflict", detail)
        .with_current(serde_json::json!(current.map(|(n, _)| n)))
}

/// `POST /v1/packs/{pack}/prompts/{id}/labels/{label}/rollback`.
#[utoipa::path(
    post, path = "/v1/packs/{pack}/prompts/{id}/labels/{label}/rollback", tag = "labels",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("id" = String, Path, description = "The prompt id"),
        ("label" = String, Path, description = "The label to move back"),
    ),
    request_body(content = Option<Rollback>, description = "Optional (no body, or `null`): why, for the history"),
    responses(
        (status = 200, description = "The label is one step back in its history: where its newest move that no rollback undid took it from", body = crate::body::Move),
        (status = 400, description = "Invalid input", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key cannot write, or the label is protected and the key is not admin", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No such pack, prompt or label, or the label is back where it was created", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 412, description = "The label moved meanwhile", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn rollback(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, id, name)): Path<(String, String, String)>,
    request: Option<JsonBody<Option<Rollback>>>,
) -> Result<Json<crate::body::Move>, Problem> {
    let (pack, id, name) = (pack_name(&pack)?, prompt_id(&id)?, label(&name)?);
    let reason = request
        .and_then(|JsonBody(r)| r)
        .map(|r| r.reason)
        .unwrap_or_default();
    let moved = roll_back(&state, &caller, pack, id, &name, &reason).await?;
    Ok(Json(crate::body::Move::from(&moved)))
}

/// Moves `name` back where its last move took it from, as `POST
/// …/rollback` and the web page do.
pub(crate) async fn roll_back(
    state: &AppState,
    caller: &Caller,
    pack: &str,
    id: &str,
    name: &Label,
    reason: &str,
) -> Result<promptreg_store::LabelMove, Problem> {
    caller.require(pack, Scope::Write)?;
    let moved = state
        .store
        .rollback(pack, id, name, &caller.actor(), reason)
        .await?;
    state.cache.invalidate(pack);
    Ok(moved)
}

/// `POST /v1/packs/{pack}/releases`.
#[utoipa::path(
    post, path = "/v1/packs/{pack}/releases", tag = "labels",
    params(("pack" = String, Path, description = "The pack's name")),
    request_body = Release,
    responses(
        (status = 200, description = "Every move of the release, made in one transaction", body = Moves),
        (status = 400, description = "Invalid input", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key cannot write, or `to` is protected and the key is not admin", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No such pack", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 412, description = "A label moved meanwhile: nothing was released", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn release(
    State(state): State<AppState>,
    caller: Caller,
    Path(pack): Path<String>,
    JsonBody(request): JsonBody<Release>,
) -> Result<Json<Moves>, Problem> {
    let pack = pack_name(&pack)?;
    let (from, to) = (label(&request.from)?, label(&request.to)?);
    caller.require(pack, Scope::Write)?;
    let moves = state
        .store
        .release(pack, &from, &to, &caller.actor(), &request.reason)
        .await?;
    state.cache.invalidate(pack);
    Ok(Json(Moves::of(&moves)))
}

/// `GET /v1/packs/{pack}/history`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/history", tag = "labels",
    params(("pack" = String, Path, description = "The pack's name")),
    responses(
        (status = 200, description = "Every label move of the pack, oldest first", body = Moves),
        (status = 400, description = "Invalid pack name", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn pack_history(
    State(state): State<AppState>,
    caller: Caller,
    Path(pack): Path<String>,
) -> Result<Json<Moves>, Problem> {
    let pack = pack_name(&pack)?;
    caller.require(pack, Scope::Read)?;
    let moves = state.store.history(pack, None).await?;
    Ok(Json(Moves::of(&moves)))
}

/// `GET /v1/packs/{pack}/prompts/{id}/history`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/prompts/{id}/history", tag = "labels",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("id" = String, Path, description = "The prompt id"),
    ),
    responses(
        (status = 200, description = "Every label move of the prompt, oldest first", body = Moves),
        (status = 400, description = "Invalid pack or id", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack or prompt", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn prompt_history(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, id)): Path<(String, String)>,
) -> Result<Json<Moves>, Problem> {
    let (pack, id) = (pack_name(&pack)?, prompt_id(&id)?);
    caller.require(pack, Scope::Read)?;
    let moves = state.store.history(pack, Some(id)).await?;
    Ok(Json(Moves::of(&moves)))
}

/// The renderer of the label asked for (built off the async workers),
/// and the locale.
async fn renderer_for(
    state: &AppState,
    pack: &str,
    request: &RenderRequest,
) -> Result<(Renderer, Locale), Problem> {
    let name = label(&request.label)?;
    let view = state.cache.label(pack, &name).await?;
    let renderer = view.renderer_in(&state.heavy).await?;
    let locale = match &request.locale {
        Some(tag) => Locale::parse(tag)?,
        None => renderer.0.default_locale().clone(),
    };
    Ok((renderer, locale))
}

/// `POST /v1/packs/{pack}/prompts/{id}/render`.
#[utoipa::path(
    post, path = "/v1/packs/{pack}/prompts/{id}/render", tag = "render",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("id" = String, Path, description = "The prompt id"),
    ),
    request_body = RenderRequest,
    responses(
        (status = 200, description = "The text the application sends", body = RenderResponse),
        (status = 400, description = "Invalid input", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack, label or prompt", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
        (status = 422, description = "The render failed (a template error, a variable of the wrong type)", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn render(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, id)): Path<(String, String)>,
    JsonBody(request): JsonBody<RenderRequest>,
) -> Result<Json<RenderResponse>, Problem> {
    let (pack, id) = (pack_name(&pack)?, prompt_id(&id)?);
    caller.require(pack, Scope::Read)?;
    let (renderer, locale) = renderer_for(&state, pack, &request).await?;
    let id = id.to_owned();
    // A render's cost grows with its prompt, its templates and its
    // context: it runs off the async workers too.
    state
        .heavy
        .run(move || rendered(&renderer.1, id, request, locale))
        .await?
        .map(Json)
}

/// The response to `POST …/render`: text, and messages for a chat prompt.
fn rendered(
    registry: &promptreg::PromptRegistry,
    id: String,
    request: RenderRequest,
    locale: Locale,
) -> Result<RenderResponse, Problem> {
    let (text, messages) = if registry.snapshot().is_chat(&id, &locale)? {
        let messages =
            registry.render_messages_in(&id, &request.context, &locale, &request.histories())?;
        let text =
            promptreg::messages_as_text(messages.iter().map(|m| (&m.role, m.content.as_str())));
        (text, Some(messages))
    } else {
        (registry.render_in(&id, &request.context, &locale)?, None)
    };
    let model = registry
        .model_settings_in(&id, &locale)
        .ok()
        .flatten()
        .map(|m| m.to_value());
    let warnings = locale_warnings(&request, &locale);
    Ok(RenderResponse {
        id,
        label: request.label,
        warnings,
        locale: locale.as_str().to_owned(),
        text,
        messages,
        model,
    })
}

/// The warnings of a render request: its `locale` when it names no known
/// language.
fn locale_warnings(request: &RenderRequest, locale: &Locale) -> Vec<String> {
    request
        .locale
        .as_ref()
        .and_then(|_| locale.unknown_language_warning("the request's `locale`"))
        .into_iter()
        .collect()
}

/// `POST /v1/packs/{pack}/prompts/{id}/explain`.
#[utoipa::path(
    post, path = "/v1/packs/{pack}/prompts/{id}/explain", tag = "render",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("id" = String, Path, description = "The prompt id"),
    ),
    request_body = RenderRequest,
    responses(
        (status = 200, description = "The text, the locale lookup, and every part with its origin", body = ExplainResponse),
        (status = 400, description = "Invalid input", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack, label or prompt", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
        (status = 422, description = "The render failed", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn explain(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, id)): Path<(String, String)>,
    JsonBody(request): JsonBody<RenderRequest>,
) -> Result<Json<ExplainResponse>, Problem> {
    let (pack, id) = (pack_name(&pack)?, prompt_id(&id)?);
    caller.require(pack, Scope::Read)?;
    let (renderer, locale) = renderer_for(&state, pack, &request).await?;
    let id = id.to_owned();
    state
        .heavy
        .run(move || {
            let rendered = match explained(&renderer.1, &id, &request, &locale)? {
                Explained::Chat(chat) => serde_json::to_value(&chat),
                Explained::Text(text) => serde_json::to_value(&text),
            };
            Ok(Json(ExplainResponse {
                warnings: locale_warnings(&request, &locale),
                label: request.label,
                rendered: rendered.unwrap_or_default(),
            }))
        })
        .await?
}

/// A render with the origin of every part: text, or chat messages.
pub(crate) enum Explained {
    Text(promptreg::Rendered),
    Chat(promptreg::RenderedChat),
}

/// Renders `id` with its trace, as `POST …/explain` and the web page's
/// playground do.
pub(crate) fn explained(
    registry: &promptreg::PromptRegistry,
    id: &str,
    request: &RenderRequest,
    locale: &Locale,
) -> Result<Explained, Problem> {
    if registry.snapshot().is_chat(id, locale)? {
        let chat = registry.render_messages_traced_in(
            id,
            &request.context,
            locale,
            &request.histories(),
        )?;
        return Ok(Explained::Chat(chat));
    }
    Ok(Explained::Text(registry.render_traced_in(
        id,
        &request.context,
        locale,
    )?))
}

/// The two versions to compare, and a locale to keep to.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct DiffQuery {
    /// A version number or a label.
    from: String,
    /// A version number or a label.
    to: String,
    /// Only the file of this locale (the default file has none).
    locale: Option<String>,
}

/// `GET /v1/packs/{pack}/prompts/{id}/diff`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/prompts/{id}/diff", tag = "prompts",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("id" = String, Path, description = "The prompt id"),
        DiffQuery,
    ),
    responses(
        (status = 200, description = "A unified diff per file", body = DiffResponse),
        (status = 400, description = "Invalid input", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack, prompt, version or label, or no file of that locale", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn diff(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, id)): Path<(String, String)>,
    Query(query): Query<DiffQuery>,
) -> Result<Json<DiffResponse>, Problem> {
    let (pack, id) = (pack_name(&pack)?, prompt_id(&id)?);
    let from: VersionRef = query.from.parse()?;
    let to: VersionRef = query.to.parse()?;
    let locale = match &query.locale {
        Some(tag) => Some(Locale::parse(tag)?),
        None => None,
    };
    caller.require(pack, Scope::Read)?;
    let diff = state
        .store
        .diff(pack, id, &from, &to, locale.as_ref())
        .await?;
    if diff.files.is_empty() {
        return Err(Problem::not_found(format!(
            "`{id}` has no file for locale `{}` in v{} or v{}",
            query.locale.unwrap_or_default(),
            diff.from,
            diff.to
        )));
    }
    Ok(Json(DiffResponse::from(diff)))
}

/// `GET /healthz`: the process answers.
#[utoipa::path(
    get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "The server runs", body = Health)),
)]
pub(crate) async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok".to_owned(),
        detail: None,
    })
}

/// `GET /readyz`: the store answers and can take a write (see
/// [`Store::ready`](promptreg_store::Store::ready)).
#[utoipa::path(
    get, path = "/readyz", tag = "operations",
    responses(
        (status = 200, description = "The store answers", body = Health),
        (status = 503, description = "The store cannot be reached, or another process holds its write lock", body = Health),
    ),
)]
pub(crate) async fn readyz(State(state): State<AppState>) -> Response {
    match state.store.ready().await {
        Ok(()) => Json(Health {
            status: "ok".to_owned(),
            detail: None,
        })
        .into_response(),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(Health {
                status: "unavailable".to_owned(),
                detail: Some(e.to_string()),
            }),
        )
            .into_response(),
    }
}

/// Unknown routes: a problem, not an empty 404.
pub(crate) async fn not_found(uri: axum::http::Uri) -> Problem {
    let path = shown(uri.path(), 200);
    Problem::new(
        StatusCode::NOT_FOUND,
        "unknown-route",
        format!("no route {path}: the API is described at /v1/openapi.json"),
    )
}

/// A known route with another method.
pub(crate) async fn method_not_allowed(
    method: axum::http::Method,
    uri: axum::http::Uri,
) -> Problem {
    let path = shown(uri.path(), 200);
    Problem::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
        format!("{path} does not take {method}: see /v1/openapi.json"),
    )
}
