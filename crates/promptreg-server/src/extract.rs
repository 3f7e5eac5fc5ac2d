//! Extractors whose rejections are problem details, and the checks every
//! name from a URL passes before any lookup.

use axum::extract::FromRequestParts;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, OptionalFromRequest, Request};
use axum::http::{StatusCode, header};
use promptreg::PromptId;
use promptreg_store::{Label, PACK_ENTRY, TESTS_ENTRY};

use crate::problem::{Problem, ProblemCode};

/// A JSON request body; refused as a problem (415, 413, 400).
#[derive(FromRequest)]
#[from_request(via(axum::Json), rejection(Problem))]
pub(crate) struct JsonBody<T>(pub(crate) T);

/// An optional JSON body (`Option<JsonBody<T>>`): absent when the request
/// has no `Content-Type`, refused as [`JsonBody`] is otherwise.
impl<T, S> OptionalFromRequest<S> for JsonBody<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Problem;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, Problem> {
        if !req.headers().contains_key(header::CONTENT_TYPE) {
            return Ok(None);
        }
        <Self as FromRequest<S>>::from_request(req, state)
            .await
            .map(Some)
    }
}

/// Path parameters; refused as a problem.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(Problem))]
pub(crate) struct Path<T>(pub(crate) T);

/// Query parameters; refused as a problem.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(Problem))]
pub(crate) struct Query<T>(pub(crate) T);

impl From<JsonRejection> for Problem {
    fn from(rejection: JsonRejection) -> Problem {
        let detail = rejection.body_text();
        match rejection {
            JsonRejection::MissingJsonContentType(_) => Problem::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ProblemCode::UnsupportedMediaType,
                "the body must be JSON, sent with `Content-Type: application/json`",
            ),
            JsonRejection::JsonSyntaxError(_) => Problem::bad_request(
                ProblemCode::MalformedJson,
                format!("the body is not valid JSON: {detail}"),
            ),
            JsonRejection::JsonDataError(_) => Problem::bad_request(
                ProblemCode::InvalidBody,
                format!("the body does not have the expected fields: {detail}"),
            ),
            _ if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => Problem::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                ProblemCode::BodyTooLarge,
                "the body is larger than the server accepts (`--max-body-size`)",
            ),
            _ => Problem::bad_request(ProblemCode::InvalidBody, detail),
        }
    }
}

impl From<PathRejection> for Problem {
    fn from(rejection: PathRejection) -> Problem {
        let text = rejection.body_text();
        match refusal_in(&text) {
            Some(problem) => problem,
            None => Problem::bad_request(ProblemCode::InvalidPath, text),
        }
    }
}

/// Separates a refused name's problem code from its detail inside the
/// message serde carries out of a path parameter's deserialisation.
const MARK: char = '\u{1f}';

/// A name's refusal, as its deserialisation reports it: the problem
/// travels through serde's error text, and [`refusal_in`] reads it back.
fn refused<E: serde::de::Error>(problem: Problem) -> E {
    let details = problem.details();
    E::custom(format!(
        "{MARK}{}{MARK}{}{MARK}",
        details.code, details.detail
    ))
}

/// The problem a name's deserialisation reported, inside a rejection's text.
fn refusal_in(text: &str) -> Option<Problem> {
    let mut pieces = text.split(MARK).skip(1);
    let code = ProblemCode::named(pieces.next()?)?;
    let detail = pieces.next()?;
    Some(Problem::bad_request(code, detail.to_owned()))
}

/// A pack name from a URL, checked as it is read (see [`pack_name`]).
#[derive(Debug, Clone)]
pub(crate) struct PackName(String);

/// A prompt id from a URL, or `@pack`, checked as it is read (see
/// [`prompt_id`]).
#[derive(Debug, Clone)]
pub(crate) struct PromptName(String);

/// A label from a URL, checked as it is read.
#[derive(Debug, Clone)]
pub(crate) struct LabelName(pub(crate) Label);

impl PackName {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl PromptName {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> serde::Deserialize<'de> for PackName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        pack_name(&name).map_err(refused)?;
        Ok(PackName(name))
    }
}

impl<'de> serde::Deserialize<'de> for PromptName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        prompt_id(&name).map_err(refused)?;
        Ok(PromptName(name))
    }
}

impl<'de> serde::Deserialize<'de> for LabelName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        label(&name).map(LabelName).map_err(refused)
    }
}

impl From<QueryRejection> for Problem {
    fn from(rejection: QueryRejection) -> Problem {
        Problem::bad_request(ProblemCode::InvalidQuery, rejection.body_text())
    }
}

/// A pack name from a URL: the rule of prompt ids (ASCII letters, digits,
/// `.`, `_`, `-`, no `..`), so it can never name a path.
pub(crate) fn pack_name(name: &str) -> Result<&str, Problem> {
    PromptId::new(name).map_err(|_| {
        Problem::bad_request(
            ProblemCode::InvalidPackName,
            format!(
                "invalid pack name `{}`: a pack name is ASCII letters, digits, `.`, `_` and `-`, starting with a letter or digit",
                shown(name, 64)
            ),
        )
    })?;
    Ok(name)
}

/// A prompt id from a URL (or a pack-level entry, `@pack`, `@tests`).
pub(crate) fn prompt_id(id: &str) -> Result<&str, Problem> {
    if id == PACK_ENTRY || id == TESTS_ENTRY {
        return Ok(id);
    }
    PromptId::new(id).map_err(Problem::from)?;
    Ok(id)
}

/// A label from a URL or a body.
pub(crate) fn label(name: &str) -> Result<Label, Problem> {
    Label::new(name).map_err(Problem::from)
}

/// A name from a request, for a message: at most `max` characters (an
/// ellipsis standing for the rest), escaped.
pub(crate) fn shown(name: &str, max: usize) -> String {
    let escaped: String = name
        .chars()
        .take(max)
        .flat_map(char::escape_default)
        .collect();
    match name.chars().nth(max) {
        Some(_) => escaped + "…",
        None => escaped,
    }
}
