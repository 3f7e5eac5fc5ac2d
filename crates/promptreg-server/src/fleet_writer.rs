//! One writer of fleet reports: a report waits while the batch before it
//! commits, and the reports that arrived meanwhile go in the next batch,
//! one transaction. A thousand followers reporting a move at once cost a
//! few transactions, not a thousand; one report alone is written at once.

use promptreg_store::{InstanceReport, Label, ReportOf, Store, Timestamp};
use tokio::sync::{mpsc, oneshot};

use crate::problem::{Problem, ProblemCode};

/// The most reports in one transaction.
const MAX_BATCH: usize = 1000;
/// How many reports may wait for the writer; past them a report waits for
/// a place (bounded by the request timeout).
const QUEUE: usize = 10_000;

/// The handle the report route records through.
pub(crate) struct FleetWriter {
    queue: mpsc::Sender<Job>,
}

struct Job {
    pack: String,
    label: Label,
    report: InstanceReport,
    reporter: String,
    done: oneshot::Sender<Result<(), Problem>>,
}

impl FleetWriter {
    /// Starts the writer on the current runtime; it ends when the handle
    /// is dropped.
    pub(crate) fn start(store: Store) -> FleetWriter {
        let (queue, jobs) = mpsc::channel(QUEUE);
        tokio::spawn(write(store, jobs));
        FleetWriter { queue }
    }

    /// Records `report`, once its batch is committed.
    pub(crate) async fn record(
        &self,
        pack: &str,
        label: &Label,
        report: InstanceReport,
        reporter: &str,
    ) -> Result<(), Problem> {
        let (done, outcome) = oneshot::channel();
        let job = Job {
            pack: pack.to_owned(),
            label: label.clone(),
            report,
            reporter: reporter.to_owned(),
            done,
        };
        let stopped = || {
            Problem::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                ProblemCode::ShuttingDown,
                "the server is stopping: report again to another, or later",
            )
        };
        self.queue.send(job).await.map_err(|_| stopped())?;
        outcome.await.map_err(|_| stopped())?
    }
}

/// Writes what is queued, a batch at a time, until every handle is gone.
async fn write(store: Store, mut jobs: mpsc::Receiver<Job>) {
    while let Some(first) = jobs.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let reports: Vec<ReportOf<'_>> = batch
            .iter()
            .map(|job| ReportOf {
                pack: &job.pack,
                label: &job.label,
                report: &job.report,
                reporter: &job.reporter,
            })
            .collect();
        let outcomes: Vec<Result<(), Problem>> =
            match store.report_instances(&reports, Timestamp::now()).await {
                Ok(outcomes) => outcomes
                    .into_iter()
                    .map(|o| o.map_err(Problem::from))
                    .collect(),
                Err(e) => vec![Err(Problem::from(e)); batch.len()],
            };
        drop(reports);
        for (job, outcome) in batch.into_iter().zip(outcomes) {
            let _ = job.done.send(outcome);
        }
    }
}
