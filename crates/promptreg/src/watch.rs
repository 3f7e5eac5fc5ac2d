//! Following the user's files (feature `watch`): the registry reloads its
//! configuration when a settings or prompt file changes, so the next render
//! uses it, and a broken edit never replaces the last good configuration.
//!
//! ```no_run
//! use promptreg::{PromptRegistry, ReloadEvent};
//! use promptreg::config::{ConfigSpec, LoadOptions};
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
//! # Ok::<(), promptreg::Error>(())
//! ```

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, RecommendedCache, new_debouncer};

use crate::config::{ConfigPaths, LoadReport};
use crate::error::{Error, ErrorKind};
use crate::id::PromptId;
use crate::registry::{PromptRegistry, Shared};

/// How long the watcher waits for a burst of changes (an editor's
/// save-by-rename, a `git checkout`) to settle before reloading once.
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(100);

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
    Changed(DebounceEventResult),
    Stop,
}

impl PromptRegistry {
    /// Follows the loaded configuration's settings files, prompt
    /// directories and legacy files, and reloads when they change, with
    /// [`DEFAULT_DEBOUNCE`]. `on_event` hears of every reload, successful or
    /// not, on the watcher's thread.
    ///
    /// Files and directories that do not exist yet are followed through
    /// their nearest existing parent, so creating them later is seen too.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NotLoaded`] without a loaded configuration;
    /// [`ErrorKind::Watch`] when the operating system's watcher cannot start.
    pub fn watch<F>(&self, on_event: F) -> Result<WatchHandle, Error>
    where
        F: FnMut(ReloadEvent) + Send + 'static,
    {
        self.watch_with(DEFAULT_DEBOUNCE, on_event)
    }

    /// [`watch`](Self::watch) with another debounce delay.
    ///
    /// # Errors
    ///
    /// As [`watch`](Self::watch).
    pub fn watch_with<F>(&self, debounce: Duration, on_event: F) -> Result<WatchHandle, Error>
    where
        F: FnMut(ReloadEvent) + Send + 'static,
    {
        let shared = Arc::clone(self.shared());
        let Some(paths) = shared.current().config_paths().cloned() else {
            return Err(Error::new(
                ErrorKind::NotLoaded,
                "no user configuration is loaded; call `load_config` before `watch`",
            ));
        };
        let (messages, inbox) = mpsc::channel();
        let sender = messages.clone();
        let debouncer = new_debouncer(debounce, None, move |result| {
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
            debouncer,
            paths: absolute(&paths),
            watched: BTreeSet::new(),
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

type Debouncer = notify_debouncer_full::Debouncer<notify::RecommendedWatcher, RecommendedCache>;

struct Worker<F> {
    shared: Arc<Shared>,
    debouncer: Debouncer,
    paths: ConfigPaths,
    watched: BTreeSet<PathBuf>,
    on_event: F,
}

impl<F: FnMut(ReloadEvent)> Worker<F> {
    fn run(mut self, inbox: Receiver<Message>) {
        while let Ok(Message::Changed(result)) = inbox.recv() {
            match result {
                Ok(events)
                    if events
                        .iter()
                        .any(|e| e.paths.iter().any(|p| self.concerns(p))) =>
                {
                    let event = self.reload();
                    (self.on_event)(event);
                }
                Ok(_) => {}
                Err(errors) => {
                    let detail = errors
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ");
                    let error = Error::new(
                        ErrorKind::Watch,
                        format!("watching the prompt files failed: {detail}"),
                    );
                    (self.on_event)(ReloadEvent::Failed(error));
                }
            }
        }
    }

    /// Reloads, then follows the paths of the new configuration. A
    /// directory created between two reloads is caught by reloading again
    /// once its watch is in place.
    fn reload(&mut self) -> ReloadEvent {
        let mut changed: BTreeSet<PromptId> = BTreeSet::new();
        let mut warnings = Vec::new();
        for _ in 0..3 {
            match self.shared.reload() {
                Ok(report) => {
                    changed.extend(report.changed);
                    warnings = report.warnings;
                }
                Err(error) => return ReloadEvent::Failed(error),
            }
            if let Some(paths) = self.shared.current().config_paths() {
                self.paths = absolute(paths);
            }
            if !self.rewatch() {
                break;
            }
        }
        ReloadEvent::Reloaded(LoadReport {
            changed: changed.into_iter().collect(),
            warnings,
        })
    }

    /// Watches the directories the configuration needs now; returns whether
    /// the set changed.
    fn rewatch(&mut self) -> bool {
        let wanted = directories_to_watch(&self.paths);
        if wanted == self.watched {
            return false;
        }
        for gone in self.watched.difference(&wanted) {
            let _ = self.debouncer.unwatch(gone);
        }
        for new in wanted.difference(&self.watched) {
            // A directory removed meanwhile is picked up at the next change.
            let _ = self.debouncer.watch(new, RecursiveMode::NonRecursive);
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
