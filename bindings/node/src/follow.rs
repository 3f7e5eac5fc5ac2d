//! `follow`: keeping a label of a pack on a `promptreg serve` server in the
//! registry, from the library's follower thread; its changes reach a
//! JavaScript callback on the JavaScript thread through a thread-safe
//! function, as `watch`'s reloads do.

use promptreg::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use napi::bindgen_prelude::{AsyncTask, Function, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Result, Status, Task, ValueType};
use napi_derive::napi;
use promptreg::remote::{self, Change, Remote};

use crate::args;
use crate::errors::{OrThrow, throw_range_error, throw_type_error};
use crate::handle::{Kept, Shared};
use crate::js::{type_of, undefined};
use crate::pack::Pack;

/// Options of `follow`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct FollowOptions {
    /// The server, `http://host:port`.
    pub server: String,
    /// The pack's name on the server.
    pub pack: String,
    /// The label to follow (default `production`).
    pub label: Option<String>,
    /// An API key (`prk_…`), sent as `Authorization: Bearer`.
    pub key: Option<String>,
    /// The folder of the disk cache, where the last good bundle is kept
    /// for the next start (default: `$XDG_CACHE_HOME/promptreg/follow`,
    /// else `~/.cache/promptreg/follow`).
    pub cache_dir: Option<String>,
    /// `false`: no disk cache, nothing read at start or written after a
    /// sync (default `true`).
    pub disk_cache: Option<bool>,
    /// How often the bundle is asked for while the event stream is down,
    /// in milliseconds (default 30000).
    pub poll_interval_ms: Option<u32>,
    /// The limit of each request, in milliseconds (default 10000).
    pub timeout_ms: Option<u32>,
    /// How long the event stream may stay silent before it is reconnected,
    /// in milliseconds (default 60000).
    pub idle_timeout_ms: Option<u32>,
    /// How often the follower tells the server what it serves (the
    /// server's fleet view), besides on start and each change, in
    /// milliseconds (default 30000; kept within 100 and 3600000).
    pub report_interval_ms: Option<u32>,
    /// `false`: no fleet reports; the server does not see this instance
    /// (default `true`).
    pub reports: Option<bool>,
    /// This instance's id in the fleet view (default: random per
    /// follower): 1 to 64 of `A-Z a-z 0-9 . _ : -`, a pod's name say.
    pub instance_id: Option<String>,
    /// A name shown beside the id in the fleet view.
    pub instance_name: Option<String>,
    /// Accept only releases signed by one of these keys: each a public key
    /// (`ssh-ed25519 AAAA…`) or the path of a file of them (`.pub`,
    /// `authorized_keys`, `allowed_signers`). Anything else keeps the last
    /// good bundle and says why in `status().lastError`.
    pub trust_keys: Option<Vec<String>>,
    /// A baked bundle file (`promptreg bundle export`) to start from when
    /// the disk cache holds nothing newer.
    pub bundle: Option<String>,
    /// Called on the JavaScript thread with each change: a new bundle in
    /// force, a failure, the stream connected or lost, an event.
    #[napi(ts_type = "(change: FollowChange) => void")]
    pub on_change: Option<String>,
}

