//! One MCP session: the requests of the prompts capability answered from
//! a [`Catalog`], and `notifications/prompts/list_changed` sent when what
//! the session sees changes.

use std::sync::{Arc, Mutex, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListToolsResult, PaginatedRequestParams,
    PromptListChangedNotification, Reference, ServerCapabilities, ServerConfig, ServerNotification,
    SubscriptionFilter, ToolsCapability,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::catalog::{Catalog, Served, SessionScope};
use crate::changes::announce_changes;
use crate::listing::{self, DEFAULT_PAGE_SIZE};
use crate::{answer, arguments, completion};

/// The `_meta` and `experimental` key under which a client sets its
/// session's locale and subject.
pub const SCOPE_KEY: &str = "promptreg";

/// How a host's sessions behave.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// How many prompts a page of `prompts/list` holds.
    pub page_size: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            page_size: DEFAULT_PAGE_SIZE,
        }
    }
}

impl Options {
    /// With pages of `page_size` prompts (at least one).
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }
}

/// One MCP session over a [`Catalog`]: a transport makes one per session.
pub struct PromptServer<C: Catalog> {
    catalog: Arc<C>,
    options: Options,
    /// Who initialised the session and where it points.
    session: OnceLock<Session<C::Caller>>,
    /// Dropped with the session, which ends its watch on changes.
    _alive: oneshot::Sender<()>,
    ended: Mutex<Option<oneshot::Receiver<()>>>,
}

#[derive(Clone)]
struct Session<Caller> {
    caller: Caller,
    scope: SessionScope,
}

impl<C: Catalog> PromptServer<C> {
    /// A session over `catalog`.
    pub fn new(catalog: Arc<C>, options: Options) -> Self {
        let (alive, ended) = oneshot::channel();
        PromptServer {
            catalog,
            options,
            session: OnceLock::new(),
            _alive: alive,
            ended: Mutex::new(Some(ended)),
        }
    }

    /// The session's scope; a request outside a session (a stateless
    /// transport) points where its own extensions say.
    fn scope(&self, context: &RequestContext<RoleServer>) -> Result<SessionScope, ErrorData> {
        match self.session.get() {
            Some(session) => Ok(session.scope.clone()),
            None => self.catalog.scope(&context.extensions),
        }
    }

    /// What the caller of `context` sees now (enough to find `prompt`,
    /// when the request is about one), and the session's scope.
    async fn served(
        &self,
        context: &RequestContext<RoleServer>,
        prompt: Option<&str>,
    ) -> Result<(Vec<Served>, SessionScope), ErrorData> {
        let caller = self.catalog.caller(&context.extensions)?;
        let scope = self.scope(context)?;
        let served = self.catalog.served(&caller, &scope, prompt).await?;
        Ok((served, scope))
    }

    /// Sends `list_changed` whenever what the session sees changes, until
    /// the session ends.
    fn watch_changes(&self, peer: Peer<RoleServer>) {
        let ended = self.ended.lock().ok().and_then(|mut e| e.take());
        let (Some(ended), Some(session)) = (ended, self.session.get().cloned()) else {
            return;
        };
        let catalog = self.catalog.clone();
        tokio::spawn(async move {
            let ended = async move {
                let _ = ended.await;
            };
            announce_changes(&*catalog, (&session.caller, &session.scope), ended, || {
                let peer = peer.clone();
                async move {
                    if peer.is_transport_closed() {
                        return Err(());
                    }
                    peer.notify_prompt_list_changed().await.map_err(drop)
                }
            })
            .await;
        });
    }
}

/// The scope a client sets in `initialize`: `capabilities.experimental`
/// (or `_meta`) `promptreg`: `{ "locale": "ja", "subject": "user-42" }`.
fn client_scope(request: &InitializeRequestParams) -> Result<SessionScope, ErrorData> {
    let from_experimental = request
        .capabilities
        .experimental
        .as_ref()
        .and_then(|e| e.get(SCOPE_KEY))
        .map(|o| Value::Object(o.clone()));
    let from_meta = request
        .meta
        .as_ref()
        .and_then(|m| m.0.get(SCOPE_KEY))
        .cloned();
    let Some(options) = from_experimental.or(from_meta) else {
        return Ok(SessionScope::default());
    };
    let text = |key: &str| -> Result<Option<String>, ErrorData> {
        match options.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(ErrorData::invalid_params(
                format!("`{SCOPE_KEY}.{key}` must be a string, not {other}"),
                Some(json!({ "option": key })),
            )),
        }
    };
    let locale = text("locale")?
        .map(|tag| {
            promptreg::Locale::parse(&tag).map_err(|e| {
                ErrorData::invalid_params(
                    format!("`{SCOPE_KEY}.locale`: {e}"),
                    Some(json!({ "option": "locale", "value": tag })),
                )
            })
        })
        .transpose()?;
    Ok(SessionScope {
        locale,
        subject: text("subject")?,
        ..SessionScope::default()
    })
}

