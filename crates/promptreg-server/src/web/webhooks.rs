//! The webhooks of the store, for an admin of every pack: each with what
//! it hears and whether it is disabled (with why), a form to make one
//! (its secret shown once), and its delivery log, every attempt's time,
//! status, duration and the start of the answer; a test message, one
//! delivery sent again, a secret rotated, a disabled webhook enabled.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, Response};
use minijinja::context;
use promptreg_store::{Delivery, EVENT_TYPES, Webhook, WebhookSpec};
use serde::{Deserialize, Serialize};

use super::form::Fields;
use super::page::{PageError, Path, data, render, see_other, visitor};
use crate::extract::Query;
use crate::state::AppState;

/// How many deliveries a log page shows.
const SHOWN: usize = 50;

/// Refuses a visitor who is not an admin of every pack.
fn require_store_admin(what: &str) -> Result<promptreg_store::Actor, PageError> {
    let Some(visitor) = visitor() else {
        return Err(PageError::new(
            StatusCode::FORBIDDEN,
            "Sign in with an admin key",
        ));
    };
    visitor.caller.require_store_admin(what)?;
    Ok(visitor.caller.actor())
}

#[derive(Debug, Serialize)]
struct WebhookRow {
    name: String,
    url: String,
    format: String,
    packs: Vec<String>,
    events: Vec<String>,
    created_at: String,
    created_by: String,
    disabled_at: Option<String>,
    disabled_reason: Option<String>,
}

impl From<&Webhook> for WebhookRow {
    fn from(hook: &Webhook) -> WebhookRow {
        WebhookRow {
            name: hook.name.clone(),
            url: hook.url.clone(),
            format: hook.format.to_string(),
            packs: hook.packs.clone(),
            events: hook.events.clone(),
            created_at: hook.created_at.to_string(),
            created_by: hook.created_by.clone(),
            disabled_at: hook.disabled.as_ref().map(|d| d.at.to_string()),
            disabled_reason: hook.disabled.as_ref().map(|d| d.reason.clone()),
        }
    }
}

#[derive(Debug, Serialize)]
struct DeliveryRow {
    id: u64,
    message_id: String,
    kind: String,
    state: &'static str,
    created_at: String,
    next_attempt_at: Option<String>,
    attempts: Vec<AttemptRow>,
}

#[derive(Debug, Serialize)]
struct AttemptRow {
    at: String,
    duration_ms: u64,
    outcome: String,
    response: String,
    by: String,
}

impl From<&Delivery> for DeliveryRow {
    fn from(d: &Delivery) -> DeliveryRow {
        DeliveryRow {
            id: d.id,
            message_id: d.message_id.clone(),
            kind: d.kind.clone(),
            state: d.state.as_str(),
            created_at: d.created_at.to_string(),
            next_attempt_at: d.next_attempt_at.map(|t| t.to_string()),
            attempts: d
                .attempts
                .iter()
                .map(|a| AttemptRow {
                    at: a.at.to_string(),
                    duration_ms: a.duration_ms,
                    outcome: match (a.status, &a.error) {
                        (Some(status), _) => status.to_string(),
                        (None, Some(error)) => error.clone(),
                        (None, None) => "no answer".to_owned(),
                    },
                    response: a.response.clone(),
                    by: a.by.clone(),
                })
                .collect(),
        }
    }
}

/// `GET /webhooks`: the list, and a form to make one.
pub(crate) async fn index(State(state): State<AppState>) -> Result<Html<String>, PageError> {
    require_store_admin("the webhooks page")?;
    let hooks = state.store.webhooks().await?;
    let rows: Vec<WebhookRow> = hooks.iter().map(WebhookRow::from).collect();
    render(
        "webhooks.html",
        context! { webhooks => data(&rows), event_types => data(&EVENT_TYPES) },
    )
}

