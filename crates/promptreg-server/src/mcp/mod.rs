//! `/mcp`: the prompts of a label, over the Model Context Protocol
//! (Streamable HTTP), to the packs the caller's key may read.
//!
//! A session points at a label (`production` unless `?label=` says) of
//! every pack the key may read, its prompts named `{pack}/{id}`; with
//! `?pack=`, at that one pack, its prompts named by id. `?locale=` and
//! `?subject=` (or the client's `initialize`) choose the locale and the
//! subject a split's share is decided for.
//!
//! Every request is authenticated as the API's are (a bearer key, or
//! the local user on a keyless loopback server) and goes through the same
//! guard (the `Host` answered, the origin of writes, the body's size, the
//! requests answered at once). A session's event stream (`GET /mcp`)
//! holds its connection as `/v1/events` does: outside the limit of
//! requests, bounded by the number of sessions instead.
//!
//! With `--mcp-tools`, sessions also get the tools of [`tools`], for
//! agents that improve prompts; none moves a label.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use promptreg::Snapshot;
use promptreg::pack::Pack;
use promptreg_mcp::rmcp::ErrorData;
use promptreg_mcp::rmcp::model::{CallToolResult, Extensions, JsonObject, Tool};
use promptreg_mcp::{
    Catalog, HttpLimits, Options, Served, ServedPack, SessionScope, StreamableHttp,
};
use serde_json::json;
use tokio::sync::watch;
use tower_service::Service;

use crate::auth::Caller;
use crate::cache::Installed;
use crate::extract::{label, shown};
use crate::problem::{Problem, ProblemCode};
use crate::state::AppState;

mod tools;

/// The path of the endpoint.
pub(crate) const PATH: &str = "/mcp";

/// The label a session serves unless it says.
const DEFAULT_LABEL: &str = "production";

/// How long a session lives without a request.
const SESSION_IDLE: Duration = Duration::from_secs(300);

/// The endpoint: the MCP service behind the caller's key and the bound on
/// sessions.
#[derive(Clone)]
pub(crate) struct Endpoint {
    http: Arc<StreamableHttp<StoreCatalog>>,
}

impl Endpoint {
    pub(crate) fn new(state: &AppState) -> Endpoint {
        let limits = HttpLimits::new(
            state.config.body_limit,
            SESSION_IDLE,
            state.config.keep_alive,
        );
        let options = Options::default().page_size(state.config.mcp_page_size);
        let catalog = Arc::new(StoreCatalog {
            state: state.clone(),
        });
        Endpoint {
            http: Arc::new(promptreg_mcp::streamable_http(catalog, options, &limits)),
        }
    }
}

/// Answers a request to `/mcp` as its caller.
pub(crate) async fn answer(
    endpoint: Endpoint,
    state: AppState,
    caller: Caller,
    mut request: Request,
) -> Response {
    let new_session = !request.headers().contains_key("mcp-session-id");
    if new_session && request.method() == axum::http::Method::POST {
        let open = endpoint.http.sessions().await;
        if open >= state.config.max_mcp_sessions {
            return Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                ProblemCode::Overloaded,
                format!(
                    "the server holds {open} MCP sessions, its limit (`--max-mcp-sessions`): retry later"
                ),
            )
            .into_response();
        }
    }
    if request.method() == axum::http::Method::POST {
        let (parts, body) = request.into_parts();
        let body = match axum::body::to_bytes(body, state.config.body_limit).await {
            Ok(body) => body,
            Err(_) => {
                return Problem::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    ProblemCode::BodyTooLarge,
                    format!(
                        "the body is more than the {} bytes the server accepts (`--max-body-size`)",
                        state.config.body_limit
                    ),
                )
                .into_response();
            }
        };
        if let Some(refused) = promptreg_mcp::refused_body(&body) {
            return refused.map(axum::body::Body::from);
        }
        request = Request::from_parts(parts, axum::body::Body::from(body));
    }
    request.extensions_mut().insert(caller);
    let mut service = endpoint.http.service.clone();
    match service.call(request).await {
        Ok(response) => response.map(axum::body::Body::new),
        Err(never) => match never {},
    }
}

/// What a server's MCP sessions are served: the store's labels, read
/// through the server's cache.
pub(crate) struct StoreCatalog {
    state: AppState,
}

impl ServedPack for Installed {
    fn pack(&self) -> &Pack {
        &self.pack
    }

    /// The server picks the split's arm when it picks the label's view.
    fn snapshot(&self, _: Option<&str>) -> Arc<Snapshot> {
        self.registry.snapshot()
    }
}

/// The store's packs, from the cache's list (kept fresh by the events).
async fn pack_names(state: &AppState) -> Result<Vec<String>, ErrorData> {
    let listed = state
        .cache
        .packs()
        .await
        .map_err(|problem| ErrorData::internal_error(problem.details().detail.clone(), None))?;
    let listed: crate::body::PackList = serde_json::from_slice(&listed.body)
        .map_err(|e| ErrorData::internal_error(format!("the list of packs: {e}"), None))?;
    Ok(listed.packs)
}

