//! Following a label of a pack on a `promptreg serve` server (feature
//! `remote`).
//!
//! [`PromptRegistry::follow`](Follow::follow) starts a thread that keeps one label of one
//! pack in the registry: it listens to the server's event stream, fetches
//! the label's bundle (conditionally, with its ETag) when the label
//! moves, validates it as a pack and only then publishes it, through the
//! same path as installing a pack. Renders never wait for any of it: they
//! read the last published snapshot.
//!
//! Start-up is offline first: the last good bundle from the disk cache,
//! else whatever the host registered or installed, then the server when it
//! answers. A failure (server down, a bundle that does not load, a revoked
//! key) keeps the last good state and says why in [`Follower::status`].
//!
//! No clock decides what is in force, so a skewed wall clock changes
//! nothing: the disk cache is accepted by its hash, never by its age or
//! date; a bundle is current while the server's ETag says so; reconnect
//! waits, polling and timeouts use the monotonic clock ([`Instant`]).
//! After a reconnect the stream resumes after the last event received
//! (`Last-Event-ID`, see [`Status::last_event_id`]): the server replays
//! what was missed, in order.
//!
//! ```no_run
//! use std::time::Duration;
//! use promptreg_core::PromptRegistry;
//! use promptreg_remote::{Follow, Remote};
//!
//! let registry = PromptRegistry::new();
//! registry.register_default("narrator", "Narrate the page.")?; // used until a sync
//! let follower = registry.follow(
//!     Remote::new("http://127.0.0.1:7878")
//!         .pack("web-agent")
//!         .label("production")
//!         .key("prk_…"),
//! )?;
//! follower.wait_for_first_sync(Duration::from_secs(2));
//! println!("{:?}", follower.status());
//! let text = registry.render_plain("narrator")?;
//! # Ok::<(), promptreg_core::Error>(())
//! ```

#![deny(missing_docs)]
#![allow(clippy::result_large_err)]
#![warn(rustdoc::broken_intra_doc_links)]

// The modules of the crates below, as this crate's own paths use them.
use promptreg_core::{error, registry, split};
use promptreg_packs::{pack, sources};
use promptreg_signing as signing;

mod baked;
mod bundle;
mod cache;
mod client;
mod follower;
mod report;
mod sse;
pub mod wire;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use baked::{BakedBundle, FromBundle};
pub use follower::{Follow, Follower};

/// The host's callback for each [`Change`].
type OnChange = Arc<dyn Fn(&Change) + Send + Sync>;

/// Which server, pack and label to follow, and how.
#[derive(Clone)]
pub struct Remote {
    pub(crate) server: String,
    pub(crate) pack: String,
    pub(crate) label: String,
    pub(crate) key: Option<String>,
    pub(crate) cache_dir: Option<PathBuf>,
    pub(crate) disk_cache: bool,
    pub(crate) poll_interval: Duration,
    pub(crate) timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) reconnect_min: Duration,
    pub(crate) reconnect_max: Duration,
    pub(crate) on_change: Option<OnChange>,
    /// How often the fleet report is sent; `None`: never.
    pub(crate) report_interval: Option<Duration>,
    pub(crate) instance_id: Option<String>,
    pub(crate) instance_name: Option<String>,
    pub(crate) library: String,
    /// Accept only bundles signed by one of these keys.
    pub(crate) trusted_keys: Option<crate::signing::TrustedKeys>,
    /// A baked bundle to start from when the disk cache holds nothing newer.
    pub(crate) baked: Option<PathBuf>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is a secret: never printed.
        f.debug_struct("Remote")
            .field("server", &self.server)
            .field("pack", &self.pack)
            .field("label", &self.label)
            .field("key", &self.key.as_ref().map(|_| "…"))
            .field("cache_dir", &self.cache_dir)
            .field("disk_cache", &self.disk_cache)
            .field("trusted_keys", &self.trusted_keys.as_ref().map(|k| k.len()))
            .finish_non_exhaustive()
    }
}

impl Remote {
    /// The server at `url` (`http://host:port`), label `production` of
    /// no pack yet: name it with [`pack`](Self::pack).
    pub fn new(url: impl Into<String>) -> Remote {
        Remote {
            server: url.into(),
            pack: String::new(),
            label: "production".to_owned(),
            key: None,
            cache_dir: None,
            disk_cache: true,
            poll_interval: Duration::from_secs(30),
            timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            reconnect_min: Duration::from_millis(250),
            reconnect_max: Duration::from_secs(30),
            on_change: None,
            report_interval: Some(Duration::from_secs(30)),
            instance_id: None,
            instance_name: None,
            library: concat!("promptreg-rust/", env!("CARGO_PKG_VERSION")).to_owned(),
            trusted_keys: None,
            baked: None,
        }
    }

