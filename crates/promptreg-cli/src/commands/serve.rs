//! `promptreg serve`: the HTTP API over a store, until SIGINT or SIGTERM.

use std::io::IsTerminal;
use std::time::Duration;

use promptreg_server::{Config, Server, shutdown_signal};
use promptreg_store::Store;

use super::Output;
use crate::cli::{LogFormat, ServeArgs};
use crate::options::{Session, colours};
use crate::report::Failure;

pub fn run(session: &Session, args: &ServeArgs) -> Result<Output, Failure> {
    // The log goes to standard error: colour only when that is a terminal.
    init_log(
        args.log_format,
        colours(session.args.color, std::io::stderr().is_terminal()),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::usage(format!("cannot start the server's runtime: {e}")))?;
    let served = runtime.block_on(serve(args));
    // Every request has been answered; a heavy job whose request gave up
    // may still run on a blocking thread, and need not delay the exit.
    runtime.shutdown_timeout(Duration::from_secs(1));
    served?;
    Ok(Output::text(String::new()))
}

async fn serve(args: &ServeArgs) -> Result<(), Failure> {
    let store = Store::open(&args.database)
        .await
        .map_err(|e| Failure::usage(e.to_string()))?;
    let config = Config {
        listen: args.listen,
        body_limit: usize::try_from(args.max_body_size).unwrap_or(usize::MAX),
        request_timeout: Duration::from_secs(args.request_timeout),
        header_timeout: Duration::from_secs(args.header_timeout),
        idle_timeout: Duration::from_secs(args.idle_timeout),
        write_timeout: Duration::from_secs(args.write_timeout),
        max_connections: args.max_connections,
        max_streams: args.max_streams,
        max_requests: args.max_requests,
        key_grace: Duration::from_secs(args.key_grace),
        allowed_hosts: args.allowed_hosts.clone(),
        behind_tls: args.behind_tls,
        web_over_plain_http: args.web_over_plain_http,
        file_limits: args.limits.limits(),
        max_mcp_sessions: args.max_mcp_sessions,
        mcp_page_size: usize::try_from(args.mcp_page_size).unwrap_or(usize::MAX),
        mcp_tools: args.mcp_tools,
        deliver_webhooks: !args.no_webhook_deliveries,
        webhooks_allow_private: args.webhooks_allow_private,
        webhook_timeout: Duration::from_secs(args.webhooks_timeout),
        public_url: args.public_url.clone(),
        ..Config::default()
    };
    let server = Server::bind(store.clone(), config)
        .await
        .map_err(|e| Failure::usage(e.to_string()))?;
    // Before the address is known: a signal sent from then on stops it gracefully.
    let shutdown = shutdown_signal();
    tracing::info!(
        address = %server.local_addr(),
        store = %store.location(),
        "serving http://{addr}/v1 (OpenAPI at /v1/openapi.json), MCP at http://{addr}/mcp and the web page at http://{addr}/",
        addr = server.local_addr()
    );
    server
        .run(shutdown)
        .await
        .map_err(|e| Failure::usage(e.to_string()))
}

/// The request log on standard error; `RUST_LOG` filters it (`info` by default).
fn init_log(format: LogFormat, ansi: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}