/// What a follower reports as it happens (`onChange`).
#[napi(object)]
pub struct FollowChange {
    /// `updated`: a new bundle is in force; `failed`: something failed and
    /// the last good bundle stays; `connected`/`disconnected`: the event
    /// stream; `event`: an event arrived on the stream.
    #[napi(ts_type = "'updated' | 'failed' | 'connected' | 'disconnected' | 'event'")]
    pub kind: String,
    /// For `updated`: where the bundle came from.
    #[napi(ts_type = "'server' | 'cache' | 'bundle' | 'local'")]
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

/// The state of a follower (`status()`).
#[napi(object)]
pub struct FollowStatus {
    /// The server followed.
    pub server: String,
    /// The pack followed.
    pub pack: String,
    /// The label followed.
    pub label: String,
    /// Where the bundle in force came from: `local` until something was
    /// received (the host's own prompts are in force), `cache` (the disk
    /// cache of an earlier run), `bundle` (the baked bundle of
    /// `options.bundle`) or `server`.
    #[napi(ts_type = "'server' | 'cache' | 'bundle' | 'local'")]
    pub source: String,
    /// The fingerprint (`SHA256:…`) of the trusted key whose signature
    /// vouched for the bundle in force (`options.trustKeys`).
    pub verified_by: Option<String>,
    /// The ETag of the bundle in force.
    pub etag: Option<String>,
    /// The label's revision the bundle in force is, when the server named
    /// it.
    pub revision: Option<i64>,
    /// This instance's id in the server's fleet view.
    pub instance: String,
    /// Why the last fleet report was not taken, until one is.
    pub report_error: Option<String>,
    /// The split whose candidate this follower serves to its share of
    /// subjects (`renderFor`): `{ split, percent }`, absent when none runs.
    pub split: Option<FollowSplit>,
    /// How long ago the server last took a fleet report, in milliseconds.
    pub since_last_report_ms: Option<f64>,
    /// The version of each entry of the bundle in force (`@pack` is the
    /// manifest).
    #[napi(ts_type = "Record<string, number>")]
    pub versions: HashMap<String, i64>,
    /// How long ago the server last answered a bundle request, in
    /// milliseconds; absent until it has.
    pub since_last_sync_ms: Option<f64>,
    /// Whether the event stream is connected.
    pub connected: bool,
    /// The id of the last event received: where a reconnect resumes.
    pub last_event_id: Option<String>,
    /// The last failure, until a sync succeeds.
    pub last_error: Option<String>,
    /// Why the disk cache was not used, if it was there but unusable.
    pub cache_warning: Option<String>,
}

/// A split a follower serves.
#[napi(object)]
pub struct FollowSplit {
    /// Its id.
    pub split: i64,
    /// The share of subjects its candidate serves, 0 to 100.
    pub percent: f64,
}

/// A running follower: `close()` stops it. Like an open watcher, a
/// follower with an `onChange` callback keeps the process alive until it
/// is closed.
#[napi]
pub struct Follower {
    slot: FollowSlot,
}

/// The follower, while open, and its last status once closed; shared
/// between the registry (which keeps it running while JavaScript holds no
/// reference) and its `Follower`.
type FollowSlot = Arc<Mutex<Slot>>;

/// An open follower, or the status it had when it was closed.
enum Slot {
    Open(Arc<remote::Follower>),
    Closed(Box<remote::Status>),
}

impl Slot {
    fn is_open(&self) -> bool {
        matches!(self, Slot::Open(_))
    }
}

impl Kept for Mutex<Slot> {
    fn is_open(&self) -> bool {
        self.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_open()
    }
}

impl Follower {
    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn open(&self) -> Option<Arc<remote::Follower>> {
        match &*self.lock() {
            Slot::Open(follower) => Some(Arc::clone(follower)),
            Slot::Closed(_) => None,
        }
    }
}

#[napi]
impl Follower {
    /// The state now; after `close()`, the state it was closed in.
    #[napi]
    pub fn status(&self) -> FollowStatus {
        match &*self.lock() {
            Slot::Open(follower) => FollowStatus::from(follower.status()),
            Slot::Closed(status) => FollowStatus::from((**status).clone()),
        }
    }

    /// Asks the server for the bundle now (conditionally), without waiting
    /// for an event. Does nothing once closed.
    #[napi]
    pub fn resync(&self) {
        if let Some(follower) = self.open() {
            follower.resync();
        }
    }

    /// Resolves to `true` once the server has answered a bundle request
    /// (a bundle or "not modified"), or to `false` after `timeoutMs`
    /// milliseconds or when the follower is closed. The wait runs on
    /// Node.js's thread pool, not on the JavaScript thread.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn wait_for_first_sync(
        &self,
        env: Env,
        #[napi(ts_arg_type = "number")] timeout_ms: Unknown<'_>,
    ) -> Result<AsyncTask<FirstSync>> {
        let timeout = args::index(&env, timeout_ms, "timeoutMs")?;
        let follower = match &*self.lock() {
            Slot::Open(follower) => Arc::downgrade(follower),
            Slot::Closed(_) => Weak::new(),
        };
        Ok(AsyncTask::new(FirstSync {
            follower,
            timeout: Duration::from_millis(timeout as u64),
        }))
    }

    /// The pack in force from the followed label (from the server or the
    /// disk cache), `null` until one is or once closed: its `configSpec()`
    /// declares the user configuration to load on top.
    #[napi(getter)]
    pub fn pack(&self) -> Option<Pack> {
        self.open()?.pack().map(Pack::from)
    }

    /// Stops following and waits for the follower's thread to end; the
    /// registry keeps the prompts last published. Closing twice does
    /// nothing.
    #[napi]
    pub fn close(&self) {
        let follower = {
            let mut slot = self.lock();
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
        // `waitForFirstSync` holds it for a moment.
        drop(follower);
    }

    /// Whether it is still following.
    #[napi(getter)]
    pub fn is_open(&self) -> bool {
        self.lock().is_open()
    }
}

/// The wait of `waitForFirstSync`, on a thread of the pool: in short steps,
/// so that a `close()` ends it.
pub struct FirstSync {
    follower: Weak<remote::Follower>,
    timeout: Duration,
}

impl Task for FirstSync {
    type Output = bool;
    type JsValue = bool;

    fn compute(&mut self) -> Result<bool> {
        const STEP: Duration = Duration::from_millis(50);
        let start = Instant::now();
        loop {
            let Some(follower) = self.follower.upgrade() else {
                return Ok(false);
            };
            let left = self.timeout.saturating_sub(start.elapsed());
            if follower.wait_for_first_sync(left.min(STEP)) {
                return Ok(true);
            }
            if left <= STEP {
                return Ok(false);
            }
        }
    }

