//! The server: the shared state, the router with its
//! layers (request ids, logs, metrics, timeouts, body limit), and a
//! graceful shutdown.

use std::future::Future;
use std::io::Write as _;
use std::net::SocketAddr;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{HeaderName, HeaderValue};
use axum::routing::get;
use promptreg_store::{Store, TestTurns};
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::watch;
use tower_http::classify::{ServerErrorsAsFailures, SharedClassifier};
use tower_http::request_id::{
    MakeRequestId, PropagateRequestId, PropagateRequestIdLayer, RequestId, SetRequestId,
    SetRequestIdLayer,
};
use tower_http::trace::{DefaultOnResponse, Trace, TraceLayer};
use tower_layer::Layer;

use crate::auth::Auth;
use crate::cache::Cache;
use crate::config::Config;
use crate::events::{self, Hub};
use crate::fleet_writer::FleetWriter;
use crate::heavy::HeavyWork;
use crate::metrics::Metrics;
use crate::observe::ObserveLayer;
use crate::rate::ReportRate;
use crate::web::Sessions;
use crate::{api, guard, listener, openapi, web};

/// Why a server did not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServeError {
    /// The address cannot be bound.
    Bind(SocketAddr, std::io::Error),
    /// A non-loopback address with no API key in the store: anyone who
    /// reaches it could write.
    OpenWithoutKeys(SocketAddr),
    /// The store cannot be read.
    Store(promptreg_store::Error),
    /// Serving failed.
    Io(std::io::Error),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Bind(addr, e) => write!(f, "cannot listen on {addr}: {e}"),
            ServeError::OpenWithoutKeys(addr) => write!(
                f,
                "refusing to listen on {addr} without API keys: anyone reaching it could change prompts. \
                 Create a key first (`promptreg keys create NAME --scope admin`), or listen on loopback (`--listen 127.0.0.1:7878`)"
            ),
            ServeError::Store(e) => write!(f, "{e}"),
            ServeError::Io(e) => write!(f, "the server failed: {e}"),
        }
    }
}

impl std::error::Error for ServeError {}

impl From<promptreg_store::Error> for ServeError {
    fn from(e: promptreg_store::Error) -> Self {
        ServeError::Store(e)
    }
}

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

/// A bound server, ready to [`run`](Server::run).
pub struct Server {
    listener: TcpListener,
    app: App,
    state: AppState,
}

impl Server {
    /// Binds `config.listen` and starts following the store's events.
    ///
    /// # Errors
    ///
    /// [`ServeError::OpenWithoutKeys`] for an address other than loopback
    /// when the store has no API key; [`ServeError::Bind`];
    /// [`ServeError::Store`] when the store cannot be read.
    pub async fn bind(store: Store, config: Config) -> Result<Server, ServeError> {
        let loopback = config.listen.ip().is_loopback();
        if !loopback && !store.keys().await?.iter().any(|k| k.revoked_at.is_none()) {
            return Err(ServeError::OpenWithoutKeys(config.listen));
        }
        let last = store.last_event_id().await?;
        let listener = listen(&config).map_err(|e| ServeError::Bind(config.listen, e))?;
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
        let state = AppState(Arc::new(Shared {
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
        }));
        tokio::spawn(events::follow(state.clone(), last));
        tokio::spawn(events::recheck_readers(state.clone()));
        Ok(Server {
            listener,
            app: app(state.clone()),
            state,
        })
    }

    /// The address bound (with the port chosen, for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or(self.state.config.listen)
    }

    /// The router, with every route and layer, to serve some other way
    /// (or call in-process).
    pub fn router(&self) -> Router {
        Router::new().fallback_service(self.app.clone())
    }

    /// Serves until `shutdown` completes; then event streams get a final
    /// `reconnect` event, requests in flight finish, and it returns.
    ///
    /// # Errors
    ///
    /// None today: a connection that fails ends alone, and running out of
    /// file descriptors waits and accepts again. [`ServeError::Io`] is
    /// kept for a failure of the listening socket itself.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let state = self.state.clone();
        let stop = async move {
            shutdown.await;
            tracing::info!("shutting down: finishing requests in flight");
            state.shutdown.send_replace(true);
        };
        listener::serve(self.listener, self.app, self.state.clone(), stop).await;
        // The follower stops too, when the server stops without a signal.
        self.state.shutdown.send_replace(true);
        Ok(())
    }
}

