//! The event log: every change to the store, numbered in commit order,
//! and the newest number pushed to subscribers as it changes.
//!
//! Each write appends its events in its own transaction, so an event
//! exists exactly when its change does. A reader that has seen event `N`
//! and asks for the events after `N` gets every later one, in order (see
//! `Dialect::lock_events` for PostgreSQL). Ids only grow; an id is skipped
//! only when a transaction fails at its commit.
//!
//! Label moves carry the same fields as the history's [`LabelMove`]s: a
//! push appends a [`EventKind::VersionCreated`] per new version and a
//! [`EventKind::LabelMoved`] per move of `latest`; a move by hand or a
//! rollback is a `LabelMoved`; a release is one [`EventKind::Released`]
//! carrying every move it made, however many prompts the pack has, so a
//! release reaches a reader as one event. Every change to what a label
//! resolves to then appends one [`EventKind::RevisionCreated`], last.
//! (Releases recorded before
//! schema version 3 are a `Released` without versions, then a
//! `LabelMoved` per prompt; they are read back as they were written.) A
//! write that changes
//! nothing (the same push again, a release with nothing to move, a label
//! protected twice) appends nothing. API keys are not pack changes and
//! have no events.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde::Serialize;
use sqlx::postgres::{PgListener, PgPool};
use sqlx::sqlite::SqlitePool;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::backend::Backend;
use crate::backend::EVENTS_CHANNEL;
use crate::backend::{postgres, sqlite};
use crate::model::{LabelMove, RevisionCause, Timestamp};

/// One change to the store, numbered in commit order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    /// Increases with every change, in commit order; see
    /// [`Store::events_since`](crate::Store::events_since).
    pub id: u64,
    /// When the change was made.
    pub at: Timestamp,
    /// The pack changed.
    pub pack: String,
    /// What changed.
    #[serde(flatten)]
    pub change: EventKind,
}

/// What an [`Event`] changed. Serialised with its kind in `type`
/// (`version_created`, `label_moved`, ...).
///
/// New kinds may be added in minor releases.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// A push recorded a new version of `prompt` (or of
    /// [`PACK_ENTRY`](crate::PACK_ENTRY)).
    VersionCreated {
        /// The prompt id.
        prompt: String,
        /// The new version's number.
        version: u64,
        /// Who pushed it.
        author: String,
    },
    /// A label of `prompt` moved: by hand, by a rollback, or (`latest`) by
    /// a push; by a release only in events recorded before schema version
    /// 3 (a release is one [`EventKind::Released`] now).
    LabelMoved {
        /// The prompt id.
        prompt: String,
        /// The label.
        label: String,
        /// Where it pointed before (`None`: it did not exist).
        from: Option<u64>,
        /// Where it points now (`None`: a push removed the prompt).
        to: Option<u64>,
        /// Who moved it.
        actor: String,
        /// Why, as in the history.
        reason: String,
    },
    /// A release moved `label` on several prompts at once, in one
    /// transaction.
    Released {
        /// The label moved.
        label: String,
        /// Every prompt it moved, sorted by prompt.
        moves: Vec<ReleasedPrompt>,
        /// Who released.
        actor: String,
        /// Why: `release FROM`.
        reason: String,
    },
    /// A change to what `label` resolves to recorded its revision `revision`:
    /// appended after the moves that made it, in the same transaction.
    /// Every change to a label's state has one, so a follower of a label
    /// needs no other event, and one whose bundle ETag carries `digest`
    /// already serves it.
    RevisionCreated {
        /// The label.
        label: String,
        /// The revision's number.
        revision: u64,
        /// The state's address, as the label's bundle ETag carries it.
        digest: String,
        /// What made it.
        cause: RevisionCause,
        /// Who made it.
        actor: String,
        /// Why, as in the history.
        reason: String,
    },
    /// A revision of `label` was signed after it was made
    /// ([`Store::sign_revision`](crate::Store::sign_revision)).
    RevisionSigned {
        /// The label.
        label: String,
        /// The revision's number.
        revision: u64,
        /// The revision's state, as the label's bundle ETag carries it.
        digest: String,
        /// The signing key's fingerprint.
        fingerprint: String,
        /// Who signed.
        actor: String,
    },
    /// A split of `label` changed: it started, its share changed, its
    /// candidate was promoted (after the `released` and
    /// `revision_created` of the promotion) or it was aborted.
    SplitChanged {
        /// The label.
        label: String,
        /// The split's id.
        split: u64,
        /// What happened.
        step: crate::splits::SplitStep,
        /// Its share after the step.
        share: crate::splits::Share,
        /// The candidate state's digest.
        digest: String,
        /// Who.
        actor: String,
        /// Why.
        reason: String,
    },
    /// A push changed the default text of `prompt` and left its variant
    /// for `locale` as it was, translated from the older text: the
    /// translation went stale in version `version`.
    TranslationStale {
        /// The prompt id.
        prompt: String,
        /// The variant's locale.
        locale: String,
        /// The prompt's new version.
        version: u64,
        /// Who pushed it.
        actor: String,
    },
    /// A gated label's tests refused a move (a move, a release, a
    /// rollback, a restore, a push moving `latest`, a split's start):
    /// nothing moved. Appended on its own, after the refusal.
    GateRefused {
        /// The gated label.
        label: String,
        /// How many test cases failed against the state it would serve.
        failed: u64,
        /// Who asked for the move.
        actor: String,
        /// Why they asked.
        reason: String,
    },
    /// `label` became protected in the pack.
    LabelProtected {
        /// The label.
        label: String,
        /// Who protected it.
        actor: String,
    },
    /// `label` is no longer protected in the pack.
    LabelUnprotected {
        /// The label.
        label: String,
        /// Who lifted the protection.
        actor: String,
    },
}

