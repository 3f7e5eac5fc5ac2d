//! Errors as RFC 9457 problem details: `application/problem+json` with a
//! stable `code` a client can match on.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use promptreg_store::{Error, ErrorKind};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// The media type of every error response.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// The longest `detail` sent, in characters: a message quotes names and
/// values from the request, which may be megabytes long; the rest is cut
/// with an ellipsis.
pub const MAX_DETAIL_CHARS: usize = 1000;

/// The most diagnostics one response lists; `more` counts the rest, as
/// the CLI counts the problems of a file past its limit.
pub const MAX_DIAGNOSTICS: usize = 50;

/// An error response: RFC 9457 problem details, boxed so results stay small.
#[derive(Debug, Clone)]
pub struct Problem(Box<ProblemDetails>);

/// The body of an error response (RFC 9457). `type` is
/// `urn:promptreg:problem:<code>`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProblemDetails {
    /// `urn:promptreg:problem:<code>`.
    #[serde(rename = "type")]
    pub kind: String,
    /// A short summary of the kind of problem.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What happened here, naming the pack, prompt, label or version.
    pub detail: String,
    /// A stable, kebab-case code: `unknown-prompt`, `conflict`, ...
    pub code: String,
    /// For `conflict`: the version the label points at now (null: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<u64>)]
    pub current: Option<Value>,
    /// For `invalid-pack`: every diagnostic of the check.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub diagnostics: Option<Value>,
    /// For `invalid-pack`: how many diagnostics past the first 50 are not
    /// listed (absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub more: Option<usize>,
}

impl Problem {
    /// A problem of `status` with a stable `code`.
    pub fn new(status: StatusCode, code: &str, detail: impl Into<String>) -> Problem {
        Problem(Box::new(ProblemDetails {
            kind: format!("urn:promptreg:problem:{code}"),
            title: status.canonical_reason().unwrap_or("Error").to_owned(),
            status: status.as_u16(),
            detail: bounded(detail.into()),
            code: code.to_owned(),
            current: None,
            diagnostics: None,
            more: None,
        }))
    }

    /// The details sent.
    pub fn details(&self) -> &ProblemDetails {
        &self.0
    }

    pub(crate) fn bad_request(code: &str, detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::BAD_REQUEST, code, detail)
    }

    pub(crate) fn not_found(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::NOT_FOUND, "not-found", detail)
    }

    pub(crate) fn with_current(mut self, current: Value) -> Problem {
        self.0.current = Some(current);
        self
    }

    /// Lists the first [`MAX_DIAGNOSTICS`] diagnostics, and counts the rest
    /// in `more` and in the detail.
    fn with_diagnostics(mut self, diagnostics: &[promptreg::Diagnostic]) -> Problem {
        if diagnostics.is_empty() {
            return self;
        }
        let listed = &diagnostics[..diagnostics.len().min(MAX_DIAGNOSTICS)];
        self.0.diagnostics = serde_json::to_value(listed).ok();
        let more = diagnostics.len() - listed.len();
        if more > 0 {
            self.0.more = Some(more);
            self.0.detail = format!(
                "{} ({MAX_DIAGNOSTICS} diagnostics listed, and {more} more)",
                self.0.detail
            );
        }
        self
    }

    fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.0.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }
}

/// The HTTP status and code of each store error.
pub(crate) fn status_of(kind: ErrorKind) -> (StatusCode, &'static str) {
    match kind {
        ErrorKind::InvalidLabel => (StatusCode::BAD_REQUEST, "invalid-label"),
        ErrorKind::InvalidVersion => (StatusCode::BAD_REQUEST, "invalid-version"),
        ErrorKind::UnknownPack => (StatusCode::NOT_FOUND, "unknown-pack"),
        ErrorKind::UnknownPrompt => (StatusCode::NOT_FOUND, "unknown-prompt"),
        ErrorKind::UnknownVersion => (StatusCode::NOT_FOUND, "unknown-version"),
        ErrorKind::Conflict => (StatusCode::PRECONDITION_FAILED, "conflict"),
        ErrorKind::Forbidden => (StatusCode::FORBIDDEN, "forbidden"),
        ErrorKind::InvalidPack => (StatusCode::UNPROCESSABLE_ENTITY, "invalid-pack"),
        ErrorKind::TooManyFiles => (StatusCode::UNPROCESSABLE_ENTITY, "too-many-files"),
        ErrorKind::InvalidInput => (StatusCode::BAD_REQUEST, "invalid-input"),
        ErrorKind::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "store-unavailable"),
        ErrorKind::ReadOnly => (StatusCode::SERVICE_UNAVAILABLE, "store-read-only"),
        ErrorKind::Unauthorized | ErrorKind::KeyRevoked => {
            (StatusCode::UNAUTHORIZED, "unauthorized")
        }
        ErrorKind::InvalidKey => (StatusCode::BAD_REQUEST, "invalid-key"),
        ErrorKind::UnknownKey => (StatusCode::NOT_FOUND, "unknown-key"),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "store-error"),
    }
}

/// `detail` cut to [`MAX_DETAIL_CHARS`].
fn bounded(detail: String) -> String {
    match promptreg::abbreviate(&detail, MAX_DETAIL_CHARS) {
        std::borrow::Cow::Borrowed(_) => detail,
        std::borrow::Cow::Owned(cut) => cut,
    }
}

impl From<Error> for Problem {
    fn from(err: Error) -> Problem {
        let (status, code) = status_of(err.kind());
        let problem =
            Problem::new(status, code, err.to_string()).with_diagnostics(err.diagnostics());
        if err.kind() == ErrorKind::Conflict {
            return problem.with_current(serde_json::json!(err.current_version()));
        }
        problem
    }
}

impl From<promptreg::Error> for Problem {
    fn from(err: promptreg::Error) -> Problem {
        use promptreg::ErrorKind as K;
        let (status, code) = match err.kind() {
            K::InvalidId => (StatusCode::BAD_REQUEST, "invalid-id"),
            K::InvalidLocale => (StatusCode::BAD_REQUEST, "invalid-locale"),
            K::UnknownId | K::NoPromptForLocale => (StatusCode::NOT_FOUND, "unknown-prompt"),
            _ => (StatusCode::UNPROCESSABLE_ENTITY, "render-failed"),
        };
        Problem::new(status, code, err.to_string()).with_diagnostics(err.diagnostics())
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = serde_json::to_vec(&*self.0).unwrap_or_default();
        let mut response = (status, body).into_response();
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        // A 503 is temporary (busy, a timeout, the store away): say when
        // to try again.
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"promptreg\""),
            );
        }
        response
    }
}
