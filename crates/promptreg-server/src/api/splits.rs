//! Gradual releases: a label's split, started, changed, promoted or
//! aborted. Which subjects get the candidate is for the clients to decide
//! (`promptreg::split`).

use axum::Json;
use axum::extract::State;
use promptreg::remote::wire::BundleHeaders;
use promptreg_store::{Candidate, Scope};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::actions::Gates;
use crate::auth::Caller;
use crate::body::{EndSplit, SplitBody, SplitShare, StartSplit, share_of};
use crate::extract::{JsonBody, LabelName, PackName, Path, label};
use crate::problem::{Problem, ProblemDetails};
use crate::state::AppState;

/// `GET /v1/packs/{pack}/labels/{label}/split`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/labels/{label}/split", tag = "labels",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("label" = String, Path, description = "The label"),
    ),
    responses(
        (status = 200, description = "The split running on the label", body = SplitBody),
        (status = 400, description = "Invalid pack or label name", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack, or no split runs on the label", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn running(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, name)): Path<(PackName, LabelName)>,
) -> Result<Json<SplitBody>, Problem> {
    let (pack, name) = (pack.as_str(), name.0);
    caller.require(pack, Scope::Read)?;
    match state.store.running_split(pack, &name).await? {
        Some(split) => Ok(Json(SplitBody::from(&split))),
        None => Err(Problem::not_found(format!(
            "label `{name}` of pack `{pack}` runs no split: start one with POST …/labels/{name}/split"
        ))),
    }
}

/// `POST /v1/packs/{pack}/labels/{label}/split`.
#[utoipa::path(
    post, path = "/v1/packs/{pack}/labels/{label}/split", tag = "labels",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("label" = String, Path, description = "The label to split"),
    ),
    request_body = StartSplit,
    responses(
        (status = 200, description = "The split started: the candidate serves its share", body = SplitBody),
        (status = 400, description = "Invalid input: a share outside 0 to 100, `latest`", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key cannot write, or the label is protected and the key is not admin", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No such pack or revision (the detail names the revisions there are)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 412, description = "A split runs on the label already: `current` names it", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "The label is gated and the candidate's tests fail: nothing started", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn start(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, name)): Path<(PackName, LabelName)>,
    JsonBody(request): JsonBody<StartSplit>,
) -> Result<Json<SplitBody>, Problem> {
    let (pack, name) = (pack.as_str(), name.0);
    caller.require(pack, Scope::Write)?;
    let candidate = Candidate {
        label: label(&request.from)?,
        revision: request.revision.as_ref().map(|r| r.to_ref()).transpose()?,
    };
    let share = share_of(request.percent)?;
    let actor = Gates::forced(request.force).actor(&caller);
    let split = state
        .store
        .start_split(pack, &name, &candidate, share, &actor, &request.reason)
        .await?;
    state.cache.invalidate(pack);
    Ok(Json(SplitBody::from(&split)))
}

/// `PATCH /v1/packs/{pack}/labels/{label}/split`.
#[utoipa::path(
    patch, path = "/v1/packs/{pack}/labels/{label}/split", tag = "labels",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("label" = String, Path, description = "The label"),
    ),
    request_body = SplitShare,
    responses(
        (status = 200, description = "The split serves its new share", body = SplitBody),
        (status = 400, description = "Invalid input: a share outside 0 to 100", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key cannot write, or the label is protected and the key is not admin", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No such pack, or no split runs", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 412, description = "Another split runs than `expect`, or it ended: the detail names who ended it", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn share(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, name)): Path<(PackName, LabelName)>,
    JsonBody(request): JsonBody<SplitShare>,
) -> Result<Json<SplitBody>, Problem> {
    let (pack, name) = (pack.as_str(), name.0);
    caller.require(pack, Scope::Write)?;
    let share = share_of(request.percent)?;
    let split = state
        .store
        .set_split_share(
            pack,
            &name,
            share,
            request.expect,
            &caller.actor(),
            &request.reason,
        )
        .await?;
    state.cache.invalidate(pack);
    Ok(Json(SplitBody::from(&split)))
}

