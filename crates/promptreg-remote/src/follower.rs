//! The follower's thread: the stream, the fetches, the publishing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::baked::BakedBundle;
use super::bundle::{Bundle, Received};
use super::cache::{self, CacheFile};
use super::client::{self, Client, Fetched};
use super::report::{self, Reporter};
use super::sse::{self, Line, SseEvent};
use super::{Change, Remote, Source, Status};
use crate::error::{Error, ErrorKind};
use crate::pack::Pack;
use crate::registry::{PromptRegistry, Shared};
use crate::split::SplitRule;
use crate::wire::SplitHeader;

/// A running follower; dropping it stops its thread (the registry keeps
/// what was published).
pub struct Follower {
    commands: Sender<Message>,
    shared: Arc<Watched>,
    thread: Option<JoinHandle<()>>,
    reporter: Option<JoinHandle<()>>,
}

/// The status, the bundle in force, and a condition to wait for the first
/// answer on.
pub(crate) struct Watched {
    status: Mutex<Status>,
    bundle: Mutex<Option<Bundle>>,
    changed: Condvar,
    /// Set (under the status lock) when the follower is dropped.
    stopped: AtomicBool,
}

impl Watched {
    pub(crate) fn update(&self, change: impl FnOnce(&mut Status)) {
        let mut status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        change(&mut status);
        self.changed.notify_all();
    }

    /// Waits at most `timeout` until `done` holds of the status; the status
    /// then.
    fn wait_until(&self, timeout: Duration, done: impl Fn(&Status) -> bool) -> Status {
        let status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        let (status, _) = self
            .changed
            .wait_timeout_while(status, timeout, |s| !done(s))
            .unwrap_or_else(PoisonError::into_inner);
        status.clone()
    }

    /// Waits at most `timeout` until `changed` holds of the status; the
    /// status then, or `None` once the follower is stopped.
    pub(crate) fn wait_for_report(
        &self,
        timeout: Duration,
        changed: impl Fn(&Status) -> bool,
    ) -> Option<Status> {
        let stopped = || self.stopped.load(Ordering::Relaxed);
        let status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        let (status, _) = self
            .changed
            .wait_timeout_while(status, timeout, |s| !stopped() && !changed(s))
            .unwrap_or_else(PoisonError::into_inner);
        (!stopped()).then(|| status.clone())
    }

    fn stop(&self) {
        let _status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        self.stopped.store(true, Ordering::Relaxed);
        self.changed.notify_all();
    }
}

/// What the follower's thread waits for.
enum Message {
    Stop,
    Resync,
    /// An event of stream number `.0`.
    Event(u64, SseEvent),
    /// A keep-alive comment: the stream's silence is limited by the
    /// reader's timeout, so nothing needs doing.
    Alive,
    /// Stream `.0` ended, with why.
    Ended(u64, String),
}

