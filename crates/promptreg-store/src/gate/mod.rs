//! Gates: a label the pack's manifest gates (`[release] gated`) moves only
//! to a state whose prompt tests pass. The tests run against the candidate
//! state exactly as it would be served: its files loaded as a pack (from
//! memory, as from a folder holding them) and installed in a fresh
//! registry.
//!
//! No test run holds a transaction. A write that would move a gated label
//! to a state not yet tested gives up its transaction with that state
//! (`OpError::Untested`); the store runs the tests outside any lock and
//! writes again with the result ([`Tested`]). The second write commits
//! only if the label would reach the very state tested (the state's
//! digest, compared in the writing transaction): if another change moved
//! the label meanwhile, the new candidate is tested in turn, up to
//! [`MAX_TEST_RUNS`] times, then the write is refused naming the change
//! that won. What is committed is always exactly what was tested.
//!
//! A run is bounded by the thread's CPU time and by wall time
//! ([`TestLimits`]), stops between cases once its caller has gone (a
//! request that ended), and takes its turn among the host's other heavy
//! work ([`TestTurns`]).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use promptreg::PromptRegistry;

use promptreg::testing::CaseResult;

use crate::backend::OpError;
use crate::error::{Error, ErrorKind};
use crate::files::PackFiles;
use crate::model::{Revision, Timestamp};

mod budget;
pub(crate) mod rules;

use budget::{Budget, Spent};

/// The longest a gate's test run may compute (its thread's CPU time);
/// past it the gate fails.
pub const GATE_TIME: Duration = Duration::from_secs(60);

/// How many times one write tests a gated label's candidate state before
/// it gives up on a label others keep moving.
pub(crate) const MAX_TEST_RUNS: usize = 3;

/// How long a test run may take: the CPU time of the thread running it
/// (what the run costs the host) and the wall time (what its caller
/// waits once the run started). Past either the run stops between two
/// cases and fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TestLimits {
    /// The CPU time of the running thread.
    pub cpu: Duration,
    /// The wall time from the call.
    pub wall: Duration,
}

impl TestLimits {
    /// A gate's: [`GATE_TIME`] of CPU, three times that of wall time (a
    /// busy host slows a run without making it costlier).
    pub const GATE: TestLimits = TestLimits {
        cpu: GATE_TIME,
        wall: Duration::from_secs(GATE_TIME.as_secs() * 3),
    };

    /// At most `time`, of CPU and of wall time alike.
    pub fn within(time: Duration) -> TestLimits {
        TestLimits::new(time, time)
    }

    /// At most `cpu` of the running thread's CPU time and `wall` of wall
    /// time.
    pub fn new(cpu: Duration, wall: Duration) -> TestLimits {
        TestLimits { cpu, wall }
    }
}

/// Where test runs take turns with the host's other heavy work. A server
/// hands the store its own bound of heavy jobs
/// ([`Store::with_test_turns`](crate::Store::with_test_turns)), so a
/// gate's tests count as a render or a build does; a store without one
/// runs them at once.
pub trait TestTurns: Send + Sync {
    /// Waits for a turn, held until the returned value is dropped.
    ///
    /// # Errors
    ///
    /// Whatever refuses the turn (the host is busy or shutting down): the
    /// write that asked for the tests is refused with it, nothing moved.
    fn turn(&self) -> Pin<Box<dyn Future<Output = Result<Turn, Error>> + Send + '_>>;
}

/// A turn among the host's heavy work ([`TestTurns::turn`]), held until
/// dropped.
pub type Turn = Box<dyn Send>;

