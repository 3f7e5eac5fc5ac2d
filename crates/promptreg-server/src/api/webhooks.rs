//! Webhooks: made, listed, rotated, tested and deleted by an admin of
//! every pack; their delivery logs, and deliveries sent again. The
//! server's worker (`promptreg_webhooks::run`) sends what they queue.

use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use promptreg_store::{EVENT_TYPES, Timestamp};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::body::{
    DeliveryBody, DeliveryLog, NewWebhook, RedeliverFailed, Redelivered, Rotation, WebhookBody,
    WebhookList, WebhookPatch, WebhookSecret,
};
use crate::extract::{JsonBody, Path, Query};
use crate::problem::{Problem, ProblemCode, ProblemDetails};
use crate::state::AppState;

/// How long a rotated-out secret signs when the request does not say.
const DEFAULT_OVERLAP: Duration = Duration::from_secs(24 * 3600);

/// The most deliveries one page of a log holds.
const MAX_PAGE: usize = 100;

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, update, delete))
        .routes(routes!(rotate))
        .routes(routes!(enable))
        .routes(routes!(test))
        .routes(routes!(deliveries))
        .routes(routes!(redeliver))
        .routes(routes!(redeliver_failed))
}

/// `GET /v1/webhooks`.
#[utoipa::path(
    get, path = "/v1/webhooks", tag = "webhooks",
    responses(
        (status = 200, description = "Every webhook, by name, and the event types there are", body = WebhookList),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key is not an admin of every pack", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<WebhookList>, Problem> {
    caller.require_store_admin("listing webhooks")?;
    let hooks = state.store.webhooks().await?;
    Ok(Json(WebhookList {
        webhooks: hooks.iter().map(WebhookBody::from).collect(),
        event_types: EVENT_TYPES.iter().map(|t| t.to_string()).collect(),
    }))
}