/// A request's parts, which the MCP service keeps in its extensions.
fn parts(request: &Extensions) -> Result<&axum::http::request::Parts, ErrorData> {
    request
        .get::<axum::http::request::Parts>()
        .ok_or_else(|| ErrorData::internal_error("the request's HTTP parts are missing", None))
}

/// A query parameter as an MCP error.
fn invalid(message: String, parameter: &str) -> ErrorData {
    ErrorData::invalid_params(message, Some(json!({ "parameter": parameter })))
}

impl Catalog for StoreCatalog {
    type Caller = Caller;

    fn caller(&self, request: &Extensions) -> Result<Caller, ErrorData> {
        parts(request)?
            .extensions
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| ErrorData::internal_error("the request's caller is missing", None))
    }

    /// `?label=`, `?pack=`, `?locale=`, `?subject=`.
    fn scope(&self, request: &Extensions) -> Result<SessionScope, ErrorData> {
        let query = parts(request)?.uri.query().unwrap_or_default();
        let mut scope = SessionScope::default();
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            let value = value.into_owned();
            match &*key {
                "label" => {
                    label(&value).map_err(|p| invalid(p.details().detail.clone(), "label"))?;
                    scope.label = Some(value);
                }
                "pack" => scope.pack = Some(value),
                "locale" => {
                    let locale = promptreg::Locale::parse(&value)
                        .map_err(|e| invalid(format!("`locale`: {e}"), "locale"))?;
                    scope.locale = Some(locale);
                }
                "subject" => scope.subject = Some(value),
                other => {
                    return Err(invalid(
                        format!(
                            "`/mcp` takes no parameter `{}`: it takes `label`, `pack`, `locale` and `subject`",
                            shown(other, 100)
                        ),
                        "query",
                    ));
                }
            }
        }
        Ok(scope)
    }

    /// In a session over every pack, a request about `PACK/ID` resolves
    /// that pack alone (an id has no `/`).
    async fn served(
        &self,
        caller: &Caller,
        scope: &SessionScope,
        prompt: Option<&str>,
    ) -> Result<Vec<Served>, ErrorData> {
        let state = &self.state;
        let label = label(scope.label.as_deref().unwrap_or(DEFAULT_LABEL))
            .map_err(|p| invalid(p.details().detail.clone(), "label"))?;
        let named = prompt
            .and_then(|name| name.split_once('/'))
            .map(|(pack, _)| pack);
        let packs = match (&scope.pack, named) {
            (Some(pack), _) => vec![pack.clone()],
            (None, Some(pack)) => vec![pack.to_owned()],
            (None, None) => pack_names(state).await?,
        };
        let mut served = Vec::new();
        for pack in packs.into_iter().filter(|p| caller.may_read(p)) {
            // A pack without the label is not served, as one the caller
            // may not read: neither is listed.
            let Ok(mut view) = state.cache.label(&pack, &label).await else {
                continue;
            };
            let mut arm = "";
            if let (Some(split), Some(subject)) = (&view.split, &scope.subject) {
                arm = split.rule.arm(subject).as_str();
                if split.rule.arm(subject) == promptreg::split::Arm::Candidate {
                    match state.cache.candidate(&pack, &label).await {
                        Ok(candidate) => view = candidate,
                        Err(_) => continue,
                    }
                }
            }
            let installed = match view.renderer_in(&state.heavy).await {
                Ok(installed) => installed,
                Err(problem) => {
                    tracing::warn!(pack, label = %label.as_str(), error = %problem.details().detail, "a label's pack does not install; MCP sessions do not see it");
                    continue;
                }
            };
            served.push(Served {
                prefix: scope.pack.is_none().then(|| pack.clone()),
                state: format!("{}{arm}", view.bundle.etag),
                pack: installed,
            });
        }
        Ok(served)
    }

    fn changes(&self) -> watch::Receiver<u64> {
        self.state.events.changes()
    }

    async fn run<R: Send + 'static>(
        &self,
        job: impl FnOnce() -> R + Send + 'static,
    ) -> Result<R, ErrorData> {
        self.state
            .heavy
            .run(job)
            .await
            .map_err(|problem| ErrorData::internal_error(problem.details().detail.clone(), None))
    }

    /// With `--mcp-tools`: the tools of [`tools`].
    fn tools(&self) -> Vec<Tool> {
        match self.state.config.mcp_tools {
            true => tools::tools(),
            false => Vec::new(),
        }
    }

    async fn call_tool(
        &self,
        caller: &Caller,
        name: &str,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        if !self.state.config.mcp_tools {
            return Err(ErrorData::invalid_params(
                "this server offers no tools (`promptreg serve --mcp-tools` does)",
                None,
            ));
        }
        tools::call(&self.state, caller, name, arguments).await
    }
}
