//! The baseline of `scripts/bench-server.sh`: the smallest axum server
//! that answers the same requests as `promptreg serve` with the same bytes.
//!
//! At start-up it fetches each path from the real server once and keeps
//! the body and headers (`Content-Type`, `ETag`, `Cache-Control`); then
//! it answers every `GET` of that path from memory, `304 Not Modified`
//! when `If-None-Match` names the ETag. No logs, no metrics, no request
//! ids, no timeouts: what is left is axum and hyper themselves.
//!
//! ```sh
//! cargo run --release -p promptreg-server --example baseline -- \
//!     http://127.0.0.1:7878 127.0.0.1:7879 /v1/packs/bench/labels/production ...
//! ```

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A response as the real server sent it.
struct Copy {
    headers: Vec<(header::HeaderName, HeaderValue)>,
    etag: HeaderValue,
    body: Bytes,
}

type Copies = Arc<HashMap<String, Copy>>;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: baseline UPSTREAM LISTEN PATH...";
    let upstream = args.next().ok_or(usage)?;
    let listen: SocketAddr = args.next().ok_or(usage)?.parse()?;
    let paths: Vec<String> = args.collect();
    if paths.is_empty() {
        return Err(usage.into());
    }
    let client = reqwest::Client::new();
    let mut copies = HashMap::new();
    for path in paths {
        let response = client.get(format!("{upstream}{path}")).send().await?;
        if response.status() != StatusCode::OK {
            return Err(format!("{path}: the server answered {}", response.status()).into());
        }
        let kept = [header::CONTENT_TYPE, header::ETAG, header::CACHE_CONTROL];
        let headers: Vec<_> = kept
            .iter()
            .filter_map(|name| Some((name.clone(), response.headers().get(name)?.clone())))
            .collect();
        let etag = response
            .headers()
            .get(header::ETAG)
            .cloned()
            .ok_or_else(|| format!("{path}: no ETag"))?;
        let body = response.bytes().await?;
        // Routes match the path alone, as the real server's do.
        let key = path.split('?').next().unwrap_or_default().to_owned();
        copies.insert(
            key,
            Copy {
                headers,
                etag,
                body,
            },
        );
    }
    let app = Router::new().fallback(answer).with_state(Arc::new(copies));
    let listener = tokio::net::TcpListener::bind(listen).await?;
    axum::serve(listener, app).await?;
    Ok(())
}

/// The copy of the path, or 304 when the client holds it.
async fn answer(State(copies): State<Copies>, request: Request) -> Response {
    let Some(copy) = copies.get(request.uri().path()) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if holds(request.headers(), &copy.etag) {
        return (
            StatusCode::NOT_MODIFIED,
            [(header::ETAG, copy.etag.clone())],
        )
            .into_response();
    }
    let mut response = copy.body.clone().into_response();
    for (name, value) in &copy.headers {
        response.headers_mut().insert(name, value.clone());
    }
    response
}

fn holds(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    headers.get(header::IF_NONE_MATCH) == Some(etag)
}
