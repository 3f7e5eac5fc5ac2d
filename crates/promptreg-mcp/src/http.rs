//! Sessions over Streamable HTTP (`promptreg serve`'s `/mcp`). The host
//! puts the service behind its own checks (the `Host` answered, the
//! origin of writes, the body's size, the caller's key): the SDK's are
//! left off so there is one set of rules.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use crate::catalog::Catalog;
use crate::handler::{Options, PromptServer};

/// The bounds of the HTTP sessions.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpLimits {
    /// The largest request body read.
    pub body: usize,
    /// How long a session lives without a request.
    pub idle: Duration,
    /// The keep-alive interval of a session's event stream.
    pub keep_alive: Duration,
}

impl HttpLimits {
    /// Bodies of at most `body` bytes, sessions idle for at most `idle`,
    /// streams pinged every `keep_alive`.
    pub fn new(body: usize, idle: Duration, keep_alive: Duration) -> Self {
        HttpLimits {
            body,
            idle,
            keep_alive,
        }
    }
}

/// The MCP endpoint: the service, and its sessions (to count them).
pub struct StreamableHttp<C: Catalog> {
    /// The service answering `/mcp`.
    pub service: StreamableHttpService<PromptServer<C>, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
}

impl<C: Catalog> StreamableHttp<C> {
    /// How many sessions are open.
    pub async fn sessions(&self) -> usize {
        self.sessions.sessions.read().await.len()
    }
}

/// The Streamable HTTP service over `catalog`: a session per client.
pub fn streamable_http<C: Catalog>(
    catalog: Arc<C>,
    options: Options,
    limits: &HttpLimits,
) -> StreamableHttp<C> {
    let mut manager = LocalSessionManager::default();
    let mut sessions = SessionConfig::default();
    sessions.keep_alive = Some(limits.idle);
    // No priming event before each answer: a client that loses a POST's
    // stream asks again (every request here is safe to repeat).
    sessions.sse_retry = None;
    manager.session_config = sessions;
    let sessions = Arc::new(manager);
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_sse_keep_alive(Some(limits.keep_alive))
        .with_sse_retry(None)
        .with_max_request_body_bytes(limits.body);
    let service = StreamableHttpService::new(
        move || Ok(PromptServer::new(catalog.clone(), options.clone())),
        sessions.clone(),
        config,
    );
    StreamableHttp { service, sessions }
}

/// The answer to a POST body that is no single JSON-RPC message: a
/// JSON-RPC error (`-32700` for text that is not JSON, `-32600` for a
/// batch, which MCP no longer has), so a client reads why instead of an
/// HTTP error of the transport. `None`: the body goes on to the session.
pub fn refused_body(body: &[u8]) -> Option<http::Response<String>> {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    let (code, message) = if first == Some(&b'[') {
        (
            -32600,
            "a batch is not a request: MCP takes one JSON-RPC message per POST".to_owned(),
        )
    } else {
        match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
            Ok(_) => return None,
            Err(e) => (-32700, format!("the body is not JSON: {e}")),
        }
    };
    let error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code, "message": message },
    });
    http::Response::builder()
        .status(http::StatusCode::BAD_REQUEST)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(error.to_string())
        .ok()
}
