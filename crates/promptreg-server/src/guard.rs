//! What the server refuses before any handler runs, and the headers every
//! response carries.
//!
//! - A `Host` the server does not answer to (421): a web page on another
//!   site that resolves its own name to this server's address (DNS
//!   rebinding) would otherwise read and write through it, keyless on
//!   loopback. An IP address, `localhost` and the names of
//!   [`Config::allowed_hosts`](crate::Config::allowed_hosts) are answered.
//! - A write from another origin (403): a browser says where a request
//!   comes from (`Sec-Fetch-Site`, `Origin`); clients that are not
//!   browsers send neither and are not affected.
//! - A body whose `Content-Length` exceeds the limit (413), at once rather
//!   than after reading it.
//! - A request past [`Config::max_requests`](crate::Config::max_requests)
//!   being answered (503 `overloaded`, `Retry-After`), at once rather than
//!   after every other. Outside the limit: the event stream, which holds
//!   its connection for good and has its own limit; fleet reports, which
//!   wait for the batch their writer commits and have their own limits
//!   (a rate per key, the writer's queue), so a fleet reporting a move at
//!   once does not turn away its own fetches; and health checks and
//!   metrics, so an overloaded server is seen as one.

use std::convert::Infallible;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use pin_project_lite::pin_project;
use tokio::sync::OwnedSemaphorePermit;
use tower_layer::Layer;
use tower_service::Service;

use crate::problem::{Problem, ProblemCode};
use crate::state::AppState;

/// The headers every response carries: no inline script or style, no
/// framing, no content sniffing, no referrer beyond this site.
const SECURITY_HEADERS: [(HeaderName, &str); 4] = [
    (
        header::CONTENT_SECURITY_POLICY,
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
         object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    ),
    (header::X_FRAME_OPTIONS, "DENY"),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::REFERRER_POLICY, "same-origin"),
];

/// The longest host name echoed in an error.
const ECHOED: usize = 100;

/// Wraps each route in [`Guard`]: a hand-written service, as
/// `observe.rs` is, for the same reason (an `axum::middleware::from_fn`
/// clones and boxes the inner service and its future on every request).
#[derive(Clone)]
pub(crate) struct GuardLayer {
    state: AppState,
}

impl GuardLayer {
    pub(crate) fn new(state: AppState) -> GuardLayer {
        GuardLayer { state }
    }
}

impl<S> Layer<S> for GuardLayer {
    type Service = Guard<S>;

    fn layer(&self, inner: S) -> Guard<S> {
        Guard {
            inner,
            state: self.state.clone(),
        }
    }
}

/// A route behind the checks, its responses with the security headers.
#[derive(Clone)]
pub(crate) struct Guard<S> {
    inner: S,
    state: AppState,
}

impl<S> Service<Request> for Guard<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Guarded<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    /// Refuses what no handler should see.
    fn call(&mut self, request: Request) -> Guarded<S::Future> {
        let state = &self.state;
        let refused = check_host(state, request.headers())
            .and_then(|()| check_origin(request.method(), request.headers()))
            .and_then(|()| check_length(state, request.headers()));
        let limited = !outside_limit(request.method(), request.uri().path());
        match refused.and_then(|()| admit(state, limited)) {
            Ok(permit) => Guarded {
                inner: Some(self.inner.call(request)),
                refused: None,
                _permit: permit,
            },
            Err(problem) => Guarded {
                inner: None,
                refused: Some(problem.into_response()),
                _permit: None,
            },
        }
    }
}

pin_project! {
    /// The route's answer, or the refusal; with the security headers
    /// either way.
    pub(crate) struct Guarded<F> {
        #[pin]
        inner: Option<F>,
        refused: Option<Response>,
        // A place among the requests being answered, held until the
        // response is made.
        _permit: Option<OwnedSemaphorePermit>,
    }
}

impl<F> Future for Guarded<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut response = match (this.refused.take(), this.inner.as_pin_mut()) {
            (Some(refused), _) => refused,
            (None, Some(inner)) => match ready!(inner.poll(cx)) {
                Ok(response) => response,
                Err(never) => match never {},
            },
            // Polled again after it answered: a caller's error, answered
            // as the server's own.
            (None, None) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        };
        let headers = response.headers_mut();
        for (name, value) in SECURITY_HEADERS {
            headers
                .entry(name)
                .or_insert(HeaderValue::from_static(value));
        }
        Poll::Ready(Ok(response))
    }
}

