//! The outbox of webhooks: deliveries taken in from the event log,
//! leased to one worker at a time, and every attempt in the delivery log
//! (see the module above for how it holds under several servers).

use std::time::Duration;

use serde::Serialize;

use super::{WebhookFormat, millis};
use crate::error::{Error, ErrorKind};
use crate::events::Event;
use crate::model::{Actor, Permission, Timestamp};
use crate::store::Store;

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryState {
    /// Waiting for its next attempt (or in one).
    Pending,
    /// A receiver answered 2xx.
    Delivered,
    /// Given up on; [`Store::redeliver`] tries again.
    Failed,
}

impl DeliveryState {
    /// `pending`, `delivered` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Failed => "failed",
        }
    }

    fn named(s: &str) -> Option<DeliveryState> {
        match s {
            "pending" => Some(DeliveryState::Pending),
            "delivered" => Some(DeliveryState::Delivered),
            "failed" => Some(DeliveryState::Failed),
            _ => None,
        }
    }
}

/// One message to one webhook, and every attempt to deliver it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delivery {
    /// Its number in the store.
    pub id: u64,
    /// The message id every attempt carries (`webhook-id`).
    pub message_id: String,
    /// The event delivered; `None` for a test message.
    pub event: Option<u64>,
    /// Its type (`label.moved`, …, `webhook.test`).
    pub kind: String,
    /// Where it stands.
    pub state: DeliveryState,
    /// When it was queued.
    pub created_at: Timestamp,
    /// When it is next tried, while pending.
    pub next_attempt_at: Option<Timestamp>,
    /// Every attempt, oldest first.
    pub attempts: Vec<Attempt>,
}

/// One try at delivering, as the delivery log keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Attempt {
    /// When it started.
    pub at: Timestamp,
    /// How long it took, in milliseconds.
    pub duration_ms: u64,
    /// The receiver's status code; `None` when none came back.
    pub status: Option<u16>,
    /// Why it failed without a status (refused, timed out, …).
    pub error: Option<String>,
    /// The response body's first [`LOGGED_RESPONSE_BYTES`](super::LOGGED_RESPONSE_BYTES), as text.
    pub response: String,
    /// The worker that made it.
    pub by: String,
}

/// What a worker decided after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempted {
    /// The receiver took it.
    Delivered,
    /// Try again at this time.
    RetryAt(Timestamp),
    /// Stop trying: the delivery fails, and so do the webhook's other
    /// pending ones, and the webhook is disabled, saying why.
    GiveUp,
}

/// A delivery a worker holds until its lease ends, with what it needs to
/// send it.
#[derive(Debug, Clone)]
pub struct ClaimedDelivery {
    /// The delivery's number.
    pub id: u64,
    /// The message id (`webhook-id`).
    pub message_id: String,
    /// Its type.
    pub kind: String,
    /// The event, `None` for a test message.
    pub event: Option<Event>,
    /// The webhook's name.
    pub webhook: String,
    /// Where to send it.
    pub url: String,
    /// How to write it.
    pub format: WebhookFormat,
    /// Every secret signing now: the current one first, then a rotated-out
    /// one still in its overlap.
    pub secrets: Vec<String>,
    /// Which attempt this is, from 1 (again from 1 after a redelivery).
    pub attempt: u32,
    /// When it was queued, or redelivered: a worker stops retrying a day
    /// after.
    pub retrying_since: Timestamp,
}

/// A delivery as the database holds it: id, event, kind, state,
/// created_at, next_attempt_at, and its webhook's message prefix.
pub(crate) type DeliveryRow = (i64, Option<i64>, String, String, i64, i64, String);

/// An attempt as the database holds it: delivery, at, duration, status,
/// error, response, by.
pub(crate) type AttemptRow = (i64, i64, i64, Option<i64>, Option<String>, String, String);

pub(crate) fn delivery_of(row: DeliveryRow, attempts: Vec<Attempt>) -> Result<Delivery, Error> {
    let (id, event, kind, state, created_at, next, prefix) = row;
    let state = DeliveryState::named(&state).ok_or_else(|| {
        Error::new(
            ErrorKind::Database,
            format!("delivery {id} is in the unknown state `{state}`: the deliveries table was changed by hand"),
        )
    })?;
    Ok(Delivery {
        id: id as u64,
        message_id: message_id(&prefix, id),
        event: event.map(|e| e as u64),
        kind,
        state,
        created_at: Timestamp(created_at),
        next_attempt_at: (state == DeliveryState::Pending).then_some(Timestamp(next)),
        attempts,
    })
}

pub(crate) fn attempt_of(row: AttemptRow) -> Attempt {
    let (_, at, duration, status, error, response, by) = row;
    Attempt {
        at: Timestamp(at),
        duration_ms: duration.max(0) as u64,
        status: status.and_then(|s| u16::try_from(s).ok()),
        error,
        response,
        by,
    }
}

/// The `webhook-id` of delivery `id` of a webhook with `prefix`: the
/// same for every attempt.
pub(crate) fn message_id(prefix: &str, id: i64) -> String {
    format!("msg_{prefix}{id}")
}

impl Store {
    /// Queues a `webhook.test` message to the webhook, due now.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Forbidden`] unless `actor` is an admin;
    /// [`ErrorKind::UnknownWebhook`].
    pub async fn queue_test_delivery(&self, name: &str, actor: &Actor) -> Result<Delivery, Error> {
        actor.require(Permission::Admin, "test webhooks")?;
        self.webhook(name).await?;
        let id = on_backend!(self, insert_test_delivery(name, Timestamp::now()))?;
        self.delivery(name, id as u64).await
    }

