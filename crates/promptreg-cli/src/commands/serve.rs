//! `promptreg serve`: the HTTP API over a store, until SIGINT or SIGTERM.

use std::time::Duration;

use promptreg_server::{Config, Server, shutdown_signal};
use promptreg_store::Store;

use super::Output;
use crate::cli::{LogFormat, ServeArgs};
use crate::report::Failure;

pub fn run(args: &ServeArgs) -> Result<Output, Failure> {
    init_log(args.log_format);
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
        file_limits: args.limits.limits(),
        ..Config::default()
    };
    let server = Server::bind(store.clone(), config)
        .await
        .map_err(|e| Failure::usage(e.to_string()))?;
    tracing::info!(
        address = %server.local_addr(),
        store = %store.location(),
        "serving http://{}/v1 (OpenAPI at /v1/openapi.json)",
        server.local_addr()
    );
    server
        .run(shutdown_signal())
        .await
        .map_err(|e| Failure::usage(e.to_string()))
}

/// The request log on standard error; `RUST_LOG` filters it (`info` by default).
fn init_log(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}