/// One prompt a release moved, and where its label pointed before and
/// after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReleasedPrompt {
    /// The prompt id (or [`PACK_ENTRY`](crate::PACK_ENTRY)).
    pub prompt: String,
    /// Where the label pointed before (`None`: it did not exist, or the
    /// release was recorded before releases carried versions).
    pub from: Option<u64>,
    /// Where it points now (`None` only for a release recorded before
    /// releases carried versions: the `label_moved` events after it do).
    pub to: Option<u64>,
}

impl From<&LabelMove> for ReleasedPrompt {
    fn from(m: &LabelMove) -> Self {
        ReleasedPrompt {
            prompt: m.prompt.clone(),
            from: m.from,
            to: m.to,
        }
    }
}

impl From<&LabelMove> for EventKind {
    fn from(m: &LabelMove) -> Self {
        EventKind::LabelMoved {
            prompt: m.prompt.clone(),
            label: m.label.clone(),
            from: m.from,
            to: m.to,
            actor: m.actor.clone(),
            reason: m.reason.clone(),
        }
    }
}

impl EventKind {
    /// The kind's name: in the `events` table, and as the event stream's
    /// `event` field. A split's step is named for itself (`split_start`,
    /// `split_share`, `split_promote`, `split_abort`), its data being a
    /// `split_changed` with its `step`.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::VersionCreated { .. } => "version_created",
            EventKind::LabelMoved { .. } => "label_moved",
            EventKind::Released { .. } => "released",
            EventKind::RevisionCreated { .. } => "revision_created",
            EventKind::RevisionSigned { .. } => "revision_signed",
            EventKind::SplitChanged { step, .. } => match step {
                crate::splits::SplitStep::Start => "split_start",
                crate::splits::SplitStep::Share => "split_share",
                crate::splits::SplitStep::Promote => "split_promote",
                crate::splits::SplitStep::Abort => "split_abort",
            },
            EventKind::TranslationStale { .. } => "translation_stale",
            EventKind::GateRefused { .. } => "gate_refused",
            EventKind::LabelProtected { .. } => "label_protected",
            EventKind::LabelUnprotected { .. } => "label_unprotected",
        }
    }
}

/// A write's result, with the id of the last event it appended.
pub(crate) struct Written<T> {
    pub(crate) value: T,
    pub(crate) last_event: Option<u64>,
}

