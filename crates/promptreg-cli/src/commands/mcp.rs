//! `promptreg mcp`: the prompts of a pack folder, a baked bundle or a
//! server's label (followed) to an MCP client over standard input and
//! output, with `list_changed` when they change.
//!
//! Standard output carries the protocol and nothing else; what the
//! command has to say (a reload that failed) goes to standard error.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use promptreg::pack::Pack;
use promptreg::prelude::*;
use promptreg::{PromptRegistry, ReloadEvent, Snapshot, WatchHandle};
use promptreg_mcp::rmcp::ErrorData;
use promptreg_mcp::rmcp::model::Extensions;
use promptreg_mcp::{Catalog, Options, Served, ServedPack, SessionScope};
use tokio::sync::watch;

use super::Output;
use super::follow::reporting;
use crate::cli::McpArgs;
use crate::options::Session;
use crate::report::Failure;

/// How often a followed label's split is looked at: a step of it is no
/// change of the bundle.
const LOOK_EVERY: Duration = Duration::from_millis(250);

pub fn run(session: &Session, args: &McpArgs) -> Result<Output, Failure> {
    let mut scope = SessionScope::default();
    scope.locale = match &session.args.locale {
        Some(tag) => Some(promptreg::Locale::parse(tag)?),
        None => None,
    };
    scope.subject = args.subject.clone();
    // The watch on a pack folder's files lasts as long as the session.
    let (catalog, _watching) = open(session, args, scope)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::usage(format!("cannot start the MCP session's runtime: {e}")))?;
    let page_size = usize::try_from(args.page_size).unwrap_or(promptreg_mcp::DEFAULT_PAGE_SIZE);
    let options = Options::default().page_size(page_size);
    runtime
        .block_on(promptreg_mcp::serve_stdio(catalog, options))
        .map_err(|e| Failure::usage(format!("the client started no MCP session: {e}")))?;
    Ok(Output::text(String::new()))
}

/// The catalog of the source the options name, kept current (by the
/// watch returned, for a pack folder).
fn open(
    session: &Session,
    args: &McpArgs,
    scope: SessionScope,
) -> Result<(Arc<Local>, Option<WatchHandle>), Failure> {
    if let Some(target) = crate::server_client::target(&session.args)? {
        let (updates, inbox) = mpsc::channel();
        let mut target = target;
        target.remote = reporting(target.remote, &args.reports).on_change(move |change| {
            if matches!(change, promptreg::remote::Change::Updated { .. }) {
                let _ = updates.send(());
            }
        });
        let registry = Arc::new(PromptRegistry::new());
        let (follower, pack) = target.follow(&registry)?;
        registry.load_config(pack.spec().clone(), session.load_options(&pack))?;
        let local = Local::new(pack, registry.clone(), scope);
        let follows = local.clone();
        std::thread::spawn(move || {
            let mut split = follower.status().split;
            loop {
                match inbox.recv_timeout(LOOK_EVERY) {
                    Ok(()) => {
                        if let Some(pack) = follower.pack() {
                            follows.replace(pack);
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
                let now = follower.status().split;
                if now != split {
                    split = now;
                    follows.changed();
                }
            }
        });
        return Ok((local, None));
    }
    let pack = session.pack()?;
    let registry = Arc::new(session.registry(&pack)?);
    if session.args.bundle.is_some() {
        return Ok((Local::new(pack, registry, scope), None));
    }
    let root = pack.root().to_path_buf();
    let local = Local::new(pack, registry.clone(), scope);
    let reloads = local.clone();
    let watching = registry.watch(move |event| match event {
        ReloadEvent::Reloaded(_) => match Pack::load(&root) {
            Ok(pack) => reloads.replace(pack),
            Err(error) => {
                eprintln!("warning: the pack reloaded, its declarations did not: {error}")
            }
        },
        ReloadEvent::Failed(error) => {
            eprintln!("warning: the files do not load; the previous prompts stay served: {error}")
        }
        _ => {}
    })?;
    Ok((local, Some(watching)))
}

/// One pack served to the session, kept current by its source.
struct Local {
    current: RwLock<Arc<LocalPack>>,
    /// How many times the pack changed.
    changes: watch::Sender<u64>,
    scope: SessionScope,
}

struct LocalPack {
    pack: Pack,
    registry: Arc<PromptRegistry>,
}

impl ServedPack for LocalPack {
    fn pack(&self) -> &Pack {
        &self.pack
    }

    fn snapshot(&self, subject: Option<&str>) -> Arc<Snapshot> {
        match subject {
            Some(subject) => self.registry.snapshot_for(subject),
            None => self.registry.snapshot(),
        }
    }
}

impl Local {
    fn new(pack: Pack, registry: Arc<PromptRegistry>, scope: SessionScope) -> Arc<Local> {
        Arc::new(Local {
            current: RwLock::new(Arc::new(LocalPack { pack, registry })),
            changes: watch::Sender::new(0),
            scope,
        })
    }

    /// Serves `pack` from now on (the registry reloaded itself).
    fn replace(&self, pack: Pack) {
        if let Ok(mut current) = self.current.write() {
            let registry = current.registry.clone();
            *current = Arc::new(LocalPack { pack, registry });
        }
        self.changes.send_modify(|n| *n += 1);
    }

    /// Wakes the sessions to look again (what a subject gets may differ).
    fn changed(&self) {
        self.changes.send_modify(|_| {});
    }

    fn pack(&self) -> Option<Arc<LocalPack>> {
        self.current.read().ok().map(|current| current.clone())
    }
}

impl Catalog for Local {
    type Caller = ();

    fn caller(&self, _: &Extensions) -> Result<(), ErrorData> {
        Ok(())
    }

    fn scope(&self, _: &Extensions) -> Result<SessionScope, ErrorData> {
        Ok(self.scope.clone())
    }

    async fn served(
        &self,
        _: &(),
        scope: &SessionScope,
        _: Option<&str>,
    ) -> Result<Vec<Served>, ErrorData> {
        let pack = self
            .pack()
            .ok_or_else(|| ErrorData::internal_error("the pack is unreadable", None))?;
        let arm = scope
            .subject
            .as_deref()
            .and_then(|subject| pack.registry.arm_for(subject));
        let state = format!("{}:{arm:?}", *self.changes.borrow());
        Ok(vec![Served {
            prefix: None,
            pack,
            state,
        }])
    }

    fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    async fn run<R: Send + 'static>(
        &self,
        job: impl FnOnce() -> R + Send + 'static,
    ) -> Result<R, ErrorData> {
        tokio::task::spawn_blocking(job)
            .await
            .map_err(|e| ErrorData::internal_error(format!("the render failed: {e}"), None))
    }
}