/// Whether the manifest `manifest` (its bytes) gates `label`: parsed once
/// per manifest version ([`rules`]).
pub(crate) fn gates(manifest: &[u8], label: &str) -> bool {
    rules::rules(manifest).gated().iter().any(|l| l == label)
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
/// with nothing written), on a blocking thread and within `limits`: what a
/// page shows before a move, or a script checks. Dropping the future stops
/// the run before its next case.
///
/// # Errors
///
/// [`ErrorKind::InvalidPack`] with the diagnostics when the pack or its
/// tests cannot be read; [`ErrorKind::TestsFailed`] when the run goes
/// past `limits` or stops.
pub async fn test_state(files: PackFiles, limits: TestLimits) -> Result<TestReport, Error> {
    let budget = Budget::start(limits);
    let stop = budget.stop_on_drop();
    let run = tokio::task::spawn_blocking(move || run_tests(&files, budget));
    let results = match tokio::time::timeout(limits.wall, run).await {
        Ok(Ok(results)) => results?,
        Ok(Err(panicked)) => {
            return Err(Error::new(
                ErrorKind::TestsFailed,
                format!("the tests stopped: {panicked}"),
            ));
        }
        Err(_) => return Err(Spent::Wall.error(limits)),
    };
    drop(stop);
    Ok(TestReport {
        cases: results.len(),
        failed: results
            .iter()
            .filter(|r| !r.passed())
            .map(failed_case)
            .collect(),
    })
}

/// A gated label's candidate state that no test run has admitted yet:
/// what a write gives up its transaction with, for the store to test.
#[derive(Debug)]
pub(crate) struct Candidate {
    pub(crate) label: String,
    /// The state's digest, as its revision would record it.
    pub(crate) digest: String,
    pub(crate) files: PackFiles,
    pub(crate) forced: bool,
    /// Who asked for the move, and why: recorded when the tests refuse it.
    pub(crate) actor: String,
    pub(crate) reason: String,
}

/// The candidate states tested outside the writing transaction, by label
/// and digest: a write admits a gated move only to one of them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tested {
    states: Vec<(String, String, Admission)>,
}

impl Tested {
    /// What the tests of `label` at the state `digest` admitted, if they
    /// ran on that very state.
    pub(crate) fn admission(&self, label: &str, digest: &str) -> Option<Admission> {
        self.states
            .iter()
            .find(|(l, d, _)| l == label && d == digest)
            .map(|(.., admission)| *admission)
    }

    fn runs(&self) -> usize {
        self.states.len()
    }
}

impl crate::Store {
    /// Runs `write`, a transaction that may move gated labels, until it
    /// commits or fails: each time it gives up on an untested candidate,
    /// the candidate's tests run here, outside any transaction, and the
    /// write runs again knowing what they admitted.
    ///
    /// # Errors
    ///
    /// The write's own; [`ErrorKind::TestsFailed`] when the tests refuse
    /// the candidate; [`ErrorKind::Conflict`] naming the newest revision
    /// when the label moved under every one of [`MAX_TEST_RUNS`] runs.
    pub(crate) async fn through_gates<T, Write>(
        &self,
        pack: &str,
        mut write: impl FnMut(Tested) -> Write,
    ) -> Result<T, OpError>
    where
        Write: Future<Output = Result<T, OpError>>,
    {
        let mut tested = Tested::default();
        loop {
            let candidate = match write(tested.clone()).await {
                Err(OpError::Untested(candidate)) => *candidate,
                done => return done,
            };
            if tested.runs() == MAX_TEST_RUNS {
                return Err(self.moved_under_tests(pack, &candidate.label).await);
            }
            let admission = match self.admit_candidate(&candidate).await {
                Ok(admission) => admission,
                Err(refused) => {
                    self.record_refusal(pack, &candidate, &refused).await;
                    return Err(refused.into());
                }
            };
            tested
                .states
                .push((candidate.label, candidate.digest, admission));
        }
    }

    /// Appends a `gate_refused` event for a candidate whose tests failed
    /// (not for one that could not be tested: nothing was judged). The
    /// refusal stands whether or not the event is written.
    async fn record_refusal(&self, pack: &str, candidate: &Candidate, refused: &Error) {
        if refused.kind() != ErrorKind::TestsFailed || refused.failed_cases().is_empty() {
            return;
        }
        let change = crate::events::EventKind::GateRefused {
            label: candidate.label.clone(),
            failed: refused.failed_cases().len() as u64,
            actor: candidate.actor.clone(),
            reason: candidate.reason.clone(),
        };
        // Best effort: a store that cannot be written now still refuses.
        if let Ok(id) = self.pack_id(pack).await
            && let Ok(last) = on_backend!(self, append_events(id, &[change], Timestamp::now()))
        {
            self.published(crate::events::Written {
                value: (),
                last_event: last,
            });
        }
    }