/// Paths outside the limit of requests being answered.
const UNLIMITED: [&str; 4] = ["/v1/events", "/healthz", "/readyz", "/metrics"];

/// Whether a request is outside the limit of those being answered: see
/// the module's documentation.
fn outside_limit(method: &Method, path: &str) -> bool {
    let fleet_report =
        *method == Method::POST && path.starts_with("/v1/packs/") && path.ends_with("/fleet");
    // An MCP session's event stream holds its connection; the sessions
    // have their own bound.
    let mcp_stream = *method == Method::GET && path == crate::mcp::PATH;
    fleet_report || mcp_stream || UNLIMITED.contains(&path)
}

/// A place among the requests being answered when `limited`.
fn admit(state: &AppState, limited: bool) -> Result<Option<OwnedSemaphorePermit>, Problem> {
    if !limited {
        return Ok(None);
    }
    match Arc::clone(&state.in_flight).try_acquire_owned() {
        Ok(permit) => Ok(Some(permit)),
        Err(_) => {
            state.metrics.overloaded("requests");
            Err(Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                ProblemCode::Overloaded,
                format!(
                    "the server answers {} requests already, its limit: retry after Retry-After seconds",
                    state.config.max_requests
                ),
            ))
        }
    }
}

fn check_host(state: &AppState, headers: &HeaderMap) -> Result<(), Problem> {
    let Some(host) = headers.get(header::HOST) else {
        // HTTP/1.0 without a Host: not a browser.
        return Ok(());
    };
    let host = host.to_str().unwrap_or_default();
    let name = host_name(host);
    let allowed = name.parse::<IpAddr>().is_ok()
        || name.eq_ignore_ascii_case("localhost")
        || state
            .config
            .allowed_hosts
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(name));
    if allowed {
        return Ok(());
    }
    let shown: String = name.chars().take(ECHOED).collect();
    Err(Problem::new(
        StatusCode::MISDIRECTED_REQUEST,
        ProblemCode::HostNotAllowed,
        format!(
            "this server does not answer to the host `{shown}`: a page on another site may be \
             reaching it through its own name. If the name is this server's, start it with \
             `--allowed-host {shown}`"
        ),
    ))
}

/// The name of a `Host` value, without its port or IPv6 brackets.
fn host_name(host: &str) -> &str {
    if host.parse::<IpAddr>().is_ok() {
        return host;
    }
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split_once(']').map_or(rest, |(ip, _)| ip);
    }
    host.rsplit_once(':')
        .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
        .map_or(host, |(name, _)| name)
}

fn check_origin(method: &Method, headers: &HeaderMap) -> Result<(), Problem> {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(());
    }
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let site = text("sec-fetch-site");
    let cross_site = site.is_some_and(|site| !matches!(site, "same-origin" | "none"));
    let cross_origin = text("origin").is_some_and(|origin| {
        let authority = origin.split_once("://").map(|(_, rest)| rest);
        authority.is_none_or(|authority| Some(authority) != text("host"))
    });
    if cross_site || cross_origin {
        return Err(Problem::new(
            StatusCode::FORBIDDEN,
            ProblemCode::CrossOriginWrite,
            "a web page of another origin may not change this server: send the request from \
             this server's own page, or from a client that is not a browser",
        ));
    }
    Ok(())
}

fn check_length(state: &AppState, headers: &HeaderMap) -> Result<(), Problem> {
    let length = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let limit = state.config.body_limit;
    match length {
        Some(length) if length > limit as u64 => Err(Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ProblemCode::BodyTooLarge,
            format!(
                "the body is {length} bytes, more than the {limit} the server accepts (`--max-body-size`)"
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::host_name;

    #[test]
    fn a_host_name_loses_its_port_and_brackets() {
        assert_eq!(host_name("localhost:7878"), "localhost");
        assert_eq!(host_name("prompts.example.com"), "prompts.example.com");
        assert_eq!(host_name("[::1]:7878"), "::1");
        assert_eq!(host_name("[::1]"), "::1");
        assert_eq!(host_name("127.0.0.1:80"), "127.0.0.1");
        assert_eq!(host_name("::1"), "::1");
    }
}