/// A listening socket; accepted connections inherit its send buffer.
fn listen(config: &Config) -> std::io::Result<TcpListener> {
    let socket = if config.listen.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    if let Some(size) = config.send_buffer {
        socket.set_send_buffer_size(size)?;
    }
    socket.bind(config.listen)?;
    socket.listen(1024)
}

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM. The handlers are
/// installed when this is called, not when the future is first polled:
/// call it before saying where the server listens, so a signal sent as
/// soon as a client knows the address stops the server gracefully instead
/// of killing it. Call it inside the tokio runtime.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let interrupt = signal(SignalKind::interrupt()).ok();
        let terminate = signal(SignalKind::terminate()).ok();
        async move {
            let received = |handler: Option<tokio::signal::unix::Signal>| async move {
                match handler {
                    Some(mut handler) => {
                        handler.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = received(interrupt) => {}
                () = received(terminate) => {}
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// What every request goes through: the router with its routes and their
/// layers, inside the request ids and the request log.
pub(crate) type App =
    SetRequestId<PropagateRequestId<Trace<Router, HttpClassifier, MakeSpan>>, RequestIds>;

type HttpClassifier = SharedClassifier<ServerErrorsAsFailures>;
type MakeSpan = fn(&Request) -> tracing::Span;

/// The router and the layers every request goes through.
///
/// The request ids and the request log wrap the router as one service
/// rather than through `Router::layer`, which wraps each route again and so
/// clones and boxes the service and its future once more per request for
/// each layer. The layers that need the matched route (metrics) or apply
/// to routed requests only stay on the router.
pub(crate) fn app(state: AppState) -> App {
    let log = TraceLayer::new_for_http()
        .on_response(DefaultOnResponse::new().level(tracing::Level::INFO))
        .make_span_with(request_span as MakeSpan);
    let app = PropagateRequestIdLayer::new(REQUEST_ID).layer(log.layer(router(state)));
    SetRequestIdLayer::new(REQUEST_ID, RequestIds::new()).layer(app)
}

/// The request log's span: method, path and request id.
fn request_span(request: &Request) -> tracing::Span {
    let id = request
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    tracing::info_span!("request", method = %request.method(), path = %request.uri().path(), request_id = %id)
}

/// The routes, with the layers that apply to each.
fn router(state: AppState) -> Router {
    let (routes, doc) = openapi::routes().split_for_parts();
    let doc = Arc::new(doc);
    routes
        .route(
            "/v1/openapi.json",
            get(move || {
                let doc = doc.clone();
                async move { axum::Json(doc.as_ref().clone()) }
            }),
        )
        .merge(web::routes(state.clone()))
        .fallback(crate::fallback::unknown_route)
        .method_not_allowed_fallback(api::method_not_allowed)
        .layer(DefaultBodyLimit::max(state.config.body_limit))
        .layer(guard::GuardLayer::new(state.clone()))
        .route_layer(ObserveLayer::new(state.clone()))
        .with_state(state)
}

/// Request ids: a random prefix drawn once per process, then a counter, so
/// an id is unique across restarts and servers without a system call per
/// request (a UUID per request costs a `getrandom` call each).
#[derive(Clone)]
pub(crate) struct RequestIds {
    prefix: u64,
    next: Arc<AtomicU64>,
}

impl RequestIds {
    fn new() -> RequestIds {
        let mut bytes = [0u8; 8];
        // Without randomness the ids are still unique within the process.
        let _ = getrandom::fill(&mut bytes);
        RequestIds {
            prefix: u64::from_le_bytes(bytes),
            next: Arc::new(AtomicU64::new(1)),
        }
    }
}

impl MakeRequestId for RequestIds {
    fn make_request_id<B>(&mut self, _: &axum::http::Request<B>) -> Option<RequestId> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        // `{prefix:016x}-{n:x}` written in place: the header value is then
        // the id's only allocation.
        let mut id = std::io::Cursor::new([0u8; 16 + 1 + 16]);
        write!(id, "{:016x}-{n:x}", self.prefix).ok()?;
        let len = usize::try_from(id.position()).ok()?;
        HeaderValue::from_bytes(&id.get_ref()[..len])
            .ok()
            .map(RequestId::new)
    }
}
