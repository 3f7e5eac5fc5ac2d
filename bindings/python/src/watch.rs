//! `watch`: following the files and reloading, with a Python callback
//! called on the watcher's thread.

use promptreg::prelude::*;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use promptreg::{DEFAULT_DEBOUNCE, WatchHandle};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::diagnostic::{Diagnostic, LoadReport, diagnostics};
use crate::errors::{OrRaise, type_error};
use crate::record::record;
use crate::running::{self, Running};

/// What a reload started by `watch` did.
#[pyclass(frozen, get_all, module = "promptreg")]
pub struct ReloadEvent {
    /// `reloaded`: the new files are in force; `failed`: they do not load
    /// and the previous configuration stays in force.
    pub kind: String,
    /// For `reloaded`: the keys whose configuration changed and the
    /// warnings.
    pub report: Option<LoadReport>,
    /// For `failed`: the library's kind (`config`, ...), as a
    /// `PromptregError`'s `code`.
    pub code: Option<String>,
    /// For `failed`: the first problem, with a count of the others.
    pub message: Option<String>,
    /// For `failed`: every problem.
    pub diagnostics: Vec<Diagnostic>,
}

record!(ReloadEvent[kind, report, code, message, diagnostics]);

/// A running watch: `close()` stops it.
#[pyclass(frozen, module = "promptreg")]
pub struct Watcher {
    slot: Arc<WatchSlot>,
}

/// The handle of one watch while it runs.
struct WatchSlot(Mutex<Option<WatchHandle>>);

impl Running for WatchSlot {
    fn close(&self) {
        let handle = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        drop(handle);
    }

    fn is_open(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

#[pymethods]
impl Watcher {
    /// Stops following the files and waits for the watcher's thread to
    /// end. Closing twice does nothing.
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.slot.close());
    }

    /// Whether the watcher is still following the files.
    #[getter]
    fn is_open(&self) -> bool {
        self.slot.is_open()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _kind: Option<&Bound<'_, PyAny>>,
        _value: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) {
        self.close(py);
    }
}

/// A duration argument in seconds: finite and above 0.
pub(crate) fn seconds(value: f64, name: &str) -> PyResult<Duration> {
    if !value.is_finite() || value <= 0.0 {
        return Err(PyValueError::new_err(format!(
            "`{name}` must be a number of seconds above 0, not {value}"
        )));
    }
    Duration::try_from_secs_f64(value)
        .map_err(|_| PyValueError::new_err(format!("`{name}` is too long: {value} seconds")))
}

/// Starts following the files of `registry`, calling `callback` after each
/// reload that changed something.
pub(crate) fn start(
    registry: &promptreg::PromptRegistry,
    callback: &Bound<'_, PyAny>,
    debounce: Option<f64>,
) -> PyResult<Watcher> {
    if !callback.is_callable() {
        return Err(type_error(
            "callback",
            "a callable `(event: ReloadEvent) -> None`",
            callback,
        ));
    }
    let debounce = match debounce {
        Some(value) => seconds(value, "debounce")?,
        None => DEFAULT_DEBOUNCE,
    };
    let callback = callback.clone().unbind();
    let handle = registry
        .watch_with(debounce, move |event| {
            let Some(event) = to_py(event) else {
                return;
            };
            // A callback that raises is reported as Python reports errors
            // in threads, and the watch goes on.
            Python::try_attach(|py| {
                if let Err(error) = callback.call1(py, (event,)) {
                    error.write_unraisable(py, Some(callback.bind(py)));
                }
            });
        })
        .or_raise()?;
    let slot = Arc::new(WatchSlot(Mutex::new(Some(handle))));
    running::keep(slot.clone());
    Ok(Watcher { slot })
}

fn to_py(event: promptreg::ReloadEvent) -> Option<ReloadEvent> {
    match event {
        promptreg::ReloadEvent::Reloaded(report) => Some(ReloadEvent {
            kind: "reloaded".to_owned(),
            report: Some(LoadReport::from(report)),
            code: None,
            message: None,
            diagnostics: Vec::new(),
        }),
        promptreg::ReloadEvent::Failed(error) => Some(ReloadEvent {
            kind: "failed".to_owned(),
            report: None,
            code: Some(error.kind().as_str().to_owned()),
            message: Some(error.to_string()),
            diagnostics: diagnostics(error.diagnostics()),
        }),
        // Kinds added later are not reported until the package knows them.
        _ => None,
    }
}