impl Follower {
    /// The state now.
    pub fn status(&self) -> Status {
        self.shared
            .status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Asks the server for the bundle now (conditionally), without waiting
    /// for an event.
    pub fn resync(&self) {
        let _ = self.commands.send(Message::Resync);
    }

    /// Waits until the server has answered once (a bundle or "not
    /// modified"), at most `timeout`; whether it has.
    pub fn wait_for_first_sync(&self, timeout: Duration) -> bool {
        self.shared
            .wait_until(timeout, |s| s.last_sync.is_some())
            .last_sync
            .is_some()
    }

    /// Waits until the server has answered once or a first attempt has
    /// failed, at most `timeout`: for a tool that shows the server's
    /// prompts or says at once why it cannot.
    ///
    /// # Errors
    ///
    /// The failure (the server unreachable, the key refused, a bundle that
    /// does not load), or that nothing came within `timeout`.
    pub fn wait_for_first_answer(&self, timeout: Duration) -> Result<(), String> {
        let status = self
            .shared
            .wait_until(timeout, |s| s.last_sync.is_some() || s.last_error.is_some());
        match (status.last_sync, status.last_error) {
            (Some(_), _) => Ok(()),
            (None, Some(error)) => Err(error),
            (None, None) => Err(format!(
                "{} did not answer within {timeout:?}",
                status.server
            )),
        }
    }

    /// The pack in force from the followed label (from the server or the
    /// disk cache), `None` until one is: its manifest declares the user
    /// configuration the host loads on top.
    pub fn pack(&self) -> Option<Pack> {
        self.in_force().map(|b| b.pack)
    }

    /// Writes the bundle in force to `path` as a baked bundle (with its
    /// revision and signatures), for an image to start from
    /// ([`Remote::start_from_bundle`], [`PromptRegistry::from_bundle`](crate::FromBundle::from_bundle)).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Remote`] when no bundle is in force yet, or the file
    /// cannot be written.
    pub fn write_bundle(&self, path: impl AsRef<std::path::Path>) -> Result<(), Error> {
        let Some(bundle) = self.in_force() else {
            return Err(Error::new(
                ErrorKind::Remote,
                "no bundle is in force yet: wait for the first sync",
            ));
        };
        let status = self.status();
        BakedBundle::write(&bundle, &status.pack, &status.label, path.as_ref())
    }

    fn in_force(&self) -> Option<Bundle> {
        self.shared
            .bundle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.commands.send(Message::Stop);
        self.shared.stop();
        for thread in [self.thread.take(), self.reporter.take()]
            .into_iter()
            .flatten()
        {
            let _ = thread.join();
        }
    }
}

impl std::fmt::Debug for Follower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower")
            .field("status", &self.status())
            .finish()
    }
}

/// Following a label of a pack on a server: in scope with
/// `use promptreg_remote::Follow`.
pub trait Follow {
    /// Follows a label of a pack on a `promptreg serve` server (see the
    /// [crate] documentation): the last good bundle from the
    /// disk cache is published now, the server is followed on a thread of
    /// its own. Never waits for the network.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Remote`] when no pack is named, or the thread cannot
    /// start.
    fn follow(&self, remote: Remote) -> Result<Follower, Error>;
}

impl Follow for PromptRegistry {
    fn follow(&self, remote: Remote) -> Result<Follower, Error> {
        if remote.pack.is_empty() || remote.label.is_empty() {
            return Err(Error::new(
                ErrorKind::Remote,
                format!(
                    "following {} needs a pack and a label: `Remote::new(url).pack(\"web-agent\").label(\"production\")`",
                    remote.server
                ),
            ));
        }
        let (commands, inbox) = mpsc::channel();
        let mut run = Run::new(remote, Arc::clone(self.shared()), commands.clone());
        run.start_from_cache();
        let shared = Arc::clone(&run.watched);
        let reporter = run.reporter();
        let thread = std::thread::Builder::new()
            .name(format!("promptreg-follow-{}", run.remote.pack))
            .spawn(move || run.serve(&inbox))
            .map_err(|e| {
                Error::new(
                    ErrorKind::Remote,
                    format!("cannot start the follower's thread: {e}"),
                )
            })?;
        let reporter = match reporter {
            Some(reporter) => Some(
                std::thread::Builder::new()
                    .name("promptreg-follow-report".to_owned())
                    .spawn(move || reporter.run())
                    .map_err(|e| {
                        Error::new(
                            ErrorKind::Remote,
                            format!("cannot start the fleet reports' thread: {e}"),
                        )
                    })?,
            ),
            None => None,
        };
        Ok(Follower {
            commands,
            shared,
            thread: Some(thread),
            reporter,
        })
    }
}

/// The follower's state, owned by its thread.
struct Run {
    remote: Remote,
    origin: String,
    registry: Arc<Shared>,
    client: Client,
    cache: Option<CacheFile>,
    watched: Arc<Watched>,
    /// To hand to stream readers.
    inbox: Sender<Message>,
    /// The bundle in force, published.
    current: Option<Bundle>,
    /// The split running and its candidate, when one is served.
    candidate: Option<(SplitRule, Bundle)>,
    last_event_id: Option<String>,
    /// The number of the stream now open, if one is.
    stream: Option<u64>,
    streams: u64,
    failures: u32,
    next_connect: Instant,
    next_poll: Instant,
    /// Fetches of the bundle failed in a row.
    fetch_failures: u32,
    /// When to fetch again after a failed fetch: the backoff, and at
    /// least what the server asked for.
    next_retry: Option<Instant>,
}

