//! `follow`: keeping a label of a pack on a `promptreg serve` server in
//! the registry, from the library's follower thread; its changes reach a
//! Python callback on that thread.

use promptreg::prelude::*;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use promptreg::remote::{self, Change, Remote};
use pyo3::prelude::*;

use crate::errors::{OrRaise, type_error};
use crate::keys::trusted_keys;
use crate::pack::Pack;
use crate::record::record;
use crate::running::{self, Running};
use crate::watch::seconds;

/// The options of `PromptRegistry.follow`, as Python passed them.
pub(crate) struct FollowOptions<'py> {
    pub(crate) server: String,
    pub(crate) pack: String,
    pub(crate) label: Option<String>,
    pub(crate) key: Option<String>,
    pub(crate) cache_dir: Option<String>,
    pub(crate) disk_cache: bool,
    pub(crate) poll_interval: Option<f64>,
    pub(crate) timeout: Option<f64>,
    pub(crate) idle_timeout: Option<f64>,
    pub(crate) report_interval: Option<f64>,
    pub(crate) reports: bool,
    pub(crate) instance_id: Option<String>,
    pub(crate) instance_name: Option<String>,
    pub(crate) trust_keys: Option<Vec<String>>,
    pub(crate) bundle: Option<String>,
    pub(crate) on_change: Option<Bound<'py, PyAny>>,
}

/// What a follower reports as it happens (`on_change`).
#[pyclass(frozen, get_all, module = "promptreg")]
pub struct FollowChange {
    /// `updated`: a new bundle is in force; `failed`: something failed and
    /// the last good bundle stays; `connected`/`disconnected`: the event
    /// stream; `event`: an event arrived on the stream.
    pub kind: String,
    /// For `updated`: where the bundle came from (`server`, `cache`,
    /// `bundle`).
    pub source: Option<String>,
    /// For `updated`: the bundle's ETag.
    pub etag: Option<String>,
    /// For `failed` and `disconnected`: why.
    pub message: Option<String>,
    /// For `event`: the event's id, where a reconnect resumes.
    pub event_id: Option<String>,
    /// For `event`: its kind (`label_moved`, `released`, ...).
    pub event: Option<String>,
}

record!(FollowChange[kind, source, etag, message, event_id, event]);

/// The state of a follower (`status()`).
#[pyclass(frozen, get_all, module = "promptreg")]
pub struct FollowStatus {
    /// The server followed.
    pub server: String,
    /// The pack followed.
    pub pack: String,
    /// The label followed.
    pub label: String,
    /// Where the bundle in force came from: `local` until something was
    /// received (the host's own prompts are in force), `cache`, `bundle`
    /// (the baked bundle) or `server`.
    pub source: String,
    /// The fingerprint (`SHA256:…`) of the trusted key whose signature
    /// vouched for the bundle in force.
    pub verified_by: Option<String>,
    /// The ETag of the bundle in force.
    pub etag: Option<String>,
    /// The label's revision the bundle in force is.
    pub revision: Option<u64>,
    /// The version of each entry of the bundle in force (`@pack` is the
    /// manifest).
    pub versions: BTreeMap<String, u64>,
    /// This instance's id in the server's fleet view.
    pub instance: String,
    /// Why the last fleet report was not taken, until one is.
    pub report_error: Option<String>,
    /// The split whose candidate this follower serves to its share of
    /// subjects: `(split, percent)`, `None` when none runs.
    pub split: Option<(u64, f64)>,
    /// Seconds since the server last answered a bundle request.
    pub since_last_sync: Option<f64>,
    /// Seconds since the server last took a fleet report.
    pub since_last_report: Option<f64>,
    /// Whether the event stream is connected.
    pub connected: bool,
    /// The id of the last event received.
    pub last_event_id: Option<String>,
    /// The last failure, until a sync succeeds.
    pub last_error: Option<String>,
    /// Why the disk cache was not used, if it was there but unusable.
    pub cache_warning: Option<String>,
}

