//! [`Config`]: how a server runs, its limits and timeouts.

use std::net::SocketAddr;
use std::time::Duration;

use promptreg_store::{FileLimits, FleetLimits};

use crate::connection::Timeouts;

/// How a server runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen; `127.0.0.1:7878` by default. Binding to an address
    /// other than loopback needs an API key in the store.
    pub listen: SocketAddr,
    /// The largest request body accepted, in bytes (1 MiB).
    pub body_limit: usize,
    /// How long a request may take before it is answered 503 (30 s); the
    /// event stream is not limited.
    pub request_timeout: Duration,
    /// How long a response may wait for a client that reads nothing before
    /// its connection is closed (30 s): a client that stops reading does
    /// not hold a connection forever. This holds for the event stream too:
    /// a follower whose send buffer stays full this long is dropped (one
    /// that reads, but slowly, is dropped after `client_buffer` events).
    pub write_timeout: Duration,
    /// How long a client may take to send a request's head (10 s), counted
    /// from the connection's start, or from the first byte of a later
    /// request: a client that sends nothing, or a header line every few
    /// seconds, is closed.
    pub header_timeout: Duration,
    /// How long a kept-alive connection may stay idle between requests
    /// (60 s), before it is closed. The event stream is never idle.
    pub idle_timeout: Duration,
    /// How many connections the server holds at once (10,000); one more
    /// is answered 503 at once and closed, so established clients keep
    /// working. Keep it below the process's file descriptor limit
    /// (`ulimit -n`).
    pub max_connections: usize,
    /// How many clients may follow the event stream at once (9,000: a
    /// tenth of the connections stays for requests). One more is answered
    /// 503 `too-many-streams` with `Retry-After`; followers wait at least
    /// that long before they try again, and poll meanwhile.
    pub max_streams: usize,
    /// How many requests may be answered at once (1,024), the event
    /// stream and the health checks aside. One more is answered 503
    /// `overloaded` with `Retry-After` at once, instead of every client
    /// waiting longer while work piles up.
    pub max_requests: usize,
    /// How often an idle event stream gets a keep-alive comment (15 s).
    pub keep_alive: Duration,
    /// How many events a client of the stream may fall behind before it is
    /// dropped with a `reconnect` event (1024).
    pub client_buffer: usize,
    /// The kernel's send buffer of each connection, in bytes (`None`: the
    /// system's, which grows to megabytes). With the event stream's ring,
    /// it bounds how much one client can hold before it counts as slow.
    pub send_buffer: Option<u32>,
    /// How long a checked API key is trusted before it is checked again
    /// (1 s): a revoked key is refused within this time.
    pub key_cache: Duration,
    /// How long a key checked before stays good while the store cannot be
    /// reached (10 min): cached reads go on at their usual speed through
    /// an outage, and no request waits for the store meanwhile. Past it,
    /// a key's requests are answered 503 until the store is back.
    pub key_grace: Duration,
    /// How long a web page session lasts after signing in (8 h).
    pub session_ttl: Duration,
    /// Host names the server answers to besides IP addresses and
    /// `localhost` (none): a request naming another host is refused, so a
    /// web page cannot reach the server through a name of its own (DNS
    /// rebinding). Add the names clients use, `prompts.example.com`.
    pub allowed_hosts: Vec<String>,
    /// Whether clients reach the server through a proxy that terminates
    /// TLS (no): the web page's cookies are then `Secure`, and the page
    /// may be served beyond loopback.
    pub behind_tls: bool,
    /// Whether the web page, which sends API keys to sign in, may be served
    /// over plain HTTP on an address other than loopback (no): without
    /// TLS, anyone on the network path could read the keys.
    pub web_over_plain_http: bool,
    /// How many CPU-heavy jobs (building a label's pack to render from,
    /// checking a pushed version, a render) run at once, on tokio's
    /// blocking threads (the number of CPUs): however costly a pack, the
    /// async workers stay free for health checks, reads and shutdown.
    pub heavy_jobs: usize,
    /// How many more heavy jobs may wait for a place (64); past them a
    /// request is answered 503 `busy` with `Retry-After`, instead of
    /// piling up work no one may wait for.
    pub heavy_queue: usize,
    /// How many files a pushed version may hold, per prompt and per pack
    /// ([`FileLimits::default`]: 1,000 and 10,000).
    pub file_limits: FileLimits,
    /// How many fleet reports one API key (or the keyless local caller)
    /// may send per second on average (1,000), past a burst of
    /// `report_burst` (20,000: a fleet of 10,000 instances sharing one key
    /// reporting two moves at once). Past it a report is answered 429 with
    /// `Retry-After`; nothing else is limited.
    pub report_rate: u32,
    /// See [`report_rate`](Self::report_rate).
    pub report_burst: u32,
    /// How many instances the fleet view keeps per label, per pack and per
    /// key ([`FleetLimits::default`]: 100,000, 200,000 and 100,000; each
    /// field says why). Past one, a report of a new instance is answered
    /// 507 `too-many-instances` naming the bound; known instances go on
    /// reporting.
    pub fleet_limits: FleetLimits,
    /// How many MCP sessions (`/mcp`) the server holds at once (1,000).
    /// A new one past it is answered 503 `overloaded`; a session unused
    /// for five minutes is closed.
    pub max_mcp_sessions: usize,
    /// How many prompts a page of an MCP session's `prompts/list` holds
    /// (100).
    pub mcp_page_size: usize,
    /// Whether MCP sessions get the tools for agents that improve prompts
    /// (off): labels, revisions and diffs to read, a proposed change's
    /// tests to run, a proposed change saved as a new version on
    /// `latest`. None moves a label.
    pub mcp_tools: bool,
    /// Whether this server sends webhook deliveries (yes). Servers sharing
    /// one store may all send: each delivery goes out from one of them.
    pub deliver_webhooks: bool,
    /// Whether webhooks may reach loopback, private and link-local
    /// addresses (no): for receivers inside the network, and tests. The
    /// address connected to is checked, after the name is looked up.
    pub webhooks_allow_private: bool,
    /// How long a delivery waits for its receiver (10 s); a delivery is
    /// held three times this long before another server may take it.
    pub webhook_timeout: Duration,
    /// When a failed delivery is tried again, and for how long
    /// ([`Retries::default`](promptreg_webhooks::Retries): from 5 s,
    /// doubling to an hour, for a day).
    pub webhook_retries: promptreg_webhooks::Retries,
    /// Where people reach the web page, for the links in webhook
    /// messages (`None`: `http://` and the address listened on).
    pub public_url: Option<url::Url>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 7878)),
            body_limit: 1024 * 1024,
            request_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 10_000,
            max_streams: 9_000,
            max_requests: 1024,
            keep_alive: Duration::from_secs(15),
            client_buffer: 1024,
            send_buffer: None,
            key_cache: Duration::from_secs(1),
            key_grace: Duration::from_secs(600),
            session_ttl: Duration::from_secs(8 * 3600),
            heavy_jobs: std::thread::available_parallelism().map_or(1, usize::from),
            heavy_queue: 64,
            file_limits: FileLimits::default(),
            report_rate: 1000,
            report_burst: 20_000,
            fleet_limits: FleetLimits::default(),
            allowed_hosts: Vec::new(),
            behind_tls: false,
            web_over_plain_http: false,
            max_mcp_sessions: 1_000,
            mcp_page_size: promptreg_mcp::DEFAULT_PAGE_SIZE,
            mcp_tools: false,
            deliver_webhooks: true,
            webhooks_allow_private: false,
            webhook_timeout: Duration::from_secs(10),
            webhook_retries: promptreg_webhooks::Retries::default(),
            public_url: None,
        }
    }
}

