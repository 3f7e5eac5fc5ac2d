//! What an unknown route answers: a page for a browser outside `/v1`, a
//! problem document for everyone else. It sits above the API and the web
//! page, so neither imports the other.

use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};

use crate::{api, web};

/// The router's fallback.
pub(crate) async fn unknown_route(headers: HeaderMap, uri: Uri) -> Response {
    if web::wants_page(&headers, &uri) {
        return web::no_page(&uri);
    }
    api::not_found(uri).await.into_response()
}
