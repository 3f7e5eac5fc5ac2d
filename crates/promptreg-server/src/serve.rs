//! The server: binds its address, builds the shared state
//! ([`AppState`]) and the router (`app.rs`), runs until told to stop, and
//! shuts down gracefully.

use std::future::Future;
use std::net::SocketAddr;

use axum::Router;
use promptreg_store::Store;
use tokio::net::{TcpListener, TcpSocket};

use crate::app::{App, app};
use crate::config::Config;
use crate::events;
use crate::listener;
use crate::state::AppState;

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
        let state = AppState::new(store, config, loopback);
        tokio::spawn(events::follow(state.clone(), last));
        tokio::spawn(events::recheck_readers(state.clone()));
        if state.config.deliver_webhooks {
            let bound = listener.local_addr().unwrap_or(state.config.listen);
            tokio::spawn(deliver_webhooks(state.clone(), bound));
        }
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

/// Sends webhook deliveries until the server stops.
async fn deliver_webhooks(state: AppState, bound: SocketAddr) {
    let mut options = state.config.webhook_worker(bound);
    let counted = state.clone();
    options.on_attempt = Some(promptreg_webhooks::OnAttempt(std::sync::Arc::new(
        move |next| counted.metrics.webhook_attempted(next),
    )));
    let stop = state.shutdown.subscribe();
    if let Err(e) = promptreg_webhooks::run(state.store.clone(), options, stop).await {
        tracing::error!(error = %e, "webhooks: no delivery will be made");
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
