//! The delivery worker: claims due deliveries from the store, sends each
//! in its own task, and records every attempt and what comes next.
//!
//! It wakes when the store announces an event and every `poll` (retries
//! come due, other processes queue test messages). At most `in_flight`
//! deliveries run at once, and at most `per_webhook` of one webhook:
//! a slow receiver holds only its own share, never another
//! subscription's, and never a write (writes only append events).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use promptreg_store::{Attempt, Attempted, ClaimedDelivery, Label, Store, Timestamp};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use tokio::sync::watch;
use tokio::task::JoinSet;
use url::Url;

use crate::destination::Destinations;
use crate::message;
use crate::outbound::{Exchange, Outbound};
use crate::retries::{Retries, jitter};
use crate::signature::signature;

/// How a worker delivers.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// Its name in the delivery log and its leases: unique per process.
    pub name: String,
    /// Where deliveries may go.
    pub destinations: Destinations,
    /// The longest wait for one exchange with a receiver.
    pub timeout: Duration,
    /// How long a claimed delivery stays this worker's: longer than
    /// `timeout`, so a live worker never loses one it is sending; a
    /// worker that dies loses its deliveries to others when it ends.
    pub lease: Duration,
    /// How often it looks for deliveries come due without an event.
    pub poll: Duration,
    /// The most deliveries in flight at once.
    pub in_flight: usize,
    /// The most deliveries of one webhook in flight at once.
    pub per_webhook: usize,
    /// When to retry, and for how long.
    pub retries: Retries,
    /// How long finished deliveries stay in the log.
    pub retention: Duration,
    /// Where the web page is served, for the links in messages.
    pub page: Url,
    /// Told what followed each attempt (for a host's metrics).
    pub on_attempt: Option<OnAttempt>,
}

/// A function told what followed each attempt: a host counts them.
#[derive(Clone)]
pub struct OnAttempt(pub Arc<dyn Fn(Attempted) + Send + Sync>);

impl std::fmt::Debug for OnAttempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnAttempt(..)")
    }
}

impl WorkerOptions {
    /// The defaults: a 10 s timeout, a 30 s lease, a 1 s poll, 64
    /// deliveries in flight and 4 per webhook, [`Retries::default`], a
    /// week of log; `name` should differ between processes.
    pub fn new(name: impl Into<String>, page: Url) -> WorkerOptions {
        WorkerOptions {
            name: name.into(),
            destinations: Destinations::default(),
            timeout: Duration::from_secs(10),
            lease: Duration::from_secs(30),
            poll: Duration::from_secs(1),
            in_flight: 64,
            per_webhook: 4,
            retries: Retries::default(),
            retention: Duration::from_secs(7 * 24 * 3600),
            page,
            on_attempt: None,
        }
    }
}

/// A unique worker name for this process: `HOST-PID-RANDOM`.
pub fn worker_name() -> String {
    let mut bytes = [0u8; 3];
    let _ = getrandom::fill(&mut bytes);
    let random: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "promptreg".to_owned());
    format!("{host}-{}-{random}", std::process::id())
}

/// How often finished deliveries older than the retention are dropped.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// Delivers until `stop` turns true; deliveries in flight then finish.
///
/// # Errors
///
/// When the HTTP client cannot start (no TLS backend).
pub async fn run(
    store: Store,
    options: WorkerOptions,
    mut stop: watch::Receiver<bool>,
) -> Result<(), String> {
    let shared = Arc::new(Sender::new(store.clone(), options.clone())?);
    let mut events = store.subscribe();
    let mut running: JoinSet<()> = JoinSet::new();
    // The webhook of each task, so that its place is given back however
    // the task ends.
    let mut tasks: BTreeMap<tokio::task::Id, String> = BTreeMap::new();
    let mut per_webhook: BTreeMap<String, usize> = BTreeMap::new();
    let mut pruned = tokio::time::Instant::now();
    let mut failing = false;
    prune(&store, &options).await;
    while !*stop.borrow() {
        let room = options.in_flight.saturating_sub(running.len());
        if room > 0 {
            let busy: Vec<String> = per_webhook
                .iter()
                .filter(|(_, n)| **n >= options.per_webhook)
                .map(|(name, _)| name.clone())
                .collect();
            match store
                .claim_deliveries(&options.name, options.lease, room, &busy)
                .await
            {
                Ok(claimed) => {
                    if failing {
                        tracing::info!("webhooks: the store answers again; delivering");
                        failing = false;
                    }
                    for delivery in claimed {
                        *per_webhook.entry(delivery.webhook.clone()).or_default() += 1;
                        let webhook = delivery.webhook.clone();
                        let shared = shared.clone();
                        let task = running.spawn(async move { shared.deliver(delivery).await });
                        tasks.insert(task.id(), webhook);
                    }
                }
                Err(e) => {
                    // Said once per outage, not at every poll.
                    if !failing {
                        tracing::warn!(error = %e, "webhooks: cannot claim deliveries; trying again every poll");
                    }
                    failing = true;
                }
            }
        }
        if pruned.elapsed() >= PRUNE_EVERY {
            pruned = tokio::time::Instant::now();
            prune(&store, &options).await;
        }
        tokio::select! {
            Some(done) = running.join_next_with_id(), if !running.is_empty() => {
                finished(&mut tasks, &mut per_webhook, done);
                // Every other delivery that finished meanwhile, at once.
                while let Some(done) = running.try_join_next_with_id() {
                    finished(&mut tasks, &mut per_webhook, done);
                }
            }
            changed = events.changed() => {
                if changed.is_err() {
                    // The store is gone; nothing more comes.
                    break;
                }
            }
            _ = tokio::time::sleep(options.poll) => {}
            _ = stop.changed() => {}
        }
    }
    while running.join_next().await.is_some() {}
    Ok(())
}

