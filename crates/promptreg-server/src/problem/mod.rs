//! Errors as RFC 9457 problem details: `application/problem+json` with a
//! stable `code` a client can match on.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use promptreg_store::{Error, ErrorKind};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

mod code;

pub use code::ProblemCode;

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
    pub code: ProblemCode,
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
    /// For `tests-failed`: every failing test case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cases: Option<Vec<FailedCase>>,
}

/// A test case that failed against the state a gated label would serve.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FailedCase {
    /// The prompt.
    pub prompt: String,
    /// The case's name.
    pub case: String,
    /// The locale rendered in.
    pub locale: String,
    /// The test file, by path in the pack.
    pub file: String,
    /// Each expectation that failed, and why.
    pub problems: Vec<String>,
}

impl From<&promptreg_store::FailedCase> for FailedCase {
    fn from(c: &promptreg_store::FailedCase) -> Self {
        FailedCase {
            prompt: c.prompt.clone(),
            case: c.case.clone(),
            locale: c.locale.clone(),
            file: c.file.clone(),
            problems: c.problems.clone(),
        }
    }
}

impl Problem {
    /// A problem of `status` with a stable `code`.
    pub fn new(status: StatusCode, code: ProblemCode, detail: impl Into<String>) -> Problem {
        Problem(Box::new(ProblemDetails {
            kind: format!("urn:promptreg:problem:{code}"),
            title: status.canonical_reason().unwrap_or("Error").to_owned(),
            status: status.as_u16(),
            detail: bounded(detail.into()),
            code,
            current: None,
            diagnostics: None,
            more: None,
            cases: None,
        }))
    }

    /// The details sent.
    pub fn details(&self) -> &ProblemDetails {
        &self.0
    }

    pub(crate) fn bad_request(code: ProblemCode, detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::BAD_REQUEST, code, detail)
    }

    pub(crate) fn not_found(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::NOT_FOUND, ProblemCode::NotFound, detail)
    }

    /// The same problem, as `status` with `code`.
    pub(crate) fn set_code(&mut self, status: StatusCode, code: ProblemCode) {
        self.0.status = status.as_u16();
        self.0.title = status.canonical_reason().unwrap_or("Error").to_owned();
        self.0.kind = format!("urn:promptreg:problem:{code}");
        self.0.code = code;
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
pub(crate) fn status_of(kind: ErrorKind) -> (StatusCode, ProblemCode) {
    match kind {
        ErrorKind::InvalidLabel => (StatusCode::BAD_REQUEST, ProblemCode::InvalidLabel),
        ErrorKind::InvalidVersion => (StatusCode::BAD_REQUEST, ProblemCode::InvalidVersion),
        ErrorKind::UnknownPack => (StatusCode::NOT_FOUND, ProblemCode::UnknownPack),
        ErrorKind::UnknownPrompt => (StatusCode::NOT_FOUND, ProblemCode::UnknownPrompt),
        ErrorKind::UnknownVersion => (StatusCode::NOT_FOUND, ProblemCode::UnknownVersion),
        ErrorKind::Conflict => (StatusCode::PRECONDITION_FAILED, ProblemCode::Conflict),
        ErrorKind::Forbidden => (StatusCode::FORBIDDEN, ProblemCode::Forbidden),
        ErrorKind::InvalidPack => (StatusCode::UNPROCESSABLE_ENTITY, ProblemCode::InvalidPack),
        ErrorKind::TooManyFiles => (StatusCode::UNPROCESSABLE_ENTITY, ProblemCode::TooManyFiles),
        ErrorKind::InvalidInput => (StatusCode::BAD_REQUEST, ProblemCode::InvalidInput),
        ErrorKind::Unavailable => (
            StatusCode::SERVICE_UNAVAILABLE,
            ProblemCode::StoreUnavailable,
        ),
        ErrorKind::ReadOnly => (StatusCode::SERVICE_UNAVAILABLE, ProblemCode::StoreReadOnly),
        ErrorKind::Unauthorized | ErrorKind::KeyRevoked => {
            (StatusCode::UNAUTHORIZED, ProblemCode::Unauthorized)
        }
        ErrorKind::InvalidKey => (StatusCode::BAD_REQUEST, ProblemCode::InvalidKey),
        ErrorKind::UnknownKey => (StatusCode::NOT_FOUND, ProblemCode::UnknownKey),
        ErrorKind::TestsFailed => (StatusCode::UNPROCESSABLE_ENTITY, ProblemCode::TestsFailed),
        ErrorKind::BreakingChange => (StatusCode::CONFLICT, ProblemCode::BreakingChange),
        ErrorKind::SignatureRequired => (StatusCode::FORBIDDEN, ProblemCode::SignatureRequired),
        ErrorKind::Busy => (StatusCode::SERVICE_UNAVAILABLE, ProblemCode::Busy),
        ErrorKind::TooManyInstances => (
            StatusCode::INSUFFICIENT_STORAGE,
            ProblemCode::TooManyInstances,
        ),
        ErrorKind::UnknownLabel => (StatusCode::NOT_FOUND, ProblemCode::UnknownLabel),
        ErrorKind::UnknownRevision => (
            StatusCode::UNPROCESSABLE_ENTITY,
            ProblemCode::UnknownRevision,
        ),
        ErrorKind::InstanceTaken => (StatusCode::CONFLICT, ProblemCode::InstanceTaken),
        ErrorKind::InvalidWebhook => (StatusCode::BAD_REQUEST, ProblemCode::InvalidWebhook),
        ErrorKind::UnknownWebhook => (StatusCode::NOT_FOUND, ProblemCode::UnknownWebhook),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, ProblemCode::StoreError),
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
        if err.kind() == ErrorKind::TestsFailed {
            let mut problem = problem;
            let cases = err.failed_cases().iter().map(FailedCase::from);
            problem.0.cases = Some(cases.collect());
            return problem;
        }
        problem
    }
}

impl From<promptreg::Error> for Problem {
    fn from(err: promptreg::Error) -> Problem {
        use promptreg::ErrorKind as K;
        let (status, code) = match err.kind() {
            K::InvalidId => (StatusCode::BAD_REQUEST, ProblemCode::InvalidId),
            K::InvalidLocale => (StatusCode::BAD_REQUEST, ProblemCode::InvalidLocale),
            K::UnknownId | K::NoPromptForLocale => {
                (StatusCode::NOT_FOUND, ProblemCode::UnknownPrompt)
            }
            _ => (StatusCode::UNPROCESSABLE_ENTITY, ProblemCode::RenderFailed),
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