impl Config {
    /// Whether the web page, which takes API keys, is refused: on an
    /// address beyond loopback, without TLS, unless plain HTTP is allowed.
    pub(crate) fn refuses_web_in_clear(&self) -> bool {
        !self.listen.ip().is_loopback() && !self.behind_tls && !self.web_over_plain_http
    }

    /// Why this server would never deliver to `url`: its host is an
    /// address the server may not reach. A name is checked when a delivery
    /// connects (it may resolve elsewhere by then).
    pub(crate) fn webhook_refusal(&self, url: &str) -> Option<String> {
        let destinations = promptreg_webhooks::Destinations {
            allow_private: self.webhooks_allow_private,
        };
        let why = destinations.refusal_of_address_in(&url::Url::parse(url).ok()?)?;
        Some(format!("this server would never deliver to `{url}`: {why}"))
    }

    /// How this server's webhook worker runs, listening on `bound`.
    pub(crate) fn webhook_worker(&self, bound: SocketAddr) -> promptreg_webhooks::WorkerOptions {
        let page = self.public_url.clone().unwrap_or_else(|| {
            url::Url::parse(&format!("http://{bound}/")).expect("an address is a URL host")
        });
        let mut options =
            promptreg_webhooks::WorkerOptions::new(promptreg_webhooks::worker_name(), page);
        options.destinations.allow_private = self.webhooks_allow_private;
        options.timeout = self.webhook_timeout;
        options.lease = self.webhook_timeout.saturating_mul(3);
        options.retries = self.webhook_retries;
        options
    }

    pub(crate) fn timeouts(&self) -> Timeouts {
        Timeouts {
            header: self.header_timeout,
            idle: self.idle_timeout,
            write: self.write_timeout,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_web_page_is_refused_beyond_loopback_without_tls_unless_allowed() {
        let on = |listen: &str| Config {
            listen: listen.parse().unwrap(),
            ..Config::default()
        };
        assert!(!on("127.0.0.1:7878").refuses_web_in_clear());
        assert!(!on("[::1]:7878").refuses_web_in_clear());
        assert!(on("0.0.0.0:7878").refuses_web_in_clear());
        let behind_tls = Config {
            behind_tls: true,
            ..on("0.0.0.0:7878")
        };
        assert!(!behind_tls.refuses_web_in_clear());
        let allowed = Config {
            web_over_plain_http: true,
            ..on("10.0.0.5:7878")
        };
        assert!(!allowed.refuses_web_in_clear());
    }
}
