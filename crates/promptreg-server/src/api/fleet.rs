//! The fleet view: followers report what they serve (`POST`), people and
//! CI read it (`GET`), or wait until a revision is live (`GET` with
//! `until-revision`, a long poll).

use std::time::Duration;

use axum::Json;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use promptreg_store::{FleetQuery, Label, MAX_PAGE, Scope, Timestamp};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::body::{FleetBody, FleetReport};
use crate::extract::{JsonBody, LabelName, PackName, Path, Query};
use crate::problem::{Problem, ProblemCode, ProblemDetails};
use crate::state::AppState;

/// The largest report body: its fields' bounds, with room for JSON.
pub(crate) const MAX_REPORT_BODY: usize = 4096;

/// How often a long poll reads the view again: reports may land on
/// another server sharing the database.
const POLL: Duration = Duration::from_millis(100);

/// `POST /v1/packs/{pack}/labels/{label}/fleet`.
#[utoipa::path(
    post, path = "/v1/packs/{pack}/labels/{label}/fleet", tag = "fleet",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("label" = String, Path, description = "The label the instance follows"),
    ),
    request_body = FleetReport,
    responses(
        (status = 204, description = "Recorded"),
        (status = 400, description = "Invalid input: a field out of its bounds (the detail names it)", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack, or a label nothing ever moved (`unknown-label`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "Another key reported this instance id first (`instance-taken`): give the instance an id of its own", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 413, description = "The body is larger than 4 KiB", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "A revision the label never had (`unknown-revision`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 429, description = "Too many reports from this key: retry after `Retry-After` seconds", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The instance is new and its label, its pack or this key holds its most instances (the detail names which)", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn report(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, name)): Path<(PackName, LabelName)>,
    JsonBody(report): JsonBody<FleetReport>,
) -> Result<Response, Problem> {
    let (pack, name) = (pack.as_str(), name.0);
    caller.require(pack, Scope::Read)?;
    if let Err(wait) = state.report_rate.check(caller.name()) {
        return Ok(too_many_reports(caller.name(), wait));
    }
    state
        .fleet_writer
        .record(pack, &name, report.to_report(), &caller.actor().name)
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

fn too_many_reports(caller: &str, wait: Duration) -> Response {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let mut response = Problem::new(
        StatusCode::TOO_MANY_REQUESTS,
        ProblemCode::TooManyReports,
        format!("too many fleet reports from `{caller}`: retry in {seconds} s"),
    )
    .into_response();
    if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// The query of `GET …/fleet`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct FleetParams {
    /// Instances after this id: the `next` of the page before.
    after: Option<String>,
    /// At most this many instances (1 to 1,000; 100).
    limit: Option<usize>,
    /// Wait until the instances reporting serve this revision or a later
    /// one; the instances listed are then those that do not yet.
    #[serde(rename = "until-revision")]
    #[param(rename = "until-revision")]
    until_revision: Option<u64>,
    /// The share of the instances reporting that must (0 to 1; 1).
    ratio: Option<f64>,
    /// How long to wait, `30s` or `500ms` (10 s; at most the server's
    /// request timeout less a second).
    timeout: Option<String>,
}

/// `GET /v1/packs/{pack}/labels/{label}/fleet`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/labels/{label}/fleet", tag = "fleet",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("label" = String, Path, description = "The label"),
        FleetParams,
    ),
    responses(
        (status = 200, description = "The label's revision, the instances online per revision served, and one page of the instances; with `until-revision`, once converged or when the time is up (`converged` says which)", body = FleetBody),
        (status = 400, description = "Invalid pack, label or query", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack, or `until-revision` names a revision the label does not have yet", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn fleet(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, name)): Path<(PackName, LabelName)>,
    Query(params): Query<FleetParams>,
) -> Result<Json<FleetBody>, Problem> {
    let (pack, name) = (pack.as_str(), name.0);
    caller.require(pack, Scope::Read)?;
    let wait = Wait::of(&params, state.config.request_timeout)?;
    let mut query = FleetQuery {
        after: params.after.clone(),
        limit: params.limit.unwrap_or(100).clamp(1, MAX_PAGE),
        behind: params.until_revision,
        ..FleetQuery::now()
    };
    let split = state.store.running_split(pack, &name).await?;
    let Some(wait) = wait else {
        let fleet = state.store.fleet(pack, &name, &query).await?;
        return Ok(Json(FleetBody::of(&fleet, None, split.as_ref())));
    };
    let deadline = tokio::time::Instant::now() + wait.timeout;
    let mut stopping = state.shutdown.subscribe();
    loop {
        query.at = Timestamp::now();
        let fleet = state.store.fleet(pack, &name, &query).await?;
        check_revision(&fleet, &name, wait.revision)?;
        let converged = fleet.converged(wait.revision, wait.ratio);
        if converged || tokio::time::Instant::now() + POLL > deadline || *stopping.borrow() {
            return Ok(Json(FleetBody::of(&fleet, Some(converged), split.as_ref())));
        }
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            _ = stopping.changed() => {}
        }
    }
}

/// What a long poll waits for.
struct Wait {
    revision: u64,
    ratio: f64,
    timeout: Duration,
}

impl Wait {
    fn of(params: &FleetParams, request_timeout: Duration) -> Result<Option<Wait>, Problem> {
        let invalid = |detail: String| Problem::bad_request(ProblemCode::InvalidQuery, detail);
        let ratio = params.ratio.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&ratio) {
            return Err(invalid(format!(
                "`ratio` is {ratio}: give a share from 0 to 1, like 0.95"
            )));
        }
        let Some(revision) = params.until_revision else {
            if params.timeout.is_some() || params.ratio.is_some() {
                return Err(invalid(
                    "`timeout` and `ratio` go with `until-revision`, the revision to wait for"
                        .to_owned(),
                ));
            }
            return Ok(None);
        };
        let longest = request_timeout.saturating_sub(Duration::from_secs(1));
        let timeout = match &params.timeout {
            None => Duration::from_secs(10),
            Some(text) => humantime::parse_duration(text).map_err(|e| {
                invalid(format!(
                    "`timeout` is `{text}`: {e}; write it like `30s` or `500ms`"
                ))
            })?,
        };
        Ok(Some(Wait {
            revision,
            ratio,
            timeout: timeout.min(longest),
        }))
    }
}

/// A wait for a revision the label does not have (yet) is refused: it
/// would only time out.
fn check_revision(
    fleet: &promptreg_store::Fleet,
    label: &Label,
    wanted: u64,
) -> Result<(), Problem> {
    match fleet.revision {
        Some(newest) if wanted <= newest => Ok(()),
        newest => Err(Problem::new(
            StatusCode::NOT_FOUND,
            ProblemCode::UnknownVersion,
            format!(
                "label `{label}` has no revision {wanted}: its newest is {}",
                newest.map_or("none".to_owned(), |n| n.to_string())
            ),
        )),
    }
}

/// Its routes, with their OpenAPI paths: a report's body is small.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(report))
        .layer(DefaultBodyLimit::max(MAX_REPORT_BODY))
        .routes(routes!(fleet))
}
