//! A receiver for tests (feature `test-support`): an HTTP server on
//! loopback that records what it is sent and answers as told, and a
//! check of a message's signature.
#![allow(clippy::unwrap_used, clippy::missing_panics_doc)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::header::LOCATION;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use crate::signature::signature;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    /// `webhook-id`.
    pub id: String,
    /// `webhook-timestamp`.
    pub timestamp: String,
    /// `webhook-signature`.
    pub signature: String,
    /// The body.
    pub body: String,
}

/// A receiver on loopback: answers each request with the next status of
/// its answers (the last one repeats), or hangs on the first request when
/// told to ([`hang_first`](Receiver::hang_first)).
#[derive(Clone)]
pub struct Receiver {
    got: Arc<Mutex<Vec<Received>>>,
    answers: Arc<Mutex<Vec<u16>>>,
    hang_first: Arc<Mutex<bool>>,
    body_bytes: Arc<Mutex<usize>>,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Receiver {
    /// Starts one answering with `answers` in turn (the last repeats;
    /// none: 204).
    pub async fn start(answers: &[u16]) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let receiver = Receiver {
            got: Arc::default(),
            answers: Arc::new(Mutex::new(answers.to_vec())),
            hang_first: Arc::default(),
            body_bytes: Arc::default(),
            addr: listener.local_addr().unwrap(),
        };
        let state = receiver.clone();
        let app = Router::new().route(
            "/hook",
            post(move |headers: HeaderMap, body: String| {
                let state = state.clone();
                async move { state.answer(headers, body).await }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        receiver
    }

    /// Makes the next request hang (a receiver that never answers).
    pub fn hang_first(&self) {
        *self.hang_first.lock().unwrap() = true;
    }

    /// Makes every answer's body `n` bytes long.
    pub fn answer_bytes(&self, n: usize) {
        *self.body_bytes.lock().unwrap() = n;
    }

    /// The status of its next answer; a redirect (3xx) points back at
    /// the receiver itself, so one followed would be seen.
    async fn answer(&self, headers: HeaderMap, body: String) -> Response {
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        };
        let hang = std::mem::take(&mut *self.hang_first.lock().unwrap());
        self.got.lock().unwrap().push(Received {
            id: header("webhook-id"),
            timestamp: header("webhook-timestamp"),
            signature: header("webhook-signature"),
            body,
        });
        if hang {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
        let status = {
            let mut answers = self.answers.lock().unwrap();
            match answers.len() {
                0 => 204,
                1 => answers[0],
                _ => answers.remove(0),
            }
        };
        let status = StatusCode::from_u16(status).unwrap();
        let body = "x".repeat(*self.body_bytes.lock().unwrap());
        match status.is_redirection() {
            true => (status, [(LOCATION, self.url())], body).into_response(),
            false => (status, body).into_response(),
        }
    }

    /// Its URL.
    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// What it got so far.
    pub fn got(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// Waits until `n` requests came in.
    pub async fn wait_for(&self, n: usize) -> Vec<Received> {
        for _ in 0..400 {
            let got = self.got();
            if got.len() >= n {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the receiver got {:?}, not {n} requests", self.got());
    }
}

/// Asserts `received` carries a signature by `secret`.
pub fn verify(received: &Received, secret: &str) {
    let expected = signature(
        &[secret.to_owned()],
        &received.id,
        received.timestamp.parse().unwrap(),
        received.body.as_bytes(),
    )
    .unwrap();
    assert!(
        received.signature.split(' ').any(|s| s == expected),
        "{received:?} is not signed by {secret}"
    );
}
