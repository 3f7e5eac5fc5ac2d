//! [`Store`]: the one interface to versions and labels, whichever
//! database holds them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use promptreg::PromptRegistry;
use promptreg::pack::Pack;

use crate::backend::{self, Backend, OpError};
use crate::diff::PromptDiff;
use crate::error::{Error, ErrorKind};
use crate::events::{Event, Feed, Written};
use crate::files::{self, PACK_ENTRY, PackFiles};
use crate::fleet::FleetLimits;
use crate::gate::{TestTurns, Turn};
use crate::limits::FileLimits;
use crate::location::Location;
use crate::model::{
    Actor, EntryVersion, LATEST, Label, LabelMove, Permission, PushReport, Timestamp, VersionInfo,
    VersionRef, Writer,
};
use crate::text;

/// A store of pack versions and labels, in SQLite or PostgreSQL.
///
/// Cheap to clone (a connection pool and the shared newest event id);
/// every method is one transaction or one consistent read, so a crash
/// leaves whole versions only.
#[derive(Clone)]
pub struct Store {
    pub(crate) backend: Backend,
    location: Location,
    /// The newest event id, shared by the clones.
    feed: Arc<Feed>,
    /// How many files a push may hold.
    limits: FileLimits,
    /// How many instances the fleet view takes.
    fleet_limits: FleetLimits,
    /// When instances unseen for a day were last dropped, shared by the
    /// clones (milliseconds since the epoch).
    fleet_pruned: Arc<AtomicI64>,
    /// Where gates' test runs take turns with the host's heavy work.
    test_turns: Option<Arc<dyn TestTurns>>,
}

impl Store {
    /// Opens (creating a SQLite file if needed) the store at `database`:
    /// `postgres://user:password@host/db`, `sqlite:PATH` (with sqlx's
    /// options, like `?mode=ro`), or a path to a SQLite file. Applies the
    /// migrations the database lacks.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NotAStore`] for a file that is not a SQLite database,
    /// [`ErrorKind::NewerSchema`] for a database made by a newer promptreg,
    /// [`ErrorKind::Unavailable`] when the server cannot be reached.
    pub async fn open(database: &str) -> Result<Store, Error> {
        let location = Location::parse(database);
        let backend = backend::connect(&location);
        let mut store = match backend {
            Ok(backend) => Store {
                backend,
                location,
                feed: Feed::new(0),
                limits: FileLimits::default(),
                fleet_limits: FleetLimits::default(),
                fleet_pruned: Arc::new(AtomicI64::new(0)),
                test_turns: None,
            },
            Err(e) => return Err(backend::in_user_words(&location, OpError::Db(e))),
        };
        on_backend!(store, migrate())?;
        store.feed = Feed::new(store.last_event_id().await?);
        Ok(store)
    }

    /// How often a SQLite store looks for events other processes wrote,
    /// for [`subscribe`](Self::subscribe) (default
    /// [`DEFAULT_EVENT_POLL`](crate::DEFAULT_EVENT_POLL)); PostgreSQL
    /// announces them instead. Applies to every clone of the store.
    pub fn with_event_poll(self, every: Duration) -> Store {
        self.feed.set_poll(every);
        self
    }

    /// The most files a push to this store (this value; other clones keep
    /// theirs) may hold, per prompt and per pack; [`FileLimits::default`]
    /// until set.
    pub fn with_file_limits(mut self, limits: FileLimits) -> Store {
        self.limits = limits;
        self
    }

    /// The most instances (this value; other clones keep theirs) a label's
    /// fleet view takes ([`DEFAULT_FLEET_CAPACITY`](crate::DEFAULT_FLEET_CAPACITY)
    /// until set): a report of a new instance past it is refused. The
    /// same as [`with_fleet_limits`](Self::with_fleet_limits) with only
    /// [`FleetLimits::per_label`] changed.
    pub fn with_fleet_capacity(mut self, instances: usize) -> Store {
        self.fleet_limits.per_label = instances;
        self
    }

    /// The most instances (this value; other clones keep theirs) the fleet
    /// view takes per label, per pack and per key ([`FleetLimits::default`]
    /// until set): a report of a new instance past any is refused.
    pub fn with_fleet_limits(mut self, limits: FleetLimits) -> Store {
        self.fleet_limits = limits;
        self
    }

    /// Where the test runs of gated moves take their turns (this value;
    /// other clones keep theirs): a server hands its bound of heavy jobs,
    /// so a gate's tests count as a render does. Until set they run at
    /// once.
    pub fn with_test_turns(mut self, turns: Arc<dyn TestTurns>) -> Store {
        self.test_turns = Some(turns);
        self
    }

