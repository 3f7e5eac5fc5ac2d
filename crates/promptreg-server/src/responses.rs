//! The error responses many routes share, each set written once for the
//! OpenAPI document (`responses(...)` of a route names the set).

use utoipa::IntoResponses;

use crate::problem::ProblemDetails;

/// Any route behind a key that reads the store: no valid key, or the
/// store is away.
#[derive(IntoResponses)]
#[allow(
    dead_code,
    reason = "only described, never built: handlers answer with `Problem`"
)]
pub(crate) enum KeyOrStore {
    #[response(
        status = 401,
        description = "No valid API key",
        content_type = "application/problem+json"
    )]
    Unauthorized(ProblemDetails),
    #[response(
        status = 503,
        description = "The store cannot be reached, or the server is busy (`busy`, `timeout`): retry after `Retry-After` seconds",
        content_type = "application/problem+json"
    )]
    Unavailable(ProblemDetails),
}

/// A route that reads a pack: as [`KeyOrStore`], and a key for another pack.
#[derive(IntoResponses)]
#[allow(
    dead_code,
    reason = "only described, never built: handlers answer with `Problem`"
)]
pub(crate) enum PackRead {
    #[response(
        status = 401,
        description = "No valid API key",
        content_type = "application/problem+json"
    )]
    Unauthorized(ProblemDetails),
    #[response(
        status = 403,
        description = "The key does not reach this pack",
        content_type = "application/problem+json"
    )]
    Forbidden(ProblemDetails),
    #[response(
        status = 503,
        description = "The store cannot be reached, or the server is busy (`busy`, `timeout`): retry after `Retry-After` seconds",
        content_type = "application/problem+json"
    )]
    Unavailable(ProblemDetails),
}

/// A route that takes a JSON body: too large, or not JSON.
#[derive(IntoResponses)]
#[allow(
    dead_code,
    reason = "only described, never built: handlers answer with `Problem`"
)]
pub(crate) enum JsonBodyErrors {
    #[response(
        status = 413,
        description = "The body is too large",
        content_type = "application/problem+json"
    )]
    TooLarge(ProblemDetails),
    #[response(
        status = 415,
        description = "The body is not JSON",
        content_type = "application/problem+json"
    )]
    NotJson(ProblemDetails),
}
