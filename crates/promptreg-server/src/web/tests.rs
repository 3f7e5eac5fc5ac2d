//! A pack's prompt tests against one state, run on the server when a page
//! asks (bounded in time), shown where a state is about to be published
//! and on a prompt's own page.

use std::time::Duration;

use axum::extract::State;
use axum::response::Html;
use minijinja::context;
use promptreg_store::{Label, PackFiles, TestLimits, VersionRef};
use serde::{Deserialize, Serialize};

use super::compare::version_ref;
use super::packs::require_read;
use super::page::{PageError, Path, render};
use crate::extract::{PackName, PromptName, Query};
use crate::heavy::HeavyWork;
use crate::problem::FailedCase;
use crate::state::AppState;

/// The longest a page waits for a test run: a page answers in seconds,
/// and a gate's own run has its own, longer bound.
pub(crate) const PAGE_TEST_TIME: Duration = Duration::from_secs(10);

/// What the tests gave, as a template shows it.
#[derive(Debug, Serialize)]
pub(crate) struct TestResults {
    /// `9 of 9 cases passed`; `None` when they could not run.
    summary: Option<String>,
    passed: bool,
    failed: Vec<FailedCase>,
    /// Why they could not run (the state does not load, the tests cannot
    /// be read, the run went past its bound).
    error: Option<String>,
}

impl TestResults {
    /// Runs the tests of `state`, a pack state or the error of building
    /// it, in a place among the server's heavy jobs. A visitor who leaves
    /// stops the run before its next case.
    pub(crate) async fn of(
        heavy: &HeavyWork,
        state: Result<PackFiles, promptreg_store::Error>,
    ) -> TestResults {
        let report = match state {
            Ok(files) => match heavy.slot().await {
                Ok(_slot) => {
                    promptreg_store::test_state(files, TestLimits::within(PAGE_TEST_TIME)).await
                }
                Err(busy) => return TestResults::not_run(busy.details().detail.clone()),
            },
            Err(e) => Err(e),
        };
        match report {
            Ok(report) => TestResults {
                summary: Some(report.summary()),
                passed: report.passed(),
                failed: report.failed.iter().map(FailedCase::from).collect(),
                error: None,
            },
            Err(e) => TestResults::not_run(e.to_string()),
        }
    }

    fn not_run(why: String) -> TestResults {
        TestResults {
            summary: None,
            passed: false,
            failed: Vec::new(),
            error: Some(why),
        }
    }
}

/// `?at=vN` or `?at=LABEL`.
#[derive(Debug, Deserialize)]
pub(crate) struct At {
    #[serde(default)]
    at: Option<String>,
}

/// `GET /packs/{pack}/prompts/{id}/tests?at=…`: the pack's tests against
/// a label's state, or against `latest` with this prompt at a version.
pub(crate) async fn show(
    State(state): State<AppState>,
    Path((pack, id)): Path<(PackName, PromptName)>,
    Query(at): Query<At>,
) -> Result<Html<String>, PageError> {
    let (pack, id) = (pack.as_str(), id.as_str());
    require_read(pack)?;
    let at = at.at.unwrap_or_else(|| "latest".to_owned());
    let (what, files) = match version_ref(&at)? {
        VersionRef::Label(label) => (
            format!("the pack at {label}"),
            state.store.checkout(pack, &label).await,
        ),
        VersionRef::Number(n) => (
            format!("the pack at latest, with {id} at v{n}"),
            state.store.state_with(pack, &Label::latest(), id, n).await,
        ),
    };
    let tests = TestResults::of(&state.heavy, files).await;
    render(
        "tests.html",
        context! { pack, id, at, what, tests => super::page::data(&tests) },
    )
}
