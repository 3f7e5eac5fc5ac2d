//! Following files (feature `watch`): the registry reloads the user's
//! configuration when a settings or prompt file changes, and a pack
//! installed from a folder when its manifest or defaults change, so the
//! next render uses them, and a broken edit never replaces the last good
//! state.
//!
//! Only events that can change what is read start a reload: creating,
//! writing, renaming or removing a file, or changing its attributes.
//! Opening and reading a file (an editor, `cat`, the reload's own reads) do
//! not. A reload waits until the files have been quiet for the debounce
//! delay, so a save written in several parts is read once, whole; and it is
//! reported only when it changed something: the prompts, the warnings, or
//! the outcome of the previous reload.
//!
//! ```no_run
//! use promptreg_core::PromptRegistry;
//! use promptreg_packs::{ReloadEvent, prelude::*};
//! use promptreg_packs::config::{ConfigSpec, LoadOptions};
//!
//! let registry = PromptRegistry::global();
//! let spec = ConfigSpec::builder("app").key("auditor").prompts_dir(".app/prompts").build()?;
//! registry.load_config(spec.clone(), LoadOptions::from_process(&spec)?)?;
//!
//! let _watching = registry.watch(|event| match event {
//!     ReloadEvent::Reloaded(report) => eprintln!("prompts reloaded: {:?}", report.changed),
//!     ReloadEvent::Failed(error) => eprintln!("kept the previous prompts: {error}"),
//!     _ => {}
//! })?;
//! // ... renders pick up edits; dropping `_watching` stops following files.
//! # Ok::<(), promptreg_core::Error>(())
//! ```

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::event::{MetadataKind, ModifyKind};
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::config::{ConfigPaths, LoadReport};
use crate::diagnostic::Diagnostic;
use crate::error::{Error, ErrorKind};
use crate::id::PromptId;
use crate::registry::{PromptRegistry, Shared};

/// How long the files must stay quiet after a change (an editor's
/// save-by-rename, a save in several writes, a `git checkout`) before the
/// watcher reloads, once.
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(100);

/// Files that never stop changing are still reloaded after this many
/// debounce delays.
const MAX_WAIT_IN_DELAYS: u32 = 20;

/// What happened when the watcher reloaded.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReloadEvent {
    /// The files changed and the new configuration is in force.
    Reloaded(LoadReport),
    /// The files changed but do not load; the previous configuration stays
    /// in force. The error carries every diagnostic.
    Failed(Error),
}

