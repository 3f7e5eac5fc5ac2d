//! The package's exceptions, and the library's errors raised as them.
//!
//! Every exception is a [`PromptregError`] carrying the library's error as
//! data: `code` (the kebab-case kind: `invalid-id`, `unknown-id`,
//! `config`, ...), and, where known, `id`, `locale`, `suggestion` and
//! `diagnostics` (a list of [`Diagnostic`]). A few kinds have their own
//! subclass, so that an application can catch what it handles:
//! [`UnknownPromptError`], [`ConfigError`], [`RenderError`],
//! [`RemoteError`] and [`SignatureError`]. An argument of the wrong type
//! is a plain `TypeError`, as Python's own functions raise.

use promptreg::ErrorKind;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use pyo3::{PyTypeInfo, create_exception};

use crate::diagnostic::Diagnostic;

create_exception!(
    promptreg,
    PromptregError,
    PyException,
    "The base of every promptreg exception: `code` says which, and `id`, `locale`, `suggestion` and `diagnostics` say what and where."
);
create_exception!(
    promptreg,
    UnknownPromptError,
    PromptregError,
    "No prompt is registered under the id (`code` is `unknown-id`); `suggestion` names the closest one."
);
create_exception!(
    promptreg,
    ConfigError,
    PromptregError,
    "A pack, a settings file or a prompt file is invalid (`code` is `config`): every problem is in `diagnostics`, each with its file, line, column and key path."
);
create_exception!(
    promptreg,
    RenderError,
    PromptregError,
    "A render failed: a renderer raised (the exception is this one's `__cause__`) or returned something other than a `str`, or a template failed."
);
create_exception!(
    promptreg,
    RemoteError,
    PromptregError,
    "A server or a bundle could not be used (`code` is `remote`)."
);
create_exception!(
    promptreg,
    SignatureError,
    PromptregError,
    "A bundle's signature is missing or not from a trusted key (`code` is `signature`)."
);

/// Adds the exceptions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PromptregError", py.get_type::<PromptregError>())?;
    m.add("UnknownPromptError", py.get_type::<UnknownPromptError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("RenderError", py.get_type::<RenderError>())?;
    m.add("RemoteError", py.get_type::<RemoteError>())?;
    m.add("SignatureError", py.get_type::<SignatureError>())?;
    Ok(())
}

/// `error` as the exception of its kind.
pub(crate) fn to_py(error: &promptreg::Error) -> PyErr {
    raise_as(error, error.to_string(), None)
}

/// `error` raised with `message`, and `cause` as its `__cause__`.
pub(crate) fn raise_as(error: &promptreg::Error, message: String, cause: Option<PyErr>) -> PyErr {
    Python::attach(|py| {
        let exception = match error.kind() {
            ErrorKind::UnknownId => UnknownPromptError::new_err(message),
            ErrorKind::Config => ConfigError::new_err(message),
            ErrorKind::RendererPanicked | ErrorKind::Template | ErrorKind::ContextType => {
                RenderError::new_err(message)
            }
            ErrorKind::Remote => RemoteError::new_err(message),
            ErrorKind::Signature => SignatureError::new_err(message),
            _ => PromptregError::new_err(message),
        };
        if let Err(failed) = annotate(py, &exception, error) {
            return failed;
        }
        if let Some(cause) = cause {
            exception.set_cause(py, Some(cause));
        }
        exception
    })
}

/// Sets the error's data as attributes of the exception.
fn annotate(py: Python<'_>, exception: &PyErr, error: &promptreg::Error) -> PyResult<()> {
    let value = exception.value(py);
    value.setattr("code", error.kind().as_str())?;
    value.setattr("id", error.id())?;
    value.setattr("locale", error.locale())?;
    value.setattr("suggestion", error.suggestion())?;
    let diagnostics: Vec<Diagnostic> = error.diagnostics().iter().map(Diagnostic::from).collect();
    value.setattr("diagnostics", PyList::new(py, diagnostics)?)?;
    Ok(())
}

/// A `TypeError` for an argument of the wrong type.
pub(crate) fn type_error(name: &str, expected: &str, got: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "`{name}` must be {expected}, not {}",
        type_name(got)
    ))
}

/// The name of a value's type, as Python shows it (`int`, `NoneType`).
pub(crate) fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|name| name.to_string())
        .unwrap_or_else(|_| "an object".to_owned())
}

/// Turns a library result into a Python one, raising the error.
pub(crate) trait OrRaise<T> {
    /// The value, or the error as its exception.
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, promptreg::Error> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(|e| to_py(&e))
    }
}

/// Whether `error` must go through as it is: an interrupt or an exit
/// (not an `Exception`), which a render must not turn into its own error.
pub(crate) fn passes_through(py: Python<'_>, error: &PyErr) -> bool {
    !error.is_instance(py, &PyException::type_object(py))
}
