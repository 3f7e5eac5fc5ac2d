//! A label's revisions: listing them, rolling the whole pack back one
//! revision, pointing a label at one of its revisions.

use axum::Json;
use axum::extract::State;
use promptreg_store::{RevisionRef, Scope};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::actions::Gates;
use crate::auth::Caller;
use crate::body::{RestoreRevision, Restored, Rollback};
use crate::extract::{JsonBody, LabelName, PackName, Path};
use crate::problem::{Problem, ProblemDetails};
use crate::state::AppState;

/// `GET /v1/packs/{pack}/labels/{label}/revisions`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/labels/{label}/revisions", tag = "labels",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("label" = String, Path, description = "The label"),
    ),
    responses(
        (status = 200, description = "The label's revisions, newest first: one per change to what it resolves to (a move, a release, a rollback, a push that moved `latest`)", body = crate::body::Revisions),
        (status = 400, description = "Invalid pack or label name", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack, or nothing ever moved the label", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn label_revisions(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, name)): Path<(PackName, LabelName)>,
) -> Result<Json<crate::body::Revisions>, Problem> {
    let (pack, name) = (pack.as_str(), name.0);
    caller.require(pack, Scope::Read)?;
    let revisions = state.store.revisions(pack, &name).await?;
    Ok(Json(crate::body::Revisions::of(
        pack,
        name.as_str(),
        &revisions,
    )))
}

/// `GET /v1/packs/{pack}/labels/{label}/revisions/{revision}`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/labels/{label}/revisions/{revision}", tag = "labels",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("label" = String, Path, description = "The label"),
        ("revision" = String, Path, description = "The revision's number, or its digest (8 to 64 hex digits: the newest revision holding that state)"),
    ),
    responses(
        (status = 200, description = "The revision, with what it changed since the one before", body = crate::body::RevisionBody),
        (status = 400, description = "Invalid pack or label name, or a revision that is neither a number nor a digest", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack, or no revision of that number or digest (the detail names it and the revisions there are)", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn label_revision(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, name, revision)): Path<(PackName, LabelName, String)>,
) -> Result<Json<crate::body::RevisionBody>, Problem> {
    let (pack, name) = (pack.as_str(), name.0);
    caller.require(pack, Scope::Read)?;
    let wanted: RevisionRef = revision.parse()?;
    let revision = state.store.revision(pack, &name, wanted).await?;
    Ok(Json(crate::body::RevisionBody::from(&revision)))
}

/// `POST /v1/packs/{pack}/labels/{label}/rollback`.
#[utoipa::path(
    post, path = "/v1/packs/{pack}/labels/{label}/rollback", tag = "labels",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("label" = String, Path, description = "The label to roll back"),
    ),
    request_body(content = Option<Rollback>, description = "Optional (no body, or `null`): why, for the history"),
    responses(
        (status = 200, description = "The label holds, on every entry, what the revision before the one it stood on held: one transaction, one new revision", body = Restored),
        (status = 400, description = "Invalid input", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key cannot write, or the label is protected and the key is not admin", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No such pack, or the label stands on its first revision", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 412, description = "A label moved meanwhile: nothing was written", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "The label is gated and the tests of the state it would serve fail, cannot be read or run too long (`cases` lists the failing ones): nothing moved", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn rollback_pack(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, name)): Path<(PackName, LabelName)>,
    request: Option<JsonBody<Option<Rollback>>>,
) -> Result<Json<Restored>, Problem> {
    let (pack, name) = (pack.as_str(), name.0);
    let permit = caller.permit(pack)?;
    let (reason, force) = Rollback::parts(request.and_then(|JsonBody(r)| r));
    let permit = Gates::forced(force).permit(permit);
    let restored = state
        .store
        .rollback_pack(pack, &name, &permit, &reason)
        .await?;
    state.cache.invalidate(pack);
    Ok(Json(Restored::of(name.as_str(), &restored)))
}

/// `PUT /v1/packs/{pack}/labels/{label}/revision`.
#[utoipa::path(
    put, path = "/v1/packs/{pack}/labels/{label}/revision", tag = "labels",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("label" = String, Path, description = "The label to point at one of its revisions"),
    ),
    request_body = RestoreRevision,
    responses(
        (status = 200, description = "The label holds, on every entry, what the revision held: one transaction, one new revision (none when it already did)", body = Restored),
        (status = 400, description = "Invalid input", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key cannot write, or the label is protected and the key is not admin", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No such pack or revision", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 412, description = "The label's newest revision is not `expect`: `current` names it", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "The label is gated and the tests of the state it would serve fail, cannot be read or run too long (`cases` lists the failing ones): nothing moved", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn restore_revision(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, name)): Path<(PackName, LabelName)>,
    JsonBody(request): JsonBody<RestoreRevision>,
) -> Result<Json<Restored>, Problem> {
    let (pack, name) = (pack.as_str(), name.0);
    let permit = caller.permit(pack)?;
    let restored = state
        .store
        .restore(
            pack,
            &name,
            request.revision.to_ref()?,
            request.expect,
            &Gates::forced(request.force).permit(permit),
            &request.reason,
        )
        .await?;
    state.cache.invalidate(pack);
    Ok(Json(Restored::of(name.as_str(), &restored)))
}

/// Its routes, with their OpenAPI paths.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(label_revisions))
        .routes(routes!(label_revision))
        .routes(routes!(rollback_pack))
        .routes(routes!(restore_revision))
}
