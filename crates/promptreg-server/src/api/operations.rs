//! Health, readiness and the answers to unknown routes.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::body::Health;
use crate::extract::shown;
use crate::problem::{Problem, ProblemCode};
use crate::state::AppState;

/// `GET /healthz`: the process answers.
#[utoipa::path(
    get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "The server runs", body = Health)),
)]
pub(crate) async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok".to_owned(),
        detail: None,
    })
}

/// `GET /readyz`: the store answers and can take a write (see
/// [`Store::ready`](promptreg_store::Store::ready)).
#[utoipa::path(
    get, path = "/readyz", tag = "operations",
    responses(
        (status = 200, description = "The store answers", body = Health),
        (status = 503, description = "The store cannot be reached, or another process holds its write lock", body = Health),
    ),
)]
pub(crate) async fn readyz(State(state): State<AppState>) -> Response {
    match state.store.ready().await {
        Ok(()) => Json(Health {
            status: "ok".to_owned(),
            detail: None,
        })
        .into_response(),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(Health {
                status: "unavailable".to_owned(),
                detail: Some(e.to_string()),
            }),
        )
            .into_response(),
    }
}

/// Unknown routes: a problem, not an empty 404.
pub(crate) async fn not_found(uri: axum::http::Uri) -> Problem {
    let path = shown(uri.path(), 200);
    Problem::new(
        StatusCode::NOT_FOUND,
        ProblemCode::UnknownRoute,
        format!("no route {path}: the API is described at /v1/openapi.json"),
    )
}

/// A known route with another method.
pub(crate) async fn method_not_allowed(
    method: axum::http::Method,
    uri: axum::http::Uri,
) -> Problem {
    let path = shown(uri.path(), 200);
    Problem::new(
        StatusCode::METHOD_NOT_ALLOWED,
        ProblemCode::MethodNotAllowed,
        format!("{path} does not take {method}: see /v1/openapi.json"),
    )
}

/// Its routes, with their OpenAPI paths.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
}
