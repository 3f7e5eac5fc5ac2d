//! The watchers and followers still running, so that each runs until it is
//! closed (as a thread does, whatever holds its handle) and all are closed
//! before the interpreter finalizes (`close_all`, which the package
//! registers with `atexit`).
//!
//! A watcher's or follower's thread calls Python (the callbacks) holding
//! the GIL: stopping one waits for its thread, so every stop here releases
//! the GIL first.

use std::sync::{Arc, Mutex, PoisonError};

use pyo3::prelude::*;

/// Something running that can be stopped.
pub(crate) trait Running: Send + Sync {
    /// Stops it and waits for its thread; closing twice does nothing.
    fn close(&self);
    /// Whether it still runs.
    fn is_open(&self) -> bool;
}

static RUNNING: Mutex<Vec<Arc<dyn Running>>> = Mutex::new(Vec::new());

/// Keeps `running` until it is closed, forgetting the closed ones.
pub(crate) fn keep(running: Arc<dyn Running>) {
    let mut all = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
    all.retain(|r| r.is_open());
    all.push(running);
}

/// Closes every watcher and follower of the process.
#[pyfunction]
pub fn close_all(py: Python<'_>) {
    let all = std::mem::take(&mut *RUNNING.lock().unwrap_or_else(PoisonError::into_inner));
    py.detach(|| {
        for running in all {
            running.close();
        }
    });
}