/// Follows the files while it lives; dropping it stops the watcher and
/// waits for its thread to end.
#[derive(Debug)]
pub struct WatchHandle {
    messages: Sender<Message>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        let _ = self.messages.send(Message::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

enum Message {
    Changed(notify::Result<notify::Event>),
    Stop,
}

/// Following a registry's files and reloading when they change: in scope
/// with `use promptreg_packs::prelude::*`.
pub trait Watch {
    /// Follows the loaded configuration's settings files, prompt
    /// directories and legacy files, and the manifest and defaults of every
    /// pack installed from a folder, and [reloads](crate::sources::LoadConfig::reload) when they
    /// change, once
    /// they have been quiet for [`DEFAULT_DEBOUNCE`]. `on_event` hears of
    /// every reload that changed something, successful or not, on the
    /// watcher's thread.
    ///
    /// Files and directories that do not exist yet are followed through
    /// their nearest existing parent, so creating them later is seen too.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NotLoaded`] without a loaded configuration or a pack
    /// installed from a folder;
    /// [`ErrorKind::Watch`] when the operating system's watcher cannot start.
    fn watch<F>(&self, on_event: F) -> Result<WatchHandle, Error>
    where
        F: FnMut(ReloadEvent) + Send + 'static;

    /// [`watch`](Self::watch) with another debounce delay.
    ///
    /// # Errors
    ///
    /// As [`watch`](Self::watch).
    fn watch_with<F>(&self, debounce: Duration, on_event: F) -> Result<WatchHandle, Error>
    where
        F: FnMut(ReloadEvent) + Send + 'static;
}

impl Watch for PromptRegistry {
    fn watch<F>(&self, on_event: F) -> Result<WatchHandle, Error>
    where
        F: FnMut(ReloadEvent) + Send + 'static,
    {
        self.watch_with(DEFAULT_DEBOUNCE, on_event)
    }

    fn watch_with<F>(&self, debounce: Duration, on_event: F) -> Result<WatchHandle, Error>
    where
        F: FnMut(ReloadEvent) + Send + 'static,
    {
        let shared = Arc::clone(self.shared());
        let Some(paths) = crate::sources::source_paths(&shared) else {
            return Err(Error::new(
                ErrorKind::NotLoaded,
                "nothing to follow: no user configuration is loaded and no pack was installed from a folder; call `load_config` before `watch`",
            ));
        };
        let (messages, inbox) = mpsc::channel();
        let sender = messages.clone();
        let watcher = notify::recommended_watcher(move |result| {
            let _ = sender.send(Message::Changed(result));
        })
        .map_err(|e| {
            Error::new(
                ErrorKind::Watch,
                format!("cannot watch the prompt files: {e}"),
            )
            .with_source(e)
        })?;
        let mut worker = Worker {
            shared,
            watcher,
            debounce,
            paths: absolute(&paths),
            watched: BTreeSet::new(),
            last: Outcome::Loaded(Vec::new()),
            on_event,
        };
        worker.rewatch();
        let thread = std::thread::Builder::new()
            .name("promptreg-watch".into())
            .spawn(move || worker.run(inbox))
            .map_err(|e| {
                Error::new(
                    ErrorKind::Watch,
                    format!("cannot start the watcher thread: {e}"),
                )
            })?;
        Ok(WatchHandle {
            messages,
            thread: Some(thread),
        })
    }
}

struct Worker<F> {
    shared: Arc<Shared>,
    watcher: RecommendedWatcher,
    debounce: Duration,
    paths: ConfigPaths,
    watched: BTreeSet<PathBuf>,
    /// What the last reload reported, to stay silent when a reload finds
    /// the same.
    last: Outcome,
    on_event: F,
}

#[derive(PartialEq)]
enum Outcome {
    Loaded(Vec<Diagnostic>),
    Failed(String, Vec<Diagnostic>),
}

/// What the next message asks of the worker.
enum Next {
    Change,
    Ignore,
    Report(Error),
    Stop,
}

impl<F: FnMut(ReloadEvent)> Worker<F> {
    fn run(mut self, inbox: Receiver<Message>) {
        loop {
            match self.classify(inbox.recv().ok()) {
                Next::Change => {}
                Next::Ignore => continue,
                Next::Report(error) => {
                    (self.on_event)(ReloadEvent::Failed(error));
                    continue;
                }
                Next::Stop => return,
            }
            if !self.settle(&inbox) {
                return;
            }
            if let Some(event) = self.reload() {
                (self.on_event)(event);
            }
        }
    }

    /// Waits until no change has arrived for the debounce delay (or the
    /// longest wait has passed); returns `false` when asked to stop.
    fn settle(&mut self, inbox: &Receiver<Message>) -> bool {
        let give_up = Instant::now() + self.debounce * MAX_WAIT_IN_DELAYS;
        let mut quiet_at = Instant::now() + self.debounce;
        loop {
            let now = Instant::now();
            let deadline = quiet_at.min(give_up);
            if now >= deadline {
                return true;
            }
            let message = match inbox.recv_timeout(deadline - now) {
                Ok(message) => Some(message),
                Err(RecvTimeoutError::Timeout) => return true,
                Err(RecvTimeoutError::Disconnected) => None,
            };
            match self.classify(message) {
                Next::Change => quiet_at = Instant::now() + self.debounce,
                Next::Ignore | Next::Report(_) => {}
                Next::Stop => return false,
            }
        }
    }

    fn classify(&self, message: Option<Message>) -> Next {
        match message {
            None | Some(Message::Stop) => Next::Stop,
            Some(Message::Changed(Ok(event))) => {
                let rescan = event.need_rescan();
                if rescan
                    || (can_change_content(&event.kind)
                        && event.paths.iter().any(|p| self.concerns(p)))
                {
                    Next::Change
                } else {
                    Next::Ignore
                }
            }
            Some(Message::Changed(Err(error))) => Next::Report(
                Error::new(
                    ErrorKind::Watch,
                    format!("watching the prompt files failed: {error}"),
                )
                .with_source(error),
            ),
        }
    }

    /// Reloads, then follows the paths of the new configuration. A
    /// directory created between two reloads is caught by reloading again
    /// once its watch is in place. `None` when nothing changed since the
    /// last report.
    fn reload(&mut self) -> Option<ReloadEvent> {
        let mut changed: BTreeSet<PromptId> = BTreeSet::new();
        let mut warnings = Vec::new();
        for _ in 0..3 {
            match crate::sources::reload(&self.shared) {
                Ok(report) => {
                    changed.extend(report.changed);
                    warnings = report.warnings;
                }
                Err(error) => {
                    let outcome = Outcome::Failed(error.to_string(), error.diagnostics().to_vec());
                    return self.report(outcome).then_some(ReloadEvent::Failed(error));
                }
            }
            if let Some(paths) = crate::sources::source_paths(&self.shared) {
                self.paths = absolute(&paths);
            }
            if !self.rewatch() {
                break;
            }
        }
        let news = self.report(Outcome::Loaded(warnings.clone())) || !changed.is_empty();
        news.then(|| {
            ReloadEvent::Reloaded(LoadReport {
                changed: changed.into_iter().collect(),
                warnings,
            })
        })
    }

    /// Records `outcome`; whether it differs from the last one.
    fn report(&mut self, outcome: Outcome) -> bool {
        let news = outcome != self.last;
        self.last = outcome;
        news
    }

    /// Watches the directories the configuration needs now; returns whether
    /// the set changed.
    fn rewatch(&mut self) -> bool {
        let wanted = directories_to_watch(&self.paths);
        if wanted == self.watched {
            return false;
        }
        for gone in self.watched.difference(&wanted) {
            let _ = self.watcher.unwatch(gone);
        }
        for new in wanted.difference(&self.watched) {
            // A directory removed meanwhile is picked up at the next change.
            let _ = self.watcher.watch(new, RecursiveMode::NonRecursive);
        }
        self.watched = wanted;
        true
    }

    /// Whether a change at `path` can affect the configuration: one of its
    /// files, a file in one of its directories, or a folder on the way to
    /// them.
    fn concerns(&self, path: &Path) -> bool {
        let on_the_way = |target: &PathBuf| target.starts_with(path);
        self.paths.files.iter().any(|f| f == path || on_the_way(f))
            || self
                .paths
                .dirs
                .iter()
                .any(|d| path.starts_with(d) || on_the_way(d))
    }
}

/// Whether an event of this kind can change what a reload reads. Opening,
/// reading and closing a file cannot, nor can a new access time; anything
/// else (data, names, permissions, creation, removal, or a kind the
/// platform does not say) can.
fn can_change_content(kind: &EventKind) -> bool {
    !matches!(
        kind,
        EventKind::Access(_)
            | EventKind::Other
            | EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime))
    )
}

