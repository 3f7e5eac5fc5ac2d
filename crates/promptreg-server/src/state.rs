//! What every handler shares: the store, the caches, the work bounds,
//! the event hub and the keys, built once per server from its store and
//! [`Config`]. Handlers and layers import the state from here; the server
//! itself (`serve.rs`) only builds it and runs.

use std::ops::Deref;
use std::sync::Arc;

use promptreg_store::{Store, TestTurns};
use tokio::sync::watch;

use crate::auth::Auth;
use crate::cache::Cache;
use crate::config::Config;
use crate::events::Hub;
use crate::fleet_writer::FleetWriter;
use crate::heavy::HeavyWork;
use crate::metrics::Metrics;
use crate::rate::ReportRate;
use crate::web::Sessions;

/// What every handler shares.
#[derive(Clone)]
pub(crate) struct AppState(Arc<Shared>);

pub(crate) struct Shared {
    pub(crate) store: Store,
    pub(crate) cache: Cache,
    pub(crate) heavy: Arc<HeavyWork>,
    pub(crate) events: Hub,
    pub(crate) metrics: Metrics,
    pub(crate) auth: Auth,
    pub(crate) sessions: Sessions,
    pub(crate) report_rate: ReportRate,
    /// One permit per request being answered: see [`Config::max_requests`].
    pub(crate) in_flight: Arc<tokio::sync::Semaphore>,
    pub(crate) fleet_writer: FleetWriter,
    pub(crate) config: Config,
    pub(crate) shutdown: watch::Sender<bool>,
}

impl Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    /// The state of a server over `store` with `config`; `loopback`: it
    /// listens on a loopback address (a store without keys lets the local
    /// user in). Starts the fleet writer, so call it inside the runtime.
    pub(crate) fn new(store: Store, config: Config, loopback: bool) -> AppState {
        let shutdown = watch::channel(false).0;
        let heavy = Arc::new(HeavyWork::new(
            config.heavy_jobs,
            config.heavy_queue,
            shutdown.subscribe(),
        ));
        // A gate's tests count against the same bound as renders and
        // builds.
        let store = store
            .with_file_limits(config.file_limits)
            .with_fleet_limits(config.fleet_limits)
            .with_test_turns(Arc::clone(&heavy) as Arc<dyn TestTurns>);
        AppState(Arc::new(Shared {
            cache: Cache::new(store.clone(), Arc::clone(&heavy)),
            heavy,
            events: Hub::new(config.client_buffer),
            metrics: Metrics::new(),
            auth: Auth::new(config.key_cache, config.key_grace, loopback),
            sessions: Sessions::new(config.session_ttl, config.behind_tls),
            report_rate: ReportRate::new(config.report_rate, config.report_burst),
            in_flight: Arc::new(tokio::sync::Semaphore::new(config.max_requests.max(1))),
            fleet_writer: FleetWriter::start(store.clone()),
            shutdown,
            store,
            config,
        }))
    }
}
