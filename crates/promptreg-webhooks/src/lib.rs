//! Delivering a promptreg store's events to webhooks.
//!
//! The store keeps the subscriptions and the outbox
//! ([`promptreg_store::Webhook`], [`Store::claim_deliveries`]); this crate
//! sends what it hands out:
//!
//! - [`signature`]: the Standard Webhooks scheme (`webhook-id`,
//!   `webhook-timestamp`, `webhook-signature: v1,BASE64`, HMAC-SHA256 of
//!   `id.timestamp.body`), one signature per secret while a rotation
//!   overlaps;
//! - [`message`]: the body (`type`, `timestamp`, `data`), or one line
//!   for a chat's incoming webhook;
//! - [`outbound`] and [`destination`]: one request, `http` or `https`
//!   only, no redirect, a timeout, the response read to a bound, and the
//!   address connected to checked (loopback, private, link-local and
//!   metadata ranges refused unless allowed);
//! - [`retries`]: exponential waits with jitter, for a day;
//! - [`worker`]: the loop a server runs, claiming, sending and recording.
//!
//! Deliveries are at least once: a receiver drops a message whose
//! `webhook-id` it has seen.

#![deny(missing_docs)]

pub mod destination;
pub mod message;
pub mod outbound;
pub mod retries;
pub mod signature;
#[cfg(feature = "test-support")]
pub mod test_support;
pub mod worker;

use std::time::Duration;

use promptreg_store::{Actor, Delivery, Error, Store};

pub use destination::Destinations;
pub use retries::Retries;
pub use worker::{OnAttempt, WorkerOptions, run, worker_name};

/// Queues a test message to webhook `name` and sends it at once, from
/// this process; returns the delivery with its attempt. Should the
/// attempt fail, the message is retried like any other (by a running
/// server's worker).
///
/// # Errors
///
/// What [`Store::queue_test_delivery`] refuses; the HTTP client failing
/// to start.
pub async fn send_test(
    store: &Store,
    name: &str,
    options: &WorkerOptions,
    actor: &Actor,
) -> Result<Delivery, Error> {
    let sender = worker::Sender::new(store.clone(), options.clone())
        .map_err(|e| Error::new(promptreg_store::ErrorKind::Io, e))?;
    let queued = store.queue_test_delivery(name, actor).await?;
    let lease = options.lease.max(options.timeout + Duration::from_secs(1));
    let claimed = store
        .claim_delivery(name, queued.id, &options.name, lease)
        .await?;
    if let Some(delivery) = claimed {
        sender.deliver(delivery).await;
    }
    store.delivery(name, queued.id).await
}
