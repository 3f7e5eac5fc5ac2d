//! One request to a receiver, made safely: `http` or `https` only, no
//! redirect followed, no proxy, a timeout over the whole exchange, the
//! destination checked where it is connected to, and the response read
//! to a bound.

use std::time::{Duration, Instant};

use promptreg_store::LOGGED_RESPONSE_BYTES;
use reqwest::header::HeaderMap;

use crate::destination::{CheckedResolver, Destinations};

/// The most of a response body read; the rest is not waited for.
pub const MAX_RESPONSE_READ: usize = 64 * 1024;

/// What came back from one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// The status, when the receiver answered.
    pub status: Option<u16>,
    /// The response body's first [`LOGGED_RESPONSE_BYTES`], as text.
    pub response: String,
    /// Why no status came back (refused, timed out, …).
    pub error: Option<String>,
    /// From the start of the request to the end of what was read.
    pub took: Duration,
}

impl Exchange {
    /// Whether the receiver took the message (2xx).
    pub fn delivered(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

/// The client deliveries are made with.
#[derive(Clone)]
pub struct Outbound {
    client: reqwest::Client,
    destinations: Destinations,
    timeout: Duration,
}

impl Outbound {
    /// A client that waits at most `timeout` for an exchange.
    ///
    /// # Errors
    ///
    /// When the TLS backend cannot start.
    pub fn new(destinations: Destinations, timeout: Duration) -> Result<Outbound, String> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(timeout)
            .connect_timeout(timeout)
            .dns_resolver(CheckedResolver::shared(destinations))
            .user_agent(concat!("promptreg-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot start the webhook client: {e}"))?;
        Ok(Outbound {
            client,
            destinations,
            timeout,
        })
    }

    /// POSTs `body` to `url` with `headers`. Never fails: what went wrong
    /// is in the [`Exchange`], for the delivery log.
    pub async fn post(&self, url: &str, headers: HeaderMap, body: Vec<u8>) -> Exchange {
        let started = Instant::now();
        let failed = |error: String| Exchange {
            status: None,
            response: String::new(),
            error: Some(error),
            took: started.elapsed(),
        };
        let url = match promptreg_store::check_url(url) {
            Ok(url) => url,
            Err(e) => return failed(e.to_string()),
        };
        // A literal address is connected to without a lookup: check it here.
        if let Some(why) = self.destinations.refusal_of_address_in(&url) {
            return failed(why);
        }
        let sent = self
            .client
            .post(url)
            .headers(headers)
            .body(body)
            .send()
            .await;
        let mut response = match sent {
            Ok(response) => response,
            Err(e) => return failed(self.described(&e)),
        };
        let status = response.status().as_u16();
        let mut head = Vec::new();
        let mut read = 0usize;
        let mut error = None;
        while read < MAX_RESPONSE_READ {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    read += chunk.len();
                    let room = LOGGED_RESPONSE_BYTES.saturating_sub(head.len());
                    head.extend_from_slice(&chunk[..chunk.len().min(room)]);
                }
                Ok(None) => break,
                Err(e) => {
                    error = Some(self.described(&e));
                    break;
                }
            }
        }
        Exchange {
            status: Some(status),
            response: String::from_utf8_lossy(&head).into_owned(),
            error,
            took: started.elapsed(),
        }
    }

    /// A request error in a sentence: the innermost cause says most.
    fn described(&self, e: &reqwest::Error) -> String {
        if e.is_timeout() {
            return format!("no answer within {} s", self.timeout.as_secs_f32());
        }
        let mut innermost: &dyn std::error::Error = e;
        while let Some(source) = innermost.source() {
            innermost = source;
        }
        match e.is_connect() {
            true => format!("cannot connect: {innermost}"),
            false => innermost.to_string(),
        }
    }
}
