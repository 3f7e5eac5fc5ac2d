//! Rendering pages: the templates embedded in the binary (auto-escaped,
//! so no text from the store reaches a page as markup), the visitor every
//! page's header names, and errors as pages.

use std::sync::LazyLock;

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use minijinja::{AutoEscape, Environment, Value, context};

use axum::extract::FromRequestParts;
use axum::extract::rejection::PathRejection;

use crate::auth::Caller;
use crate::problem::Problem;

/// Who is looking: set for the duration of each request by the session
/// layer, so every page's header can name them.
#[derive(Clone)]
pub(crate) struct Visitor {
    pub(crate) caller: Caller,
    /// The session's CSRF token, put in every POST form.
    pub(crate) csrf: String,
    /// Signed in with a key (not the local user of a store without keys).
    pub(crate) signed_in: bool,
}

tokio::task_local! {
    pub(crate) static VISITOR: Visitor;
}

/// The visitor of the current request.
pub(crate) fn visitor() -> Option<Visitor> {
    VISITOR.try_with(Clone::clone).ok()
}

const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("templates/base.html")),
    ("macros.html", include_str!("templates/macros.html")),
    ("error.html", include_str!("templates/error.html")),
    ("sign_in.html", include_str!("templates/sign_in.html")),
    ("packs.html", include_str!("templates/packs.html")),
    ("prompts.html", include_str!("templates/prompts.html")),
    ("history.html", include_str!("templates/history.html")),
    ("prompt.html", include_str!("templates/prompt.html")),
    ("compare.html", include_str!("templates/compare.html")),
    ("playground.html", include_str!("templates/playground.html")),
    ("edit.html", include_str!("templates/edit.html")),
    ("label.html", include_str!("templates/label.html")),
    ("revisions.html", include_str!("templates/revisions.html")),
    ("fleet.html", include_str!("templates/fleet.html")),
    ("restore.html", include_str!("templates/restore.html")),
    ("tests.html", include_str!("templates/tests.html")),
    ("webhooks.html", include_str!("templates/webhooks.html")),
    ("webhook.html", include_str!("templates/webhook.html")),
    (
        "webhook_secret.html",
        include_str!("templates/webhook_secret.html"),
    ),
];

static ENV: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = Environment::new();
    // Every template escapes: text from the store is never markup.
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    for (name, source) in TEMPLATES {
        if let Err(e) = env.add_template(name, source) {
            tracing::error!("web template {name} does not compile: {e}");
        }
    }
    env
});

/// A page from template `name` with `ctx`, plus the visitor.
pub(crate) fn render(name: &str, ctx: Value) -> Result<Html<String>, PageError> {
    page(name, ctx).map(Html).map_err(|e| {
        PageError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the page cannot be shown: {e}"),
        )
    })
}

fn page(name: &str, ctx: Value) -> Result<String, minijinja::Error> {
    let who = visitor();
    let full = context! {
        signed_in => who.as_ref().is_some_and(|v| v.signed_in),
        who => who.as_ref().map(|v| v.caller.name().to_owned()),
        csrf => who.as_ref().map(|v| v.csrf.clone()),
        store_admin => who.as_ref().is_some_and(|v| v.caller.require_store_admin("").is_ok()),
        ..ctx
    };
    ENV.get_template(name)?.render(full)
}

/// A page with a status other than 200.
pub(crate) fn with_status(status: StatusCode, name: &str, ctx: Value) -> Response {
    match render(name, ctx) {
        Ok(html) => (status, html).into_response(),
        Err(e) => e.into_response(),
    }
}

/// A redirect after a POST (303: the browser follows with GET).
pub(crate) fn see_other(to: &str) -> Response {
    Redirect::to(to).into_response()
}

/// An error shown as a page.
#[derive(Debug)]
pub(crate) struct PageError {
    status: StatusCode,
    message: String,
    /// The failing cases of a gate's refusal, listed under the message.
    cases: Vec<crate::problem::FailedCase>,
}

impl PageError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> PageError {
        PageError {
            status,
            message: message.into(),
            cases: Vec::new(),
        }
    }

    /// 403 for a key that may only read.
    pub(crate) fn read_only(detail: &str) -> PageError {
        PageError::new(
            StatusCode::FORBIDDEN,
            format!("This key may only read: {detail}"),
        )
    }
}

/// Path parameters of a page; a name that breaks its rules is an error
/// page, as any other refusal of a page is.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(PageError))]
pub(crate) struct Path<T>(pub(crate) T);

impl From<PathRejection> for PageError {
    fn from(rejection: PathRejection) -> PageError {
        Problem::from(rejection).into()
    }
}

impl From<Problem> for PageError {
    fn from(problem: Problem) -> PageError {
        let details = problem.details();
        let mut error = PageError::new(
            StatusCode::from_u16(details.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            details.detail.clone(),
        );
        error.cases = details.cases.clone().unwrap_or_default();
        error
    }
}

impl From<promptreg_store::Error> for PageError {
    fn from(e: promptreg_store::Error) -> PageError {
        Problem::from(e).into()
    }
}

impl From<promptreg::Error> for PageError {
    fn from(e: promptreg::Error) -> PageError {
        Problem::from(e).into()
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let title = self.status.canonical_reason().unwrap_or("Error");
        let ctx = context! { title, message => self.message.clone(), cases => data(&self.cases) };
        match page("error.html", ctx) {
            Ok(html) => (self.status, Html(html)).into_response(),
            Err(_) => (self.status, self.message).into_response(),
        }
    }
}

/// Requires the write scope on `pack`, the request's one check of it
/// ([`Caller::permit`]): 403 `This key may only read` for a key that may
/// read it, the plain refusal for a key that may not.
pub(crate) fn require_write(
    caller: &Caller,
    pack: &str,
) -> Result<promptreg_store::Permit, PageError> {
    caller.permit(pack).map_err(|refused| {
        match caller.require(pack, promptreg_store::Scope::Read) {
            Err(unreadable) => unreadable.into(),
            Ok(()) => PageError::read_only(&refused.details().detail),
        }
    })
}

/// Any serialisable value for a template.
pub(crate) fn data<T: serde::Serialize>(value: &T) -> Value {
    Value::from(minijinja::value::Serde(value))
}