/// The existing directories to watch: each prompt directory, and the
/// nearest existing folder above every file and directory, so that their
/// creation, deletion and replacement by rename are all seen.
fn directories_to_watch(paths: &ConfigPaths) -> BTreeSet<PathBuf> {
    let mut dirs = BTreeSet::new();
    for dir in &paths.dirs {
        if dir.is_dir() {
            dirs.insert(dir.clone());
        }
    }
    for path in paths.files.iter().chain(&paths.dirs) {
        if let Some(existing) = path
            .parent()
            .and_then(|p| p.ancestors().find(|a| a.is_dir()))
        {
            dirs.insert(existing.to_path_buf());
        }
    }
    dirs
}

fn absolute(paths: &ConfigPaths) -> ConfigPaths {
    let abs = |p: &PathBuf| std::path::absolute(p).unwrap_or_else(|_| p.clone());
    ConfigPaths {
        files: paths.files.iter().map(abs).collect(),
        dirs: paths.dirs.iter().map(abs).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{AccessKind, AccessMode, CreateKind, DataChange, RenameMode};

    #[test]
    fn reading_a_file_is_not_a_change() {
        assert!(!can_change_content(&EventKind::Access(AccessKind::Open(
            AccessMode::Any
        ))));
        assert!(!can_change_content(&EventKind::Access(AccessKind::Close(
            AccessMode::Read
        ))));
        assert!(!can_change_content(&EventKind::Modify(
            ModifyKind::Metadata(MetadataKind::AccessTime)
        )));
    }

    #[test]
    fn writing_renaming_creating_and_chmod_are_changes() {
        for kind in [
            EventKind::Modify(ModifyKind::Data(DataChange::Any)),
            EventKind::Modify(ModifyKind::Name(RenameMode::To)),
            EventKind::Modify(ModifyKind::Metadata(MetadataKind::Permissions)),
            EventKind::Create(CreateKind::File),
            EventKind::Remove(notify::event::RemoveKind::Any),
            EventKind::Any,
        ] {
            assert!(can_change_content(&kind), "{kind:?}");
        }
    }
}