/// Gives a finished task's place back to its webhook.
fn finished(
    tasks: &mut BTreeMap<tokio::task::Id, String>,
    per_webhook: &mut BTreeMap<String, usize>,
    done: Result<(tokio::task::Id, ()), tokio::task::JoinError>,
) {
    let id = match done {
        Ok((id, ())) => id,
        Err(e) => e.id(),
    };
    let Some(webhook) = tasks.remove(&id) else {
        return;
    };
    if let Some(n) = per_webhook.get_mut(&webhook) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            per_webhook.remove(&webhook);
        }
    }
}

async fn prune(store: &Store, options: &WorkerOptions) {
    let kept_for = i64::try_from(options.retention.as_millis()).unwrap_or(i64::MAX);
    let before = Timestamp(Timestamp::now().0.saturating_sub(kept_for));
    if let Err(e) = store.prune_deliveries(before).await {
        tracing::warn!(error = %e, "webhooks: cannot drop old deliveries");
    }
}

/// Sends deliveries and records their attempts.
pub(crate) struct Sender {
    store: Store,
    options: WorkerOptions,
    outbound: Outbound,
}

impl Sender {
    pub(crate) fn new(store: Store, options: WorkerOptions) -> Result<Sender, String> {
        let outbound = Outbound::new(options.destinations, options.timeout)?;
        Ok(Sender {
            store,
            options,
            outbound,
        })
    }

    /// Sends one delivery and records the attempt.
    pub(crate) async fn deliver(&self, delivery: ClaimedDelivery) {
        let started = Timestamp::now();
        let exchange = match self.request(&delivery, started).await {
            Ok((headers, body)) => self.outbound.post(&delivery.url, headers, body).await,
            Err(error) => Exchange {
                status: None,
                response: String::new(),
                error: Some(error),
                took: Duration::ZERO,
            },
        };
        let next = match exchange.delivered() {
            true => Attempted::Delivered,
            // 410 Gone: the receiver asks for no more (as the scheme suggests).
            false if exchange.status == Some(410) => Attempted::GiveUp,
            false => self.options.retries.after_failure(
                delivery.attempt,
                delivery.retrying_since,
                Timestamp::now(),
                jitter(),
            ),
        };
        let attempt = Attempt {
            at: started,
            duration_ms: u64::try_from(exchange.took.as_millis()).unwrap_or(u64::MAX),
            status: exchange.status,
            error: exchange.error.clone(),
            response: exchange.response,
            by: self.options.name.clone(),
        };
        if next == Attempted::GiveUp {
            tracing::warn!(
                webhook = %delivery.webhook,
                message = %delivery.message_id,
                error = ?attempt.error,
                status = ?attempt.status,
                "webhooks: giving up a delivery; the webhook is disabled until an admin enables it",
            );
        }
        if let Some(OnAttempt(told)) = &self.options.on_attempt {
            told(next);
        }
        let recorded = self
            .store
            .record_attempt(delivery.id, &self.options.name, &attempt, next)
            .await;
        if let Err(e) = recorded {
            // The lease runs out and another attempt is made: at least once.
            tracing::warn!(webhook = %delivery.webhook, error = %e, "webhooks: cannot record an attempt");
        }
    }

    /// The signed headers and the body of one attempt.
    async fn request(
        &self,
        delivery: &ClaimedDelivery,
        now: Timestamp,
    ) -> Result<(HeaderMap, Vec<u8>), String> {
        let revision = match &delivery.event {
            Some(event) => match &event.change {
                promptreg_store::EventKind::RevisionCreated {
                    label, revision, ..
                } => {
                    let label = Label::new(label).map_err(|e| e.to_string())?;
                    let revision = self.store.revision(&event.pack, &label, *revision).await;
                    Some(revision.map_err(|e| format!("cannot read the revision: {e}"))?)
                }
                _ => None,
            },
            None => None,
        };
        let body = message::body(delivery, revision.as_ref(), &self.options.page, now);
        let seconds = now.0.div_euclid(1000);
        let signed = signature(&delivery.secrets, &delivery.message_id, seconds, &body)
            .map_err(|e| e.to_string())?;
        let mut headers = HeaderMap::new();
        let value = |s: &str| HeaderValue::from_str(s).map_err(|e| e.to_string());
        headers.insert("webhook-id", value(&delivery.message_id)?);
        headers.insert("webhook-timestamp", value(&seconds.to_string())?);
        headers.insert("webhook-signature", value(&signed)?);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Ok((headers, body))
    }
}
