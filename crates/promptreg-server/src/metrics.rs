//! `/metrics`: Prometheus text. Requests by route and status, their
//! latency, the event-stream clients, store errors, the connections open,
//! and those refused or closed by a timeout, webhook delivery attempts. Each server has a
//! registry of its own, so several can run in one process (tests do).

use std::time::Instant;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts,
    Registry, TextEncoder,
};

use crate::state::AppState;

pub(crate) struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    sse_clients: IntGauge,
    store_errors: IntCounter,
    connections_open: IntGauge,
    connections_refused: IntCounter,
    connections_timed_out: IntCounterVec,
    overloaded: IntCounterVec,
    webhook_attempts: IntCounterVec,
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "promptreg_http_requests_total",
                "HTTP requests by route and status",
            ),
            &["method", "route", "status"],
        )
        .expect("valid metric");
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "promptreg_http_request_duration_seconds",
                "Time to the response's head, by route",
            )
            .buckets(vec![
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
            ]),
            &["method", "route"],
        )
        .expect("valid metric");
        let sse_clients =
            IntGauge::new("promptreg_sse_clients", "Clients following /v1/events now")
                .expect("valid metric");
        let store_errors = IntCounter::new(
            "promptreg_store_errors_total",
            "Store operations that failed (the database unreachable, or refusing)",
        )
        .expect("valid metric");
        let connections_open = IntGauge::new(
            "promptreg_connections_open",
            "Connections the server holds now (at most `max_connections`)",
        )
        .expect("valid metric");
        let connections_refused = IntCounter::new(
            "promptreg_connections_refused_total",
            "Connections answered 503 and closed: the server held its maximum of connections",
        )
        .expect("valid metric");
        let connections_timed_out = IntCounterVec::new(
            Opts::new(
                "promptreg_connections_timed_out_total",
                "Connections closed for sending no request head in time (header), staying idle (idle) or reading nothing of a response (write)",
            ),
            &["reason"],
        )
        .expect("valid metric");
        let overloaded = IntCounterVec::new(
            Opts::new(
                "promptreg_overloaded_total",
                "Requests answered 503 at once: past max-requests being answered (requests) or max-streams followed (streams)",
            ),
            &["limit"],
        )
        .expect("valid metric");
        let webhook_attempts = IntCounterVec::new(
            Opts::new(
                "promptreg_webhook_attempts_total",
                "Webhook delivery attempts this server made, by what came next: delivered, retry, or given_up (the webhook is disabled)",
            ),
            &["outcome"],
        )
        .expect("valid metric");
        for metric in [
            Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(latency.clone()),
            Box::new(sse_clients.clone()),
            Box::new(store_errors.clone()),
            Box::new(connections_open.clone()),
            Box::new(connections_refused.clone()),
            Box::new(connections_timed_out.clone()),
            Box::new(overloaded.clone()),
            Box::new(webhook_attempts.clone()),
        ] {
            registry.register(metric).expect("metric registered once");
        }
        Metrics {
            registry,
            requests,
            latency,
            sse_clients,
            store_errors,
            connections_open,
            connections_refused,
            connections_timed_out,
            overloaded,
            webhook_attempts,
        }
    }

    /// A webhook delivery attempt and what came next.
    pub(crate) fn webhook_attempted(&self, next: promptreg_store::Attempted) {
        let outcome = match next {
            promptreg_store::Attempted::Delivered => "delivered",
            promptreg_store::Attempted::RetryAt(_) => "retry",
            promptreg_store::Attempted::GiveUp => "given_up",
        };
        self.webhook_attempts.with_label_values(&[outcome]).inc();
    }

    /// A connection accepted: counted as open until the guard drops.
    pub(crate) fn connection_opened(&self) -> OpenConnection {
        self.connections_open.inc();
        OpenConnection(self.connections_open.clone())
    }

    pub(crate) fn connection_refused(&self) {
        self.connections_refused.inc();
    }

    pub(crate) fn connection_timed_out(&self, reason: &str) {
        self.connections_timed_out
            .with_label_values(&[reason])
            .inc();
    }

    /// A request refused past a limit: `requests` or `streams`.
    pub(crate) fn overloaded(&self, limit: &str) {
        self.overloaded.with_label_values(&[limit]).inc();
    }

    pub(crate) fn store_error(&self) {
        self.store_errors.inc();
    }

    /// Counts and times a request, by its route's pattern (never the raw
    /// path, so ids do not multiply the series).
    pub(crate) fn observe(&self, method: &str, route: &str, status: StatusCode, started: Instant) {
        self.requests
            .with_label_values(&[method, route, status.as_str()])
            .inc();
        let latency: Histogram = self.latency.with_label_values(&[method, route]);
        latency.observe(started.elapsed().as_secs_f64());
    }

    fn render(&self, clients: usize) -> String {
        self.sse_clients.set(clients as i64);
        let mut out = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// Held while a connection is open.
pub(crate) struct OpenConnection(IntGauge);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// The metrics, in Prometheus' text format.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    responses((status = 200, description = "Prometheus text format", content_type = "text/plain", body = String)),
)]
pub(crate) async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let text = state.metrics.render(state.events.clients());
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
}
