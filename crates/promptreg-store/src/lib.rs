//! Versions and labels for promptreg packs, in an embedded SQLite file or
//! a PostgreSQL server.
//!
//! A pack pushed to a [`Store`] becomes one immutable, numbered version per
//! prompt: the prompt's files exactly as written (its default, every
//! locale variant, the pins, the template flag, the variables and whatever
//! else its front matter declares), so a rollback restores every language
//! at once. A version is content-addressed (SHA-256 of its files), so
//! pushing the same content again writes nothing. The pack-level files
//! (the manifest and the snippets) are versioned the same way, under
//! [`PACK_ENTRY`], and the prompt tests with their snapshots under
//! [`TESTS_ENTRY`]: a pull gives back every file of the pack format, byte
//! for byte.
//!
//! Labels (`production`, `staging`) point at versions; `latest` follows
//! pushes. A move names the version it expects the label to point at now,
//! and fails with [`ErrorKind::Conflict`] otherwise; every move is appended
//! to a history in the same transaction. Protected labels need
//! [`Permission::Admin`].
//!
//! ```
//! use promptreg::PromptRegistry;
//! use promptreg_store::{Actor, Label, PackFiles, Permission, Store};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! # let dir = tempfile::tempdir().unwrap();
//! # let database = dir.path().join("promptreg.db");
//! let store = Store::open(database.to_str().unwrap()).await?;
//! let me = Actor::new("ada", [Permission::Write]);
//!
//! let mut files = PackFiles::default();
//! files.insert("promptreg.toml", "name = \"demo\"\nkeys = [\"greeting\"]\n[user]\nprompts_dir = \".demo/prompts\"\n");
//! files.insert("defaults/greeting.md", "Hello!\n");
//! files.insert("defaults/greeting.fr.md", "Bonjour !");
//! let pushed = store.push(&files, &me, "first version").await?;
//! assert_eq!(pushed.versions_written(), 2); // the manifest and `greeting`
//!
//! // Publish version 1 as `production`, then serve it.
//! store.move_label("demo", "greeting", &Label::new("production")?, 1, None, &me, "ship").await?;
//! store.move_label("demo", "@pack", &Label::new("production")?, 1, None, &me, "ship").await?;
//! let registry = PromptRegistry::new();
//! store.install("demo", &Label::new("production")?, &registry).await?;
//! assert_eq!(registry.render_in("greeting", &(), "fr-CA")?, "Bonjour !");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! Every change is appended to an event log, numbered in commit order
//! ([`Store::events_since`], [`Event`]); [`Store::subscribe`] pushes the
//! newest number as it changes, other processes' changes included. API
//! keys ([`Store::create_key`], [`Store::authenticate`], [`ApiKey`]) give
//! a server the [`Actor`] of each caller; only a hash of a key's secret is
//! stored.
//!
//! Open a store with [`Store::open`]: a path (the default is
//! [`DEFAULT_DATABASE`], `promptreg.db`), `sqlite:PATH`, or
//! `postgres://user:password@host/database`. Both backends run the same
//! SQL and the same migrations, applied on open; a database made by a newer
//! promptreg is refused with [`ErrorKind::NewerSchema`]. A database URL
//! appears in messages with its password replaced by `***`.

#![deny(missing_docs)]

#[macro_use]
mod backend;
mod diff;
mod error;
mod events;
mod files;
mod fleet;
mod gate;
mod keys;
mod limits;
mod location;
mod model;
mod revisions;
mod schema;
mod signatures;
mod splits;
mod stale;
mod store;
#[cfg(feature = "test-support")]
pub mod test_support;
mod text;
mod timestamp;
mod webhooks;

pub use diff::{FileDiff, PromptDiff, RevisionDiff, contract_changes, file_locale};
pub use error::{Error, ErrorKind};
pub use events::{DEFAULT_EVENT_POLL, Event, EventKind, ReleasedPrompt};
pub use files::{PACK_ENTRY, PackFiles, TESTS_ENTRY, is_pack_level, state_digest};
pub use fleet::{
    DEFAULT_FLEET_CAPACITY, Fleet, FleetLimits, FleetQuery, Instance, InstanceReport, KEPT_FOR,
    MAX_INSTANCE_ID, MAX_INSTANCE_NAME, MAX_LAST_ERROR, MAX_LIBRARY, MAX_PAGE, REPORT_INTERVALS,
    ReportOf, RevisionServed, Served,
};
pub use gate::{FailedCase, GATE_TIME, TestLimits, TestReport, TestTurns, Turn, test_state};
pub use keys::{ApiKey, Scope};
pub use limits::FileLimits;
pub use location::DEFAULT_DATABASE;
pub use model::{
    Actor, Change, EntryVersion, LATEST, Label, LabelMove, Permission, Permit, PushReport,
    Restored, Revision, RevisionCause, RevisionChange, RevisionRef, RevisionSignature, Timestamp,
    VersionInfo, VersionRef, Writer,
};
pub use splits::{Candidate, Share, Split, SplitChange, SplitState, SplitStep};
pub use store::Store;
pub use text::MAX_MESSAGE_BYTES;
pub use webhooks::{
    Attempt, Attempted, ClaimedDelivery, Delivery, DeliveryState, Disabled, EVENT_TYPES,
    LOGGED_RESPONSE_BYTES, MAX_OVERLAP, MAX_URL_BYTES, TEST_EVENT_TYPE, Webhook, WebhookChange,
    WebhookFormat, WebhookSpec, check_url, event_type,
};