/// `POST /v1/webhooks`.
#[utoipa::path(
    post, path = "/v1/webhooks", tag = "webhooks",
    request_body = NewWebhook,
    responses(
        (status = 201, description = "Made: its secret is in the answer, shown this once", body = WebhookSecret),
        (status = 400, description = "A bad name, URL, event type or format, or an address this server may not deliver to", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key is not an admin of every pack", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "A pack the store does not hold", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 412, description = "A webhook has the name", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn create(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(request): JsonBody<NewWebhook>,
) -> Result<(StatusCode, Json<WebhookSecret>), Problem> {
    caller.require_store_admin("making webhooks")?;
    let spec = request.spec()?;
    // Refused when made, not a day of failed deliveries later.
    if let Some(why) = state.config.webhook_refusal(&spec.url) {
        return Err(Problem::bad_request(ProblemCode::InvalidWebhook, why));
    }
    let (hook, secret) = state.store.create_webhook(&spec, &caller.actor()).await?;
    Ok((
        StatusCode::CREATED,
        Json(WebhookSecret {
            webhook: WebhookBody::from(&hook),
            secret,
        }),
    ))
}

/// `GET /v1/webhooks/{name}`.
#[utoipa::path(
    get, path = "/v1/webhooks/{name}", tag = "webhooks",
    params(("name" = String, Path, description = "The webhook's name")),
    responses(
        (status = 200, description = "The webhook", body = WebhookBody),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key is not an admin of every pack", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No webhook has the name", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> Result<Json<WebhookBody>, Problem> {
    caller.require_store_admin("reading webhooks")?;
    Ok(Json(WebhookBody::from(&state.store.webhook(&name).await?)))
}

/// `PATCH /v1/webhooks/{name}`.
#[utoipa::path(
    patch, path = "/v1/webhooks/{name}", tag = "webhooks",
    params(("name" = String, Path, description = "The webhook's name")),
    request_body = WebhookPatch,
    responses(
        (status = 200, description = "Changed; its secret, log and pending deliveries stay (those go to the new URL)", body = WebhookBody),
        (status = 400, description = "A bad URL, event type or format, or an address this server may not deliver to", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key is not an admin of every pack", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No webhook has the name, or a pack the store does not hold", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    JsonBody(request): JsonBody<WebhookPatch>,
) -> Result<Json<WebhookBody>, Problem> {
    caller.require_store_admin("changing webhooks")?;
    let change = request.change()?;
    if let Some(why) = change
        .url
        .as_deref()
        .and_then(|url| state.config.webhook_refusal(url))
    {
        return Err(Problem::bad_request(ProblemCode::InvalidWebhook, why));
    }
    let hook = state
        .store
        .update_webhook(&name, &change, &caller.actor())
        .await?;
    Ok(Json(WebhookBody::from(&hook)))
}

/// `DELETE /v1/webhooks/{name}`.
#[utoipa::path(
    delete, path = "/v1/webhooks/{name}", tag = "webhooks",
    params(("name" = String, Path, description = "The webhook's name")),
    responses(
        (status = 200, description = "Deleted, with its delivery log", body = WebhookBody),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key is not an admin of every pack", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No webhook has the name", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> Result<Json<WebhookBody>, Problem> {
    caller.require_store_admin("deleting webhooks")?;
    let hook = state.store.delete_webhook(&name, &caller.actor()).await?;
    Ok(Json(WebhookBody::from(&hook)))
}

/// `POST /v1/webhooks/{name}/rotate`.
#[utoipa::path(
    post, path = "/v1/webhooks/{name}/rotate", tag = "webhooks",
    params(("name" = String, Path, description = "The webhook's name")),
    request_body(content = Rotation, description = "The overlap; the body may be absent"),
    responses(
        (status = 200, description = "A new secret, shown this once; the old one signs beside it for the overlap", body = WebhookSecret),
        (status = 400, description = "An overlap over a week", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key is not an admin of every pack", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No webhook has the name", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn rotate(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    request: Option<JsonBody<Rotation>>,
) -> Result<Json<WebhookSecret>, Problem> {
    caller.require_store_admin("rotating webhook secrets")?;
    let overlap = request
        .and_then(|JsonBody(r)| r.overlap_seconds)
        .map_or(DEFAULT_OVERLAP, Duration::from_secs);
    let (hook, secret) = state
        .store
        .rotate_webhook_secret(&name, overlap, &caller.actor())
        .await?;
    Ok(Json(WebhookSecret {
        webhook: WebhookBody::from(&hook),
        secret,
    }))
}

/// `POST /v1/webhooks/{name}/enable`.
#[utoipa::path(
    post, path = "/v1/webhooks/{name}/enable", tag = "webhooks",
    params(("name" = String, Path, description = "The webhook's name")),
    responses(
        (status = 200, description = "Enabled: it hears of events from now on", body = WebhookBody),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key is not an admin of every pack", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No webhook has the name", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn enable(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> Result<Json<WebhookBody>, Problem> {
    caller.require_store_admin("enabling webhooks")?;
    let hook = state.store.enable_webhook(&name, &caller.actor()).await?;
    Ok(Json(WebhookBody::from(&hook)))
}

/// `POST /v1/webhooks/{name}/test`.
#[utoipa::path(
    post, path = "/v1/webhooks/{name}/test", tag = "webhooks",
    params(("name" = String, Path, description = "The webhook's name")),
    responses(
        (status = 202, description = "A `webhook.test` message is queued: its attempts appear in the delivery log", body = DeliveryBody),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key is not an admin of every pack", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No webhook has the name", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn test(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> Result<(StatusCode, Json<DeliveryBody>), Problem> {
    caller.require_store_admin("testing webhooks")?;
    let queued = state
        .store
        .queue_test_delivery(&name, &caller.actor())
        .await?;
    Ok((StatusCode::ACCEPTED, Json(DeliveryBody::from(&queued))))
}

/// A page of a delivery log.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct LogPage {
    /// Deliveries numbered below this (the `next_before` of a page).
    before: Option<u64>,
    /// How many, at most 100 (and by default).
    limit: Option<usize>,
}

/// `GET /v1/webhooks/{name}/deliveries`.
#[utoipa::path(
    get, path = "/v1/webhooks/{name}/deliveries", tag = "webhooks",
    params(("name" = String, Path, description = "The webhook's name"), LogPage),
    responses(
        (status = 200, description = "Its deliveries, newest first, each with its attempts", body = DeliveryLog),
        (status = 400, description = "A bad query", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key is not an admin of every pack", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No webhook has the name", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn deliveries(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    Query(page): Query<LogPage>,
) -> Result<Json<DeliveryLog>, Problem> {
    caller.require_store_admin("reading delivery logs")?;
    let limit = page.limit.unwrap_or(MAX_PAGE).clamp(1, MAX_PAGE);
    let log = state.store.deliveries(&name, page.before, limit).await?;
    let next_before = (log.len() == limit)
        .then(|| log.last().map(|d| d.id))
        .flatten();
    Ok(Json(DeliveryLog {
        webhook: name,
        deliveries: log.iter().map(DeliveryBody::from).collect(),
        next_before,
    }))
}

/// `POST /v1/webhooks/{name}/deliveries/{id}/redeliver`.
#[utoipa::path(
    post, path = "/v1/webhooks/{name}/deliveries/{id}/redeliver", tag = "webhooks",
    params(
        ("name" = String, Path, description = "The webhook's name"),
        ("id" = u64, Path, description = "The delivery's number"),
    ),
    responses(
        (status = 202, description = "Due again now, with the same message id", body = DeliveryBody),
        (status = 400, description = "Not a delivery number", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key is not an admin of every pack", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No webhook has the name, or it has no such delivery", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn redeliver(
    State(state): State<AppState>,
    caller: Caller,
    Path((name, id)): Path<(String, u64)>,
) -> Result<(StatusCode, Json<DeliveryBody>), Problem> {
    caller.require_store_admin("redelivering webhooks")?;
    let delivery = state.store.redeliver(&name, id, &caller.actor()).await?;
    Ok((StatusCode::ACCEPTED, Json(DeliveryBody::from(&delivery))))
}

/// `POST /v1/webhooks/{name}/redeliver`.
#[utoipa::path(
    post, path = "/v1/webhooks/{name}/redeliver", tag = "webhooks",
    params(("name" = String, Path, description = "The webhook's name")),
    request_body = RedeliverFailed,
    responses(
        (status = 202, description = "Every failed delivery queued since the time is due again now", body = Redelivered),
        (status = 400, description = "`since` is not an RFC 3339 time", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key is not an admin of every pack", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No webhook has the name", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn redeliver_failed(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    JsonBody(request): JsonBody<RedeliverFailed>,
) -> Result<(StatusCode, Json<Redelivered>), Problem> {
    caller.require_store_admin("redelivering webhooks")?;
    let since: Timestamp = request.since.parse()?;
    let redelivered = state
        .store
        .redeliver_failed(&name, since, &caller.actor())
        .await?;
    Ok((StatusCode::ACCEPTED, Json(Redelivered { redelivered })))
}
