//! CPU-heavy work (building a label's pack to render from, checking a
//! pushed version, rendering) on tokio's blocking threads, a bounded number
//! at a time: the async workers stay free for health checks, cached reads,
//! the event stream and shutdown, whatever one pack costs.
//!
//! Past [`Config::heavy_jobs`](crate::Config::heavy_jobs) running and
//! [`Config::heavy_queue`](crate::Config::heavy_queue) waiting, a request
//! is answered 503 `busy` (with `Retry-After`) instead of piling up; once
//! the server shuts down, work still waiting is refused (`shutting-down`),
//! so only jobs already running are finished.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::http::StatusCode;
use promptreg_store::{Error as StoreError, ErrorKind, TestTurns, Turn};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use crate::problem::{Problem, ProblemCode};

/// The bounded pool of heavy work.
pub(crate) struct HeavyWork {
    /// One permit per job running or waiting: none left means busy.
    admitted: Arc<Semaphore>,
    /// One permit per job running.
    running: Arc<Semaphore>,
    limits: (usize, usize),
    shutdown: watch::Receiver<bool>,
}

/// A place among the running jobs, held until the job is done.
pub(crate) struct Slot {
    _admitted: OwnedSemaphorePermit,
    _running: OwnedSemaphorePermit,
}

impl HeavyWork {
    /// `jobs` at once (at least one), `queue` more waiting.
    pub(crate) fn new(jobs: usize, queue: usize, shutdown: watch::Receiver<bool>) -> HeavyWork {
        let jobs = jobs.max(1);
        HeavyWork {
            admitted: Arc::new(Semaphore::new(jobs.saturating_add(queue))),
            running: Arc::new(Semaphore::new(jobs)),
            limits: (jobs, queue),
            shutdown,
        }
    }

    /// Waits for a place among the running jobs: `busy` at once when the
    /// queue is full, `shutting-down` when the server stops meanwhile.
    pub(crate) async fn slot(&self) -> Result<Slot, Problem> {
        let admitted = Arc::clone(&self.admitted)
            .try_acquire_owned()
            .map_err(|_| self.busy())?;
        let running = Arc::clone(&self.running).acquire_owned();
        tokio::select! {
            biased;
            () = stopped(self.shutdown.clone()) => Err(shutting_down()),
            // The semaphore is never closed.
            Ok(running) = running => Ok(Slot { _admitted: admitted, _running: running }),
        }
    }

    /// Runs `job` on a blocking thread once it has a [`slot`](Self::slot).
    /// A request that gives up (a timeout, a client gone) leaves a running
    /// job to finish, still counted: the bound is on the work, not on the
    /// requests.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Problem> {
        let slot = self.slot().await?;
        let done = tokio::task::spawn_blocking(move || {
            let _slot = slot;
            job()
        });
        match done.await {
            Ok(value) => Ok(value),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Err(shutting_down()),
        }
    }

    fn busy(&self) -> Problem {
        let (jobs, queue) = self.limits;
        Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ProblemCode::Busy,
            format!(
                "the server is building or rendering as much as it may ({jobs} at once, {queue} waiting): retry shortly"
            ),
        )
    }
}

/// A gate's test run (inside a store write) takes its turn as any heavy
/// job does: a place among the running jobs, or `busy` at once.
impl TestTurns for HeavyWork {
    fn turn(&self) -> Pin<Box<dyn Future<Output = Result<Turn, StoreError>> + Send + '_>> {
        Box::pin(async move {
            match self.slot().await {
                Ok(slot) => Ok(Box::new(slot) as Turn),
                Err(refused) => Err(StoreError::new(
                    ErrorKind::Busy,
                    refused.details().detail.clone(),
                )),
            }
        })
    }
}

/// Completes when the server starts shutting down.
async fn stopped(mut shutdown: watch::Receiver<bool>) {
    if shutdown.wait_for(|stop| *stop).await.is_err() {
        // The server's state (the sender) is gone only with the pool.
        std::future::pending::<()>().await;
    }
}

fn shutting_down() -> Problem {
    Problem::new(
        StatusCode::SERVICE_UNAVAILABLE,
        ProblemCode::ShuttingDown,
        "the server is shutting down: retry on another instance or once it is back",
    )
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    /// Occupies the one place of `pool` with a job that runs until the
    /// returned sender says so; returns once the job runs.
    async fn occupy(
        pool: &Arc<HeavyWork>,
    ) -> (
        tokio::task::JoinHandle<Result<(), Problem>>,
        mpsc::Sender<()>,
    ) {
        let (started, has_started) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let job = tokio::spawn({
            let pool = Arc::clone(pool);
            async move {
                pool.run(move || {
                    let _ = started.send(());
                    let _ = released.recv();
                })
                .await
            }
        });
        tokio::task::spawn_blocking(move || has_started.recv())
            .await
            .unwrap()
            .unwrap();
        (job, release)
    }

    #[tokio::test]
    async fn past_the_running_and_waiting_jobs_a_request_is_busy_and_the_rest_complete() {
        let (_stop, shutdown) = watch::channel(false);
        let pool = Arc::new(HeavyWork::new(1, 1, shutdown));
        let (first, release) = occupy(&pool).await;
        let second = tokio::spawn({
            let pool = Arc::clone(&pool);
            async move { pool.run(|| 2).await }
        });
        // The second waits (the queue holds one); a third finds no place.
        while pool.admitted.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        let busy = pool.run(|| 3).await.unwrap_err();
        assert_eq!(busy.details().code, "busy");
        assert_eq!(busy.details().status, 503);
        assert!(
            busy.details().detail.contains("1 at once, 1 waiting"),
            "{busy:?}"
        );
        release.send(()).unwrap();
        first.await.unwrap().unwrap();
        assert_eq!(second.await.unwrap().unwrap(), 2);
        assert_eq!(pool.run(|| 4).await.unwrap(), 4);
    }

    #[tokio::test]
    async fn at_shutdown_waiting_work_is_refused_and_running_work_finishes() {
        let (stop, shutdown) = watch::channel(false);
        let pool = Arc::new(HeavyWork::new(1, 4, shutdown));
        let (running, release) = occupy(&pool).await;
        let waiting = tokio::spawn({
            let pool = Arc::clone(&pool);
            async move { pool.run(|| ()).await }
        });
        while pool.admitted.available_permits() > 3 {
            tokio::task::yield_now().await;
        }
        stop.send_replace(true);
        let refused = waiting.await.unwrap().unwrap_err();
        assert_eq!(refused.details().code, "shutting-down");
        release.send(()).unwrap();
        running.await.unwrap().unwrap();
    }
}
