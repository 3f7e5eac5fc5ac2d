//! `GET /v1/events`: every change to the store as a server-sent event.
//!
//! One task per server follows the store ([`Store::subscribe`]: LISTEN/
//! NOTIFY on PostgreSQL, so changes made through any server arrive), reads
//! the new events in order, drops what the cache holds of their packs and
//! broadcasts them. Each client reads the broadcast through a ring of
//! bounded size: the follower never waits for a client, and a client that
//! falls a whole ring behind gets a final `reconnect` event and is dropped.
//! A release is one event, so a release of any size takes one place in the
//! ring.
//! It comes back with `Last-Event-ID` and is replayed what it missed from
//! the store, in order.
//!
//! Whether the callers of the open streams may still read is checked by
//! one task per server, once per caller every [`KEY_RECHECK`], not by
//! each stream: ten thousand idle streams of one key cost one check, and
//! only the streams of a caller refused wake up, to end.

use std::collections::{HashMap, HashSet, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::Stream;
use promptreg_store::Event;
use serde_json::json;
use tokio::sync::{broadcast, watch};

use crate::auth::{self, Caller};
use crate::extract::Query;
use crate::problem::{Problem, ProblemCode, ProblemDetails};
use crate::state::AppState;

pub(crate) mod stream;

/// How many events one read of the store returns.
const PAGE: usize = 256;

/// How often the follower reads the store even without a notification, so
/// a notification lost while the database was away delays nothing long.
const POLL: Duration = Duration::from_secs(5);

/// How often an open stream checks that its caller may still read: a
/// stream of a revoked key ends within this time (plus `key_cache`).
pub(crate) const KEY_RECHECK: Duration = Duration::from_secs(2);

/// The SSE `retry` hint, in milliseconds, sent with `reconnect`.
const RETRY: Duration = Duration::from_millis(500);

/// An event as sent: its id, pack, type and JSON, serialised once.
#[derive(Debug)]
pub(crate) struct Delivered {
    id: u64,
    pack: String,
    kind: String,
    data: String,
}

impl Delivered {
    fn of(event: &Event) -> Delivered {
        Delivered {
            id: event.id,
            pack: event.pack.clone(),
            kind: event.change.name().to_owned(),
            data: serde_json::to_string(event).unwrap_or_default(),
        }
    }

    fn to_sse(&self) -> SseEvent {
        SseEvent::default()
            .id(self.id.to_string())
            .event(&self.kind)
            .data(&self.data)
    }
}

/// Who reads a stream: a key's secret, `None` for the local user of a
/// store without keys.
type Reader = Option<String>;

/// The broadcast every client stream reads.
pub(crate) struct Hub {
    sender: broadcast::Sender<Arc<Delivered>>,
    clients: Arc<()>,
    /// The readers of the open streams, each with its number of streams.
    readers: Arc<Mutex<HashMap<Reader, usize>>>,
    /// The readers refused at the last check: their streams end.
    refused: watch::Sender<Arc<HashSet<Reader>>>,
    /// Ticks after each batch of events, once the cache dropped what they
    /// changed: MCP sessions look again at what they see.
    changes: watch::Sender<u64>,
}

impl Hub {
    pub(crate) fn new(capacity: usize) -> Hub {
        Hub {
            sender: broadcast::channel(capacity.max(1)).0,
            clients: Arc::new(()),
            readers: Arc::default(),
            refused: watch::Sender::new(Arc::default()),
            changes: watch::Sender::new(0),
        }
    }

    /// Ticks after each batch of the store's events.
    pub(crate) fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Counts a stream of `reader` until the guard returned drops.
    fn join(&self, reader: Reader) -> Joined {
        let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        *readers.entry(reader.clone()).or_default() += 1;
        Joined {
            readers: Arc::clone(&self.readers),
            reader,
            _client: Arc::clone(&self.clients),
        }
    }

    /// How many clients follow the stream now.
    pub(crate) fn clients(&self) -> usize {
        Arc::strong_count(&self.clients) - 1
    }
}

/// Follows the store until shutdown: reads new events after `last`, drops
/// what the cache holds of their packs, broadcasts them.
pub(crate) async fn follow(state: AppState, mut last: u64) {
    let mut notified = state.store.subscribe();
    let mut shutdown = state.shutdown.subscribe();
    let mut backoff = Duration::from_millis(100);
    loop {
        match state.store.events_since(last, PAGE).await {
            Ok(batch) => {
                backoff = Duration::from_millis(100);
                let full = batch.len() == PAGE;
                for event in &batch {
                    state.cache.invalidate(&event.pack);
                    last = event.id;
                    // No receiver is not an error: nobody listens yet.
                    let _ = state.events.sender.send(Arc::new(Delivered::of(event)));
                }
                if !batch.is_empty() {
                    state.events.changes.send_modify(|n| *n = n.wrapping_add(1));
                }
                if full {
                    continue;
                }
            }
            Err(e) => {
                state.metrics.store_error();
                // The events stay in the store: they are read once it is back.
                tracing::warn!(error = %e, "cannot read the store's events; retrying");
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = stopping(&mut shutdown) => return,
                }
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
        }
        let lost = tokio::select! {
            changed = notified.changed() => changed.is_err(),
            _ = tokio::time::sleep(POLL) => false,
            _ = stopping(&mut shutdown) => return,
        };
        if lost {
            // The store stopped notifying: subscribe again, reading on a timer meanwhile.
            notified = state.store.subscribe();
            tokio::time::sleep(POLL).await;
        }
    }
}

/// A stream of one reader, counted among the clients and its reader's
/// streams while it lasts.
struct Joined {
    readers: Arc<Mutex<HashMap<Reader, usize>>>,
    reader: Reader,
    _client: Arc<()>,
}

impl Drop for Joined {
    fn drop(&mut self) {
        let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = readers.get_mut(&self.reader) {
            *count -= 1;
            if *count == 0 {
                readers.remove(&self.reader);
            }
        }
    }
}

/// Checks every [`KEY_RECHECK`], until shutdown, that each reader of an
/// open stream may still read, and publishes those refused.
pub(crate) async fn recheck_readers(state: AppState) {
    let mut shutdown = state.shutdown.subscribe();
    loop {
        tokio::select! {
            () = tokio::time::sleep(KEY_RECHECK) => {}
            () = stopping(&mut shutdown) => return,
        }
        let readers: Vec<Reader> = {
            let readers = state.events.readers.lock();
            readers
                .unwrap_or_else(|p| p.into_inner())
                .keys()
                .cloned()
                .collect()
        };
        let mut refused = HashSet::new();
        for reader in readers {
            if !may_read(&state, reader.as_deref()).await {
                refused.insert(reader);
            }
        }
        state.events.refused.send_if_modified(|known| {
            let changed = **known != refused;
            if changed {
                *known = Arc::new(refused);
            }
            changed
        });
    }
}

/// Whether `secret` (or, for `None`, the local user) may still read: the
/// key is not revoked, or the store still has no key. A store that cannot
/// be reached ends no stream.
async fn may_read(state: &AppState, secret: Option<&str>) -> bool {
    let (auth, store) = (&state.auth, &state.store);
    let allowed = match secret {
        Some(secret) => auth.key(store, secret).await.map(|_| true),
        None => auth.anonymous(store).await.map(|caller| caller.is_some()),
    };
    allowed.unwrap_or_else(|problem| problem.details().status != 401)
}

/// Completes when the server begins to shut down.
async fn stopping(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}
