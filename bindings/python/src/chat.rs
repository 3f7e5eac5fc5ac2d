//! Chat prompts from Python: messages declared as `{"role", "content"}`
//! and `{"history": name}` dicts, histories passed to a render as
//! `{name: [{"role", "content"}, ...]}`, rendered messages as OpenAI's
//! chat format, and [`ChatRequest`], the messages with the model settings
//! in OpenAI's and Anthropic's request shapes.

use promptreg::{Chat, ErrorKind, Message, Role};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyMapping, PyString};

use crate::errors::{self, type_error, type_name};
use crate::py_renderer;

/// A dict's value under `key`, `None` when absent or `None`.
fn field<'py>(item: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(item.get_item(key)?.filter(|v| !v.is_none()))
}

/// A `str` value, or a `TypeError` naming it.
fn string(value: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    match value.cast::<PyString>() {
        Ok(text) => Ok(text.to_cow()?.into_owned()),
        Err(_) => Err(type_error(name, "a str", value)),
    }
}

/// The items of a list argument (any iterable but a `str` or a dict).
fn items<'py>(value: &Bound<'py, PyAny>, name: &str, of: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if value.is_instance_of::<PyString>() || value.is_instance_of::<PyDict>() {
        return Err(type_error(name, &format!("a list of {of}"), value));
    }
    value
        .try_iter()
        .map_err(|_| type_error(name, &format!("a list of {of}"), value))?
        .collect()
}

/// A dict item of a list.
fn dict<'a, 'py>(
    value: &'a Bound<'py, PyAny>,
    name: &str,
    of: &str,
) -> PyResult<&'a Bound<'py, PyDict>> {
    value
        .cast::<PyDict>()
        .map_err(|_| type_error(name, of, value))
}

/// The messages argument of `register_chat` and `override_chat`: a list of
/// `{"role", "content"}` (content a renderer) and `{"history": name}`.
pub(crate) fn chat_arg(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Chat> {
    const ITEM: &str = "a message {\"role\", \"content\"} or a placeholder {\"history\": name}";
    let mut chat = Chat::new();
    for (i, item) in items(value, name, "messages and placeholders")?
        .iter()
        .enumerate()
    {
        let name = format!("{name}[{i}]");
        let item = dict(item, &name, ITEM)?;
        chat = match (field(item, "history")?, field(item, "role")?) {
            (Some(_), Some(_)) => {
                return Err(PyTypeError::new_err(format!(
                    "`{name}` must be {ITEM}, not both"
                )));
            }
            (Some(history), None) => {
                chat.history(string(&history, &format!("{name}[\"history\"]"))?)
            }
            (None, Some(role)) => {
                let role = string(&role, &format!("{name}[\"role\"]"))?;
                let content_name = format!("{name}[\"content\"]");
                let content = match field(item, "content")? {
                    Some(content) => py_renderer::renderer(&content, &content_name)?,
                    None => {
                        return Err(PyTypeError::new_err(format!(
                            "`{content_name}` must be a str or a callable `(ctx, locale) -> str`, not missing"
                        )));
                    }
                };
                chat.message(Role::named(&role), content)
            }
            (None, None) => {
                return Err(PyTypeError::new_err(format!("`{name}` must be {ITEM}")));
            }
        };
    }
    Ok(chat)
}

/// Histories as the library takes them, by placeholder name.
pub(crate) type Histories = Vec<(String, Vec<Message>)>;

/// The `history` argument of a chat render: a mapping of placeholder names
/// to lists of `{"role", "content"}`.
pub(crate) fn histories_arg(value: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Histories> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(Vec::new());
    };
    let mapping = value.cast::<PyMapping>().map_err(|_| {
        type_error(
            name,
            "a mapping of placeholder names to lists of messages ({\"conversation\": [...]})",
            value,
        )
    })?;
    let mut histories = Vec::new();
    for entry in mapping.items()?.iter() {
        let (key, messages): (Bound<'_, PyAny>, Bound<'_, PyAny>) = entry.extract()?;
        let key = string(&key, &format!("the keys of `{name}`"))?;
        let name = format!("{name}[{key:?}]");
        let mut history = Vec::new();
        for (i, item) in items(&messages, &name, "messages {\"role\", \"content\"}")?
            .iter()
            .enumerate()
        {
            let name = format!("{name}[{i}]");
            let item = dict(item, &name, "a message {\"role\", \"content\"}")?;
            let role = field(item, "role")?.ok_or_else(|| {
                PyTypeError::new_err(format!("`{name}[\"role\"]` must be a str, not missing"))
            })?;
            let content = field(item, "content")?.ok_or_else(|| {
                PyTypeError::new_err(format!("`{name}[\"content\"]` must be a str, not missing"))
            })?;
            history.push(Message::new(
                Role::named(&string(&role, &format!("{name}[\"role\"]"))?),
                string(&content, &format!("{name}[\"content\"]"))?,
            ));
        }
        histories.push((key, history));
    }
    Ok(histories)
}

/// Histories as the library borrows them.
pub(crate) fn borrowed(histories: &[(String, Vec<Message>)]) -> Vec<(&str, &[Message])> {
    histories
        .iter()
        .map(|(name, messages)| (name.as_str(), messages.as_slice()))
        .collect()
}

