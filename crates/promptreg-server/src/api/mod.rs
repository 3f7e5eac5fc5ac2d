//! The `/v1` routes, one module per resource, each with its routes and
//! their OpenAPI paths; [`routes`] merges them. Reads come from the cache,
//! writes go through [`crate::actions`] to the store.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;

use crate::cache::Cached;
use crate::state::AppState;

mod fleet;
mod l10n;
mod labels;
mod operations;
mod packs;
mod prompts;
mod renders;
mod revisions;
mod splits;
mod webhooks;

pub(crate) use operations::{method_not_allowed, not_found};

/// A cached document, or `304 Not Modified` when the client has it.
pub(crate) fn conditional(headers: &HeaderMap, cached: &Cached) -> Response {
    let etag = HeaderValue::from_str(&cached.etag).unwrap_or(HeaderValue::from_static("\"\""));
    if if_none_match(headers, &cached.etag) {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response();
    }
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::ETAG, etag),
            // Clients may keep it, but must ask (cheaply, with the ETag) before using it.
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        cached.body.clone(),
    )
        .into_response()
}

/// Whether `If-None-Match` names `etag` (weak comparison, as RFC 9110
/// says for this header) or is `*`.
fn if_none_match(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|tag| tag.trim())
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

/// The entity tags of `If-Match`: `None` when absent, `Some([])` for `*`.
pub(crate) fn if_match(headers: &HeaderMap) -> Option<Vec<String>> {
    let values: Vec<&str> = headers
        .get_all(header::IF_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if values.is_empty() {
        return None;
    }
    let tags: Vec<String> = values
        .iter()
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_owned())
        .collect();
    if tags.iter().any(|t| t == "*") {
        return Some(Vec::new());
    }
    Some(tags)
}

/// Every `/v1` route with its OpenAPI path, resource by resource.
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(packs::routes())
        .merge(prompts::routes())
        .merge(labels::routes())
        .merge(fleet::routes())
        .merge(splits::routes())
        .merge(revisions::routes())
        .merge(renders::routes())
        .merge(l10n::routes())
        .merge(webhooks::routes())
        .merge(operations::routes())
}
