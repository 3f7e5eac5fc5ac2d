//! The router with its layers (request ids, logs, metrics, timeouts,
//! body limit): what every request goes through.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderName, HeaderValue};
use axum::routing::{any, get};
use tower_http::classify::{ServerErrorsAsFailures, SharedClassifier};
use tower_http::request_id::{
    MakeRequestId, PropagateRequestId, PropagateRequestIdLayer, RequestId, SetRequestId,
    SetRequestIdLayer,
};
use tower_http::trace::{DefaultOnResponse, Trace, TraceLayer};
use tower_layer::Layer;

use crate::auth::Caller;
use crate::observe::ObserveLayer;
use crate::state::AppState;
use crate::{api, guard, mcp, openapi, web};

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
    let endpoint = mcp::Endpoint::new(&state);
    routes
        .route(
            mcp::PATH,
            any(
                move |State(state): State<AppState>, caller: Caller, request: Request| {
                    mcp::answer(endpoint.clone(), state, caller, request)
                },
            ),
        )
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