impl Run {
    fn new(remote: Remote, registry: Arc<Shared>, inbox: Sender<Message>) -> Run {
        let dir = match remote.disk_cache {
            true => remote.cache_dir.clone().or_else(cache::default_dir),
            false => None,
        };
        let cache = dir.map(|d| CacheFile::new(&d, &remote.server, &remote.pack, &remote.label));
        let status = Status {
            server: remote.server.clone(),
            pack: remote.pack.clone(),
            label: remote.label.clone(),
            source: Source::Local,
            etag: None,
            revision: None,
            instance: remote
                .instance_id
                .clone()
                .unwrap_or_else(report::random_instance_id),
            versions: Default::default(),
            last_sync: None,
            connected: false,
            last_event_id: None,
            last_error: None,
            cache_warning: None,
            split: None,
            last_report: None,
            report_error: None,
            verified_by: None,
        };
        let now = Instant::now();
        Run {
            origin: remote.origin(),
            client: Client::new(&remote),
            remote,
            registry,
            cache,
            watched: Arc::new(Watched {
                status: Mutex::new(status),
                bundle: Mutex::new(None),
                changed: Condvar::new(),
                stopped: AtomicBool::new(false),
            }),
            inbox,
            current: None,
            candidate: None,
            last_event_id: None,
            stream: None,
            streams: 0,
            failures: 0,
            next_connect: now,
            next_poll: now,
            fetch_failures: 0,
            next_retry: None,
        }
    }

