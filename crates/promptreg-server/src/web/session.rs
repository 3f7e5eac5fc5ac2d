//! Sessions: sign-in with an API key, kept server-side in memory under a
//! random id that an HttpOnly, SameSite=Strict cookie carries. A session
//! ends when it expires, on sign-out, or on the first request after its
//! key is revoked. A loopback server whose store has no key gets the local
//! user a session without sign-in, for its CSRF token.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use minijinja::context;

use super::csrf;
use super::form::Fields;
use super::page::{PageError, VISITOR, Visitor, see_other, with_status};
use crate::auth::Caller;
use crate::state::AppState;

const COOKIE: &str = "promptreg_session";
/// The sign-in form's CSRF token, before there is a session.
const SIGN_IN_COOKIE: &str = "promptreg_sign_in";
/// Sessions kept at most; the oldest go first.
const MAX_SESSIONS: usize = 10_000;

struct Session {
    /// The API key's secret; `None` for the local user.
    secret: Option<String>,
    csrf: String,
    started: Instant,
}

/// The sessions of the web page, by id.
pub(crate) struct Sessions {
    ttl: Duration,
    /// Cookies are `Secure`: clients come over TLS.
    secure: bool,
    by_id: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    pub(crate) fn new(ttl: Duration, secure: bool) -> Sessions {
        Sessions {
            ttl,
            secure,
            by_id: Mutex::default(),
        }
    }