/// `POST /v1/packs/{pack}/labels/{label}/split/promote`.
#[utoipa::path(
    post, path = "/v1/packs/{pack}/labels/{label}/split/promote", tag = "labels",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("label" = String, Path, description = "The label"),
    ),
    request_body(content = Option<EndSplit>, description = "Optional: `expect`, why"),
    responses(
        (status = 200, description = "The candidate is the label's next revision (`promoted_to`), in one transaction; the split ended", body = SplitBody),
        (status = 400, description = "Invalid input", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key cannot write, or the label is protected and the key is not admin", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No such pack, or no split runs", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 412, description = "Another split runs than `expect`, or it ended: the detail names who ended it", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "The label is gated and the candidate's tests fail: nothing moved", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn promote(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, name)): Path<(PackName, LabelName)>,
    request: Option<JsonBody<Option<EndSplit>>>,
) -> Result<Json<SplitBody>, Problem> {
    end(
        &state,
        &caller,
        pack.as_str(),
        &name.0,
        request,
        End::Promote,
    )
    .await
}

/// `POST /v1/packs/{pack}/labels/{label}/split/abort`.
#[utoipa::path(
    post, path = "/v1/packs/{pack}/labels/{label}/split/abort", tag = "labels",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("label" = String, Path, description = "The label"),
    ),
    request_body(content = Option<EndSplit>, description = "Optional: `expect`, why"),
    responses(
        (status = 200, description = "The split ended: the label serves its own state to every subject", body = SplitBody),
        (status = 400, description = "Invalid input", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key cannot write, or the label is protected and the key is not admin", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No such pack, or no split runs", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 412, description = "Another split runs than `expect`, or it ended: the detail names who ended it", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn abort(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, name)): Path<(PackName, LabelName)>,
    request: Option<JsonBody<Option<EndSplit>>>,
) -> Result<Json<SplitBody>, Problem> {
    end(&state, &caller, pack.as_str(), &name.0, request, End::Abort).await
}

/// How a split ends.
enum End {
    Promote,
    Abort,
}

/// Promotes or aborts the split running on `name`, as the optional body
/// asks (`expect`, why, `force`).
async fn end(
    state: &AppState,
    caller: &Caller,
    pack: &str,
    name: &promptreg_store::Label,
    request: Option<JsonBody<Option<EndSplit>>>,
    how: End,
) -> Result<Json<SplitBody>, Problem> {
    caller.require(pack, Scope::Write)?;
    let request = request.and_then(|JsonBody(r)| r).unwrap_or_default();
    let actor = Gates::forced(request.force).actor(caller);
    let (expect, reason) = (request.expect, &request.reason);
    let split = match how {
        End::Promote => {
            let (split, _) = state
                .store
                .promote_split(pack, name, expect, &actor, reason)
                .await?;
            split
        }
        End::Abort => {
            state
                .store
                .abort_split(pack, name, expect, &actor, reason)
                .await?
        }
    };
    state.cache.invalidate(pack);
    Ok(Json(SplitBody::from(&split)))
}

/// `GET /v1/packs/{pack}/labels/{label}/split/bundle`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/labels/{label}/split/bundle", tag = "labels",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("label" = String, Path, description = "The label"),
        ("If-None-Match" = Option<String>, Header, description = "The ETag the client holds"),
    ),
    responses(
        (status = 200, description = "The candidate of the split running: every entry with its files, as the label's bundle (its `label` is the label's)", body = crate::body::Bundle,
            headers(
                ("ETag" = String, description = "The candidate state's digest, as the split names it"),
                ("Promptreg-Signature" = String, description = "A signature of the split's candidate by a releaser's key (`promptreg store canary … --sign KEYFILE`), one header each: the SSH signature of `promptreg release v1`, pack, label, `split N` and digest, its base64 on one line"),
            )),
        (status = 304, description = "The client's copy is current"),
        (status = 400, description = "Invalid pack or label", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack, or no split runs on the label", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn candidate_bundle(
    State(state): State<AppState>,
    caller: Caller,
    headers: axum::http::HeaderMap,
    Path((pack, name)): Path<(PackName, LabelName)>,
) -> Result<axum::response::Response, Problem> {
    let (pack, name) = (pack.as_str(), name.0);
    caller.require(pack, Scope::Read)?;
    let view = state.cache.candidate(pack, &name).await?;
    let mut response = super::conditional(&headers, &view.bundle);
    let signatures = BundleHeaders {
        signatures: view.signatures.clone(),
        ..BundleHeaders::default()
    };
    super::packs::add_wire_headers(&mut response, &signatures);
    Ok(response)
}

/// Its routes, with their OpenAPI paths.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(running, start, share))
        .routes(routes!(promote))
        .routes(routes!(abort))
        .routes(routes!(candidate_bundle))
}
