//! The two requests a follower makes: the bundle of its label, with
//! `If-None-Match`, and the event stream, with `Last-Event-ID`. Blocking
//! (ureq), each with timeouts, so the host needs no async runtime.

use std::io::{BufReader, Read};
use std::time::Duration;

use ureq::Agent;

use super::Remote;
use super::bundle::Received;
use crate::wire::{BundleHeaders, SplitHeader};

/// What a bundle request returned.
#[derive(Debug)]
pub(crate) enum Fetched {
    /// The copy held is current; the label's revision it is now (a
    /// restore can bring the same state back as a new revision), and the
    /// split running.
    NotModified {
        revision: Option<u64>,
        /// That revision's signatures.
        signatures: Vec<String>,
        split: Option<SplitHeader>,
    },
    /// A new bundle, with its ETag, revision and signatures, and the
    /// split running.
    New {
        received: Received,
        split: Option<SplitHeader>,
    },
}

/// What a report request returned, when the server took it or did not
/// know reports.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reported {
    /// Recorded, or refused for good (a server without fleet reports, a
    /// key that cannot): reported again at the next interval.
    Done,
    /// Too many reports: try again after this long.
    RetryAfter(Duration),
}

/// The largest bundle read, so a wrong server cannot fill memory.
const MAX_BUNDLE: u64 = 64 * 1024 * 1024;

/// A client of one server, for one pack and label.
pub(crate) struct Client {
    requests: Agent,
    stream: Agent,
    bundle_url: String,
    candidate_url: String,
    events_url: String,
    fleet_url: String,
    key: Option<String>,
}

impl Client {
    pub(crate) fn new(remote: &Remote) -> Client {
        let base = remote.server.trim_end_matches('/');
        // No connection is kept between requests: a follower makes few
        // (a fetch per change, a report per interval), and a fleet's
        // server then holds one connection per follower, its stream,
        // instead of three.
        let requests = Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(remote.timeout))
            .max_idle_connections(0)
            .max_idle_connections_per_host(0)
            .build()
            .new_agent();
        // The stream lasts: only its silence is limited (the server sends
        // keep-alive comments).
        let stream = Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(remote.timeout))
            .timeout_recv_response(Some(remote.timeout))
            .timeout_per_read(Some(remote.idle_timeout))
            .build()
            .new_agent();
        Client {
            requests,
            stream,
            bundle_url: format!("{base}/v1/packs/{}/labels/{}", remote.pack, remote.label),
            candidate_url: format!(
                "{base}/v1/packs/{}/labels/{}/split/bundle",
                remote.pack, remote.label
            ),
            events_url: format!("{base}/v1/events"),
            fleet_url: format!(
                "{base}/v1/packs/{}/labels/{}/fleet",
                remote.pack, remote.label
            ),
            key: remote.key.clone(),
        }
    }

    /// `GET` of the bundle, conditional on `etag`.
    pub(crate) fn bundle(&self, etag: Option<&str>) -> Result<Fetched, Refused> {
        self.get_bundle(&self.bundle_url, etag)
    }

    /// `GET` of the candidate bundle of the split running, conditional on
    /// `etag`.
    pub(crate) fn candidate(&self, etag: Option<&str>) -> Result<Fetched, Refused> {
        self.get_bundle(&self.candidate_url, etag)
    }

    fn get_bundle(&self, url: &str, etag: Option<&str>) -> Result<Fetched, Refused> {
        let mut request = self.requests.get(url);
        if let Some(key) = &self.key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        if let Some(etag) = etag {
            request = request.header("if-none-match", etag);
        }
        let mut response = request.call().map_err(|e| Refused {
            message: format!("GET {url}: {e}"),
            retry_after: None,
        })?;
        let status = response.status().as_u16();
        let BundleHeaders {
            revision,
            signatures,
            split,
        } = BundleHeaders::decode(|name| {
            response
                .headers()
                .get_all(name)
                .iter()
                .filter_map(|v| v.to_str().ok())
        });
        if status == 304 {
            return Ok(Fetched::NotModified {
                revision,
                signatures,
                split,
            });
        }
        let etag = response
            .headers()
            .get("etag")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let raw = response
            .body_mut()
            .with_config()
            .limit(MAX_BUNDLE)
            .read_to_vec()
            .map_err(|e| Refused {
                message: format!("GET {url}: reading the bundle: {e}"),
                retry_after: None,
            })?;
        if status != 200 {
            return Err(Refused {
                message: refusal("GET", url, status, &raw),
                retry_after: retry_after(response.headers()),
            });
        }
        Ok(Fetched::New {
            received: Received {
                raw,
                etag,
                revision,
                signatures,
            },
            split,
        })
    }

    /// `POST` of a fleet report. A refusal other than a rate limit is an
    /// error to show, not to retry soon.
    pub(crate) fn report(&self, body: &serde_json::Value) -> Result<Reported, String> {
        let mut request = self
            .requests
            .post(&self.fleet_url)
            .header("content-type", "application/json");
        if let Some(key) = &self.key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        let mut response = request
            .send(body.to_string().as_bytes())
            .map_err(|e| format!("POST {}: {e}", self.fleet_url))?;
        let status = response.status().as_u16();
        match status {
            200..=299 => Ok(Reported::Done),
            429 => Ok(Reported::RetryAfter(
                retry_after(response.headers()).unwrap_or(Duration::from_secs(1)),
            )),
            _ => {
                let body = response
                    .body_mut()
                    .with_config()
                    .limit(64 * 1024)
                    .read_to_vec()
                    .unwrap_or_default();
                Err(refusal("POST", &self.fleet_url, status, &body))
            }
        }
    }

    /// Opens the event stream, resuming after `last_event_id`.
    pub(crate) fn events(
        &self,
        last_event_id: Option<&str>,
    ) -> Result<BufReader<impl Read + Send + 'static>, Refused> {
        let mut request = self
            .stream
            .get(&self.events_url)
            .header("accept", "text/event-stream");
        if let Some(key) = &self.key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let mut response = request.call().map_err(|e| Refused {
            message: format!("GET {}: {e}", self.events_url),
            retry_after: None,
        })?;
        let status = response.status().as_u16();
        if status != 200 {
            let retry_after = retry_after(response.headers());
            let body = response
                .body_mut()
                .with_config()
                .limit(64 * 1024)
                .read_to_vec()
                .unwrap_or_default();
            return Err(Refused {
                message: refusal("GET", &self.events_url, status, &body),
                retry_after,
            });
        }
        Ok(BufReader::new(response.into_body().into_reader()))
    }
}