    /// Publishes the cached bundle, or the baked one when it is a newer
    /// revision, if either is good.
    fn start_from_cache(&mut self) {
        let read = self
            .cache
            .as_ref()
            .map_or(Ok(None), CacheFile::read)
            .and_then(|cached| {
                cached
                    .map(|c| {
                        let mut bundle = self.validate(c.received, &self.origin)?;
                        self.admit(&mut bundle)?;
                        Ok(bundle)
                    })
                    .transpose()
            });
        let cached = match read {
            Ok(cached) => cached,
            Err(warning) => {
                self.watched.update(|s| s.cache_warning = Some(warning));
                None
            }
        };
        let baked = self.read_baked();
        let newer_baked = match (&cached, &baked) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(c), Some(b)) => b.revision() > c.revision(),
        };
        match (cached, baked) {
            (_, Some(baked)) if newer_baked => self.publish(baked, Source::Baked),
            (Some(cached), _) => {
                self.publish(cached, Source::Cache);
                self.start_candidate_from_cache();
            }
            _ => {}
        }
    }

    /// The baked bundle [`Remote::start_from_bundle`] names, checked as a
    /// download; one that does not check is set aside with a warning.
    fn read_baked(&self) -> Option<Bundle> {
        let path = self.remote.baked.as_ref()?;
        let read = BakedBundle::read(path)
            .map_err(|e| e.to_string())
            .and_then(|baked| {
                let (pack, label) = (&self.remote.pack, &self.remote.label);
                if baked.pack_name() != pack || baked.label() != label {
                    return Err(format!(
                        "{}: the baked bundle is `{}` at `{}`, not `{pack}` at `{label}`",
                        path.display(),
                        baked.pack_name(),
                        baked.label()
                    ));
                }
                let mut bundle = baked.bundle;
                self.admit(&mut bundle)?;
                Ok(bundle)
            });
        match read {
            Ok(bundle) => Some(bundle),
            Err(warning) => {
                self.watched.update(|s| s.cache_warning = Some(warning));
                None
            }
        }
    }

    /// Serves the cached candidate of the split that ran when the cache
    /// was written: a subject keeps its arm with the server away.
    fn start_candidate_from_cache(&mut self) {
        let Some(file) = self.cache.as_ref().map(CacheFile::candidate) else {
            return;
        };
        let origin = self.candidate_origin();
        let read = file.read().and_then(|cached| match cached {
            Some(c) => {
                let rule = c
                    .split
                    .ok_or_else(|| "the candidate's cache names no split".to_owned())?;
                let received = Received {
                    revision: None,
                    ..c.received
                };
                let bundle = self.validate(received, &origin)?;
                self.admit_candidate(rule.id, bundle)
                    .map(|b| Some((rule, b)))
            }
            None => Ok(None),
        });
        match read {
            Ok(Some((rule, bundle))) => self.serve_candidate(rule, bundle),
            Ok(None) => {}
            Err(warning) => self.watched.update(|s| s.cache_warning = Some(warning)),
        }
    }

    /// The thread's loop: until told to stop.
    fn serve(mut self, inbox: &Receiver<Message>) {
        loop {
            if self.stream.is_none() && Instant::now() >= self.next_connect {
                self.connect();
            }
            let wait = self.next_due().saturating_duration_since(Instant::now());
            match inbox.recv_timeout(wait) {
                Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Ok(Message::Resync) => self.sync(),
                Ok(Message::Event(n, event)) if Some(n) == self.stream => self.on_event(event),
                Ok(Message::Ended(n, why)) if Some(n) == self.stream => self.disconnected(why),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    let now = Instant::now();
                    let retry_due = self.next_retry.is_some_and(|at| now >= at);
                    // A retry scheduled stands for the next poll.
                    let poll_due =
                        self.stream.is_none() && self.next_retry.is_none() && now >= self.next_poll;
                    if retry_due || poll_due {
                        self.next_poll = now + self.remote.poll_interval;
                        self.sync();
                    }
                }
            }
        }
    }

    /// When the loop must wake up on its own: the next reconnect, poll or
    /// retry of a failed fetch.
    fn next_due(&self) -> Instant {
        // Polls are for when no stream is open; a retry scheduled stands
        // for the next.
        let fetch = self
            .next_retry
            .or(self.stream.is_none().then_some(self.next_poll));
        let wake = match self.stream {
            Some(_) => Instant::now() + self.remote.idle_timeout,
            None => self.next_connect,
        };
        fetch.map_or(wake, |at| wake.min(at))
    }

    /// Opens the event stream on a reader thread, then syncs: events may
    /// have been missed while it was down.
    fn connect(&mut self) {
        match self.client.events(self.last_event_id.as_deref()) {
            Ok(reader) => {
                self.streams += 1;
                let number = self.streams;
                let inbox = self.inbox.clone();
                let spawned = std::thread::Builder::new()
                    .name("promptreg-follow-events".to_owned())
                    .spawn(move || read_stream(number, reader, &inbox));
                if let Err(e) = spawned {
                    return self.disconnected(format!("cannot start the stream reader: {e}"));
                }
                self.stream = Some(number);
                self.failures = 0;
                self.watched.update(|s| s.connected = true);
                self.report(Change::Connected);
                self.sync();
            }
            Err(refused) => self.disconnected_for(refused.message, refused.retry_after),
        }
    }

    /// The stream is gone: reconnect later, polling meanwhile.
    fn disconnected(&mut self, why: String) {
        self.disconnected_for(why, None);
    }

    /// As [`disconnected`](Self::disconnected), waiting at least `asked`
    /// (the server's `Retry-After`) before the next attempt.
    fn disconnected_for(&mut self, why: String, asked: Option<Duration>) {
        self.stream = None;
        self.next_connect = self.retry_at(self.failures, asked);
        self.failures = self.failures.saturating_add(1);
        self.watched.update(|s| s.connected = false);
        self.report(Change::Disconnected(why));
    }

    fn on_event(&mut self, event: SseEvent) {
        if event.kind == "reconnect" {
            // The server asks to come back (shutdown, or this client fell
            // behind): resume after the last event received.
            let wait = event.retry.unwrap_or(self.remote.reconnect_min);
            self.stream = None;
            self.next_connect = Instant::now() + wait;
            self.watched.update(|s| s.connected = false);
            self.report(Change::Disconnected(format!(
                "the server asked to reconnect: {}",
                event.data
            )));
            return;
        }
        self.report(Change::Event {
            id: event.id.clone(),
            kind: event.kind.clone(),
        });
        if event.id.is_some() {
            self.last_event_id = event.id.clone();
            self.watched
                .update(|s| s.last_event_id = self.last_event_id.clone());
        }
        if self.is_relevant(&event) {
            self.sync();
        }
    }

    /// A change of the followed label in the followed pack: one prompt's
    /// move (`label_moved`), a release's, which moves many in one event,
    /// or the revision either recorded (`revision_created`, after them),
    /// unless its digest is the one the bundle held carries: a server
    /// sends the moves and then the revision, so the second asks nothing.
    fn is_relevant(&self, event: &SseEvent) -> bool {
        let split = event.kind.starts_with("split_");
        if !split
            && !matches!(
                event.kind.as_str(),
                "label_moved" | "released" | "revision_created" | "revision_signed"
            )
        {
            return false;
        }
        let Ok(data) = serde_json::from_str::<serde_json::Value>(&event.data) else {
            return false;
        };
        let field = |name: &str| data.get(name).and_then(|v| v.as_str());
        if field("pack") != Some(&self.remote.pack) || field("label") != Some(&self.remote.label) {
            return false;
        }
        // A split's step changes what the label serves to some subjects,
        // whatever its digest.
        let held = self.current.as_ref().map(|b| b.etag().trim_matches('"'));
        split || field("digest").is_none() || field("digest") != held
    }

    /// Asks for the bundle with the ETag held; publishes a new one that
    /// loads, reports the rest; then follows the split the server names.
    fn sync(&mut self) {
        let etag = self.current.as_ref().map(|b| b.etag().to_owned());
        let fetched = self.client.bundle(etag.as_deref());
        self.fetched(fetched.as_ref().err());
        let split = match fetched {
            Ok(Fetched::NotModified {
                revision,
                signatures,
                split,
            }) => {
                self.not_modified(revision, signatures);
                split
            }
            Ok(Fetched::New { received, split }) => {
                let accepted = self
                    .validate(received, &self.origin)
                    .and_then(|mut bundle| {
                        self.admit(&mut bundle)?;
                        Ok(bundle)
                    });
                match accepted {
                    Ok(bundle) => {
                        self.keep(&bundle);
                        self.publish(bundle, Source::Server);
                    }
                    Err(why) => return self.failed(why),
                }
                split
            }
            Err(refused) => return self.failed(refused.message),
        };
        self.follow_split(split);
    }

    /// Counts a fetch of the bundle: after a failure (the server down,
    /// overloaded, restarting), the next is due after the backoff and at
    /// least the `Retry-After` the server sent, whether or not an event
    /// asks for it, so a change made meanwhile is not missed.
    fn fetched(&mut self, refused: Option<&client::Refused>) {
        let Some(refused) = refused else {
            self.fetch_failures = 0;
            self.next_retry = None;
            return;
        };
        self.next_retry = Some(self.retry_at(self.fetch_failures, refused.retry_after));
        self.fetch_failures = self.fetch_failures.saturating_add(1);
    }

    /// When to try again after `failures` failures in a row: the backoff,
    /// and at least `asked` (the server's `Retry-After`).
    fn retry_at(&self, failures: u32, asked: Option<Duration>) -> Instant {
        let (min, max) = (self.remote.reconnect_min, self.remote.reconnect_max);
        Instant::now() + client::reconnect_wait(min, max, failures, asked)
    }

    /// Serves the candidate of the split the server names to its share of
    /// subjects, fetching it when it is new; with no split, or a candidate
    /// that does not download or load, every subject gets the label's own
    /// state.
    fn follow_split(&mut self, split: Option<SplitHeader>) {
        let Some(split) = split else {
            return self.drop_candidate();
        };
        let rule = split.rule;
        // A candidate's signatures are of its split: with trusted keys,
        // the same state under a new split is fetched with the new ones.
        let trusting = self.remote.trusted_keys.is_some();
        let held = self.candidate.as_ref().filter(|(held_rule, b)| {
            b.etag().trim_matches('"') == split.digest && (!trusting || held_rule.id == rule.id)
        });
        let bundle = match held {
            Some((held_rule, _)) if *held_rule == rule => return,
            Some((_, bundle)) => bundle.clone(),
            None => match self
                .fetch_candidate(&split)
                .and_then(|b| self.admit_candidate(rule.id, b))
            {
                Ok(bundle) => bundle,
                Err(why) => {
                    self.drop_candidate();
                    return self.failed(why);
                }
            },
        };
        if let Some(file) = self.cache.as_ref().map(CacheFile::candidate)
            && let Err(why) = file.write(&bundle.received, Some(rule))
        {
            self.watched.update(|s| s.cache_warning = Some(why));
        }
        self.serve_candidate(rule, bundle);
    }

    /// Serves `bundle` to the subjects `rule` picks, its parts named as
    /// the split's candidate.
    fn serve_candidate(&mut self, rule: SplitRule, mut bundle: Bundle) {
        bundle.pack.stamp_split(rule.id);
        let (stable, candidate) = (Arc::clone(&self.watched), bundle.pack.clone());
        self.registry.set_candidate(rule, move |main| {
            let stable = stable.bundle.lock().unwrap_or_else(PoisonError::into_inner);
            let stable = stable.as_ref().map(|b| &b.pack);
            crate::sources::with_pack_replaced(main, stable, &candidate)
        });
        self.candidate = Some((rule, bundle));
        self.watched.update(|s| s.split = Some(rule));
    }

    /// Every subject gets the label's own state: no split runs, or its
    /// candidate does not download or load. Its cache goes too, so a
    /// restart does not bring an ended split back.
    fn drop_candidate(&mut self) {
        if let Some(file) = self.cache.as_ref().map(CacheFile::candidate)
            && let Err(why) = file.remove()
        {
            self.watched.update(|s| s.cache_warning = Some(why));
        }
        if self.candidate.take().is_some() {
            self.registry.clear_candidate();
            self.watched.update(|s| s.split = None);
        }
    }

    /// How the parts of a split's candidate are named in provenance.
    fn candidate_origin(&self) -> String {
        format!("{}/split/bundle", self.origin)
    }

    /// The candidate's bundle, validated.
    fn fetch_candidate(&self, split: &SplitHeader) -> Result<Bundle, String> {
        let origin = self.candidate_origin();
        match self
            .client
            .candidate(None)
            .map_err(|refused| refused.message)?
        {
            Fetched::New { received, .. } => {
                let received = Received {
                    revision: None,
                    ..received
                };
                let bundle = self.validate(received, &origin)?;
                match bundle.etag().trim_matches('"') == split.digest {
                    true => Ok(bundle),
                    // The split moved on meanwhile: the next event says so.
                    false => Err(format!(
                        "{origin}: the candidate is {}, not split {}'s {}",
                        bundle.etag(),
                        split.rule.id,
                        split.digest
                    )),
                }
            }
            Fetched::NotModified { .. } => Err(format!("{origin}: answered 304 to no ETag")),
        }
    }

    /// The bundle held is current; a new revision of the same state (a
    /// restore) is stamped on it, with that revision's signatures, and
    /// published.
    fn not_modified(&mut self, revision: Option<u64>, signatures: Vec<String>) {
        let Some(held) = &self.current else {
            return self.synced();
        };
        if held.revision() == revision || revision.is_none() {
            return self.synced();
        }
        let received = Received {
            revision,
            signatures,
            ..held.received.clone()
        };
        let restamped = self
            .validate(received, &self.origin)
            .and_then(|mut bundle| {
                self.admit(&mut bundle)?;
                Ok(bundle)
            });
        match restamped {
            Ok(bundle) => {
                self.keep(&bundle);
                self.publish(bundle, Source::Server);
            }
            Err(why) => self.failed(why),
        }
    }

    /// `received` validated as the followed pack at the followed label.
    fn validate(&self, received: Received, origin: &str) -> Result<Bundle, String> {
        Bundle::validate(received, origin, &self.remote.pack, &self.remote.label)
    }

    /// With trusted keys, whether `bundle` may be put in force: signed by
    /// one of them for exactly this pack, label and revision, and no older
    /// than the revision in force (an older release replayed). Without
    /// trusted keys, anything that loads.
    fn admit(&self, bundle: &mut Bundle) -> Result<(), String> {
        let Some(trusted) = &self.remote.trusted_keys else {
            return Ok(());
        };
        let kept = match self.current {
            Some(_) => "the last good bundle stays in force",
            None => "and no earlier bundle is held to keep",
        };
        let refused = |why: String| format!("{}: refused, {kept}: {why}", self.origin);
        let key = bundle
            .verify(trusted, &self.remote.pack, &self.remote.label)
            .map_err(refused)?;
        let held = self.current.as_ref().and_then(Bundle::revision);
        if let (Some(held), Some(new)) = (held, bundle.revision())
            && new < held
        {
            return Err(refused(format!(
                "revision {new} is older than revision {held} in force: an older release sent again is not a new one"
            )));
        }
        bundle.verified_by = Some(key);
        Ok(())
    }

    /// With trusted keys, whether the candidate `bundle` of split `split`
    /// may be served: signed by one of them as that split's candidate of
    /// this pack and label (`store canary … --sign`), over the digest of
    /// its files. Without trusted keys, anything that loads.
    fn admit_candidate(&self, split: u64, mut bundle: Bundle) -> Result<Bundle, String> {
        let Some(trusted) = &self.remote.trusted_keys else {
            return Ok(bundle);
        };
        let (pack, label) = (&self.remote.pack, &self.remote.label);
        let key = bundle
            .verify_split(trusted, pack, label, split)
            .map_err(|why| {
                format!(
                    "{}: split {split}'s candidate is not served, every subject gets the label: {why}",
                    self.candidate_origin()
                )
            })?;
        bundle.verified_by = Some(key);
        Ok(bundle)
    }

    fn synced(&mut self) {
        self.watched.update(|s| {
            s.last_sync = Some(Instant::now());
            s.last_error = None;
        });
    }

    fn failed(&mut self, why: String) {
        self.watched.update(|s| s.last_error = Some(why.clone()));
        self.report(Change::Failed(why));
    }

    /// Writes the bundle to the disk cache; a failure is reported, not
    /// fatal.
    fn keep(&mut self, bundle: &Bundle) {
        let Some(file) = &self.cache else { return };
        if let Err(why) = file.write(&bundle.received, None) {
            self.watched.update(|s| s.cache_warning = Some(why));
        }
    }

    /// Puts `bundle` in force in the registry, in place of the bundle
    /// before it, then says so in the status: a waiter woken by the status
    /// renders the new bundle, and a render may see it a moment before the
    /// status does.
    fn publish(&mut self, bundle: Bundle, source: Source) {
        // The pack in force first: a split's candidate is derived from
        // the registry's state by replacing it.
        *self
            .watched
            .bundle
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(bundle.clone());
        let old: Option<&Pack> = self.current.as_ref().map(|b| &b.pack);
        crate::sources::replace_pack(&self.registry, old, &bundle.pack);
        let etag = bundle.etag().to_owned();
        let (versions, revision) = (bundle.versions.clone(), bundle.revision());
        let verified_by = bundle.verified_by.clone();
        self.current = Some(bundle);
        self.watched.update(|s| {
            s.source = source;
            s.etag = Some(etag.clone());
            s.revision = revision;
            s.versions = versions;
            s.verified_by = verified_by;
            if source == Source::Server {
                // In the same step: never "from the server" beside the
                // error of the attempt before.
                s.last_sync = Some(Instant::now());
                s.last_error = None;
            }
        });
        self.report(Change::Updated { source, etag });
    }

    /// The fleet reports' thread's state, unless reports are off.
    fn reporter(&self) -> Option<Reporter> {
        let interval = self.remote.report_interval?;
        let instance = self
            .watched
            .status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .instance
            .clone();
        Some(Reporter {
            client: Client::new(&self.remote),
            watched: Arc::clone(&self.watched),
            interval,
            instance,
            name: self.remote.instance_name.clone(),
            library: self.remote.library.clone(),
        })
    }

    fn report(&self, change: Change) {
        if let Some(f) = &self.remote.on_change {
            f(&change);
        }
    }
}

/// Reads stream `number` and hands its events to the follower, until the
/// stream ends or the follower is gone.
fn read_stream(number: u64, reader: impl std::io::BufRead, inbox: &Sender<Message>) {
    let ended = sse::read(reader, |line| {
        let message = match line {
            Line::Event(event) => Message::Event(number, event),
            _ => Message::Alive,
        };
        inbox.send(message).is_ok()
    });
    let why = match ended {
        Ok(()) => "the event stream ended".to_owned(),
        Err(e) => format!("the event stream failed: {e}"),
    };
    let _ = inbox.send(Message::Ended(number, why));
}