impl<C: Catalog> ServerHandler for PromptServer<C> {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_completions()
            .enable_prompts()
            .enable_prompts_list_changed()
            .build();
        if !self.catalog.tools().is_empty() {
            capabilities.tools = Some(ToolsCapability::default());
        }
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("promptreg", env!("CARGO_PKG_VERSION")).with_title("promptreg"),
            )
            .with_instructions(
                "The prompts of a promptreg registry: each argument's type, allowed values and \
                 default are in its description and in the prompt's `_meta` \
                 (`promptreg/arguments`); a prompt's version, revision, digest and the locale \
                 of every part are in the `_meta` of `prompts/get`.",
            )
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let caller = self.catalog.caller(&context.extensions)?;
        let scope = self
            .catalog
            .scope(&context.extensions)?
            .overridden(client_scope(&request)?);
        if self.session.set(Session { caller, scope }).is_err() {
            return Err(ErrorData::invalid_request(
                "the session is initialised already",
                None,
            ));
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.watch_changes(context.peer);
    }

    /// A client without a session (protocol `2026-07-28`) hears of changes
    /// through a subscription (`subscriptions/listen`): to the prompts'
    /// list only.
    fn accepted_subscription_filter(&self, _: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().prompts_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let request = context.request_context();
        let session = Session {
            caller: self.catalog.caller(&request.extensions)?,
            scope: self.scope(request)?,
        };
        let sink = context.sink().clone();
        announce_changes(
            &*self.catalog,
            (&session.caller, &session.scope),
            context.cancelled(),
            || {
                let sink = sink.clone();
                async move {
                    let changed = PromptListChangedNotification::default();
                    let notification = ServerNotification::PromptListChangedNotification(changed);
                    sink.send(notification).await.map_err(drop)
                }
            },
        )
        .await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let (served, scope) = self.served(&context, None).await?;
        let subject = scope.subject.as_deref();
        let entries = listing::entries(&served, subject);
        let cursor = request.and_then(|r| r.cursor);
        let (page, next) = listing::page(&entries, cursor.as_deref(), self.options.page_size)?;
        let prompts = page
            .iter()
            .map(|entry| {
                let snapshot = entry.snapshot(subject);
                entry.prompt(&snapshot, &entry.locale(scope.locale.as_ref()))
            })
            .collect();
        let mut result = ListPromptsResult::with_all_items(prompts);
        result.next_cursor = next;
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let (served, scope) = self.served(&context, Some(&request.name)).await?;
        let subject = scope.subject.as_deref();
        let entry = listing::find(&served, &request.name, subject)
            .ok_or_else(|| not_found(&request.name))?;
        let declared = entry.served.pack.pack().prompt(&entry.id);
        let context = arguments::context(&request.name, declared, request.arguments)?;
        let snapshot = entry.snapshot(subject);
        let locale = entry.locale(scope.locale.as_ref());
        let default_locale = entry.served.pack.pack().default_locale().clone();
        let (name, id) = (entry.name, entry.id);
        let result = self
            .catalog
            .run(move || {
                answer::render(
                    &snapshot,
                    (&name, &id),
                    &context,
                    (&locale, &default_locale),
                )
            })
            .await??;
        Ok(result.into())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.catalog.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.catalog.caller(&context.extensions)?;
        let arguments = request.arguments.unwrap_or_default();
        let result = self
            .catalog
            .call_tool(&caller, &request.name, arguments)
            .await?;
        Ok(result.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let Reference::Prompt(prompt) = &request.r#ref else {
            return Err(ErrorData::invalid_params(
                "this server has no resources: complete a prompt's argument (`ref/prompt`)",
                None,
            ));
        };
        let (served, scope) = self.served(&context, Some(&prompt.name)).await?;
        let entry = listing::find(&served, &prompt.name, scope.subject.as_deref())
            .ok_or_else(|| not_found(&prompt.name))?;
        let variable = entry.served.pack.pack().prompt(&entry.id).and_then(|p| {
            p.variables()
                .iter()
                .find(|v| v.name == request.argument.name)
        });
        completion::complete(variable, &request.argument.value)
    }
}

/// A prompt the session does not see: the same answer whether it does
/// not exist or the caller may not read it, so names do not leak.
fn not_found(name: &str) -> ErrorData {
    let shown: String = name.chars().take(200).collect();
    ErrorData::invalid_params(
        format!("no prompt named `{shown}`: `prompts/list` lists the prompts"),
        Some(json!({ "prompt": shown })),
    )
}
