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

/// Declares [`ProblemCode`] from its variants and their codes, once.
macro_rules! problem_codes {
    ($($(#[doc = $doc:literal])* $variant:ident = $code:literal,)*) => {
        /// The stable `code` of every problem the server sends; the OpenAPI
        /// document lists them as an enum, so a client can match on them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
        pub enum ProblemCode {
            $($(#[doc = $doc])* #[serde(rename = $code)] $variant,)*
        }

        impl ProblemCode {
            /// The code, kebab-case: `unknown-prompt`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ProblemCode::$variant => $code,)*
                }
            }

            /// Every code, in the order declared.
            pub const ALL: &[ProblemCode] = &[$(ProblemCode::$variant,)*];

            /// The code named `code`, if there is one.
            pub(crate) fn named(code: &str) -> Option<ProblemCode> {
                match code {
                    $($code => Some(ProblemCode::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

problem_codes! {
    /// The body is larger than `--max-body-size`.
    BodyTooLarge = "body-too-large",
    /// Every slot for heavy work is taken: retry.
    Busy = "busy",
    /// A label moved meanwhile: `current` names where it points now.
    Conflict = "conflict",
    /// A write from another site (Origin, Sec-Fetch-Site).
    CrossOriginWrite = "cross-origin-write",
    /// The key may not do this (a protected label needs an admin key).
    Forbidden = "forbidden",
    /// A fleet report names an instance another key reported first.
    InstanceTaken = "instance-taken",
    /// The Host header names no allowed host.
    HostNotAllowed = "host-not-allowed",
    /// The key cannot read or write this pack.
    InsufficientScope = "insufficient-scope",
    /// The body lacks the expected fields.
    InvalidBody = "invalid-body",
    /// The playground's context is not JSON.
    InvalidContext = "invalid-context",
    /// A file of a new version is not one of the prompt's.
    InvalidFilePath = "invalid-file-path",
    /// A history is not a map of placeholders to messages.
    InvalidHistory = "invalid-history",
    /// A prompt id breaks the rules of ids.
    InvalidId = "invalid-id",
    /// Text the store does not keep: a NUL byte, a message over 4 KiB.
    InvalidInput = "invalid-input",
    /// An API key's name or scope breaks the rules.
    InvalidKey = "invalid-key",
    /// A label name breaks the rules of labels, or is reserved.
    InvalidLabel = "invalid-label",
    /// `Last-Event-ID` is not an event id.
    InvalidLastEventId = "invalid-last-event-id",
    /// A locale is not a BCP-47 tag.
    InvalidLocale = "invalid-locale",
    /// The pack fails check: `diagnostics` lists why.
    InvalidPack = "invalid-pack",
    /// A translation file cannot be imported: `diagnostics` lists why, each
    /// naming its unit.
    InvalidTranslation = "invalid-translation",
    /// A pack name breaks the rules of names.
    InvalidPackName = "invalid-pack-name",
    /// A path parameter does not parse.
    InvalidPath = "invalid-path",
    /// `If-Match` names no version of this prompt.
    InvalidPrecondition = "invalid-precondition",
    /// A query parameter does not parse.
    InvalidQuery = "invalid-query",
    /// A version is neither a number from 1 nor a label.
    InvalidVersion = "invalid-version",
    /// The body is not valid JSON.
    MalformedJson = "malformed-json",
    /// The route exists, not with this method.
    MethodNotAllowed = "method-not-allowed",
    /// Nothing is at this address.
    NotFound = "not-found",
    /// Moving a label needs `If-Match` or `If-None-Match: *`.
    PreconditionRequired = "precondition-required",
    /// The render failed (a template error, a missing variable).
    RenderFailed = "render-failed",
    /// The server is stopping.
    ShuttingDown = "shutting-down",
    /// The store failed in another way.
    StoreError = "store-error",
    /// The store refuses writes.
    StoreReadOnly = "store-read-only",
    /// The store cannot be reached: retry.
    StoreUnavailable = "store-unavailable",
    /// A gated label would move to a state whose tests fail (`cases` lists
    /// them), cannot be read (`diagnostics`), or run too long.
    TestsFailed = "tests-failed",
    /// The label moves only with a signature by a releaser's key
    /// (`[release] signed`), which the API cannot make: the releaser signs
    /// where the key is (`promptreg store … --sign KEYFILE`).
    SignatureRequired = "signature-required",
    /// The server answers `--max-requests` requests already: retry after
    /// `Retry-After`.
    Overloaded = "overloaded",
    /// The request took longer than `--request-timeout`.
    Timeout = "timeout",
    /// The server holds `--max-connections` already (sent before any route).
    TooManyConnections = "too-many-connections",
    /// A push holds more files than the store takes.
    TooManyFiles = "too-many-files",
    /// The server holds `--max-streams` event streams already: retry after
    /// `Retry-After`.
    TooManyStreams = "too-many-streams",
    /// The fleet view holds its most instances for the label, the pack or
    /// the key (the detail names which); a new one is not recorded.
    TooManyInstances = "too-many-instances",
    /// Too many fleet reports from one key: retry after `Retry-After`.
    TooManyReports = "too-many-reports",
    /// No valid API key was given, or it was revoked.
    Unauthorized = "unauthorized",
    /// No API key has that name.
    UnknownKey = "unknown-key",
    /// A fleet report names a label nothing ever moved.
    UnknownLabel = "unknown-label",
    /// No pack of that name.
    UnknownPack = "unknown-pack",
    /// No prompt of that id.
    UnknownPrompt = "unknown-prompt",
    /// A fleet report names a revision its label never had.
    UnknownRevision = "unknown-revision",
    /// No route at this path.
    UnknownRoute = "unknown-route",
    /// No such version, or the label points nowhere.
    UnknownVersion = "unknown-version",
    /// The body is not sent as JSON.
    UnsupportedMediaType = "unsupported-media-type",
}

/// In the OpenAPI document: a string, one of the codes.
impl utoipa::PartialSchema for ProblemCode {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("A stable, kebab-case code a client can match on"))
            .enum_values(Some(ProblemCode::ALL.iter().map(|c| c.as_str())))
            .into()
    }
}

impl ToSchema for ProblemCode {}

impl std::fmt::Display for ProblemCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ProblemCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

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
