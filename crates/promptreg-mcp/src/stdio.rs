//! One session over standard input and output (`promptreg mcp`).

use std::sync::Arc;

use rmcp::ServiceExt;

use crate::catalog::Catalog;
use crate::handler::{Options, PromptServer};

/// Serves one session of `catalog` over standard input and output until
/// the client closes it.
///
/// # Errors
///
/// When the session does not start (the client's `initialize` is not
/// one), or its task fails.
pub async fn serve_stdio<C: Catalog>(catalog: Arc<C>, options: Options) -> std::io::Result<()> {
    let running = PromptServer::new(catalog, options)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
