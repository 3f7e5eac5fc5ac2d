//! Prompts: one at a label or version, its versions (and a new one), its
//! label history, the difference between two versions.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use promptreg::Locale;
use promptreg_store::{Change, Scope, VersionRef};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::conditional;
use crate::actions::save_version;
use crate::auth::Caller;
use crate::body::{Created, DiffResponse, Moves, NewVersion, VersionList, VersionSummary};
use crate::extract::{JsonBody, PackName, Path, PromptName, Query, label};
use crate::problem::{Problem, ProblemCode, ProblemDetails};
use crate::state::AppState;

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
                ProblemCode::InvalidQuery,
                "give `label` or `version`, not both",
            )),
            (_, Some(0)) => Err(Problem::bad_request(
                ProblemCode::InvalidVersion,
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
    Path((pack, id)): Path<(PackName, PromptName)>,
    Query(which): Query<Which>,
) -> Result<Response, Problem> {
    let (pack, id) = (pack.as_str(), id.as_str());
    let version = which.version()?;
    caller.require(pack, Scope::Read)?;
    let cached = state.cache.version(pack, id, &version).await?;
    Ok(conditional(&headers, &cached))
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
    Path((pack, id)): Path<(PackName, PromptName)>,
) -> Result<Json<VersionList>, Problem> {
    let (pack, id) = (pack.as_str(), id.as_str());
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
    Path((pack, id)): Path<(PackName, PromptName)>,
    JsonBody(new): JsonBody<NewVersion>,
) -> Result<Response, Problem> {
    let (pack, id) = (pack.as_str(), id.as_str());
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
    Path((pack, id)): Path<(PackName, PromptName)>,
) -> Result<Json<Moves>, Problem> {
    let (pack, id) = (pack.as_str(), id.as_str());
    caller.require(pack, Scope::Read)?;
    let moves = state.store.history(pack, Some(id)).await?;
    Ok(Json(Moves::of(&moves)))
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
    Path((pack, id)): Path<(PackName, PromptName)>,
    Query(query): Query<DiffQuery>,
) -> Result<Json<DiffResponse>, Problem> {
    let (pack, id) = (pack.as_str(), id.as_str());
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

/// Its routes, with their OpenAPI paths.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_prompt))
        .routes(routes!(list_versions, create_version))
        .routes(routes!(prompt_history))
        .routes(routes!(diff))
}