    /// A turn for a gate's test run, held until dropped.
    pub(crate) async fn test_turn(&self) -> Result<Option<Turn>, Error> {
        match &self.test_turns {
            Some(turns) => turns.turn().await.map(Some),
            None => Ok(None),
        }
    }

    pub(crate) fn fleet_limits(&self) -> FleetLimits {
        self.fleet_limits
    }

    /// Whether instances unseen for a day are due to be dropped: at most
    /// once a minute per process.
    pub(crate) fn fleet_prune_due(&self, at: Timestamp) -> bool {
        const EVERY_MS: i64 = 60_000;
        let last = self.fleet_pruned.load(Ordering::Relaxed);
        at.0.saturating_sub(last) >= EVERY_MS
            && self
                .fleet_pruned
                .compare_exchange(last, at.0, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// At most `limit` events with ids above `after`, oldest first: every
    /// change committed after event `after`, in commit order. Page with
    /// the last id returned; `0` starts from the first event.
    pub async fn events_since(&self, after: u64, limit: usize) -> Result<Vec<Event>, Error> {
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        on_backend!(self, events_since(after, limit))
    }

    /// The newest event's id; 0 when nothing was ever changed.
    pub async fn last_event_id(&self) -> Result<u64, Error> {
        on_backend!(self, last_event_id())
    }

    /// The newest event id, pushed as it changes: at once for this
    /// process's writes (through any clone of the store); for other
    /// processes' writes through PostgreSQL's LISTEN/NOTIFY, or for SQLite
    /// by reading the newest id every [poll interval](Self::with_event_poll).
    /// On PostgreSQL, listening holds one connection of the store's pool;
    /// a connection that is lost is made again, with a growing wait, and
    /// the newest id read again, so nothing is missed.
    ///
    /// The value only grows, and a receiver may skip values: read the
    /// events with [`events_since`](Self::events_since). Following other
    /// processes needs a tokio runtime when first called (without one,
    /// only this process's writes are seen); it stops when the last clone
    /// of the store is dropped, which also closes the receivers.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.feed.subscribe(&self.backend)
    }

    /// A write's value, after announcing its last event to subscribers.
    pub(crate) fn published<T>(&self, written: Written<T>) -> T {
        if let Some(id) = written.last_event {
            self.feed.publish(id);
        }
        written.value
    }

    /// Where the store is, for messages: the file, or the URL with its
    /// password hidden.
    pub fn location(&self) -> String {
        self.location.to_string()
    }

    /// Checks `files` as `promptreg check` would and, if the pack passes,
    /// records a new version of every prompt (and of the pack-level
    /// entry) whose content is new, moving `latest` to it; all in one
    /// transaction. Pushing the same files again writes nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidPack`] with the check's diagnostics (nothing is
    /// written), [`ErrorKind::TooManyFiles`] past the store's
    /// [`FileLimits`], [`ErrorKind::InvalidInput`] for a NUL byte in a file
    /// or the message, or a message longer than
    /// [`MAX_MESSAGE_BYTES`](crate::MAX_MESSAGE_BYTES);
    /// [`ErrorKind::Forbidden`] without the write permission.
    pub async fn push(
        &self,
        files: &PackFiles,
        actor: &Actor,
        message: &str,
    ) -> Result<PushReport, Error> {
        self.push_onto(files, None, actor, message).await
    }

    /// [`push`](Self::push) of files taken from the store at `base`
    /// (entry -> version: what a pull wrote, or a push recorded), refusing
    /// to change an entry whose `latest` moved since: the push would undo
    /// someone else's change. A base without an entry says the files were
    /// taken where the store had none of it.
    ///
    /// # Errors
    ///
    /// As [`push`](Self::push); [`ErrorKind::Conflict`] naming each entry
    /// that moved since `base`, its version now and its author: nothing is
    /// written.
    pub async fn push_from(
        &self,
        files: &PackFiles,
        base: &BTreeMap<String, u64>,
        actor: &Actor,
        message: &str,
    ) -> Result<PushReport, Error> {
        self.push_onto(files, Some(base), actor, message).await
    }

    async fn push_onto(
        &self,
        files: &PackFiles,
        base: Option<&BTreeMap<String, u64>>,
        actor: &Actor,
        message: &str,
    ) -> Result<PushReport, Error> {
        actor.require(Permission::Write, "push")?;
        text::check_message("message", message)?;
        text::check_files(files)?;
        let what = files.root().map_or_else(
            || "the pack pushed".to_owned(),
            |dir| format!("the pack in {}", dir.display()),
        );
        self.limits.check_pack(&what, files)?;
        let root = files
            .root()
            .map_or_else(|| PathBuf::from("pack"), Into::into);
        let pack = files.to_pack(root)?;
        // Every file pushed is checked as `check` checks it, tests too.
        files.tests(&pack)?;
        self.limits.check_prompts(&pack)?;
        let entries = files.entries(&pack);
        let (name, held) = (pack.name(), &entries);
        let written = self
            .through_gates(name, |tested| async move {
                raw!(self, push(name, held, true, base, actor, message, &tested))
            })
            .await
            .map_err(|e| self.error(e))?;
        let mut report = self.published(written);
        report.not_stored = files.unheld(&entries);
        report.not_stored.extend_from_slice(files.not_stored());
        report.not_stored.sort_unstable();
        Ok(report)
    }

    /// Records a new version of one prompt of `pack` from `files` (its
    /// default and locale variants, by path in the pack, such as
    /// `defaults/greeting.fr.md`), replacing all of its files at `latest`.
    /// The pack at `latest` with these files must pass `check`; the other
    /// prompts are left as they are. Pushing the same files again writes
    /// nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidPack`] with the check's diagnostics, or naming
    /// a file that is not one of `prompt`'s; [`ErrorKind::TooManyFiles`]
    /// past the store's [`FileLimits`]; [`ErrorKind::UnknownPrompt`]
    /// when the manifest does not declare `prompt`;
    /// [`ErrorKind::InvalidInput`] as [`push`](Self::push) says;
    /// [`ErrorKind::Forbidden`] without the write permission.
    pub async fn push_prompt(
        &self,
        pack: &str,
        prompt: &str,
        files: &PackFiles,
        actor: &Actor,
        message: &str,
    ) -> Result<PushReport, Error> {
        actor.require(Permission::Write, "push")?;
        text::check_message("message", message)?;
        let entry = self.merged_prompt(pack, prompt, files).await?;
        let entries = &[entry];
        let written = self
            .through_gates(pack, |tested| async move {
                raw!(
                    self,
                    push(pack, entries, false, None, actor, message, &tested)
                )
            })
            .await
            .map_err(|e| self.error(e))?;
        Ok(self.published(written))
    }

    /// Checks `files` as [`push_prompt`](Self::push_prompt) would, writing
    /// nothing: the pack at `latest` with these files for `prompt` must
    /// pass `check`.
    ///
    /// # Errors
    ///
    /// As [`push_prompt`](Self::push_prompt): [`ErrorKind::InvalidPack`]
    /// with the check's diagnostics, [`ErrorKind::UnknownPrompt`].
    pub async fn check_prompt(
        &self,
        pack: &str,
        prompt: &str,
        files: &PackFiles,
    ) -> Result<(), Error> {
        self.merged_prompt(pack, prompt, files).await.map(drop)
    }

    /// The entry of `prompt` after replacing its files at `latest` with
    /// `files`, once the whole pack passes `check`. Building the packs is
    /// CPU work in proportion to their files: it runs on tokio's blocking
    /// threads, not on the caller's async worker.
    async fn merged_prompt(
        &self,
        pack: &str,
        prompt: &str,
        files: &PackFiles,
    ) -> Result<files::Entry, Error> {
        // Counted before anything is read or built.
        self.limits.check_prompt(prompt, files.len())?;
        text::check_files(files)?;
        let base = self.checkout(pack, &Label::latest()).await?;
        let merge = PromptMerge {
            pack: pack.to_owned(),
            prompt: prompt.to_owned(),
            root: PathBuf::from(format!("{}#{pack}@{LATEST}", self.location)),
            limits: self.limits,
        };
        let files = files.clone();
        match tokio::task::spawn_blocking(move || merge.entry(&base, &files)).await {
            Ok(entry) => entry,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Err(Error::new(
                ErrorKind::Unavailable,
                "the check of the pushed files was cancelled: the process is shutting down; retry",
            )),
        }
    }

    /// Every entry of `pack` at `label` (prompts and [`PACK_ENTRY`]), with
    /// its version number, content address and files, in one consistent
    /// read.
    pub async fn entries_at(&self, pack: &str, label: &Label) -> Result<Vec<EntryVersion>, Error> {
        let id = self.pack_id(pack).await?;
        on_backend!(self, entries_at(id, label.as_str()))
    }

    /// One version of `prompt`, with its number, content address and files.
    ///
    /// # Errors
    ///
    /// As [`files`](Self::files).
    pub async fn entry_version(
        &self,
        pack: &str,
        prompt: &str,
        version: &VersionRef,
    ) -> Result<EntryVersion, Error> {
        let (number, files) = self.files(pack, prompt, version).await?;
        let id = self.pack_id(pack).await?;
        let digest = on_backend!(self, digest_of(id, prompt, number))?
            .ok_or_else(|| self.unknown_version(pack, prompt, version))?;
        Ok(EntryVersion {
            prompt: prompt.to_owned(),
            number,
            digest,
            files,
        })
    }

    /// Whether the store can serve requests now: PostgreSQL answers a
    /// query; a SQLite file gives its write lock within a second (reads
    /// never wait in WAL mode, so a lock held by another process is what
    /// keeps a SQLite store from working). Nothing is written.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unavailable`] when the database cannot be reached or
    /// another process holds SQLite's write lock.
    pub async fn ready(&self) -> Result<(), Error> {
        backend::probe(&self.backend)
            .await
            .map_err(|e| self.error(OpError::Db(e)))
    }

    /// The names of the packs in the store, sorted.
    pub async fn packs(&self) -> Result<Vec<String>, Error> {
        on_backend!(self, pack_names())
    }

    /// The pack named `name`, or the only one when `name` is `None`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownPack`] naming the packs there are.
    pub async fn pack(&self, name: Option<&str>) -> Result<String, Error> {
        let names = self.packs().await?;
        let location = &self.location;
        let listed = quoted(&names);
        match name {
            Some(name) if names.iter().any(|n| n == name) => Ok(name.to_owned()),
            _ if names.is_empty() => Err(Error::new(
                ErrorKind::UnknownPack,
                format!("the store {location} is empty: run `promptreg store push DIR` first"),
            )),
            Some(name) => Err(Error::new(
                ErrorKind::UnknownPack,
                format!("the store {location} has no pack `{name}`; it has {listed}"),
            )),
            None if names.len() == 1 => Ok(names[0].clone()),
            None => Err(Error::new(
                ErrorKind::UnknownPack,
                format!(
                    "the store {location} holds several packs ({listed}): name one with --name"
                ),
            )),
        }
    }

    /// Every prompt of `pack` (and [`PACK_ENTRY`]) with its labels.
    pub async fn prompts(
        &self,
        pack: &str,
    ) -> Result<BTreeMap<String, BTreeMap<String, u64>>, Error> {
        let id = self.pack_id(pack).await?;
        on_backend!(self, entries(id))
    }

    /// The versions of `prompt`, newest first, with the labels on each.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownPrompt`] when the pack never had `prompt`.
    pub async fn log(&self, pack: &str, prompt: &str) -> Result<Vec<VersionInfo>, Error> {
        let id = self.prompt_of(pack, prompt).await?;
        on_backend!(self, versions(id, prompt))
    }

    /// The version number `version` names for `prompt`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownVersion`] when there is no such version, or the
    /// label does not point at one.
    pub async fn resolve(
        &self,
        pack: &str,
        prompt: &str,
        version: &VersionRef,
    ) -> Result<u64, Error> {
        let id = self.prompt_of(pack, prompt).await?;
        self.resolve_in(id, pack, prompt, version).await
    }

    /// [`resolve`](Self::resolve) in the pack `pack_id`, resolved already
    /// (`pack`: its name, for the error).
    async fn resolve_in(
        &self,
        pack_id: i64,
        pack: &str,
        prompt: &str,
        version: &VersionRef,
    ) -> Result<u64, Error> {
        let found = on_backend!(self, resolve(pack_id, prompt, version))?;
        found.ok_or_else(|| self.unknown_version(pack, prompt, version))
    }

    /// The files of one version of `prompt`, by path, exactly as pushed.
    pub async fn files(
        &self,
        pack: &str,
        prompt: &str,
        version: &VersionRef,
    ) -> Result<(u64, PackFiles), Error> {
        let id = self.prompt_of(pack, prompt).await?;
        let number = self.resolve_in(id, pack, prompt, version).await?;
        let files = on_backend!(self, files(id, prompt, number))?;
        let files = files.ok_or_else(|| self.unknown_version(pack, prompt, version))?;
        Ok((number, files.into_iter().collect()))
    }

    /// Compares two versions of `prompt` file by file (see
    /// [`PromptDiff::new`]); with `locale`, only the files of that locale.
    ///
    /// # Errors
    ///
    /// As [`files`](Self::files), for either version.
    pub async fn diff(
        &self,
        pack: &str,
        prompt: &str,
        from: &VersionRef,
        to: &VersionRef,
        locale: Option<&promptreg::Locale>,
    ) -> Result<PromptDiff, Error> {
        let (a, a_files) = self.files(pack, prompt, from).await?;
        let (b, b_files) = self.files(pack, prompt, to).await?;
        let mut diff = PromptDiff::new(prompt, (a, &a_files), (b, &b_files), locale);
        diff.contract = self
            .contract_between(pack, prompt, &a_files, &b_files)
            .await?;
        Ok(diff)
    }

    /// What version `to` of `prompt` changes in the contract version
    /// `from` declares (see [`contract_changes`](crate::contract_changes)),
    /// both naming the shared tools and schemas the pack has at `latest`.
    ///
    /// # Errors
    ///
    /// As [`files`](Self::files), for either version.
    pub async fn contract_changes(
        &self,
        pack: &str,
        prompt: &str,
        from: &VersionRef,
        to: &VersionRef,
    ) -> Result<Vec<promptreg::ContractChange>, Error> {
        let (_, a_files) = self.files(pack, prompt, from).await?;
        let (_, b_files) = self.files(pack, prompt, to).await?;
        self.contract_between(pack, prompt, &a_files, &b_files)
            .await
    }

    /// The contract changes from `a` to `b` (files of `prompt`), with the
    /// pack's shared tools and schemas at `latest`.
    async fn contract_between(
        &self,
        pack: &str,
        prompt: &str,
        a: &PackFiles,
        b: &PackFiles,
    ) -> Result<Vec<promptreg::ContractChange>, Error> {
        let latest = VersionRef::Label(Label::latest());
        let (_, pack_files) = self.files(pack, crate::files::PACK_ENTRY, &latest).await?;
        let with_shared = |files: &PackFiles| {
            let mut all = files.clone();
            for (path, bytes) in pack_files
                .iter()
                .filter(|(p, _)| crate::diff::is_shared_file(p))
            {
                all.insert(path, bytes);
            }
            all
        };
        Ok(crate::diff::contract_changes(
            prompt,
            &with_shared(a),
            &with_shared(b),
        ))
    }

    /// Moves `label` of `prompt` to version `to`, if it points at `expect`
    /// now (`None`: the label does not exist yet), and records the move.
    /// `actor` is an [`Actor`], whose write permission the store checks
    /// (as for every move below), or a [`Permit`](crate::Permit) whose
    /// host checked it once already.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Conflict`] naming the version the label points at
    /// (see [`Error::current_version`]); [`ErrorKind::Forbidden`] for a
    /// protected label without [`Permission::Admin`], or an actor without
    /// the write permission; [`ErrorKind::InvalidLabel`] for `latest`, which only pushes move;
    /// [`ErrorKind::InvalidInput`] for a reason holding a NUL byte or
    /// longer than [`MAX_MESSAGE_BYTES`](crate::MAX_MESSAGE_BYTES) (so for
    /// every move below).
    #[allow(clippy::too_many_arguments)]
    pub async fn move_label(
        &self,
        pack: &str,
        prompt: &str,
        label: &Label,
        to: u64,
        expect: Option<u64>,
        actor: &impl Writer,
        reason: &str,
    ) -> Result<LabelMove, Error> {
        let actor = actor.writer(&|| format!("move label `{label}`"))?;
        actor.require_forcing_allowed(reason)?;
        refuse_latest(label)?;
        text::check_message("reason", reason)?;
        // The pack is resolved once; the transaction takes its id.
        let id = self.prompt_of(pack, prompt).await?;
        let to = self
            .resolve_in(id, pack, prompt, &VersionRef::Number(to))
            .await?;
        let moved = self
            .through_gates(pack, |tested| async move {
                raw!(
                    self,
                    move_label(id, prompt, label, to, expect, actor, reason, &tested)
                )
            })
            .await;
        Ok(self.published(self.explain_conflict(moved, id).await?))
    }

    /// Moves `label` of `prompt` one step back in its history: to where
    /// its newest move that no rollback undid took it from. Rollbacks walk
    /// back (v3, v2, v1), they do not undo each other. The history records
    /// `rollback from N`, then `reason` when it is not blank.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownVersion`] when the prompt has no such label, or
    /// the label is back where it was created.
    pub async fn rollback(
        &self,
        pack: &str,
        prompt: &str,
        label: &Label,
        actor: &impl Writer,
        reason: &str,
    ) -> Result<LabelMove, Error> {
        let actor = actor.writer(&|| format!("roll back label `{label}`"))?;
        actor.require_forcing_allowed(reason)?;
        refuse_latest(label)?;
        text::check_message("reason", reason)?;
        let id = self.prompt_of(pack, prompt).await?;
        let moved = self
            .through_gates(pack, |tested| async move {
                raw!(self, rollback(id, prompt, label, actor, reason, &tested))
            })
            .await;
        Ok(self.published(self.explain_conflict(moved, id).await?))
    }

    /// The version a [`rollback`](Self::rollback) of `label` would point
    /// it at now, without moving it: what a confirmation shows.
    ///
    /// # Errors
    ///
    /// As [`rollback`](Self::rollback).
    pub async fn rollback_target(
        &self,
        pack: &str,
        prompt: &str,
        label: &Label,
    ) -> Result<u64, Error> {
        let id = self.prompt_of(pack, prompt).await?;
        on_backend!(self, rollback_target(id, prompt, label))
    }

    /// Points label `to` at the version `from` points at, on every prompt
    /// of the pack that has `from`, in one transaction: all or none. The
    /// history records `release FROM`, then `reason` when it is not blank.
    /// With `expect`, only if `to`'s newest revision is that one (0: `to`
    /// has none yet): of two releases decided on the same state, the
    /// second is refused with the revision the first made.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Conflict`] with the newest revision when it is not
    /// `expect`; [`ErrorKind::TestsFailed`] for a gated label whose tests
    /// fail; [`ErrorKind::Forbidden`] as for a move.
    pub async fn release(
        &self,
        pack: &str,
        from: &Label,
        to: &Label,
        expect: Option<u64>,
        actor: &impl Writer,
        reason: &str,
    ) -> Result<Vec<LabelMove>, Error> {
        let actor = actor.writer(&|| format!("release to `{to}`"))?;
        actor.require_forcing_allowed(reason)?;
        refuse_latest(to)?;
        text::check_message("reason", reason)?;
        let id = self.pack_id(pack).await?;
        let moved = self
            .through_gates(pack, |tested| async move {
                raw!(self, release(id, from, to, expect, actor, reason, &tested))
            })
            .await;
        Ok(self.published(self.explain_conflict(moved, id).await?))
    }

    /// Marks `label` protected in `pack` (or lifts it): moving a protected
    /// label needs [`Permission::Admin`]. Needs it too.
    pub async fn protect(
        &self,
        pack: &str,
        label: &Label,
        protected: bool,
        actor: &Actor,
    ) -> Result<(), Error> {
        actor.require(
            Permission::Admin,
            &format!("change the protection of label `{label}`"),
        )?;
        let id = self.pack_id(pack).await?;
        let written = on_backend!(self, protect(id, label, protected, actor))?;
        self.published(written);
        Ok(())
    }

    /// The protected labels of `pack`.
    pub async fn protected_labels(&self, pack: &str) -> Result<BTreeSet<String>, Error> {
        let id = self.pack_id(pack).await?;
        on_backend!(self, protected(id))
    }

    /// The label history of `pack`, or of one prompt, oldest first.
    pub async fn history(&self, pack: &str, prompt: Option<&str>) -> Result<Vec<LabelMove>, Error> {
        let id = match prompt {
            Some(prompt) => self.prompt_of(pack, prompt).await?,
            None => self.pack_id(pack).await?,
        };
        on_backend!(self, history(id, prompt))
    }

    /// The pack's files at `label`: every prompt's version there, and the
    /// pack-level files, byte for byte as pushed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownVersion`] when the pack-level entry does not
    /// carry the label (no manifest at that label).
    pub async fn checkout(&self, pack: &str, label: &Label) -> Result<PackFiles, Error> {
        let id = self.pack_id(pack).await?;
        let rows = on_backend!(self, checkout(id, label.as_str()))?;
        if !rows.iter().any(|(entry, ..)| entry == PACK_ENTRY) {
            let carried: BTreeSet<&str> = rows.iter().map(|(entry, ..)| entry.as_str()).collect();
            return Err(no_manifest_at(pack, label, &carried));
        }
        Ok(rows
            .into_iter()
            .map(|(_, path, bytes)| (path, bytes))
            .collect())
    }

    /// [`checkout`](Self::checkout), with the version of each entry the
    /// files come from, from one consistent read: what a pull records so
    /// that a push from its folder knows what it was taken at
    /// ([`push_from`](Self::push_from)).
    ///
    /// # Errors
    ///
    /// As [`checkout`](Self::checkout).
    pub async fn checkout_versions(
        &self,
        pack: &str,
        label: &Label,
    ) -> Result<(PackFiles, BTreeMap<String, u64>), Error> {
        let entries = self.entries_at(pack, label).await?;
        if !entries.iter().any(|e| e.prompt == PACK_ENTRY) {
            let carried: BTreeSet<&str> = entries.iter().map(|e| e.prompt.as_str()).collect();
            return Err(no_manifest_at(pack, label, &carried));
        }
        let versions = entries
            .iter()
            .map(|e| (e.prompt.clone(), e.number))
            .collect();
        let files = entries
            .iter()
            .flat_map(|e| {
                e.files
                    .iter()
                    .map(|(path, bytes)| (path.to_owned(), bytes.to_vec()))
            })
            .collect();
        Ok((files, versions))
    }

    /// The files `label` of `pack` would serve were `prompt` moved to
    /// `version` on it, its other entries as they are: the state a move
    /// publishes, to test before it is made.
    ///
    /// # Errors
    ///
    /// As [`checkout`](Self::checkout), and [`ErrorKind::UnknownVersion`]
    /// when the prompt has no such version.
    pub async fn state_with(
        &self,
        pack: &str,
        label: &Label,
        prompt: &str,
        version: u64,
    ) -> Result<PackFiles, Error> {
        let id = self.pack_id(pack).await?;
        let (_, moved) = self
            .files(pack, prompt, &VersionRef::Number(version))
            .await?;
        let rows = on_backend!(self, checkout(id, label.as_str()))?;
        let kept: Vec<_> = rows
            .into_iter()
            .filter(|(entry, ..)| entry != prompt)
            .collect();
        if prompt != PACK_ENTRY && !kept.iter().any(|(entry, ..)| entry == PACK_ENTRY) {
            let carried: BTreeSet<&str> = kept.iter().map(|(entry, ..)| entry.as_str()).collect();
            return Err(no_manifest_at(pack, label, &carried));
        }
        let mut files: PackFiles = kept
            .into_iter()
            .map(|(_, path, bytes)| (path, bytes))
            .collect();
        for (path, bytes) in moved.iter() {
            files.insert(path, bytes);
        }
        Ok(files)
    }

    /// Builds the pack at `label`, as `Pack::load` would from a folder
    /// holding [`checkout`](Self::checkout)'s files.
    pub async fn load(&self, pack: &str, label: &Label) -> Result<Pack, Error> {
        let files = self.checkout(pack, label).await?;
        files.to_pack(PathBuf::from(format!("{}#{pack}@{label}", self.location)))
    }

    /// Installs the pack at `label` in `registry`, with the same semantics
    /// as installing a pack from its folder (user configuration loaded on
    /// top works the same).
    pub async fn install(
        &self,
        pack: &str,
        label: &Label,
        registry: &PromptRegistry,
    ) -> Result<Pack, Error> {
        let pack = self.load(pack, label).await?;
        pack.install(registry).map_err(Error::invalid_pack)?;
        Ok(pack)
    }

    /// Recomputes every version's content address from its stored files.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Database`] naming the first version whose files do
    /// not match its address.
    pub async fn verify(&self, pack: &str) -> Result<usize, Error> {
        let id = self.pack_id(pack).await?;
        let versions = on_backend!(self, all_versions(id))?;
        for (entry, number, digest, files) in &versions {
            if files.is_empty() || files::digest(files) != *digest {
                return Err(Error::new(
                    ErrorKind::Database,
                    format!(
                        "version {number} of `{entry}` in pack `{pack}` is damaged: its files do not match its address {digest}"
                    ),
                ));
            }
        }
        Ok(versions.len())
    }

    pub(crate) async fn pack_id(&self, pack: &str) -> Result<i64, Error> {
        match on_backend!(self, pack_id(pack))? {
            Some(id) => Ok(id),
            None => self.pack(Some(pack)).await.map(|_| 0),
        }
    }

    /// The pack's id, once `prompt` is known to have versions in it.
    async fn prompt_of(&self, pack: &str, prompt: &str) -> Result<i64, Error> {
        let id = self.pack_id(pack).await?;
        if on_backend!(self, version_count(id, prompt))? > 0 {
            return Ok(id);
        }
        let known = self.prompts(pack).await?;
        let hint = nearest(prompt, known.keys().map(String::as_str))
            .map(|k| format!(" (did you mean `{k}`?)"))
            .unwrap_or_default();
        Err(Error::new(
            ErrorKind::UnknownPrompt,
            format!("pack `{pack}` has no prompt `{prompt}`{hint}"),
        ))
    }

    fn unknown_version(&self, pack: &str, prompt: &str, version: &VersionRef) -> Error {
        let what = match version {
            VersionRef::Number(n) => format!("no version {n}"),
            VersionRef::Label(l) => format!("no label `{l}`"),
        };
        Error::new(
            ErrorKind::UnknownVersion,
            format!(
                "`{prompt}` in pack `{pack}` has {what}: `promptreg store log {prompt}` lists its versions and labels"
            ),
        )
    }

    /// A conflict as an error naming the version the label points at now,
    /// read after the failed transaction.
    pub(crate) async fn explain_conflict<T>(
        &self,
        result: Result<T, OpError>,
        pack_id: i64,
    ) -> Result<T, Error> {
        let (prompt, label, expected) = match result {
            Ok(done) => return Ok(done),
            Err(OpError::Conflict {
                prompt,
                label,
                expected,
            }) => (prompt, label, expected),
            Err(e) => return Err(self.error(e)),
        };
        let current = on_backend!(self, label_target(pack_id, &prompt, &label))?;
        let show = |v: Option<u64>| v.map_or("nothing".to_owned(), |n| format!("version {n}"));
        let expect = current.map_or("none".to_owned(), |n| n.to_string());
        Err(Error::new(
            ErrorKind::Conflict,
            format!(
                "label `{label}` of `{prompt}` points at {}, not {} as expected: someone moved it; check `promptreg store history {prompt}` and retry with --expect {expect}",
                show(current),
                show(expected.map(|n| n as u64)),
            ),
        )
        .with_current(current))
    }

    pub(crate) fn error(&self, e: OpError) -> Error {
        backend::in_user_words(&self.location, e)
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store({})", self.location)
    }
}

/// Why `pack` cannot be read at `label`: its manifest does not carry it.
/// A pack at a label is its manifest and snippets at that label with the
/// prompts that carry it, so without the manifest there is no such pack;
/// the prompts that carry the label are still readable one by one.
fn no_manifest_at(pack: &str, label: &Label, carried: &BTreeSet<&str>) -> Error {
    let message = if carried.is_empty() {
        format!(
            "pack `{pack}` has no label `{label}`: nothing carries it (`promptreg store log ID` lists a prompt's labels)"
        )
    } else {
        const SHOWN: usize = 5;
        let mut names: Vec<String> = carried
            .iter()
            .take(SHOWN)
            .map(|p| format!("`{p}`"))
            .collect();
        if carried.len() > SHOWN {
            names.push(format!("{} more", carried.len() - SHOWN));
        }
        format!(
            "pack `{pack}` has no manifest at label `{label}`, which only {} carr{} (a pack at a label needs its manifest `{PACK_ENTRY}` there): release to the label (`promptreg store release latest {label}`) or move it on `{PACK_ENTRY}`; a prompt that carries it can still be read on its own (`promptreg store log ID`)",
            names.join(", "),
            if carried.len() == 1 { "ies" } else { "y" },
        )
    };
    Error::new(ErrorKind::UnknownVersion, message)
}

fn refuse_latest(label: &Label) -> Result<(), Error> {
    if label.is_latest() {
        return Err(Error::new(
            ErrorKind::InvalidLabel,
            "label `latest` follows pushes and cannot be moved by hand: push the content, or use another label",
        ));
    }
    Ok(())
}

/// What [`Store::merged_prompt`] checks off the async workers: one
/// prompt's new files over the pack at `latest`.
struct PromptMerge {
    pack: String,
    prompt: String,
    root: PathBuf,
    limits: FileLimits,
}

impl PromptMerge {
    fn entry(&self, base: &PackFiles, files: &PackFiles) -> Result<files::Entry, Error> {
        let (pack, prompt) = (&self.pack, &self.prompt);
        let old = base.to_pack(self.root.clone())?;
        let old_paths: BTreeSet<String> =
            files::entry_paths(base, &old, prompt).into_iter().collect();
        let mut merged: PackFiles = base
            .iter()
            .filter(|(path, _)| !old_paths.contains(*path))
            .map(|(path, bytes)| (path.to_owned(), bytes.to_vec()))
            .collect();
        for (path, bytes) in files.iter() {
            merged.insert(path, bytes);
        }
        self.limits.check_pack(&format!("pack `{pack}`"), &merged)?;
        let new = merged.to_pack(self.root.clone())?;
        let entry = merged
            .entries(&new)
            .into_iter()
            .find(|e| e.name == *prompt && !e.files.is_empty())
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::UnknownPrompt,
                    format!("pack `{pack}` does not declare a prompt `{prompt}` with these files: its manifest lists the prompts it has"),
                )
            })?;
        if let Some((stray, _)) = files.iter().find(|(p, _)| !entry.files.contains_key(*p)) {
            return Err(Error::new(
                ErrorKind::InvalidPack,
                format!(
                    "`{stray}` is not a file of prompt `{prompt}`: its files are `defaults/{prompt}.md` and `defaults/{prompt}.<locale>.md`; nothing was written"
                ),
            ));
        }
        Ok(entry)
    }
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The nearest known prompt id, for a did-you-mean.
pub(crate) fn nearest<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    known
        .filter(|k| !k.starts_with('@'))
        .map(|k| (strsim::levenshtein(name, k), k))
        .filter(|(d, k)| *d <= (k.len() / 3).max(1))
        .min()
        .map(|(_, k)| k)
}
