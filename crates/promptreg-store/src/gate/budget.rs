//! What a test run may still spend (CPU time, wall time) and whether its
//! caller is still there, checked between its cases.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::TestLimits;
use crate::error::{Error, ErrorKind};

/// What a run may still spend, checked between its cases.
pub(super) struct Budget {
    pub(super) limits: TestLimits,
    started: Instant,
    /// The running thread's CPU time when the run started on it (a
    /// blocking thread serves many jobs), once known.
    cpu_at_start: Option<Option<Duration>>,
    /// Set when the caller has gone.
    stopped: Arc<AtomicBool>,
}

/// Why a run stopped before its last case.
#[derive(Debug, Clone, Copy)]
pub(super) enum Spent {
    Cpu,
    Wall,
    Stopped,
}

impl Budget {
    pub(super) fn start(limits: TestLimits) -> Budget {
        Budget {
            limits,
            started: Instant::now(),
            cpu_at_start: None,
            stopped: Arc::new(AtomicBool::new(false)),
        }
    }

    /// A guard that stops the run when dropped: the caller's future holds
    /// it, so a request that ends stops its run.
    pub(super) fn stop_on_drop(&self) -> StopOnDrop {
        StopOnDrop(Arc::clone(&self.stopped))
    }

    pub(super) fn spent(&mut self) -> Option<Spent> {
        if self.stopped.load(Ordering::Relaxed) {
            return Some(Spent::Stopped);
        }
        if self.started.elapsed() > self.limits.wall {
            return Some(Spent::Wall);
        }
        let at_start = *self.cpu_at_start.get_or_insert_with(thread_cpu_time);
        match (at_start, thread_cpu_time()) {
            (Some(start), Some(now)) if now.saturating_sub(start) > self.limits.cpu => {
                Some(Spent::Cpu)
            }
            _ => None,
        }
    }
}

impl Spent {
    pub(super) fn error(self, limits: TestLimits) -> Error {
        let detail = match self {
            Spent::Cpu => format!(
                "the tests used more than {} s of CPU time; make them faster",
                limits.cpu.as_secs_f64()
            ),
            Spent::Wall => format!(
                "the tests ran past {} s; make them faster",
                limits.wall.as_secs_f64()
            ),
            Spent::Stopped => "the tests were stopped: the request that ran them ended".to_owned(),
        };
        Error::new(ErrorKind::TestsFailed, detail)
    }
}

pub(super) struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The CPU time the calling thread has used, where the platform says.
#[cfg(unix)]
fn thread_cpu_time() -> Option<Duration> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec for the call's duration.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    (status == 0).then(|| Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
}

/// Elsewhere a run is bounded by wall time alone.
#[cfg(not(unix))]
fn thread_cpu_time() -> Option<Duration> {
    None
}
