//! Accepting connections: at most `max_connections` at once, each served
//! by hyper under the timeouts of `connection.rs`, and a graceful
//! shutdown. A connection beyond the cap is answered 503 at once and
//! closed, so established clients keep their share of the server and a
//! pile of idle sockets cannot exhaust its file descriptors.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower_service::Service;

use crate::app::App;
use crate::connection::{Activity, Connection, TimedStream, Timeouts};
use crate::metrics::Metrics;
use crate::state::AppState;

/// What a connection beyond the cap is told before it is closed.
const OVER_CAPACITY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
    content-type: application/problem+json\r\n\
    retry-after: 1\r\n\
    connection: close\r\n\
    content-length: 117\r\n\r\n\
    {\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,\"code\":\"too-many-connections\",\"detail\":\"retry\"}";

/// How long to wait before accepting again when the process is out of
/// file descriptors (or the kernel of memory).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Serves `app` on `listener` until `stop` completes, then lets the
/// requests in flight finish.
pub(crate) async fn serve(
    listener: TcpListener,
    app: App,
    state: AppState,
    stop: impl Future<Output = ()>,
) {
    let timeouts = state.config.timeouts();
    let permits = Arc::new(Semaphore::new(state.config.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                wait_after_accept_error(&e).await;
                continue;
            }
        };
        match permits.clone().try_acquire_owned() {
            Ok(permit) => {
                let serving = Serving {
                    app: app.clone(),
                    timeouts,
                    watcher: graceful.watcher(),
                    state: state.clone(),
                    _permit: permit,
                };
                tokio::spawn(serving.run(stream));
            }
            Err(_) => refuse(&stream, &state.metrics),
        }
    }
    drop(listener);
    graceful.shutdown().await;
}

/// Errors of `accept` that concern one connection are skipped; running
/// out of descriptors waits a moment, so the loop does not spin.
async fn wait_after_accept_error(e: &io::Error) {
    let per_connection = matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
    );
    if !per_connection {
        tracing::warn!(error = %e, "cannot accept a connection; retrying");
        tokio::time::sleep(ACCEPT_BACKOFF).await;
    }
}

/// Answers 503 without reading the request and closes: the send buffer
/// of a new connection is empty, so the write never waits.
fn refuse(stream: &TcpStream, metrics: &Metrics) {
    metrics.connection_refused();
    let _ = stream.try_write(OVER_CAPACITY);
}

/// One accepted connection and what it needs to be served.
struct Serving {
    app: App,
    timeouts: Timeouts,
    watcher: Watcher,
    state: AppState,
    /// Released when the connection ends.
    _permit: OwnedSemaphorePermit,
}

impl Serving {
    async fn run(self, stream: TcpStream) {
        let _open = self.state.metrics.connection_opened();
        let _ = stream.set_nodelay(true);
        let activity = Activity::new();
        let io = TokioIo::new(TimedStream::new(
            stream,
            activity.clone(),
            self.timeouts.write,
        ));
        let connection = Connection::new(activity.clone());
        let app = self.app;
        let requests = activity.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request
                .extensions_mut()
                .insert(ConnectInfo(connection.clone()));
            let running = requests.request_started();
            // hyper keeps a request's future and a response's body in
            // places sized for their types for the connection's life; the
            // layers' own types are some hundreds of bytes, so each is
            // boxed here for the time it lives, and a connection that
            // waits (an event stream, keep-alive) holds two pointers.
            let response = Box::pin(app.clone().call(request.map(axum::body::Body::new)));
            async move {
                let response = response.await;
                drop(running);
                response.map(|response| response.map(axum::body::Body::new))
            }
        });
        let mut http = hyper::server::conn::http1::Builder::new();
        // The timer serves hyper's own timeouts; the header and idle ones
        // are ours (`Activity`), so hyper's is off.
        http.timer(TokioTimer::new()).header_read_timeout(None);
        let served = self.watcher.watch(http.serve_connection(io, service));
        tokio::pin!(served);
        // One timer for the connection's life, moved only when a deadline
        // comes before it: set later, it fires early and is set again.
        let timer = tokio::time::sleep_until(tokio::time::Instant::now());
        tokio::pin!(timer);
        let mut armed = None;
        loop {
            let look = activity.next_look(&self.timeouts);
            match look {
                Some(at) if armed.is_none_or(|armed| at < armed) => {
                    timer.as_mut().reset(at.into());
                    armed = look;
                }
                Some(_) => {}
                None => armed = None,
            }
            tokio::select! {
                _ = &mut served => {
                    if activity.write_timed_out() {
                        self.state.metrics.connection_timed_out("write");
                    }
                    return;
                }
                () = activity.changed() => {}
                () = &mut timer, if armed.is_some() => {
                    armed = None;
                    if let Some((at, why)) = activity.deadline(&self.timeouts)
                        && at <= std::time::Instant::now()
                    {
                        self.state.metrics.connection_timed_out(why);
                        return;
                    }
                }
            }
        }
    }
}