    /// A new session; returns its id.
    fn start(&self, secret: Option<String>) -> Result<String, PageError> {
        let (id, csrf) = (csrf::token()?, csrf::token()?);
        let mut sessions = lock(&self.by_id);
        sessions.retain(|_, s| s.started.elapsed() < self.ttl);
        if sessions.len() >= MAX_SESSIONS
            && let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, s)| s.started)
                .map(|(id, _)| id.clone())
        {
            sessions.remove(&oldest);
        }
        sessions.insert(
            id.clone(),
            Session {
                secret,
                csrf,
                started: Instant::now(),
            },
        );
        Ok(id)
    }

    /// The key secret and CSRF token of a live session.
    fn get(&self, id: &str) -> Option<(Option<String>, String)> {
        let mut sessions = lock(&self.by_id);
        match sessions.get(id) {
            Some(s) if s.started.elapsed() < self.ttl => Some((s.secret.clone(), s.csrf.clone())),
            Some(_) => {
                sessions.remove(id);
                None
            }
            None => None,
        }
    }

    fn end(&self, id: &str) {
        lock(&self.by_id).remove(id);
    }

    fn max_age(&self) -> u64 {
        self.ttl.as_secs()
    }

    /// A `Set-Cookie` value: HttpOnly, SameSite=Strict, for the whole
    /// site, and `Secure` behind TLS.
    fn set_cookie(&self, name: &str, value: &str, max_age: u64) -> HeaderValue {
        let secure = if self.secure { "; Secure" } else { "" };
        HeaderValue::from_str(&format!(
            "{name}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}"
        ))
        .unwrap_or(HeaderValue::from_static(""))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The value of cookie `name` in the request.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// What a request without a usable session gets.
enum Refused {
    SignIn,
    Error(PageError),
}

/// Finds the visitor of a request, or sends them to sign in; pages run
/// with the visitor set.
pub(crate) async fn visit(State(state): State<AppState>, request: Request, next: Next) -> Response {
    match find_visitor(&state, request.headers()).await {
        Ok((visitor, new_session)) => {
            let mut response = VISITOR.scope(visitor, next.run(request)).await;
            if let Some(id) = new_session {
                let value = state
                    .sessions
                    .set_cookie(COOKIE, &id, state.sessions.max_age());
                response.headers_mut().append(header::SET_COOKIE, value);
            }
            response
        }
        Err(Refused::SignIn) => {
            let asked = request.uri().path_and_query().map_or("/", |p| p.as_str());
            let mut response = see_other(&sign_in_then(asked));
            if cookie(request.headers(), COOKIE).is_some() {
                let clear = state.sessions.set_cookie(COOKIE, "", 0);
                response.headers_mut().append(header::SET_COOKIE, clear);
            }
            response
        }
        Err(Refused::Error(e)) => e.into_response(),
    }
}

/// The visitor, and the id of a session started for them (the local user).
async fn find_visitor(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<(Visitor, Option<String>), Refused> {
    let session = cookie(headers, COOKIE).and_then(|id| Some((id, state.sessions.get(id)?)));
    if let Some((id, (secret, csrf))) = session {
        let caller = match &secret {
            Some(secret) => key_caller(state, id, secret).await?,
            None => local_caller(state, id).await?,
        };
        let visitor = Visitor {
            caller,
            csrf,
            signed_in: secret.is_some(),
        };
        return Ok((visitor, None));
    }
    let anonymous = state.auth.anonymous(&state.store).await;
    match anonymous.map_err(|p| Refused::Error(p.into()))? {
        Some(caller) => {
            let id = state.sessions.start(None).map_err(Refused::Error)?;
            let (_, csrf) = state.sessions.get(&id).unwrap_or_default();
            let visitor = Visitor {
                caller,
                csrf,
                signed_in: false,
            };
            Ok((visitor, Some(id)))
        }
        None => Err(Refused::SignIn),
    }
}

/// The caller of a signed-in session: a revoked key ends it.
async fn key_caller(state: &AppState, id: &str, secret: &str) -> Result<Caller, Refused> {
    match state.auth.key(&state.store, secret).await {
        Ok(caller) => Ok(caller),
        Err(p) if p.details().status == 401 => {
            state.sessions.end(id);
            Err(Refused::SignIn)
        }
        Err(p) => Err(Refused::Error(p.into())),
    }
}

/// The local user's session lasts while the store has no key.
async fn local_caller(state: &AppState, id: &str) -> Result<Caller, Refused> {
    match state.auth.anonymous(&state.store).await {
        Ok(Some(caller)) => Ok(caller),
        Ok(None) => {
            state.sessions.end(id);
            Err(Refused::SignIn)
        }
        Err(p) => Err(Refused::Error(p.into())),
    }
}

/// Where the visitor goes after signing in: `next`, when it is a path of
/// this site (never another site: `//host` and `/\\host` are refused),
/// else the start page.
fn next_page(next: &str) -> &str {
    let own_path = next.starts_with('/')
        && !next.starts_with("//")
        && !next.starts_with("/sign-in")
        && next.len() <= 2048
        && !next.chars().any(|c| c.is_control() || c == '\\');
    if own_path { next } else { "/" }
}

/// The sign-in page, to come back to `asked` afterwards.
fn sign_in_then(asked: &str) -> String {
    match next_page(asked) {
        "/" => "/sign-in".to_owned(),
        next => {
            let encoded: String = form_urlencoded::byte_serialize(next.as_bytes()).collect();
            format!("/sign-in?next={encoded}")
        }
    }
}

/// `?next=PATH`: the page asked for before signing in.
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct SignInQuery {
    #[serde(default)]
    next: String,
}

/// `GET /sign-in`.
pub(crate) async fn sign_in_page(
    State(state): State<AppState>,
    Query(query): Query<SignInQuery>,
) -> Response {
    sign_in_form(&state, StatusCode::OK, None, next_page(&query.next))
}

/// The sign-in form with a fresh CSRF token in a cookie of its own.
fn sign_in_form(state: &AppState, status: StatusCode, error: Option<&str>, next: &str) -> Response {
    let token = match csrf::token() {
        Ok(token) => token,
        Err(e) => return e.into_response(),
    };
    let mut response = with_status(
        status,
        "sign_in.html",
        context! { sign_in_token => token.clone(), error, next },
    );
    let value =
        state
            .sessions
            .set_cookie(SIGN_IN_COOKIE, &token, state.sessions.max_age().min(3600));
    response.headers_mut().append(header::SET_COOKIE, value);
    response
}

/// `POST /sign-in`: a valid key starts a session.
pub(crate) async fn sign_in(
    State(state): State<AppState>,
    headers: HeaderMap,
    fields: Fields,
) -> Response {
    let expected = cookie(&headers, SIGN_IN_COOKIE).unwrap_or_default();
    if !csrf::matches(expected, fields.get("csrf")) {
        return PageError::new(
            StatusCode::FORBIDDEN,
            "The form expired or did not come from this site: open the sign-in page again",
        )
        .into_response();
    }
    let secret = fields.get("key").trim();
    match state.auth.key(&state.store, secret).await {
        Ok(_) => {
            let id = match state.sessions.start(Some(secret.to_owned())) {
                Ok(id) => id,
                Err(e) => return e.into_response(),
            };
            let mut response = see_other(next_page(fields.get("next")));
            let value = state
                .sessions
                .set_cookie(COOKIE, &id, state.sessions.max_age());
            response.headers_mut().append(header::SET_COOKIE, value);
            response.headers_mut().append(
                header::SET_COOKIE,
                state.sessions.set_cookie(SIGN_IN_COOKIE, "", 0),
            );
            response
        }
        Err(p) if p.details().status == 401 => sign_in_form(
            &state,
            StatusCode::UNAUTHORIZED,
            Some("This key is not valid"),
            next_page(fields.get("next")),
        ),
        Err(p) => PageError::from(p).into_response(),
    }
}

/// `POST /sign-out`.
pub(crate) async fn sign_out(
    State(state): State<AppState>,
    headers: HeaderMap,
    fields: Fields,
) -> Result<Response, PageError> {
    fields.check_csrf()?;
    if let Some(id) = cookie(&headers, COOKIE) {
        state.sessions.end(id);
    }
    let mut response = see_other("/sign-in");
    response
        .headers_mut()
        .append(header::SET_COOKIE, state.sessions.set_cookie(COOKIE, "", 0));
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::{next_page, sign_in_then};

    #[test]
    fn only_paths_of_this_site_are_pages_to_come_back_to() {
        assert_eq!(next_page("/packs/shop?x=1"), "/packs/shop?x=1");
        for elsewhere in [
            "https://evil.example/",
            "//evil.example/",
            "/\\evil.example",
            "evil",
            "/sign-in?next=/x",
            "/a\nb",
            "",
        ] {
            assert_eq!(next_page(elsewhere), "/", "{elsewhere:?}");
        }
        assert_eq!(sign_in_then("/packs/a b"), "/sign-in?next=%2Fpacks%2Fa+b");
        assert_eq!(sign_in_then("/"), "/sign-in");
    }
}