/// How often a SQLite store looks for events written by other processes,
/// unless [`Store::with_event_poll`](crate::Store::with_event_poll) says.
pub const DEFAULT_EVENT_POLL: Duration = Duration::from_millis(250);

/// The first and the longest wait before listening to PostgreSQL again.
const RECONNECT_FIRST: Duration = Duration::from_millis(100);
const RECONNECT_MAX: Duration = Duration::from_secs(5);

/// The newest event id a store knows of, shared by its clones, and the task
/// that learns of other processes' events (started by the first
/// subscription, stopped when the last clone of the store is dropped).
pub(crate) struct Feed {
    newest: watch::Sender<u64>,
    poll_ms: AtomicU64,
    follower: Mutex<Option<JoinHandle<()>>>,
}

impl Feed {
    pub(crate) fn new(newest: u64) -> Arc<Feed> {
        Arc::new(Feed {
            newest: watch::Sender::new(newest),
            poll_ms: AtomicU64::new(DEFAULT_EVENT_POLL.as_millis() as u64),
            follower: Mutex::new(None),
        })
    }

    /// Makes `id` the newest, unless a newer one is known: writes finish
    /// and notifications arrive in any order, the id only grows.
    pub(crate) fn publish(&self, id: u64) {
        self.newest.send_if_modified(|newest| {
            let newer = id > *newest;
            if newer {
                *newest = id;
            }
            newer
        });
    }

    pub(crate) fn set_poll(&self, every: Duration) {
        let ms = u64::try_from(every.as_millis()).unwrap_or(u64::MAX).max(1);
        self.poll_ms.store(ms, Ordering::Relaxed);
    }

    fn poll(&self) -> Duration {
        Duration::from_millis(self.poll_ms.load(Ordering::Relaxed))
    }

    /// A receiver of the newest id; starts following other processes'
    /// writes if a tokio runtime is running and no follower is (one that
    /// ended with the runtime it ran on is started again).
    pub(crate) fn subscribe(self: &Arc<Feed>, backend: &Backend) -> watch::Receiver<u64> {
        let receiver = self.newest.subscribe();
        let mut follower = self.follower.lock().unwrap_or_else(|e| e.into_inner());
        if follower.as_ref().is_none_or(JoinHandle::is_finished)
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let feed = Arc::downgrade(self);
            *follower = Some(match backend {
                Backend::Sqlite(pool) => runtime.spawn(poll_sqlite(pool.clone(), feed)),
                Backend::Postgres(pool) => runtime.spawn(listen_postgres(pool.clone(), feed)),
            });
        }
        receiver
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        let follower = self.follower.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(task) = follower.take() {
            task.abort();
        }
    }
}

/// SQLite: reads the newest id every poll interval (another process may
/// write the file); a failed read is retried at the next tick.
async fn poll_sqlite(pool: SqlitePool, feed: Weak<Feed>) {
    loop {
        let Some(every) = feed.upgrade().map(|f| f.poll()) else {
            return;
        };
        tokio::time::sleep(every).await;
        if let Ok(id) = sqlite::last_event_id(&pool).await {
            let Some(feed) = feed.upgrade() else { return };
            feed.publish(id);
        }
    }
}