    /// The pack to follow.
    pub fn pack(mut self, pack: impl Into<String>) -> Remote {
        self.pack = pack.into();
        self
    }

    /// The label to follow (default `production`).
    pub fn label(mut self, label: impl Into<String>) -> Remote {
        self.label = label.into();
        self
    }

    /// The API key (`prk_…`), sent as `Authorization: Bearer`.
    pub fn key(mut self, secret: impl Into<String>) -> Remote {
        self.key = Some(secret.into());
        self
    }

    /// The folder of the disk cache (default: `$XDG_CACHE_HOME/promptreg/
    /// follow`, else `~/.cache/promptreg/follow`).
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Remote {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Keeps no disk cache: nothing is read at start or written after a
    /// sync, so only the server (or the host's own prompts) is in force. For
    /// a tool that must show the server as it is now, or fail.
    pub fn without_disk_cache(mut self) -> Remote {
        self.disk_cache = false;
        self
    }

    /// How often the bundle is asked for (conditionally) while the event
    /// stream is unavailable (default 30 s).
    pub fn poll_interval(mut self, every: Duration) -> Remote {
        self.poll_interval = every;
        self
    }

    /// The limit of each request, and of connecting to the stream (default
    /// 10 s).
    pub fn timeout(mut self, limit: Duration) -> Remote {
        self.timeout = limit;
        self
    }

    /// How long the stream may stay silent before it is reconnected
    /// (default 60 s; the server sends a keep-alive every 15 s).
    pub fn idle_timeout(mut self, limit: Duration) -> Remote {
        self.idle_timeout = limit;
        self
    }

    /// The first and the longest wait between reconnects (defaults 250 ms
    /// and 30 s); each wait is shortened at random by up to half.
    pub fn reconnect(mut self, min: Duration, max: Duration) -> Remote {
        self.reconnect_min = min;
        self.reconnect_max = max.max(min);
        self
    }

    /// Calls `f` on the follower's thread with each [`Change`]; keep it
    /// short.
    pub fn on_change(mut self, f: impl Fn(&Change) + Send + Sync + 'static) -> Remote {
        self.on_change = Some(Arc::new(f));
        self
    }

    /// How often the follower tells the server what it serves (default
    /// 30 s), besides on start and on every change in force: the server's
    /// fleet view (`GET …/labels/{label}/fleet`) shows each instance, and
    /// one unseen for three intervals as offline. Reports run on a thread
    /// of their own, so they never delay a render or a sync, and a server
    /// that refuses them changes nothing but [`Status::report_error`].
    /// The interval is kept within 100 ms and 1 h, as servers take it.
    pub fn report_interval(mut self, every: Duration) -> Remote {
        let (shortest, longest) = (Duration::from_millis(100), Duration::from_secs(3600));
        self.report_interval = Some(every.clamp(shortest, longest));
        self
    }

    /// Sends no fleet reports: the server does not see this instance.
    pub fn without_reports(mut self) -> Remote {
        self.report_interval = None;
        self
    }

    /// The instance's id in fleet reports (default: random per follower,
    /// so each process is one instance): 1 to 64 of `A-Z a-z 0-9 . _ :
    /// -`, such as a pod's name, so that a restarted process is the same
    /// instance.
    pub fn instance_id(mut self, id: impl Into<String>) -> Remote {
        self.instance_id = Some(id.into());
        self
    }

    /// A name shown beside the instance's id in the fleet view (`web-3`).
    pub fn instance_name(mut self, name: impl Into<String>) -> Remote {
        self.instance_name = Some(name.into());
        self
    }

    /// Accepts only releases signed by one of `keys`: a bundle (from the
    /// server, the disk cache or a file) is put in force only with a valid
    /// signature by one of them for exactly this pack, label and
    /// revision, over the digest of the files received, and never older
    /// than the revision in force. Anything else (no signature, another
    /// key, another pack's or revision's signature, files altered after
    /// signing, an older revision sent again) keeps the last good bundle
    /// and says why in [`Status::last_error`]. A split's candidate is
    /// served only when signed by one of them as that split's candidate
    /// (`promptreg store canary … --sign KEYFILE`); otherwise every
    /// subject gets the label.
    ///
    /// Without trusted keys, whatever the server sends and loads is put
    /// in force: the server, its database and anyone holding a key that
    /// may move the label are trusted.
    pub fn trust_keys(mut self, keys: crate::signing::TrustedKeys) -> Remote {
        self.trusted_keys = Some(keys);
        self
    }

    /// Starts from the baked bundle at `path` (`promptreg bundle export`)
    /// when the disk cache holds no newer revision of the label: an image
    /// that ships its prompts renders them before the server answers, or
    /// without one. It is checked like a download (with
    /// [`trust_keys`](Self::trust_keys), its signature too); one that does
    /// not check is left aside and [`Status::cache_warning`] says why.
    pub fn start_from_bundle(mut self, path: impl Into<PathBuf>) -> Remote {
        self.baked = Some(path.into());
        self
    }

    /// The library and its version in fleet reports (default
    /// `promptreg-rust/VERSION`); a binding over this crate names itself.
    pub fn library(mut self, name_and_version: impl Into<String>) -> Remote {
        self.library = name_and_version.into();
        self
    }

    /// How parts from this server are named in provenance: the bundle's
    /// address, under which each file's path follows.
    fn origin(&self) -> String {
        format!(
            "{}/v1/packs/{}/labels/{}",
            self.server.trim_end_matches('/'),
            self.pack,
            self.label
        )
    }
}

/// Where the prompts of the followed pack in force came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Source {
    /// Nothing was received yet: the host's own prompts are in force.
    Local,
    /// The disk cache: the last good bundle of an earlier run.
    Cache,
    /// The server, in this run.
    Server,
    /// A baked bundle file ([`Remote::start_from_bundle`]).
    Baked,
}