    /// Runs the tests of `candidate` in a turn of the host's heavy work.
    /// With `forced`, failing cases are admitted (counted); tests that
    /// cannot be read, or a run past its limits, never are.
    async fn admit_candidate(&self, candidate: &Candidate) -> Result<Admission, Error> {
        let label = &candidate.label;
        let _turn = self.test_turn().await?;
        let report = test_state(candidate.files.clone(), TestLimits::GATE)
            .await
            .map_err(|e| refuse_unrun(label, e))?;
        let admission = Admission {
            cases: report.cases,
            failed: report.failed.len(),
            forced: candidate.forced,
        };
        if report.passed() || candidate.forced {
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

    /// The refusal of a write whose gated candidate kept changing while
    /// its tests ran, naming the change that won: the pack's newest
    /// revision.
    async fn moved_under_tests(&self, pack: &str, label: &str) -> OpError {
        let winner = match self.newest_pack_revision(pack).await {
            Ok(winner) => winner,
            Err(e) => return OpError::Store(e),
        };
        let by = winner.map_or(String::new(), |r| {
            format!(
                "; the newest change is revision {} of `{}`, by {} ({})",
                r.number, r.label, r.actor, r.reason
            )
        });
        OpError::Store(Error::new(
            ErrorKind::Conflict,
            format!(
                "the state label `{label}` would move to changed while its tests ran, {MAX_TEST_RUNS} times{by}: nothing moved; retry once the pack is quiet"
            ),
        ))
    }

    async fn newest_pack_revision(&self, pack: &str) -> Result<Option<Revision>, Error> {
        let pack_id = self.pack_id(pack).await?;
        let Some((label, number)) = on_backend!(self, newest_pack_revision(pack_id))? else {
            return Ok(None);
        };
        let revisions = on_backend!(self, revisions(pack_id, &label, number..=number))?;
        Ok(revisions.into_iter().next())
    }
}

/// The pack's tests run against `files`, as `promptreg test` runs them
/// in a folder holding those files, from memory: files are named by their
/// path in the pack. Stops between cases once `budget` is spent.
fn run_tests(files: &PackFiles, mut budget: Budget) -> Result<Vec<CaseResult>, Error> {
    let pack = files.to_pack("")?;
    let tests = files.tests(&pack)?;
    let registry = PromptRegistry::new();
    pack.install(&registry).map_err(Error::invalid_pack)?;
    let mut spent = None;
    let results = tests.run_while(&registry, || {
        spent = budget.spent();
        spent.is_none()
    });
    results.ok_or_else(|| spent.unwrap_or(Spent::Stopped).error(budget.limits))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A pack whose one prompt has `n` test cases.
    fn many_cases(n: usize) -> PackFiles {
        let mut files = PackFiles::default();
        files.insert(
            "promptreg.toml",
            "name = \"demo\"\nkeys = [\"greeting\"]\n[user]\nprompts_dir = \".demo/prompts\"\n",
        );
        files.insert("defaults/greeting.md", "Hello.\n");
        let cases: String = (0..n)
            .map(|i| format!("[[case]]\nname = \"c{i}\"\ncontains = \"Hello\"\n"))
            .collect();
        files.insert(
            "tests/greeting.toml",
            format!("prompt = \"greeting\"\n{cases}"),
        );
        files
    }

    #[test]
    fn a_run_whose_caller_left_stops_before_its_next_case() {
        let budget = Budget::start(TestLimits::GATE);
        drop(budget.stop_on_drop());
        let err = run_tests(&many_cases(3), budget).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TestsFailed);
        assert_eq!(
            err.to_string(),
            "the tests were stopped: the request that ran them ended"
        );
    }

    #[test]
    fn a_run_within_its_budget_gives_every_case() {
        let results = run_tests(&many_cases(3), Budget::start(TestLimits::GATE)).unwrap();
        assert_eq!(results.len(), 3);
        assert!(results.iter().all(CaseResult::passed));
    }

    #[cfg(unix)]
    #[test]
    fn a_run_past_its_cpu_time_stops_saying_so() {
        let limits = TestLimits::new(Duration::from_millis(1), Duration::from_secs(600));
        let err = run_tests(&many_cases(5000), Budget::start(limits)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the tests used more than 0.001 s of CPU time; make them faster"
        );
    }
}
