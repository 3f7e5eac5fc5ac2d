//! Result objects as Python reads them: frozen classes whose fields are
//! attributes, shown and compared as dataclasses are
//! (`Diagnostic(severity='error', code='invalid-mode', ...)`).

use pyo3::prelude::*;

/// `Name(field=repr, ...)`.
pub(crate) fn repr(value: &Bound<'_, PyAny>, name: &str, fields: &[&str]) -> PyResult<String> {
    let mut out = format!("{name}(");
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(field);
        out.push('=');
        out.push_str(&value.getattr(*field)?.repr()?.to_string());
    }
    out.push(')');
    Ok(out)
}

/// Whether `other` is of the same class with equal fields; Python's
/// `NotImplemented` when it is of another class.
pub(crate) fn eq(
    value: &Bound<'_, PyAny>,
    other: &Bound<'_, PyAny>,
    fields: &[&str],
) -> PyResult<Py<PyAny>> {
    let py = value.py();
    if !other.get_type().is(value.get_type()) {
        return Ok(py.NotImplemented());
    }
    for field in fields {
        if !value.getattr(*field)?.eq(other.getattr(*field)?)? {
            return Ok(false.into_pyobject(py)?.to_owned().into_any().unbind());
        }
    }
    Ok(true.into_pyobject(py)?.to_owned().into_any().unbind())
}

/// Gives a `#[pyclass]` of named fields a dataclass's `__repr__` and
/// `__eq__`, and any other methods listed after the fields.
macro_rules! record {
    ($ty:ident [$($field:ident),* $(,)?] $({ $($methods:tt)* })?) => {
        #[pyo3::pymethods]
        impl $ty {
            fn __repr__(slf: &pyo3::Bound<'_, Self>) -> pyo3::PyResult<String> {
                $crate::record::repr(slf.as_any(), stringify!($ty), &[$(stringify!($field)),*])
            }

            fn __eq__(
                slf: &pyo3::Bound<'_, Self>,
                other: &pyo3::Bound<'_, pyo3::PyAny>,
            ) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::record::eq(slf.as_any(), other, &[$(stringify!($field)),*])
            }

            $($($methods)*)?
        }
    };
}

pub(crate) use record;

/// A JSON value as Python data (dicts, lists, str, int, float, bool,
/// `None`).
pub(crate) fn json_to_py(py: Python<'_>, value: &serde_json::Value) -> PyResult<Py<PyAny>> {
    Ok(pythonize::pythonize(py, value)?.unbind())
}

/// An optional JSON value as Python data, `None` when absent.
pub(crate) fn optional_json_to_py(
    py: Python<'_>,
    value: Option<serde_json::Value>,
) -> PyResult<Py<PyAny>> {
    match value {
        Some(value) => json_to_py(py, &value),
        None => Ok(py.None()),
    }
}