    /// Takes in the events no webhook has taken yet, then leases at most
    /// `limit` deliveries due now to `worker` for `lease`: no other worker
    /// takes them before it ends. A delivery whose lease ended unrecorded
    /// (its worker died) is due again. The webhooks named in `busy` (those
    /// the worker sends as many of as it will at once) are left for later.
    pub async fn claim_deliveries(
        &self,
        worker: &str,
        lease: Duration,
        limit: usize,
        busy: &[String],
    ) -> Result<Vec<ClaimedDelivery>, Error> {
        on_backend!(self, enqueue_events(Timestamp::now()))?;
        self.claim(worker, lease, limit, None, busy).await
    }

    /// Leases delivery `id` of webhook `name` to `worker` if it is due
    /// (a test message just queued, a redelivery): to send it at once.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownWebhook`], for the webhook or the delivery.
    pub async fn claim_delivery(
        &self,
        name: &str,
        id: u64,
        worker: &str,
        lease: Duration,
    ) -> Result<Option<ClaimedDelivery>, Error> {
        self.delivery(name, id).await?;
        let id = i64::try_from(id).unwrap_or(i64::MAX);
        Ok(self.claim(worker, lease, 1, Some(id), &[]).await?.pop())
    }

    async fn claim(
        &self,
        worker: &str,
        lease: Duration,
        limit: usize,
        only: Option<i64>,
        busy: &[String],
    ) -> Result<Vec<ClaimedDelivery>, Error> {
        let now = Timestamp::now();
        let until = Timestamp(now.0.saturating_add(millis(lease)));
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let claimed = on_backend!(
            self,
            claim_deliveries(worker, now, until, limit, only, busy)
        )?;
        let mut out = Vec::with_capacity(claimed.len());
        for row in claimed {
            let (id, event_id, kind, attempts, since, name, url, format, secret, previous, prefix) =
                row;
            let event = match event_id {
                Some(e) => self.events_since(e as u64 - 1, 1).await?.into_iter().next(),
                None => None,
            };
            out.push(ClaimedDelivery {
                id: id as u64,
                message_id: message_id(&prefix, id),
                kind,
                event,
                webhook: name,
                url,
                format: format.parse()?,
                secrets: std::iter::once(secret).chain(previous).collect(),
                attempt: u32::try_from(attempts).unwrap_or(u32::MAX),
                retrying_since: Timestamp(since),
            });
        }
        Ok(out)
    }

    /// Records an attempt at delivery `id` by `worker` and what comes
    /// next. Giving up disables the webhook, its reason naming what the
    /// last attempt got (a 410 Gone: the receiver asked for no more). An
    /// attempt recorded after the delivery's lease passed
    /// to another worker is still logged; only the lease holder's outcome
    /// changes the delivery.
    pub async fn record_attempt(
        &self,
        id: u64,
        worker: &str,
        attempt: &Attempt,
        next: Attempted,
    ) -> Result<(), Error> {
        let id = i64::try_from(id).unwrap_or(i64::MAX);
        on_backend!(self, record_attempt(id, worker, attempt, next))
    }

    /// The webhook's deliveries, newest first: at most `limit`, queued
    /// before `before` when given (to page back).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownWebhook`].
    pub async fn deliveries(
        &self,
        name: &str,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<Delivery>, Error> {
        self.webhook(name).await?;
        let before = before.map_or(i64::MAX, |b| i64::try_from(b).unwrap_or(i64::MAX));
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let (rows, attempts) = on_backend!(self, deliveries(name, before, limit))?;
        let mut by_delivery: std::collections::BTreeMap<i64, Vec<Attempt>> = Default::default();
        for row in attempts {
            by_delivery.entry(row.0).or_default().push(attempt_of(row));
        }
        rows.into_iter()
            .map(|row| {
                let attempts = by_delivery.remove(&row.0).unwrap_or_default();
                delivery_of(row, attempts)
            })
            .collect()
    }

    /// One delivery of the webhook.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownWebhook`], for the webhook or the delivery.
    pub async fn delivery(&self, name: &str, id: u64) -> Result<Delivery, Error> {
        self.deliveries(name, Some(id.saturating_add(1)), 1)
            .await?
            .into_iter()
            .find(|d| d.id == id)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::UnknownWebhook,
                    format!("webhook `{name}` has no delivery {id}: `promptreg webhooks log {name}` lists them"),
                )
            })
    }

    /// Makes delivery `id` of the webhook due again now, with the same
    /// message id, whatever its state.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Forbidden`] unless `actor` is an admin;
    /// [`ErrorKind::UnknownWebhook`], for the webhook or the delivery.
    pub async fn redeliver(&self, name: &str, id: u64, actor: &Actor) -> Result<Delivery, Error> {
        actor.require(Permission::Admin, "redeliver webhooks")?;
        self.delivery(name, id).await?;
        let rows = i64::try_from(id).unwrap_or(i64::MAX);
        on_backend!(self, redeliver(name, Some(rows), None, Timestamp::now()))?;
        self.delivery(name, id).await
    }

    /// Makes every failed delivery of the webhook queued at or after
    /// `since` due again now. Returns how many.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Forbidden`] unless `actor` is an admin;
    /// [`ErrorKind::UnknownWebhook`].
    pub async fn redeliver_failed(
        &self,
        name: &str,
        since: Timestamp,
        actor: &Actor,
    ) -> Result<u64, Error> {
        actor.require(Permission::Admin, "redeliver webhooks")?;
        self.webhook(name).await?;
        on_backend!(self, redeliver(name, None, Some(since), Timestamp::now()))
    }

    /// Drops the finished deliveries (delivered or failed) queued before
    /// `before`, with their attempts. Returns how many.
    pub async fn prune_deliveries(&self, before: Timestamp) -> Result<u64, Error> {
        on_backend!(self, prune_deliveries(before))
    }
}
