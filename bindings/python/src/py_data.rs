//! A render's context as the data templates read: the Python object walked
//! once by serde, straight into the template engine's values (no
//! intermediate JSON).
//!
//! Dicts and other mappings (keys `str`, or made `str` with `str()`), lists
//! and tuples, `str`, `int`, `float`, `bool` and `None` are data as they
//! are. A dataclass instance is read through `dataclasses.asdict`, an object
//! with `model_dump` (a pydantic model) through `model_dump(mode="json")`.
//! Anything else is refused, naming where it is (`ctx["tasks"][1]`).

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple, PyType};
use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use crate::errors::type_name;

/// How deep data may nest: a cycle (a list holding itself) is an error, not
/// a stack overflow.
const MAX_DEPTH: usize = 128;

/// Serialises the context object of a render. A value that is not data,
/// however deep, fails the whole context: the template engine would keep a
/// nested failure as a value and could print it into the prompt.
pub(crate) fn serialize_context<S: Serializer>(
    ctx: &Bound<'_, PyAny>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let failure = RefCell::new(None);
    let data = PyData {
        value: ctx,
        path: &|| "ctx".to_owned(),
        depth: 0,
        failure: &failure,
    };
    let serialized = data.serialize(serializer);
    match failure.into_inner() {
        Some(message) => Err(S::Error::custom(message)),
        None => serialized,
    }
}

/// A Python object to serialise, where it is in the context, and the first
/// failure of the whole walk.
struct PyData<'a, 'py> {
    value: &'a Bound<'py, PyAny>,
    path: &'a dyn Fn() -> String,
    depth: usize,
    failure: &'a RefCell<Option<String>>,
}

impl Serialize for PyData<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value = self.value;
        let refuse = |why: &str| {
            let message = format!("{} {why}", (self.path)());
            self.failure
                .borrow_mut()
                .get_or_insert_with(|| message.clone());
            S::Error::custom(message)
        };
        if self.depth > MAX_DEPTH {
            return Err(refuse(&format!(
                "nests deeper than {MAX_DEPTH} levels (a cycle?)"
            )));
        }
        if value.is_none() {
            return serializer.serialize_unit();
        }
        if let Ok(text) = value.cast::<PyString>() {
            let text = text
                .to_cow()
                .map_err(|e| refuse(&format!("is not valid text: {e}")))?;
            return serializer.serialize_str(&text);
        }
        if let Ok(flag) = value.cast::<PyBool>() {
            return serializer.serialize_bool(flag.is_true());
        }
        if let Ok(number) = value.cast::<PyInt>() {
            if let Ok(n) = number.extract::<i64>() {
                return serializer.serialize_i64(n);
            }
            if let Ok(n) = number.extract::<u64>() {
                return serializer.serialize_u64(n);
            }
            return Err(refuse("is an integer beyond 64 bits"));
        }
        if let Ok(number) = value.cast::<PyFloat>() {
            return serializer.serialize_f64(number.value());
        }
        if let Ok(dict) = value.cast::<PyDict>() {
            let mut map = serializer.serialize_map(Some(dict.len()))?;
            for (key, item) in dict.iter() {
                self.entry(&mut map, &key, &item)?;
            }
            return map.end();
        }
        if let Ok(list) = value.cast::<PyList>() {
            let mut seq = serializer.serialize_seq(Some(list.len()))?;
            for (i, item) in list.iter().enumerate() {
                seq.serialize_element(&self.child(&item, &|| format!("{}[{i}]", (self.path)())))?;
            }
            return seq.end();
        }
        if let Ok(tuple) = value.cast::<PyTuple>() {
            let mut seq = serializer.serialize_seq(Some(tuple.len()))?;
            for (i, item) in tuple.iter().enumerate() {
                seq.serialize_element(&self.child(&item, &|| format!("{}[{i}]", (self.path)())))?;
            }
            return seq.end();
        }
        let converted = converted(value).map_err(|e| refuse(&format!("could not be read: {e}")))?;
        if let Some(converted) = converted {
            return self.child(&converted, self.path).serialize(serializer);
        }
        if let Ok(mapping) = value.cast::<PyMapping>() {
            let items = mapping
                .items()
                .map_err(|e| refuse(&format!("could not be read: {e}")))?;
            let mut map = serializer.serialize_map(Some(items.len()))?;
            for entry in items.iter() {
                let (key, item): (Bound<'_, PyAny>, Bound<'_, PyAny>) = entry
                    .extract()
                    .map_err(|e| refuse(&format!("could not be read: {e}")))?;
                self.entry(&mut map, &key, &item)?;
            }
            return map.end();
        }
        Err(refuse(&format!(
            "is of type `{}`, which is not data a template can read: pass dicts, lists, str, numbers, bool, None, dataclasses or pydantic models",
            type_name(value)
        )))
    }
}

impl<'py> PyData<'_, 'py> {
    fn child<'b>(
        &'b self,
        value: &'b Bound<'py, PyAny>,
        path: &'b dyn Fn() -> String,
    ) -> PyData<'b, 'py> {
        PyData {
            value,
            path,
            depth: self.depth + 1,
            failure: self.failure,
        }
    }

    fn entry<M: SerializeMap>(
        &self,
        map: &mut M,
        key: &Bound<'py, PyAny>,
        item: &Bound<'py, PyAny>,
    ) -> Result<(), M::Error> {
        let key = match key.cast::<PyString>() {
            Ok(text) => text.to_cow().map(|k| k.into_owned()),
            Err(_) => key.str().map(|k| k.to_string()),
        }
        .map_err(|e| {
            let message = format!("{} has a key that is not text: {e}", (self.path)());
            self.failure
                .borrow_mut()
                .get_or_insert_with(|| message.clone());
            M::Error::custom(message)
        })?;
        let path = || format!("{}[{key:?}]", (self.path)());
        map.serialize_entry(&key, &self.child(item, &path))
    }
}

/// A dataclass instance as a dict, a pydantic model dumped; `None` for
/// anything else.
fn converted<'py>(value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = value.py();
    if value.hasattr("__dataclass_fields__")? && !value.is_instance_of::<PyType>() {
        return py
            .import("dataclasses")?
            .call_method1("asdict", (value,))
            .map(Some);
    }
    if value.hasattr("model_dump")? && !value.is_instance_of::<PyType>() {
        let kwargs = PyDict::new(py);
        kwargs.set_item("mode", "json")?;
        return value.call_method("model_dump", (), Some(&kwargs)).map(Some);
    }
    Ok(None)
}
