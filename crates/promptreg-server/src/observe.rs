//! What every routed request goes through, in one layer: the time limit
//! (503 when a handler takes too long) and the metrics (count and latency
//! by route pattern). One hand-written service instead of two `from_fn`
//! middlewares: those clone and box the inner service and their future on
//! every request, which the cached reads felt (BENCHMARKS.md, section 5.1).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::extract::{ConnectInfo, MatchedPath, Request};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use pin_project_lite::pin_project;
use tokio::time::Sleep;
use tower_layer::Layer;
use tower_service::Service;

use crate::connection::Connection;
use crate::problem::{Problem, ProblemCode};
use crate::state::AppState;

/// The event stream: no time limit (it only starts in its handler), and
/// its connection is exempt from the write timeout.
const EVENTS: &str = "/v1/events";

/// Wraps each route in [`Observe`].
#[derive(Clone)]
pub(crate) struct ObserveLayer {
    state: AppState,
}

impl ObserveLayer {
    pub(crate) fn new(state: AppState) -> ObserveLayer {
        ObserveLayer { state }
    }
}

impl<S> Layer<S> for ObserveLayer {
    type Service = Observe<S>;

    fn layer(&self, inner: S) -> Observe<S> {
        Observe {
            inner,
            state: self.state.clone(),
        }
    }
}

/// A route, timed and counted.
#[derive(Clone)]
pub(crate) struct Observe<S> {
    inner: S,
    state: AppState,
}

impl<S> Service<Request> for Observe<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Observed<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Observed<S::Future> {
        let events = request.uri().path() == EVENTS
            || (request.method() == Method::GET && request.uri().path() == crate::mcp::PATH);
        let connection = events
            .then(|| request.extensions().get::<ConnectInfo<Connection>>())
            .flatten()
            .map(|info| info.0.clone());
        let method = request.method().clone();
        let route = request.extensions().get::<MatchedPath>().cloned();
        Observed {
            inner: self.inner.call(request),
            limited: !events,
            deadline: None,
            started: Instant::now(),
            method,
            route,
            connection,
            state: self.state.clone(),
        }
    }
}

pin_project! {
    /// The route's answer, or 503 at the time limit; counted either way.
    pub(crate) struct Observed<F> {
        #[pin]
        inner: F,
        // Whether the request has a time limit.
        limited: bool,
        // Armed the first time the handler is not ready: most cached reads
        // answer at once and never touch the timer.
        deadline: Option<Pin<Box<Sleep>>>,
        started: Instant,
        method: Method,
        route: Option<MatchedPath>,
        connection: Option<Connection>,
        state: AppState,
    }
}

impl<F> Future for Observed<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = match this.inner.poll(cx) {
            Poll::Ready(Ok(response)) => response,
            Poll::Pending if !*this.limited => return Poll::Pending,
            Poll::Pending => {
                let limit = this.state.config.request_timeout;
                let started = *this.started;
                let deadline = this.deadline.get_or_insert_with(|| {
                    Box::pin(tokio::time::sleep_until((started + limit).into()))
                });
                if deadline.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                timed_out(limit)
            }
        };
        if let Some(connection) = this.connection.take()
            && response.status().is_success()
        {
            connection.carries_events();
        }
        let status = response.status();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            this.state.metrics.store_error();
        }
        let route = this.route.as_ref().map_or("unmatched", MatchedPath::as_str);
        this.state
            .metrics
            .observe(this.method.as_str(), route, status, *this.started);
        Poll::Ready(Ok(response))
    }
}

fn timed_out(limit: std::time::Duration) -> Response {
    Problem::new(
        StatusCode::SERVICE_UNAVAILABLE,
        ProblemCode::Timeout,
        format!(
            "the request took longer than {} s: retry",
            limit.as_secs_f64()
        ),
    )
    .into_response()
}
