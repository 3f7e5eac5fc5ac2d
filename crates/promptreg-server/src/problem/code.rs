//! [`ProblemCode`]: the stable code of every problem the server sends,
//! declared once with its meaning, and its schema in the OpenAPI document.

use serde::Serialize;
use utoipa::ToSchema;

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

            /// What the code means, as its documentation says.
            pub fn meaning(self) -> &'static str {
                match self {
                    $(ProblemCode::$variant => concat!($($doc),*).trim_ascii(),)*
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
    /// The label keeps its prompts' contracts stable
    /// (`[release] stable_contract`) and the move would break one (a tool
    /// or output property removed, a parameter made required): the detail
    /// lists each change. An admin key forces it with a reason.
    BreakingChange = "breaking-change",
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
    /// A webhook's name, URL, event type, format or rotation breaks the
    /// rules.
    InvalidWebhook = "invalid-webhook",
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
    /// No webhook has that name, or it has no such delivery.
    UnknownWebhook = "unknown-webhook",
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
