//! The stylesheet and script, embedded in the binary.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::extract::Path;

const ASSETS: &[(&str, &str, &str)] = &[
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("assets/style.css"),
    ),
    (
        "fleet.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/fleet.js"),
    ),
    (
        "playground.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/playground.js"),
    ),
];

/// `GET /assets/{name}`.
pub(crate) async fn serve(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(n, ..)| *n == name) {
        Some((_, kind, body)) => (
            [
                (header::CONTENT_TYPE, *kind),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            *body,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}
