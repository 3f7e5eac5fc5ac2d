//! Moving labels: `If-Match`, rollback, release.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use promptreg_store::{Label, VersionRef};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::if_match;
use crate::actions::{Gates, Target, move_to, roll_back};
use crate::auth::Caller;
use crate::body::{MoveLabel, Moves, Release, Rollback};
use crate::extract::{JsonBody, LabelName, PackName, Path, PromptName, label};
use crate::problem::{Problem, ProblemCode, ProblemDetails};
use crate::state::AppState;

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
        (status = 422, description = "The label is gated and the tests of the state it would serve fail, cannot be read or run too long (`cases` lists the failing ones): nothing moved", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
        (status = 428, description = "Neither If-Match nor If-None-Match", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn move_label(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path((pack, id, name)): Path<(PackName, PromptName, LabelName)>,
    JsonBody(request): JsonBody<MoveLabel>,
) -> Result<Response, Problem> {
    let (pack, id, name) = (pack.as_str(), id.as_str(), name.0);
    let permit = caller.permit(pack)?;
    let expect = expected_version(&state, &headers, pack, id, &name).await?;
    let target = Target {
        label: &name,
        to: request.version,
        expect,
        gates: Gates::forced(request.force),
    };
    let moved = move_to(&state, permit, pack, id, target, &request.reason).await?;
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
                ProblemCode::PreconditionRequired,
                format!(
                    "moving label `{name}` needs `If-Match` with the ETag of the version it points at now (GET /v1/packs/{pack}/prompts/{id}?label={name}), or `If-None-Match: *` to create it"
                ),
            ));
        }
        (Some(_), true) => {
            return Err(Problem::bad_request(
                ProblemCode::InvalidPrecondition,
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
    Problem::new(
        StatusCode::PRECONDITION_FAILED,
        ProblemCode::Conflict,
        detail,
    )
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
        (status = 422, description = "The label is gated and the tests of the state it would serve fail, cannot be read or run too long (`cases` lists the failing ones): nothing moved", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn rollback(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, id, name)): Path<(PackName, PromptName, LabelName)>,
    request: Option<JsonBody<Option<Rollback>>>,
) -> Result<Json<crate::body::Move>, Problem> {
    let (pack, id, name) = (pack.as_str(), id.as_str(), name.0);
    let (reason, force) = Rollback::parts(request.and_then(|JsonBody(r)| r));
    let permit = caller.permit(pack)?;
    let gates = Gates::forced(force);
    let moved = roll_back(&state, permit, pack, id, &name, &reason, gates).await?;
    Ok(Json(crate::body::Move::from(&moved)))
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
        (status = 412, description = "A label moved meanwhile, or `to`'s newest revision is not `expect_revision` (`current` names the one that won): nothing was released", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "The label is gated and the tests of the state it would serve fail, cannot be read or run too long (`cases` lists the failing ones): nothing moved", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn release(
    State(state): State<AppState>,
    caller: Caller,
    Path(pack): Path<PackName>,
    JsonBody(request): JsonBody<Release>,
) -> Result<Json<Moves>, Problem> {
    let pack = pack.as_str();
    let (from, to) = (label(&request.from)?, label(&request.to)?);
    let permit = caller.permit(pack)?;
    let moves = state
        .store
        .release(
            pack,
            &from,
            &to,
            request.expect_revision,
            &Gates::forced(request.force).permit(permit),
            &request.reason,
        )
        .await?;
    state.cache.invalidate(pack);
    Ok(Json(Moves::of(&moves)))
}

/// Its routes, with their OpenAPI paths.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(move_label))
        .routes(routes!(rollback))
        .routes(routes!(release))
}
