//! Webhooks: subscriptions, their secrets, and their delivery logs.

use promptreg_store::{Attempt, Delivery, Webhook, WebhookChange, WebhookFormat, WebhookSpec};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::problem::{Problem, ProblemCode};

/// A new webhook.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewWebhook {
    /// Its name: lowercase letters, digits and `-` (`team-chat`).
    pub name: String,
    /// Where deliveries go: `http` or `https`.
    pub url: String,
    /// The packs it hears of; empty or absent: every pack.
    #[serde(default)]
    pub packs: Vec<String>,
    /// The event types it wants (`label.released`, …); empty or absent:
    /// every type.
    #[serde(default)]
    pub events: Vec<String>,
    /// `standard` (signed JSON, the default) or `slack` (one line of text
    /// for a chat's incoming webhook).
    #[serde(default)]
    pub format: Option<String>,
}

impl NewWebhook {
    pub(crate) fn spec(self) -> Result<WebhookSpec, Problem> {
        let format = match &self.format {
            Some(format) => parse_format(format)?,
            None => WebhookFormat::Standard,
        };
        Ok(WebhookSpec {
            name: self.name,
            url: self.url,
            packs: self.packs,
            events: self.events,
            format,
        })
    }
}

/// What changes in a webhook: each field given replaces its value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookPatch {
    /// A new URL: `http` or `https`.
    #[serde(default)]
    pub url: Option<String>,
    /// New packs; empty: every pack.
    #[serde(default)]
    pub packs: Option<Vec<String>>,
    /// New event types; empty: every type.
    #[serde(default)]
    pub events: Option<Vec<String>>,
    /// `standard` or `slack`.
    #[serde(default)]
    pub format: Option<String>,
}

impl WebhookPatch {
    pub(crate) fn change(self) -> Result<WebhookChange, Problem> {
        let format = self.format.as_deref().map(parse_format).transpose()?;
        Ok(WebhookChange {
            url: self.url,
            packs: self.packs,
            events: self.events,
            format,
        })
    }
}

/// `standard` or `slack`, or a 400 saying so.
fn parse_format(format: &str) -> Result<WebhookFormat, Problem> {
    format.parse().map_err(|e: promptreg_store::Error| {
        Problem::bad_request(ProblemCode::InvalidWebhook, e.to_string())
    })
}

/// A webhook (never its secret).
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookBody {
    /// Its name.
    pub name: String,
    /// Where deliveries go.
    pub url: String,
    /// The packs it hears of; empty: every pack.
    pub packs: Vec<String>,
    /// The event types it wants; empty: every type.
    pub events: Vec<String>,
    /// `standard` or `slack`.
    pub format: String,
    /// When it was made, RFC 3339.
    pub created_at: String,
    /// Who made it.
    pub created_by: String,
    /// Until when a rotated-out secret still signs beside the new one,
    /// RFC 3339.
    pub previous_secret_until: Option<String>,
    /// When and why it was disabled; a disabled webhook hears nothing
    /// until enabled.
    pub disabled: Option<DisabledBody>,
}

/// Why a webhook stopped.
#[derive(Debug, Serialize, ToSchema)]
pub struct DisabledBody {
    /// When, RFC 3339.
    pub at: String,
    /// Why.
    pub reason: String,
}

impl From<&Webhook> for WebhookBody {
    fn from(hook: &Webhook) -> WebhookBody {
        WebhookBody {
            name: hook.name.clone(),
            url: hook.url.clone(),
            packs: hook.packs.clone(),
            events: hook.events.clone(),
            format: hook.format.to_string(),
            created_at: hook.created_at.to_string(),
            created_by: hook.created_by.clone(),
            previous_secret_until: hook.previous_secret_until.map(|t| t.to_string()),
            disabled: hook.disabled.as_ref().map(|d| DisabledBody {
                at: d.at.to_string(),
                reason: d.reason.clone(),
            }),
        }
    }
}

/// Every webhook, by name.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookList {
    /// By name.
    pub webhooks: Vec<WebhookBody>,
    /// The event types a webhook may ask for.
    pub event_types: Vec<String>,
}

/// A webhook with its new secret, shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookSecret {
    /// The webhook.
    pub webhook: WebhookBody,
    /// `whsec_…`: the receiver verifies signatures with it. Not stored in
    /// a form that can be shown again.
    pub secret: String,
}

/// A new secret for a webhook.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Rotation {
    /// How long the old secret keeps signing beside the new one, in
    /// seconds (a day when absent; at most a week; 0: it stops now).
    #[serde(default)]
    pub overlap_seconds: Option<u64>,
}

/// The failed deliveries to send again.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RedeliverFailed {
    /// Those queued at or after this time, RFC 3339.
    pub since: String,
}

/// How many deliveries are due again.
#[derive(Debug, Serialize, ToSchema)]
pub struct Redelivered {
    /// How many.
    pub redelivered: u64,
}

/// A page of a webhook's delivery log, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryLog {
    /// The webhook.
    pub webhook: String,
    /// Newest first.
    pub deliveries: Vec<DeliveryBody>,
    /// The `before` of the next page, when there may be one.
    pub next_before: Option<u64>,
}

/// One message to a webhook and every attempt to deliver it.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryBody {
    /// Its number.
    pub id: u64,
    /// The `webhook-id` every attempt carries.
    pub message_id: String,
    /// The event delivered; absent for a test message.
    pub event: Option<u64>,
    /// Its type (`label.released`, `webhook.test`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// `pending`, `delivered` or `failed`.
    pub state: String,
    /// When it was queued, RFC 3339.
    pub created_at: String,
    /// When it is next tried, while pending, RFC 3339.
    pub next_attempt_at: Option<String>,
    /// Every attempt, oldest first.
    pub attempts: Vec<AttemptBody>,
}

/// One try at delivering.
#[derive(Debug, Serialize, ToSchema)]
pub struct AttemptBody {
    /// When it started, RFC 3339.
    pub at: String,
    /// How long it took, in milliseconds.
    pub duration_ms: u64,
    /// The receiver's status; absent when none came back.
    pub status: Option<u16>,
    /// Why it failed without a status.
    pub error: Option<String>,
    /// The response body's first KiB.
    pub response: String,
    /// The server that made it.
    pub by: String,
}

impl From<&Delivery> for DeliveryBody {
    fn from(d: &Delivery) -> DeliveryBody {
        DeliveryBody {
            id: d.id,
            message_id: d.message_id.clone(),
            event: d.event,
            kind: d.kind.clone(),
            state: d.state.as_str().to_owned(),
            created_at: d.created_at.to_string(),
            next_attempt_at: d.next_attempt_at.map(|t| t.to_string()),
            attempts: d.attempts.iter().map(AttemptBody::from).collect(),
        }
    }
}

impl From<&Attempt> for AttemptBody {
    fn from(a: &Attempt) -> AttemptBody {
        AttemptBody {
            at: a.at.to_string(),
            duration_ms: a.duration_ms,
            status: a.status,
            error: a.error.clone(),
            response: a.response.clone(),
            by: a.by.clone(),
        }
    }
}