    fn resolve(&mut self, _env: Env, synced: bool) -> Result<bool> {
        Ok(synced)
    }
}

type Callback = ThreadsafeFunction<FollowChange, (), FollowChange, Status, false>;

/// Starts following the server `options` names for `shared`'s registry.
pub(crate) fn start(env: &Env, shared: &Shared, options: Unknown<'_>) -> Result<Follower> {
    let options = args::plain_object(env, options, "options")?;
    let field = |name: &str| -> Result<Unknown<'_>> {
        match options.get::<Unknown<'_>>(name)? {
            Some(value) => Ok(value),
            None => undefined(env),
        }
    };
    let server = args::string(env, field("server")?, "options.server")?;
    let pack = args::string(env, field("pack")?, "options.pack")?;
    let mut remote = Remote::new(server).pack(pack);
    if let Some(label) = args::optional_string(env, Some(field("label")?), "options.label")? {
        remote = remote.label(label);
    }
    if let Some(key) = args::optional_string(env, Some(field("key")?), "options.key")? {
        remote = remote.key(key);
    }
    if let Some(dir) = args::optional_string(env, Some(field("cacheDir")?), "options.cacheDir")? {
        remote = remote.cache_dir(dir);
    }
    if args::optional_bool(env, Some(field("diskCache")?), "options.diskCache")? == Some(false) {
        remote = remote.without_disk_cache();
    }
    // A duration of 0 would make the follower spin or fail every request.
    let ms = |key: &str| -> Result<Option<Duration>> {
        let name = format!("options.{key}");
        match args::optional_index(env, Some(field(key)?), &name)? {
            Some(0) => Err(throw_range_error(
                env,
                format!("`{name}` must be at least 1 millisecond, not 0"),
            )),
            value => Ok(value.map(|ms| Duration::from_millis(ms as u64))),
        }
    };
    if let Some(every) = ms("pollIntervalMs")? {
        remote = remote.poll_interval(every);
    }
    if let Some(limit) = ms("timeoutMs")? {
        remote = remote.timeout(limit);
    }
    if let Some(limit) = ms("idleTimeoutMs")? {
        remote = remote.idle_timeout(limit);
    }
    remote = remote.library(concat!("promptreg-node/", env!("CARGO_PKG_VERSION")));
    if let Some(every) = ms("reportIntervalMs")? {
        remote = remote.report_interval(every);
    }
    if let Some(id) = args::optional_string(env, Some(field("instanceId")?), "options.instanceId")?
    {
        remote = remote.instance_id(id);
    }
    if let Some(name) =
        args::optional_string(env, Some(field("instanceName")?), "options.instanceName")?
    {
        remote = remote.instance_name(name);
    }
    if args::optional_bool(env, Some(field("reports")?), "options.reports")? == Some(false) {
        remote = remote.without_reports();
    }
    if let Some(trusted) =
        args::optional_trusted_keys(env, Some(field("trustKeys")?), "options.trustKeys")?
    {
        remote = remote.trust_keys(trusted);
    }
    if let Some(path) = args::optional_string(env, Some(field("bundle")?), "options.bundle")? {
        remote = remote.start_from_bundle(path);
    }
    let on_change = field("onChange")?;
    if !args::is_absent(Some(&on_change)) {
        let callback: Callback = callback_arg(env, on_change)?
            .build_threadsafe_function::<FollowChange>()
            .callee_handled::<false>()
            .build()?;
        remote = remote.on_change(move |change| {
            callback.call(to_js(change), ThreadsafeFunctionCallMode::NonBlocking);
        });
    }
    let follower = shared.registry.follow(remote).or_throw(env)?;
    let slot: FollowSlot = Arc::new(Mutex::new(Slot::Open(Arc::new(follower))));
    shared.keep(Arc::clone(&slot) as Arc<dyn Kept>);
    Ok(Follower { slot })
}

/// The `onChange` option.
fn callback_arg<'env>(env: &Env, value: Unknown<'env>) -> Result<Function<'env, FollowChange, ()>> {
    if value.get_type()? != ValueType::Function {
        return Err(throw_type_error(
            env,
            format!(
                "`options.onChange` must be a function `(change) => void`, not {}",
                type_of(&value)
            ),
        ));
    }
    // SAFETY: the value was just checked to be a function.
    unsafe { value.cast() }
}

fn to_js(change: &Change) -> FollowChange {
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
            since_last_sync_ms: status
                .since_last_sync()
                .map(|since| since.as_secs_f64() * 1000.0),
            server: status.server,
            pack: status.pack,
            label: status.label,
            since_last_report_ms: status
                .last_report
                .map(|at| at.elapsed().as_secs_f64() * 1000.0),
            source: status.source.as_str().to_owned(),
            etag: status.etag,
            revision: status
                .revision
                .map(|r| i64::try_from(r).unwrap_or(i64::MAX)),
            instance: status.instance,
            report_error: status.report_error,
            verified_by: status.verified_by,
            split: status.split.map(|rule| FollowSplit {
                split: i64::try_from(rule.id).unwrap_or(i64::MAX),
                percent: f64::from(rule.basis_points) / 100.0,
            }),
            versions: status
                .versions
                .into_iter()
                .map(|(entry, version)| (entry, i64::try_from(version).unwrap_or(i64::MAX)))
                .collect(),
            connected: status.connected,
            last_event_id: status.last_event_id,
            last_error: status.last_error,
            cache_warning: status.cache_warning,
        }
    }
}