/// Messages as OpenAI's chat format: a list of `{"role", "content"}`.
pub(crate) fn messages_to_py<'py>(
    py: Python<'py>,
    messages: &[Message],
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for message in messages {
        let item = PyDict::new(py);
        item.set_item("role", message.role.to_string())?;
        item.set_item("content", &message.content)?;
        list.append(item)?;
    }
    Ok(list)
}

/// A rendered chat prompt ready to send: its messages (OpenAI's chat
/// format) and the model settings and metadata for the locale.
/// `openai()` and `anthropic()` give the keyword arguments of those SDKs'
/// `create` calls.
#[pyclass(frozen, module = "promptreg")]
pub struct ChatRequest {
    pub(crate) id: String,
    pub(crate) messages: Vec<Message>,
    pub(crate) model: Option<serde_json::Value>,
    pub(crate) metadata: Option<serde_json::Value>,
}

impl ChatRequest {
    /// The keyword arguments of a request: the model settings `named`, as
    /// they are, and the others in `extra_body` (left out when none).
    fn request<'py>(&self, py: Python<'py>, named: &[&str]) -> PyResult<Bound<'py, PyDict>> {
        let kwargs = PyDict::new(py);
        let extra = PyDict::new(py);
        for (key, value) in settings(py, self.model.as_ref())?.iter() {
            let is_named = named.iter().any(|n| key.eq(*n).unwrap_or(false));
            if is_named { &kwargs } else { &extra }.set_item(key, value)?;
        }
        if !extra.is_empty() {
            kwargs.set_item("extra_body", extra)?;
        }
        Ok(kwargs)
    }
}

#[pymethods]
impl ChatRequest {
    /// The prompt rendered.
    #[getter]
    fn id(&self) -> &str {
        &self.id
    }

    /// The messages, `[{"role": ..., "content": ...}, ...]`.
    #[getter]
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        messages_to_py(py, &self.messages)
    }

    /// The model settings for the locale (`{"model": ..., "temperature":
    /// ...}`), empty when the prompt has none.
    #[getter]
    fn model<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        settings(py, self.model.as_ref())
    }

    /// The prompt's metadata, empty when it has none.
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        settings(py, self.metadata.as_ref())
    }

    /// The keyword arguments of OpenAI's
    /// `client.chat.completions.create(**request.openai())`: `model`,
    /// `messages`, and the other model settings in `extra_body`, which the
    /// SDK merges into the request's JSON, so that the request sent is the
    /// same whatever parameters the installed SDK version names.
    fn openai<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let kwargs = self.request(py, &["model"])?;
        kwargs.set_item("messages", messages_to_py(py, &self.messages)?)?;
        Ok(kwargs)
    }

    /// The keyword arguments of Anthropic's
    /// `client.messages.create(**request.anthropic())`: `model` and
    /// `max_tokens`, `system` (the leading system messages, joined by a
    /// blank line; left out when there are none), the other `messages`, and
    /// the other model settings in `extra_body`, as `openai()` has them.
    /// Raises
    /// `PromptregError` (code `invalid-chat`) for a system message after
    /// the conversation started, or a role Anthropic does not take.
    fn anthropic<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let kwargs = self.request(py, &["model", "max_tokens"])?;
        let leading = self
            .messages
            .iter()
            .take_while(|m| m.role == Role::System)
            .count();
        let system: Vec<&str> = self.messages[..leading]
            .iter()
            .map(|m| m.content.as_str())
            .collect();
        if !system.is_empty() {
            kwargs.set_item("system", system.join("\n\n"))?;
        }
        let rest = &self.messages[leading..];
        for (i, message) in rest.iter().enumerate() {
            if message.role != Role::User && message.role != Role::Assistant {
                let error = promptreg::Error::new(
                    ErrorKind::InvalidChat,
                    format!(
                        "message {} of chat prompt `{}` has role `{}`: Anthropic's messages take `user` and `assistant` after the leading system messages",
                        leading + i,
                        self.id,
                        message.role
                    ),
                )
                .with_id(&self.id)
                .with_suggestion("send it with `openai()`, or declare the system text first");
                return Err(errors::to_py(&error));
            }
        }
        kwargs.set_item("messages", messages_to_py(py, rest)?)?;
        Ok(kwargs)
    }

    fn __repr__(&self) -> String {
        format!(
            "ChatRequest(id={:?}, messages={}, model={})",
            self.id,
            self.messages.len(),
            self.model
                .as_ref()
                .map_or_else(|| "{}".to_owned(), |m| m.to_string())
        )
    }

    fn __len__(&self) -> usize {
        self.messages.len()
    }
}

/// A JSON object as a new dict (empty for none).
fn settings<'py>(
    py: Python<'py>,
    value: Option<&serde_json::Value>,
) -> PyResult<Bound<'py, PyDict>> {
    match value {
        Some(value) => {
            let converted = pythonize::pythonize(py, value)?;
            converted.cast_into::<PyDict>().map_err(|e| {
                PyTypeError::new_err(format!(
                    "settings must be an object, not {}",
                    type_name(&e.into_inner())
                ))
            })
        }
        None => Ok(PyDict::new(py)),
    }
}
