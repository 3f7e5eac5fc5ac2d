//! Python callables as renderers, and the context of a render from Python.
//!
//! A render from Python releases the GIL while the library composes (so
//! renders from many threads run at once) and builds a [`PyRenderCx`]: the
//! object passed as `ctx`, and the first failure of a Python renderer. A
//! Python renderer is a [`Renderer`] of that context type: it attaches to
//! the interpreter, calls the callable with `(ctx, locale)` (or fewer
//! arguments when it takes fewer), and returns its `str`.
//!
//! A callable that raises, or returns something other than a `str`, stops
//! the render: the failure is kept in the context and the renderer unwinds
//! with [`resume_unwind`], which the library turns into an error naming
//! the id and the part (`RendererPanicked`) without calling the panic hook,
//! so nothing is printed. The render's caller then raises a `RenderError`
//! whose `__cause__` is the Python exception.

use std::panic::resume_unwind;
use std::sync::{Mutex, PoisonError};

use promptreg::{Locale, Renderer};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use serde::Serialize;

use crate::errors::{type_error, type_name};
use crate::py_data;

/// Why a renderer produced nothing while Python finalizes.
const SHUTTING_DOWN: &str = "the interpreter is shutting down";

/// A Python callable and how many of `(ctx, locale)` it takes.
struct Callable {
    function: Py<PyAny>,
    arity: usize,
}

/// A renderer argument: a `str`, or a callable `(ctx, locale) -> str`.
pub(crate) fn renderer(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Renderer> {
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(Renderer::text(text.to_cow()?.into_owned()));
    }
    if !value.is_callable() {
        return Err(type_error(
            name,
            "a str or a callable `(ctx, locale) -> str`",
            value,
        ));
    }
    let callable = Callable {
        function: value.clone().unbind(),
        arity: arity(value),
    };
    Ok(Renderer::from_fn(
        move |cx: &PyRenderCx, locale: &Locale| cx.call(&callable, locale),
    ))
}

/// A list of renderers (pinned blocks), each checked.
pub(crate) fn renderers(value: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Vec<Renderer>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(Vec::new());
    };
    if value.is_instance_of::<PyString>() {
        return Err(type_error(
            name,
            "a list of str or callables (a single str is not a list)",
            value,
        ));
    }
    let mut out = Vec::new();
    for (i, item) in value
        .try_iter()
        .map_err(|_| type_error(name, "a list of str or callables", value))?
        .enumerate()
    {
        out.push(renderer(&item?, &format!("{name}[{i}]"))?);
    }
    Ok(out)
}

/// How many of `(ctx, locale)` a callable takes: both, unless its
/// signature says it takes fewer (`lambda: "..."`, `lambda ctx: ...`).
fn arity(value: &Bound<'_, PyAny>) -> usize {
    let py = value.py();
    let counted = || -> PyResult<usize> {
        let inspect = py.import("inspect")?;
        let signature = inspect.call_method1("signature", (value,))?;
        let kind = inspect.getattr("Parameter")?;
        let positional = [
            kind.getattr("POSITIONAL_ONLY")?,
            kind.getattr("POSITIONAL_OR_KEYWORD")?,
        ];
        let variadic = kind.getattr("VAR_POSITIONAL")?;
        let mut count = 0;
        for parameter in signature
            .getattr("parameters")?
            .call_method0("values")?
            .try_iter()?
        {
            let parameter_kind = parameter?.getattr("kind")?;
            if parameter_kind.eq(&variadic)? {
                return Ok(2);
            }
            if positional
                .iter()
                .any(|k| parameter_kind.eq(k).unwrap_or(false))
            {
                count += 1;
            }
        }
        Ok(count.min(2))
    };
    // A callable without a signature Python can read (some built-ins)
    // gets both arguments.
    counted().unwrap_or(2)
}

/// The context of a render from Python: the `ctx` object and the first
/// failure of a Python renderer.
pub(crate) struct PyRenderCx {
    ctx: Py<PyAny>,
    failure: Mutex<Option<PyErr>>,
}

impl PyRenderCx {
    /// The context of a render with `ctx` (`None` when left out).
    pub(crate) fn new(ctx: Py<PyAny>) -> Self {
        PyRenderCx {
            ctx,
            failure: Mutex::new(None),
        }
    }

    /// The exception that stopped the render, if a Python renderer raised
    /// it.
    pub(crate) fn take_failure(&self) -> Option<PyErr> {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    fn call(&self, callable: &Callable, locale: &Locale) -> String {
        let called = Python::try_attach(|py| self.try_call(py, callable, locale));
        let failure = match called {
            Some(Ok(text)) => return text,
            Some(Err(failure)) => failure,
            // The interpreter is shutting down: no callable can run.
            None => resume_unwind(Box::new(SHUTTING_DOWN.to_owned())),
        };
        let message = Python::try_attach(|py| describe(py, &failure))
            .unwrap_or_else(|| SHUTTING_DOWN.to_owned());
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(failure);
        resume_unwind(Box::new(message))
    }

    fn try_call(&self, py: Python<'_>, callable: &Callable, locale: &Locale) -> PyResult<String> {
        let function = callable.function.bind(py);
        let ctx = self.ctx.bind(py);
        let result = match callable.arity {
            0 => function.call0()?,
            1 => function.call1((ctx,))?,
            _ => function.call1((ctx, locale.as_str()))?,
        };
        match result.cast::<PyString>() {
            Ok(text) => Ok(text.to_cow()?.into_owned()),
            Err(_) => Err(PyTypeError::new_err(format!(
                "a renderer must return a str, not {}",
                type_name(&result)
            ))),
        }
    }
}

/// The sentence that ends the library's message ("... failed while
/// rendering for `en`: it raised ValueError: boom"), cut short: the whole
/// exception stays in `__cause__`.
fn describe(py: Python<'_>, failure: &PyErr) -> String {
    const MAX: usize = 300;
    let kind = failure
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an exception".to_owned());
    let text = failure
        .value(py)
        .str()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let shown = if text.is_empty() {
        kind
    } else {
        format!("{kind}: {text}")
    };
    format!("it raised {}", promptreg::abbreviate(&shown, MAX))
}

/// Templates (a pack's prompt files) see the context as data: only they
/// walk it, once per render (see [`py_data`]).
impl Serialize for PyRenderCx {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Python::try_attach(|py| py_data::serialize_context(self.ctx.bind(py), serializer))
            .unwrap_or_else(|| Err(serde::ser::Error::custom(SHUTTING_DOWN)))
    }
}
