//! Gates: a label the pack's manifest gates (`[release] gated`) moves only
//! to a state whose prompt tests pass. The tests run against the candidate
//! state exactly as it would be served: its files loaded as a pack (from
//! memory, as from a folder holding them) and installed in a fresh
//! registry.

use std::time::Duration;

use promptreg::PromptRegistry;

use promptreg::testing::{CaseResult, PromptTests};

use crate::error::{Error, ErrorKind};
use crate::files::PackFiles;

/// The longest a gate's test run may take; past it the gate fails.
pub const GATE_TIME: Duration = Duration::from_secs(60);

/// Whether the manifest `manifest` (its bytes) gates `label`.
pub(crate) fn gates(manifest: &[u8], label: &str) -> bool {
    let text = String::from_utf8_lossy(manifest);
    promptreg::pack::gated_labels(&text)
        .iter()
        .any(|l| l == label)
}

/// One test case that failed against a candidate state.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FailedCase {
    /// The prompt.
    pub prompt: String,
    /// The case's name.
    pub case: String,
    /// The locale rendered in.
    pub locale: String,
    /// The test file, by path in the pack (`tests/goal-running.toml`).
    pub file: String,
    /// Each expectation that failed, and why.
    pub problems: Vec<String>,
}

/// What a gate admitted: how many cases ran, and whether an admin forced
/// the move past failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Admission {
    pub(crate) cases: usize,
    pub(crate) failed: usize,
    pub(crate) forced: bool,
}

impl Admission {
    /// As the revision records it.
    pub(crate) fn summary(&self) -> String {
        let mut summary = format!(
            "{} of {} cases passed",
            self.cases - self.failed,
            self.cases
        );
        if self.forced {
            summary += ", forced by an admin";
        }
        summary
    }
}

/// What a pack's tests gave against one state of it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TestReport {
    /// How many cases ran.
    pub cases: usize,
    /// The cases that failed, in the order they ran.
    pub failed: Vec<FailedCase>,
}

impl TestReport {
    /// Whether every case passed (a pack without tests passes).
    pub fn passed(&self) -> bool {
        self.failed.is_empty()
    }

    /// `9 of 9 cases passed`.
    pub fn summary(&self) -> String {
        format!(
            "{} of {} cases passed",
            self.cases - self.failed.len(),
            self.cases
        )
    }
}

/// Runs the prompt tests of the pack state `files` exactly as a gate
/// does (its files loaded as a pack and installed in a fresh registry,
/// with nothing written), off the async workers and within
/// `limit`: what a page shows before a move, or a script checks.
///
/// # Errors
///
/// [`ErrorKind::InvalidPack`] with the diagnostics when the pack or its
/// tests cannot be read; [`ErrorKind::TestsFailed`] when the run goes
/// past `limit` or stops.
pub async fn test_state(files: PackFiles, limit: Duration) -> Result<TestReport, Error> {
    let run = tokio::task::spawn_blocking(move || run_tests(&files));
    let results = match tokio::time::timeout(limit, run).await {
        Ok(Ok(results)) => results?,
        Ok(Err(panicked)) => {
            return Err(Error::new(
                ErrorKind::TestsFailed,
                format!("the tests stopped: {panicked}"),
            ));
        }
        Err(_) => {
            return Err(Error::new(
                ErrorKind::TestsFailed,
                format!(
                    "the tests ran past {} s; make them faster",
                    limit.as_secs_f64()
                ),
            ));
        }
    };
    Ok(TestReport {
        cases: results.len(),
        failed: results
            .iter()
            .filter(|r| !r.passed())
            .map(failed_case)
            .collect(),
    })
}

/// Runs the tests of `files`, the candidate state of gated `label` (see
/// [`test_state`]). With `forced`, failing cases are admitted (counted);
/// tests that cannot be read, or a run past the limit, never are.
///
/// # Errors
///
/// [`ErrorKind::TestsFailed`] with every failing case (or the diagnostics
/// of tests that do not load), naming the label.
pub(crate) async fn admit(
    files: PackFiles,
    label: &str,
    forced: bool,
    limit: Duration,
) -> Result<Admission, Error> {
    let report = test_state(files, limit)
        .await
        .map_err(|e| refuse_unrun(label, e))?;
    let admission = Admission {
        cases: report.cases,
        failed: report.failed.len(),
        forced,
    };
    if report.passed() || forced {
        return Ok(admission);
    }
    Err(Error::tests_failed(
        format!(
            "label `{label}` is gated: {} of {} test cases fail against the state it would serve; nothing moved (an admin may force the move, giving a reason)",
            report.failed.len(),
            report.cases
        ),
        report.failed,
    ))
}

/// The pack's tests run against `files`, as `promptreg test` runs them
/// in a folder holding those files, from memory: files are named by their
/// path in the pack.
fn run_tests(files: &PackFiles) -> Result<Vec<CaseResult>, Error> {
    let pack = files.to_pack("")?;
    let texts = files
        .iter()
        .filter_map(|(path, bytes)| Some((path, std::str::from_utf8(bytes).ok()?)));
    let tests = PromptTests::from_files(&pack, texts).map_err(Error::invalid_pack)?;
    let registry = PromptRegistry::new();
    pack.install(&registry).map_err(Error::invalid_pack)?;
    Ok(tests.run(&registry))
}

fn failed_case(result: &CaseResult) -> FailedCase {
    FailedCase {
        prompt: result.prompt.to_string(),
        case: result.case.clone(),
        locale: result.locale.to_string(),
        file: result.file.display().to_string(),
        problems: result
            .failures
            .iter()
            .map(|f| format!("{}: {}", f.expectation, f.message))
            .collect(),
    }
}

/// Tests that cannot be read or run fail the gate closed, with their
/// diagnostics.
fn refuse_unrun(label: &str, e: Error) -> Error {
    let why = match e.kind() {
        ErrorKind::TestsFailed => e.to_string(),
        _ => format!("the tests of the state it would serve cannot be read: {e}"),
    };
    let mut refused = Error::new(
        ErrorKind::TestsFailed,
        format!("label `{label}` is gated and {why}: nothing moved"),
    );
    refused.set_diagnostics(e.diagnostics().to_vec());
    refused
}
