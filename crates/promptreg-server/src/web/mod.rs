//! The web page: server-rendered HTML beside `/v1`, for the people who own
//! prompts. Every page reads and writes through the same functions as the
//! API handlers (the cache for reads, the store for writes); read pages
//! work without JavaScript.
//!
//! Sign-in keeps the API key in a server-side session, named by a random
//! id in an HttpOnly, SameSite=Strict cookie; every POST form carries the
//! session's CSRF token.

mod assets;
mod compare;
mod csrf;
mod diff;
mod edit;
mod fleet;
mod form;
mod labels;
mod locales;
mod packs;
mod page;
mod playground;
mod prompt;
mod revisions;
mod session;
mod tests;
mod webhooks;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::state::AppState;

pub(crate) use session::Sessions;
pub(crate) use tests::TestResults;

/// The page's routes; all but sign-in and the assets need a visitor.
pub(crate) fn routes(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/", get(packs::index))
        .route("/packs/{pack}", get(packs::prompts))
        .route("/packs/{pack}/history", get(packs::history))
        .route("/packs/{pack}/labels/{label}", get(revisions::show))
        .route("/packs/{pack}/labels/{label}/fleet", get(fleet::show))
        .route(
            "/packs/{pack}/labels/{label}/restore",
            get(revisions::confirm).post(revisions::restore),
        )
        .route("/packs/{pack}/prompts/{id}", get(prompt::show))
        .route("/packs/{pack}/prompts/{id}/tests", get(tests::show))
        .route("/packs/{pack}/prompts/{id}/compare", get(compare::show))
        .route(
            "/packs/{pack}/prompts/{id}/playground",
            get(playground::show),
        )
        .route(
            "/packs/{pack}/prompts/{id}/edit",
            get(edit::show).post(edit::submit),
        )
        .route(
            "/packs/{pack}/prompts/{id}/labels/{label}/move",
            get(labels::confirm_move).post(labels::publish),
        )
        .route(
            "/packs/{pack}/prompts/{id}/labels/{label}/rollback",
            get(labels::confirm_rollback).post(labels::roll_back),
        )
        .route("/webhooks", get(webhooks::index).post(webhooks::create))
        .route(
            "/webhooks/{name}/rotate",
            axum::routing::post(webhooks::rotate),
        )
        .route("/webhooks/{name}", get(webhooks::show))
        .route("/webhooks/{name}/test", axum::routing::post(webhooks::test))
        .route(
            "/webhooks/{name}/enable",
            axum::routing::post(webhooks::enable),
        )
        .route(
            "/webhooks/{name}/deliveries/{id}/redeliver",
            axum::routing::post(webhooks::redeliver),
        )
        .route("/sign-out", axum::routing::post(session::sign_out))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            session::visit,
        ))
        .route(
            "/sign-in",
            get(session::sign_in_page).post(session::sign_in),
        )
        .route("/assets/{name}", get(assets::serve))
        .route_layer(middleware::from_fn_with_state(state, refuse_keys_in_clear))
}

/// The page takes API keys: beyond loopback it is served only behind TLS,
/// unless the operator allows plain HTTP.
async fn refuse_keys_in_clear(
    State(state): State<AppState>,
    request: Request,
    next: middleware::Next,
) -> Response {
    if !state.config.refuses_web_in_clear() {
        return next.run(request).await;
    }
    page::PageError::new(
        StatusCode::FORBIDDEN,
        "The web page is not served over plain HTTP on this address: signing in would send an \
         API key in clear. Put the server behind a proxy that terminates TLS and start it with \
         --behind-tls, or allow plain HTTP with --web-over-plain-http.",
    )
    .into_response()
}

/// Whether a request for an unknown route is a browser's for a page: it
/// accepts HTML, outside `/v1`.
pub(crate) fn wants_page(headers: &HeaderMap, uri: &Uri) -> bool {
    let wants_html = headers
        .get(header::ACCEPT)
        .and_then(|accept| accept.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    wants_html && !uri.path().starts_with("/v1/")
}

/// The page saying there is no page at `uri`.
pub(crate) fn no_page(uri: &Uri) -> Response {
    let path: String = uri.path().chars().take(200).collect();
    let message = format!("There is no page at {path}.");
    page::PageError::new(StatusCode::NOT_FOUND, message).into_response()
}