/// PostgreSQL: LISTENs for the ids writers announce at commit. After every
/// (re)connection it reads the newest id, so an event committed while it
/// was not listening is not missed; when the server goes away it tries
/// again with a growing wait.
async fn listen_postgres(pool: PgPool, feed: Weak<Feed>) {
    let mut wait = RECONNECT_FIRST;
    while !pool.is_closed() && feed.strong_count() > 0 {
        if let Ok(mut listener) = listen(&pool).await
            && refresh(&pool, &feed).await
        {
            wait = RECONNECT_FIRST;
            while let Ok(Some(notification)) = listener.try_recv().await {
                if announces_news(notification.payload(), &feed) && !refresh(&pool, &feed).await {
                    break;
                }
            }
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(RECONNECT_MAX);
    }
}

async fn listen(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    // A lost connection ends `try_recv` with `Ok(None)`; this task
    // reconnects itself, to read the newest id after.
    listener.eager_reconnect(false);
    listener.listen(EVENTS_CHANNEL).await?;
    Ok(listener)
}

/// Reads and publishes the newest id; false if the read failed.
async fn refresh(pool: &PgPool, feed: &Weak<Feed>) -> bool {
    match postgres::last_event_id(pool).await {
        Ok(id) => {
            if let Some(feed) = feed.upgrade() {
                feed.publish(id);
            }
            true
        }
        Err(_) => false,
    }
}

/// Whether a notification may bring an id this store does not know. The
/// channel is shared by every schema of the database, so a payload is only
/// a hint: the id is read from this store's own table. This store's own
/// writes, already published, need no read.
fn announces_news(payload: &str, feed: &Weak<Feed>) -> bool {
    let Some(feed) = feed.upgrade() else {
        return false;
    };
    payload
        .parse::<u64>()
        .map_or(true, |id| id > *feed.newest.borrow())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::splits::{Share, SplitStep};

    /// One event of every kind, every split step among them.
    pub(crate) fn every_kind() -> Vec<EventKind> {
        let text = String::new;
        let mut kinds = vec![
            EventKind::VersionCreated {
                prompt: text(),
                version: 1,
                author: text(),
            },
            EventKind::LabelMoved {
                prompt: text(),
                label: text(),
                from: None,
                to: None,
                actor: text(),
                reason: text(),
            },
            EventKind::Released {
                label: text(),
                moves: Vec::new(),
                actor: text(),
                reason: text(),
            },
            EventKind::RevisionCreated {
                label: text(),
                revision: 1,
                digest: text(),
                cause: RevisionCause::Push,
                actor: text(),
                reason: text(),
            },
            EventKind::RevisionSigned {
                label: text(),
                revision: 1,
                digest: text(),
                fingerprint: text(),
                actor: text(),
            },
            EventKind::TranslationStale {
                prompt: text(),
                locale: text(),
                version: 2,
                actor: text(),
            },
            EventKind::GateRefused {
                label: text(),
                failed: 1,
                actor: text(),
                reason: text(),
            },
            EventKind::LabelProtected {
                label: text(),
                actor: text(),
            },
            EventKind::LabelUnprotected {
                label: text(),
                actor: text(),
            },
        ];
        for step in [
            SplitStep::Start,
            SplitStep::Share,
            SplitStep::Promote,
            SplitStep::Abort,
        ] {
            kinds.push(EventKind::SplitChanged {
                label: text(),
                split: 1,
                step,
                share: Share::ALL,
                digest: text(),
                actor: text(),
                reason: text(),
            });
        }
        // A kind added to `EventKind` must be added above: this match has no
        // catch-all.
        for kind in &kinds {
            match kind {
                EventKind::VersionCreated { .. }
                | EventKind::LabelMoved { .. }
                | EventKind::Released { .. }
                | EventKind::RevisionCreated { .. }
                | EventKind::RevisionSigned { .. }
                | EventKind::SplitChanged { .. }
                | EventKind::TranslationStale { .. }
                | EventKind::GateRefused { .. }
                | EventKind::LabelProtected { .. }
                | EventKind::LabelUnprotected { .. } => {}
            }
        }
        kinds
    }

    /// The book's events page has a section for every kind the stream
    /// sends, and none for a kind it does not.
    #[test]
    fn the_book_describes_every_event() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/src/reference/events.md"
        );
        let page = std::fs::read_to_string(path).unwrap();
        let described: Vec<&str> = page
            .lines()
            .filter_map(|line| line.strip_prefix("## `")?.strip_suffix('`'))
            .collect();
        let mut sent: Vec<&str> = every_kind().iter().map(EventKind::name).collect();
        sent.push("reconnect");
        for name in &sent {
            assert!(
                described.contains(name),
                "{path} lacks a section `## `{name}``"
            );
        }
        for name in &described {
            assert!(
                sent.contains(name),
                "{path} describes `{name}`, which no event is"
            );
        }
    }
}