/// Why a request failed, and how long the server asked to wait before
/// trying again (`Retry-After` on a `503` or `429`).
#[derive(Debug)]
pub(crate) struct Refused {
    pub(crate) message: String,
    pub(crate) retry_after: Option<Duration>,
}

/// A `Retry-After` of delay-seconds (the form the server sends), at most
/// an hour.
fn retry_after(headers: &ureq::http::HeaderMap) -> Option<Duration> {
    let seconds: u64 = headers
        .get("retry-after")?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(seconds.min(3600)))
}

/// The error of a refused request: its status and the server's problem
/// detail (RFC 9457), with a hint for the key errors.
fn refusal(method: &str, url: &str, status: u16, body: &[u8]) -> String {
    let detail = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("detail").and_then(|d| d.as_str()).map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(body).chars().take(300).collect());
    let hint = match status {
        401 => " (the API key is missing, wrong or revoked: give a valid one)",
        403 => " (the API key does not reach this pack: it needs the read scope on it)",
        _ => "",
    };
    format!("{method} {url}: HTTP {status}: {detail}{hint}")
}

/// How long to wait before the next reconnect: the backoff, and at least
/// what the server asked for (`Retry-After`) plus a share of it at random,
/// so that the clients a busy server turned away do not all come back in
/// the same second.
pub(crate) fn reconnect_wait(
    base: Duration,
    max: Duration,
    failures: u32,
    asked: Option<Duration>,
) -> Duration {
    let grown = backoff(base, max, failures);
    match asked {
        // `backoff(asked, asked, 0)` is between half of it and all of it.
        Some(asked) => grown.max(asked + (asked - backoff(asked, asked, 0))),
        None => grown,
    }
}

/// How long to wait before the next reconnect: `base` doubled per failure,
/// at most `max`, less up to half of it at random so that many clients do
/// not reconnect together.
pub(crate) fn backoff(base: Duration, max: Duration, failures: u32) -> Duration {
    use std::hash::{BuildHasher, Hasher};
    let full = base.saturating_mul(1 << failures.min(16)).min(max);
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    let half = full.as_millis() as u64 / 2;
    full - Duration::from_millis(random % (half + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_to_its_limit_with_jitter_below_it() {
        let (base, max) = (Duration::from_millis(100), Duration::from_secs(2));
        for failures in 0..40 {
            let wait = backoff(base, max, failures);
            let full = base.saturating_mul(1 << failures.min(16)).min(max);
            assert!(wait <= full && wait >= full / 2, "{failures}: {wait:?}");
        }
    }

    #[test]
    fn a_server_that_asks_to_wait_is_waited_for_with_jitter_above_it() {
        let (base, max) = (Duration::from_millis(100), Duration::from_secs(2));
        for failures in 0..8 {
            let wait = reconnect_wait(base, max, failures, Some(Duration::from_secs(3)));
            assert!(
                wait >= Duration::from_secs(3) && wait <= Duration::from_millis(4500),
                "{failures}: {wait:?}"
            );
        }
        assert!(reconnect_wait(base, max, 0, None) <= base);
    }

    #[test]
    fn a_refusal_names_the_status_the_detail_and_a_fix() {
        let got = refusal(
            "GET",
            "http://x/v1/events",
            401,
            br#"{"detail":"revoked key"}"#,
        );
        assert!(got.contains("HTTP 401: revoked key"), "{got}");
        assert!(got.contains("revoked"), "{got}");
    }
}