record!(FollowStatus[
    server, pack, label, source, verified_by, etag, revision, versions, instance,
    report_error, split, since_last_sync, since_last_report, connected, last_event_id,
    last_error, cache_warning,
]);

/// A running follower: `close()` stops it; it is also a context manager.
#[pyclass(frozen, module = "promptreg")]
pub struct Follower {
    slot: Arc<FollowSlot>,
}

/// The follower while open, and its last status once closed.
struct FollowSlot(Mutex<Slot>);

enum Slot {
    Open(Arc<remote::Follower>),
    Closed(Box<remote::Status>),
}

impl FollowSlot {
    fn open(&self) -> Option<Arc<remote::Follower>> {
        match &*self.0.lock().unwrap_or_else(PoisonError::into_inner) {
            Slot::Open(follower) => Some(Arc::clone(follower)),
            Slot::Closed(_) => None,
        }
    }
}

impl Running for FollowSlot {
    fn close(&self) {
        let follower = {
            let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            let Slot::Open(follower) = &*slot else {
                return;
            };
            let mut status = follower.status();
            status.connected = false;
            let follower = Arc::clone(follower);
            *slot = Slot::Closed(Box::new(status));
            follower
        };
        // The last reference stops the thread, here unless a
        // `wait_for_first_sync` holds it for a moment.
        drop(follower);
    }

    fn is_open(&self) -> bool {
        matches!(
            &*self.0.lock().unwrap_or_else(PoisonError::into_inner),
            Slot::Open(_)
        )
    }
}

#[pymethods]
impl Follower {
    /// The state now; after `close()`, the state it was closed in.
    fn status(&self) -> FollowStatus {
        let status = match &*self.slot.0.lock().unwrap_or_else(PoisonError::into_inner) {
            Slot::Open(follower) => follower.status(),
            Slot::Closed(status) => (**status).clone(),
        };
        FollowStatus::from(status)
    }

    /// Asks the server for the bundle now (conditionally), without waiting
    /// for an event. Does nothing once closed.
    fn resync(&self) {
        if let Some(follower) = self.slot.open() {
            follower.resync();
        }
    }

    /// Waits, the GIL released, until the server has answered a bundle
    /// request (`True`), or `timeout` seconds have passed or the follower
    /// is closed (`False`).
    fn wait_for_first_sync(&self, py: Python<'_>, timeout: f64) -> PyResult<bool> {
        const STEP: Duration = Duration::from_millis(50);
        let timeout = if timeout == 0.0 {
            Duration::ZERO
        } else {
            seconds(timeout, "timeout")?
        };
        let slot = Arc::clone(&self.slot);
        Ok(py.detach(move || {
            let start = Instant::now();
            loop {
                let Some(follower) = slot.open() else {
                    return false;
                };
                let left = timeout.saturating_sub(start.elapsed());
                if follower.wait_for_first_sync(left.min(STEP)) {
                    return true;
                }
                if left <= STEP {
                    return false;
                }
            }
        }))
    }

    /// The pack in force from the followed label (from the server, the
    /// disk cache or the baked bundle), `None` until one is or once
    /// closed: its `config_spec()` declares the user configuration to load
    /// on top.
    #[getter]
    fn pack(&self) -> Option<Pack> {
        self.slot.open()?.pack().map(Pack::from)
    }

    /// Stops following and waits for the follower's thread to end; the
    /// registry keeps the prompts last published. Closing twice does
    /// nothing.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.slot.close());
    }

    /// Whether it is still following.
    #[getter]
    fn is_open(&self) -> bool {
        self.slot.is_open()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _kind: Option<&Bound<'_, PyAny>>,
        _value: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) {
        self.close(py);
    }
}

