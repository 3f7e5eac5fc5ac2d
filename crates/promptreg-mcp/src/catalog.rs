//! What a session is served, as its host (the `promptreg` tool or the
//! server) provides it: the packs a caller may read at one moment, and a
//! signal when that may have changed.

use std::future::Future;
use std::sync::Arc;

use promptreg::pack::Pack;
use promptreg::{Locale, Snapshot};
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, Extensions, JsonObject, Tool};
use tokio::sync::watch;

/// A pack as it is served now: its declarations (variables, descriptions)
/// and the state its renders read.
pub trait ServedPack: Send + Sync {
    /// The pack, as loaded.
    fn pack(&self) -> &Pack;

    /// The state a render for `subject` reads: while a split runs on a
    /// followed label, the state the subject's arm is served.
    fn snapshot(&self, subject: Option<&str>) -> Arc<Snapshot>;
}

/// One pack of what a session sees.
#[derive(Clone)]
pub struct Served {
    /// The pack's name in prompt names, `{prefix}/{id}`, when a session
    /// sees several packs; `None`: names are the prompt ids.
    pub prefix: Option<String>,
    /// The pack.
    pub pack: Arc<dyn ServedPack>,
    /// A token that changes whenever what the pack serves the session
    /// does (a label's revision and the subject's arm, a reload's count):
    /// a session is told the list changed when a token of its packs does.
    pub state: String,
}

/// Where a session points, from its transport (a server URL's query,
/// the tool's flags) and its `initialize` request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionScope {
    /// The locale its prompts are listed and rendered in; `None`: each
    /// pack's default.
    pub locale: Option<Locale>,
    /// The subject a split's share is decided for.
    pub subject: Option<String>,
    /// The label served (a server's session; `production` unless set).
    pub label: Option<String>,
    /// The one pack served (a server's session); `None`: every pack the
    /// caller may read.
    pub pack: Option<String>,
}

impl SessionScope {
    /// The scope with `locale` and `subject` where `other` sets them.
    pub(crate) fn overridden(mut self, other: SessionScope) -> SessionScope {
        self.locale = other.locale.or(self.locale);
        self.subject = other.subject.or(self.subject);
        self
    }
}

/// What a transport's host serves: the one interface between the MCP
/// side and where prompts come from (files, a baked bundle, a followed
/// label, a server's store).
pub trait Catalog: Send + Sync + 'static {
    /// Who sends a request, as the host tells callers apart (an API key
    /// over HTTP; nobody over standard input).
    type Caller: Clone + Send + Sync + 'static;

    /// The caller of a request, from its extensions (over HTTP they hold
    /// the request's [`http::request::Parts`]).
    ///
    /// # Errors
    ///
    /// When the request may not be served at all.
    fn caller(&self, request: &Extensions) -> Result<Self::Caller, ErrorData>;

    /// Where a session points, from its `initialize` request's extensions
    /// (a server URL's query): the transport's part of the scope.
    ///
    /// # Errors
    ///
    /// A scope that does not parse (a bad locale tag, an unknown option).
    fn scope(&self, request: &Extensions) -> Result<SessionScope, ErrorData>;

    /// What `caller` sees in `scope` now, packs in the order listed. A
    /// pack the caller may not read is left out, never refused: names do
    /// not leak. `prompt`: the one prompt name the request is about (a
    /// get, a completion), when it is about one; a catalog may then serve
    /// only the pack that can hold it.
    fn served(
        &self,
        caller: &Self::Caller,
        scope: &SessionScope,
        prompt: Option<&str>,
    ) -> impl Future<Output = Result<Vec<Served>, ErrorData>> + Send;

    /// Ticks whenever what any session is served may have changed.
    fn changes(&self) -> watch::Receiver<u64>;

    /// Runs `job` (a render) where the host runs such work: off the async
    /// workers, within its limits.
    fn run<R: Send + 'static>(
        &self,
        job: impl FnOnce() -> R + Send + 'static,
    ) -> impl Future<Output = Result<R, ErrorData>> + Send;

    /// The tools sessions may call: none unless the host offers some
    /// (then the session announces the tools capability).
    fn tools(&self) -> Vec<Tool> {
        Vec::new()
    }

    /// Calls tool `name` with `arguments` for `caller`. A failure the
    /// caller should read (a scope it lacks, a change that does not load)
    /// is a result with `is_error`; an unknown tool or arguments of the
    /// wrong shape, an MCP error.
    fn call_tool(
        &self,
        caller: &Self::Caller,
        name: &str,
        arguments: JsonObject,
    ) -> impl Future<Output = Result<CallToolResult, ErrorData>> + Send {
        let _ = (caller, arguments);
        let message = format!("no tool named `{name}`: `tools/list` lists the tools");
        async move { Err(ErrorData::invalid_params(message, None)) }
    }
}