/// `POST /webhooks`: makes one and shows its secret, once.
pub(crate) async fn create(
    State(state): State<AppState>,
    fields: Fields,
) -> Result<Html<String>, PageError> {
    fields.check_csrf()?;
    let actor = require_store_admin("making a webhook")?;
    let spec = WebhookSpec {
        name: fields.get("name").trim().to_owned(),
        url: fields.get("url").trim().to_owned(),
        packs: fields
            .get("packs")
            .split_whitespace()
            .map(str::to_owned)
            .collect(),
        events: fields.all("event").map(str::to_owned).collect(),
        format: fields.get("format").parse()?,
    };
    if let Some(why) = state.config.webhook_refusal(&spec.url) {
        return Err(PageError::new(StatusCode::BAD_REQUEST, why));
    }
    let (hook, secret) = state.store.create_webhook(&spec, &actor).await?;
    secret_page(&hook, &secret, "made")
}

/// The overlaps the page offers for a rotation, in seconds.
const OVERLAPS: &[(u64, &str)] = &[
    (0, "none: the old secret stops now"),
    (3600, "an hour"),
    (86_400, "a day"),
    (604_800, "a week"),
];

/// `POST /webhooks/{name}/rotate`: a new secret, shown once.
pub(crate) async fn rotate(
    State(state): State<AppState>,
    Path(name): Path<String>,
    fields: Fields,
) -> Result<Html<String>, PageError> {
    fields.check_csrf()?;
    let actor = require_store_admin("rotating a webhook's secret")?;
    let overlap = fields.get("overlap").parse::<u64>().map_err(|_| {
        PageError::new(
            StatusCode::BAD_REQUEST,
            "The form lacks how long both secrets sign",
        )
    })?;
    let (hook, secret) = state
        .store
        .rotate_webhook_secret(&name, std::time::Duration::from_secs(overlap), &actor)
        .await?;
    secret_page(&hook, &secret, "rotated")
}

fn secret_page(hook: &Webhook, secret: &str, done: &str) -> Result<Html<String>, PageError> {
    render(
        "webhook_secret.html",
        context! {
            webhook => data(&WebhookRow::from(hook)),
            secret,
            done,
            until => hook.previous_secret_until.map(|t| t.to_string()),
        },
    )
}

/// What a log page was sent back with, after a button.
#[derive(Debug, Deserialize)]
pub(crate) struct Done {
    done: Option<String>,
}

/// `GET /webhooks/{name}`: its delivery log.
pub(crate) async fn show(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(done): Query<Done>,
) -> Result<Html<String>, PageError> {
    require_store_admin("a delivery log")?;
    let hook = state.store.webhook(&name).await?;
    let log = state.store.deliveries(&name, None, SHOWN).await?;
    let rows: Vec<DeliveryRow> = log.iter().map(DeliveryRow::from).collect();
    let done = match done.done.as_deref() {
        Some("test") => Some("A test message is queued: this server sends it within a second."),
        Some("redeliver") => {
            Some("The delivery is due again: this server sends it within a second.")
        }
        Some("enable") => Some("The webhook is enabled: it hears of events from now on."),
        _ => None,
    };
    render(
        "webhook.html",
        context! {
            webhook => data(&WebhookRow::from(&hook)),
            deliveries => data(&rows),
            done,
            overlaps => data(&OVERLAPS),
        },
    )
}

/// `POST /webhooks/{name}/test`.
pub(crate) async fn test(
    State(state): State<AppState>,
    Path(name): Path<String>,
    fields: Fields,
) -> Result<Response, PageError> {
    fields.check_csrf()?;
    let actor = require_store_admin("testing a webhook")?;
    state.store.queue_test_delivery(&name, &actor).await?;
    Ok(see_other(&format!("/webhooks/{name}?done=test")))
}

/// `POST /webhooks/{name}/enable`.
pub(crate) async fn enable(
    State(state): State<AppState>,
    Path(name): Path<String>,
    fields: Fields,
) -> Result<Response, PageError> {
    fields.check_csrf()?;
    let actor = require_store_admin("enabling a webhook")?;
    state.store.enable_webhook(&name, &actor).await?;
    Ok(see_other(&format!("/webhooks/{name}?done=enable")))
}

/// `POST /webhooks/{name}/deliveries/{id}/redeliver`.
pub(crate) async fn redeliver(
    State(state): State<AppState>,
    Path((name, id)): Path<(String, u64)>,
    fields: Fields,
) -> Result<Response, PageError> {
    fields.check_csrf()?;
    let actor = require_store_admin("sending a delivery again")?;
    state.store.redeliver(&name, id, &actor).await?;
    Ok(see_other(&format!("/webhooks/{name}?done=redeliver")))
}