impl Source {
    /// Its name in fleet reports and the language packages: `local`,
    /// `cache`, `server`, `bundle`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Local => "local",
            Source::Cache => "cache",
            Source::Server => "server",
            Source::Baked => "bundle",
        }
    }
}

/// The state of a follower.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Status {
    /// The server followed.
    pub server: String,
    /// The pack followed.
    pub pack: String,
    /// The label followed.
    pub label: String,
    /// Where the bundle in force came from.
    pub source: Source,
    /// The ETag of the bundle in force.
    pub etag: Option<String>,
    /// The label's revision the bundle in force is, when the server named
    /// it.
    pub revision: Option<u64>,
    /// This instance's id in fleet reports.
    pub instance: String,
    /// The version of each entry of the bundle in force (`@pack` is the
    /// manifest).
    pub versions: BTreeMap<String, u64>,
    /// When the server last answered a bundle request (new or not
    /// modified).
    pub last_sync: Option<Instant>,
    /// Whether the event stream is connected.
    pub connected: bool,
    /// The id of the last event received on the stream: where a reconnect
    /// resumes (`Last-Event-ID`).
    pub last_event_id: Option<String>,
    /// The last failure, until a sync succeeds: the server unreachable, a
    /// refused key, a bundle that did not load.
    pub last_error: Option<String>,
    /// Why the disk cache was not used, if it was there but unusable.
    pub cache_warning: Option<String>,
    /// The split whose candidate this follower serves to its share of
    /// subjects ([`PromptRegistry::render_for`](promptreg_core::PromptRegistry::render_for)),
    /// if one runs on the label and its candidate loaded.
    pub split: Option<crate::split::SplitRule>,
    /// When the server last took a fleet report.
    pub last_report: Option<Instant>,
    /// Why the last fleet report was not taken (a server that does not
    /// know reports, a key that cannot send them), until one is.
    pub report_error: Option<String>,
    /// The fingerprint of the trusted key whose signature vouched for the
    /// bundle in force ([`Remote::trust_keys`]).
    pub verified_by: Option<String>,
}

impl Status {
    /// How long ago the last sync was.
    pub fn since_last_sync(&self) -> Option<Duration> {
        self.last_sync.map(|t| t.elapsed())
    }
}

/// What a follower reports as it happens.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// A new bundle is in force.
    Updated {
        /// Where it came from.
        source: Source,
        /// Its ETag.
        etag: String,
    },
    /// Something failed; the last good bundle stays in force.
    Failed(String),
    /// The event stream is connected.
    Connected,
    /// The event stream ended or could not connect; it is retried.
    Disconnected(String),
    /// An event arrived on the stream, relevant or not: its id (where a
    /// reconnect resumes) and kind (`label_moved`, `released`, ...).
    Event {
        /// The event's id, when it has one.
        id: Option<String>,
        /// The event's kind.
        kind: String,
    },
}

impl Change {
    /// Its kind, as the language packages name it: `updated`, `failed`,
    /// `connected`, `disconnected` or `event`.
    pub fn kind(&self) -> &'static str {
        match self {
            Change::Updated { .. } => "updated",
            Change::Failed(_) => "failed",
            Change::Connected => "connected",
            Change::Disconnected(_) => "disconnected",
            Change::Event { .. } => "event",
        }
    }
}
