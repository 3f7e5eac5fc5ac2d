//! `watch`: following the files and reloading, with a JavaScript callback
//! called on the JavaScript thread through a thread-safe function.

use promptreg::prelude::*;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use napi::bindgen_prelude::{Function, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Result, Status, ValueType};
use napi_derive::napi;
use promptreg::{DEFAULT_DEBOUNCE, WatchHandle};

use crate::diagnostic::{Diagnostic, LoadReport};
use crate::errors::{OrThrow, throw_type_error};
use crate::handle::{Kept, Shared};
use crate::js::type_of;

/// What a reload started by `watch` did.
#[napi(object)]
pub struct ReloadEvent {
    /// `reloaded`: the new files are in force; `failed`: they do not load
    /// and the previous configuration stays in force.
    #[napi(ts_type = "'reloaded' | 'failed'")]
    pub kind: String,
    /// For `reloaded`: the keys whose configuration changed and the
    /// warnings.
    pub report: Option<LoadReport>,
    /// For `failed`: why.
    pub error: Option<ReloadError>,
}

/// Why a reload failed.
#[napi(object)]
pub struct ReloadError {
    /// The library's kind (`config`, ...).
    pub code: String,
    /// The first problem, with a count of the others.
    pub message: String,
    /// Every problem.
    pub diagnostics: Vec<Diagnostic>,
}

/// Options of `watch`.
#[napi(object)]
pub struct WatchOptions {
    /// How long the files must stay quiet before a reload, in
    /// milliseconds (default 100).
    pub debounce_ms: Option<u32>,
}

/// A running watch: `close()` stops it. An open watcher keeps the process
/// alive, as `fs.watch` does.
#[napi]
pub struct Watcher {
    slot: WatchSlot,
}

/// The handle of one watch, shared between the registry (which keeps it
/// running while JavaScript holds no reference) and its `Watcher`.
type WatchSlot = Arc<Mutex<Option<WatchHandle>>>;

#[napi]
impl Watcher {
    /// Stops following the files and waits for the watcher's thread to
    /// end. Closing twice does nothing.
    #[napi]
    pub fn close(&self) {
        let handle = self
            .slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(handle);
    }

    /// Whether the watcher is still following the files.
    #[napi(getter)]
    pub fn is_open(&self) -> bool {
        self.slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

impl Kept for Mutex<Option<WatchHandle>> {
    fn is_open(&self) -> bool {
        self.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

type Callback = ThreadsafeFunction<ReloadEvent, (), ReloadEvent, Status, false>;

/// The `callback` argument of `watch`.
pub(crate) fn callback_arg<'env>(
    env: &Env,
    value: Unknown<'env>,
) -> Result<Function<'env, ReloadEvent, ()>> {
    if value.get_type()? != ValueType::Function {
        return Err(throw_type_error(
            env,
            format!(
                "`callback` must be a function `(event) => void`, not {}",
                type_of(&value)
            ),
        ));
    }
    // SAFETY: the value was just checked to be a function.
    unsafe { value.cast() }
}

/// Starts following `shared`'s files, calling `callback` on this thread
/// after each reload that changed something.
pub(crate) fn start(
    env: &Env,
    shared: &Shared,
    callback: Function<'_, ReloadEvent, ()>,
    options: Option<WatchOptions>,
) -> Result<Watcher> {
    let callback: Callback = callback
        .build_threadsafe_function::<ReloadEvent>()
        .callee_handled::<false>()
        .build()?;
    let debounce = options
        .and_then(|o| o.debounce_ms)
        .map_or(DEFAULT_DEBOUNCE, |ms| Duration::from_millis(ms.into()));
    let handle = shared
        .registry
        .watch_with(debounce, move |event| {
            if let Some(event) = to_js(event) {
                callback.call(event, ThreadsafeFunctionCallMode::NonBlocking);
            }
        })
        .or_throw(env)?;
    let slot: WatchSlot = Arc::new(Mutex::new(Some(handle)));
    shared.keep(Arc::clone(&slot) as Arc<dyn Kept>);
    Ok(Watcher { slot })
}

fn to_js(event: promptreg::ReloadEvent) -> Option<ReloadEvent> {
    match event {
        promptreg::ReloadEvent::Reloaded(report) => Some(ReloadEvent {
            kind: "reloaded".to_owned(),
            report: Some(LoadReport::from(report)),
            error: None,
        }),
        promptreg::ReloadEvent::Failed(error) => Some(ReloadEvent {
            kind: "failed".to_owned(),
            report: None,
            error: Some(ReloadError {
                code: error.kind().as_str().to_owned(),
                message: error.to_string(),
                diagnostics: error.diagnostics().iter().map(Diagnostic::from).collect(),
            }),
        }),
        // Kinds added later are not reported until the binding knows them.
        _ => None,
    }
}