/// Starts following the server `options` names for `registry`.
pub(crate) fn start(
    py: Python<'_>,
    registry: &promptreg::PromptRegistry,
    options: FollowOptions<'_>,
) -> PyResult<Follower> {
    let mut remote = Remote::new(options.server).pack(options.pack);
    if let Some(label) = options.label {
        remote = remote.label(label);
    }
    if let Some(key) = options.key {
        remote = remote.key(key);
    }
    if let Some(dir) = options.cache_dir {
        remote = remote.cache_dir(dir);
    }
    if !options.disk_cache {
        remote = remote.without_disk_cache();
    }
    if let Some(every) = options.poll_interval {
        remote = remote.poll_interval(seconds(every, "poll_interval")?);
    }
    if let Some(limit) = options.timeout {
        remote = remote.timeout(seconds(limit, "timeout")?);
    }
    if let Some(limit) = options.idle_timeout {
        remote = remote.idle_timeout(seconds(limit, "idle_timeout")?);
    }
    if let Some(every) = options.report_interval {
        remote = remote.report_interval(seconds(every, "report_interval")?);
    }
    remote = remote.library(concat!("promptreg-python/", env!("CARGO_PKG_VERSION")));
    if let Some(id) = options.instance_id {
        remote = remote.instance_id(id);
    }
    if let Some(name) = options.instance_name {
        remote = remote.instance_name(name);
    }
    if !options.reports {
        remote = remote.without_reports();
    }
    if let Some(keys) = &options.trust_keys {
        remote = remote.trust_keys(trusted_keys(keys, "trust_keys")?);
    }
    if let Some(path) = options.bundle {
        remote = remote.start_from_bundle(path);
    }
    if let Some(callback) = options.on_change.filter(|c| !c.is_none()) {
        if !callback.is_callable() {
            return Err(type_error(
                "on_change",
                "a callable `(change: FollowChange) -> None`",
                &callback,
            ));
        }
        let callback = callback.unbind();
        remote = remote.on_change(move |change| {
            let change = to_py(change);
            // A callback that raises is reported as Python reports errors
            // in threads, and the follower goes on.
            Python::try_attach(|py| {
                if let Err(error) = callback.call1(py, (change,)) {
                    error.write_unraisable(py, Some(callback.bind(py)));
                }
            });
        });
    }
    // Starting reads the disk cache or the baked bundle: no Python there.
    let follower = py.detach(|| registry.follow(remote)).or_raise()?;
    let slot = Arc::new(FollowSlot(Mutex::new(Slot::Open(Arc::new(follower)))));
    running::keep(slot.clone());
    Ok(Follower { slot })
}

fn to_py(change: &Change) -> FollowChange {
    let mut out = FollowChange {
        kind: change.kind().to_owned(),
        source: None,
        etag: None,
        message: None,
        event_id: None,
        event: None,
    };
    match change {
        Change::Updated { source, etag } => {
            out.source = Some(source.as_str().to_owned());
            out.etag = Some(etag.clone());
        }
        Change::Failed(message) | Change::Disconnected(message) => {
            out.message = Some(message.clone());
        }
        Change::Event { id, kind } => {
            out.event_id = id.clone();
            out.event = Some(kind.clone());
        }
        // The others (`connected`, kinds added later) carry nothing more.
        _ => {}
    }
    out
}

impl From<remote::Status> for FollowStatus {
    fn from(status: remote::Status) -> Self {
        FollowStatus {
            since_last_sync: status.since_last_sync().map(|since| since.as_secs_f64()),
            since_last_report: status.last_report.map(|at| at.elapsed().as_secs_f64()),
            server: status.server,
            pack: status.pack,
            label: status.label,
            source: status.source.as_str().to_owned(),
            verified_by: status.verified_by,
            etag: status.etag,
            revision: status.revision,
            versions: status.versions.into_iter().collect(),
            instance: status.instance,
            report_error: status.report_error,
            split: status
                .split
                .map(|rule| (rule.id, f64::from(rule.basis_points) / 100.0)),
            connected: status.connected,
            last_event_id: status.last_event_id,
            last_error: status.last_error,
            cache_warning: status.cache_warning,
        }
    }
}
