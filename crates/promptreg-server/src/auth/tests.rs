//! How many times a request checks its caller's scope.

use std::cell::Cell;
use std::future::poll_fn;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use promptreg_store::{Actor, PackFiles, Permission, Store};
use tower_service::Service;

use crate::config::Config;
use crate::state::AppState;

thread_local! {
    /// Checks of a caller's scope made on this thread.
    static CHECKS: Cell<usize> = const { Cell::new(0) };
}

pub(super) fn count_check() {
    CHECKS.with(|c| c.set(c.get() + 1));
}

/// The checks `request` made, answered on this thread (a current-thread
/// runtime runs the whole request here), with its status.
async fn checks_of(state: &AppState, request: Request<Body>) -> (StatusCode, usize) {
    let mut app = crate::app::app(state.clone());
    poll_fn(|cx| app.poll_ready(cx)).await.unwrap();
    CHECKS.with(|c| c.set(0));
    let response = app.call(request).await.unwrap();
    (response.status(), CHECKS.with(Cell::get))
}

async fn state_with_demo(dir: &std::path::Path) -> AppState {
    let store = Store::open(dir.join("checks.db").to_str().unwrap())
        .await
        .unwrap();
    let mut files = PackFiles::default();
    files.insert(
        "promptreg.toml",
        "name = \"demo\"\nkeys = [\"greeting\"]\n[user]\nprompts_dir = \".demo\"\n",
    );
    files.insert("defaults/greeting.md", "Hello.");
    let actor = Actor::new("ada", [Permission::Write]);
    store.push(&files, &actor, "first").await.unwrap();
    AppState::new(store, Config::default(), true)
}

fn put(uri: &str, if_none_match: bool, body: &str) -> Request<Body> {
    let mut request = Request::builder()
        .method(Method::PUT)
        .uri(uri)
        .header(header::CONTENT_TYPE, "application/json");
    if if_none_match {
        request = request.header(header::IF_NONE_MATCH, "*");
    }
    request.body(Body::from(body.to_owned())).unwrap()
}

#[tokio::test]
async fn a_label_move_checks_the_callers_scope_once() {
    let dir = tempfile::tempdir().unwrap();
    let state = state_with_demo(dir.path()).await;
    let uri = "/v1/packs/demo/prompts/greeting/labels/production";
    let (status, checks) = checks_of(&state, put(uri, true, r#"{"version": 1}"#)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(checks, 1);
    // A refusal before any read checks once too.
    let (status, checks) = checks_of(&state, put(uri, false, r#"{"version": 1}"#)).await;
    assert_eq!(status, StatusCode::PRECONDITION_REQUIRED);
    assert_eq!(checks, 1);
}

#[tokio::test]
async fn a_rollback_checks_the_callers_scope_once() {
    let dir = tempfile::tempdir().unwrap();
    let state = state_with_demo(dir.path()).await;
    let uri = "/v1/packs/demo/prompts/greeting/labels/latest/rollback";
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(uri)
        .body(Body::empty())
        .unwrap();
    request.headers_mut().remove(header::CONTENT_TYPE);
    let (status, checks) = checks_of(&state, request).await;
    // `latest` follows pushes: the store refuses it, after the one check.
    assert!(status.is_client_error(), "{status}");
    assert_eq!(checks, 1);
}
