//! `PromptRegistry`: the web-agent SDK's API in Python's conventions over
//! the Rust registry.

use promptreg::prelude::*;
use promptreg::trace_view::{ChatTraceView, TraceView};
use promptreg::{
    ErrorKind, Form, Locale, Pin, Prompt, RenderOutput, RenderRequest, RenderedChat, Traced,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::chat::{self, ChatRequest};
use crate::config::{ConfigSpec, load_options};
use crate::diagnostic::LoadReport;
use crate::errors::{self, OrRaise, passes_through};
use crate::follow::{self, FollowOptions, Follower};
use crate::py_renderer::{self, PyRenderCx};
use crate::record::optional_json_to_py;
use crate::trace::{ChatTrace, Trace};
use crate::watch::{self, Watcher};

pub use crate::handle::PromptRegistry;

/// What one render asks: the prompt, the locale (`None`: the registry's),
/// the histories by placeholder and the subject.
struct Call<'a> {
    id: &'a str,
    locale: Option<&'a str>,
    histories: &'a [(String, Vec<promptreg::Message>)],
    subject: Option<&'a str>,
}

impl PromptRegistry {
    /// Renders with a context made for this call, the GIL released, and
    /// turns a Python renderer's failure into a `RenderError` whose
    /// `__cause__` is the exception it raised.
    fn render_with<T: Send>(
        &self,
        py: Python<'_>,
        ctx: Option<Bound<'_, PyAny>>,
        render: impl FnOnce(&promptreg::PromptRegistry, &PyRenderCx) -> Result<T, promptreg::Error>
        + Send,
    ) -> PyResult<T> {
        let ctx = ctx.map_or_else(|| py.None(), Bound::unbind);
        let cx = PyRenderCx::new(ctx);
        let rendered = py.detach(|| render(&self.inner, &cx));
        rendered.map_err(|error| match cx.take_failure() {
            Some(failure) if error.kind() == ErrorKind::RendererPanicked => {
                if passes_through(py, &failure) {
                    return failure;
                }
                // The library says "panicked": from Python, it failed.
                let message = error.to_string().replacen(
                    " panicked while rendering",
                    " failed while rendering",
                    1,
                );
                errors::raise_as(&error, message, Some(failure))
            }
            _ => errors::to_py(&error),
        })
    }

    /// Answers the request `id`, `locale` (parsed once; `None`: the
    /// registry's), `histories` and `subject` make, in `form`, traced when
    /// `traced`, the GIL released while the library composes.
    #[allow(clippy::too_many_arguments)]
    fn answer(
        &self,
        py: Python<'_>,
        id: &str,
        ctx: Option<Bound<'_, PyAny>>,
        locale: Option<&str>,
        histories: &[(String, Vec<promptreg::Message>)],
        subject: Option<&str>,
        form: Form,
        traced: bool,
    ) -> PyResult<RenderOutput> {
        let call = Call {
            id,
            locale,
            histories,
            subject,
        };
        self.with_request(py, ctx, &call, form, traced, |registry, request| {
            registry.render_request(request)
        })
    }

    /// Runs `answer` with the request `call` makes, in `form`, traced when
    /// `traced`, the GIL released while the library composes.
    fn with_request<T: Send>(
        &self,
        py: Python<'_>,
        ctx: Option<Bound<'_, PyAny>>,
        call: &Call<'_>,
        form: Form,
        traced: bool,
        answer: impl FnOnce(
            &promptreg::PromptRegistry,
            &RenderRequest<'_, PyRenderCx>,
        ) -> Result<T, promptreg::Error>
        + Send,
    ) -> PyResult<T> {
        let locale = call.locale.map(Locale::parse).transpose().or_raise()?;
        let histories = chat::borrowed(call.histories);
        self.render_with(py, ctx, |registry, cx| {
            let mut request = RenderRequest::new(call.id, cx)
                .histories(&histories)
                .form(form);
            if let Some(locale) = &locale {
                request = request.locale(locale);
            }
            if let Some(subject) = call.subject {
                request = request.subject(subject);
            }
            if traced {
                request = request.traced();
            }
            answer(registry, &request)
        })
    }

    /// The trace of a text render.
    fn text_trace(
        &self,
        py: Python<'_>,
        id: &str,
        ctx: Option<Bound<'_, PyAny>>,
        locale: Option<&str>,
        subject: Option<&str>,
    ) -> PyResult<Trace> {
        let output = self.answer(py, id, ctx, locale, &[], subject, Form::Text, true)?;
        let rendered = trace_of(output)?.into_text().or_raise()?;
        Trace::new(py, TraceView::from(rendered))
    }

    /// The traced messages of a chat render.
    fn chat_trace(
        &self,
        py: Python<'_>,
        id: &str,
        ctx: Option<Bound<'_, PyAny>>,
        locale: Option<&str>,
        history: Option<&Bound<'_, PyAny>>,
        subject: Option<&str>,
    ) -> PyResult<RenderedChat> {
        let histories = chat::histories_arg(history, "history")?;
        let output = self.answer(
            py,
            id,
            ctx,
            locale,
            &histories,
            subject,
            Form::Messages,
            true,
        )?;
        Ok(trace_of(output)?.into_chat())
    }
}

/// The trace a traced request gives.
fn trace_of(output: RenderOutput) -> PyResult<Traced> {
    output
        .into_traced()
        .ok_or_else(|| PyValueError::new_err("a traced render gave no trace"))
}

#[pymethods]
impl PromptRegistry {
    /// An empty, independent registry whose locale and fallback locale
    /// are `en`.
    #[new]
    fn new() -> Self {
        PromptRegistry {
            inner: promptreg::PromptRegistry::new(),
        }
    }

    /// Registers the default of `id`: the body rendered when no override
    /// matches. A later registration replaces the default and keeps the
    /// id's overrides and appenders.
    fn register_default(&self, id: &str, render: &Bound<'_, PyAny>) -> PyResult<()> {
        let render = py_renderer::renderer(render, "render")?;
        self.inner.register_default(id, render).or_raise()
    }

    /// Registers a default with pinned blocks (rendered whatever replaces
    /// the body) and a description.
    #[pyo3(signature = (id, body, *, head = None, tail = None, description = None))]
    fn register(
        &self,
        id: &str,
        body: &Bound<'_, PyAny>,
        head: Option<&Bound<'_, PyAny>>,
        tail: Option<&Bound<'_, PyAny>>,
        description: Option<String>,
    ) -> PyResult<()> {
        let mut prompt = Prompt::new(py_renderer::renderer(body, "body")?);
        for block in py_renderer::renderers(head, "head")? {
            prompt = prompt.pin_head(block);
        }
        for block in py_renderer::renderers(tail, "tail")? {
            prompt = prompt.pin_tail(block);
        }
        if let Some(description) = description {
            prompt = prompt.describe(description);
        }
        self.inner.register(id, prompt).or_raise()
    }

    /// Replaces the body of `id` for `locale` and every locale that falls
    /// back to it; a later call for the same id and locale wins. Pinned
    /// blocks and appenders still apply.
    #[pyo3(name = "override")]
    fn set_override(&self, id: &str, locale: &str, render: &Bound<'_, PyAny>) -> PyResult<()> {
        let render = py_renderer::renderer(render, "render")?;
        self.inner.set_override(id, locale, render).or_raise()
    }

    /// Gives pinned block `index` (from 0) of the `position` (`"head"` or
    /// `"tail"`) blocks of `id` its own text for `locale`.
    fn translate_pin(
        &self,
        id: &str,
        locale: &str,
        position: &str,
        index: usize,
        render: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let pin = match position {
            "head" => Pin::Head(index),
            "tail" => Pin::Tail(index),
            other => {
                return Err(PyValueError::new_err(format!(
                    "`position` must be \"head\" or \"tail\", not {other:?}"
                )));
            }
        };
        let render = py_renderer::renderer(render, "render")?;
        self.inner.translate_pin(id, locale, pin, render).or_raise()
    }

    /// Appends a block to `id` in every locale; appenders stack in the
    /// order they are registered.
    fn append(&self, id: &str, extra: &Bound<'_, PyAny>) -> PyResult<()> {
        let extra = py_renderer::renderer(extra, "extra")?;
        self.inner.append(id, extra).or_raise()
    }

    /// Appends a block to every prompt, including prompts registered
    /// later. `reset(id)` keeps these rules; `reset()` removes them.
    fn append_all(&self, extra: &Bound<'_, PyAny>) -> PyResult<()> {
        let extra = py_renderer::renderer(extra, "extra")?;
        self.inner.append_all(extra).or_raise()
    }

    /// Renders `id` with `ctx` for `locale` (default: the registry's
    /// locale, see `set_locale`); with `subject`, from the state the
    /// subject is served while a split runs (see `render_for`).
    #[pyo3(signature = (id, ctx = None, locale = None, *, subject = None))]
    fn render(
        &self,
        py: Python<'_>,
        id: &str,
        ctx: Option<Bound<'_, PyAny>>,
        locale: Option<&str>,
        subject: Option<&str>,
    ) -> PyResult<String> {
        let output = self.answer(py, id, ctx, locale, &[], subject, Form::Text, false)?;
        Ok(output.into_rendering().into_text())
    }

    /// Renders `id` as `render` does and returns the text with, for every
    /// part, where it came from.
    #[pyo3(signature = (id, ctx = None, locale = None, *, subject = None))]
    fn render_traced(
        &self,
        py: Python<'_>,
        id: &str,
        ctx: Option<Bound<'_, PyAny>>,
        locale: Option<&str>,
        subject: Option<&str>,
    ) -> PyResult<Trace> {
        self.text_trace(py, id, ctx, locale, subject)
    }

    /// The same as `render_traced`, named after `promptreg explain`.
    #[pyo3(signature = (id, ctx = None, locale = None, *, subject = None))]
    fn explain(
        &self,
        py: Python<'_>,
        id: &str,
        ctx: Option<Bound<'_, PyAny>>,
        locale: Option<&str>,
        subject: Option<&str>,
    ) -> PyResult<Trace> {
        self.text_trace(py, id, ctx, locale, subject)
    }

    /// Renders `id` as `render` does, from the state `subject` is served:
    /// while a split runs on a followed label, its candidate for the
    /// subjects its share picks (the same subject, the same arm, in every
    /// process and language), else the registry's own. The same as
    /// `render(..., subject=subject)`.
    #[pyo3(signature = (subject, id, ctx = None, locale = None))]
    fn render_for(
        &self,
        py: Python<'_>,
        subject: &str,
        id: &str,
        ctx: Option<Bound<'_, PyAny>>,
        locale: Option<&str>,
    ) -> PyResult<String> {
        self.render(py, id, ctx, locale, Some(subject))
    }

    /// Renders `id` as `render_for` does and returns the trace, whose
    /// `trace_attributes` name the split and the arm served.
    #[pyo3(signature = (subject, id, ctx = None, locale = None))]
    fn render_traced_for(
        &self,
        py: Python<'_>,
        subject: &str,
        id: &str,
        ctx: Option<Bound<'_, PyAny>>,
        locale: Option<&str>,
    ) -> PyResult<Trace> {
        self.text_trace(py, id, ctx, locale, Some(subject))
    }

    /// The split and arm (`"stable"` or `"candidate"`) `subject` gets while
    /// a split runs on a followed label, else `None`.
    fn arm_for(&self, subject: &str) -> Option<(u64, String)> {
        self.inner
            .arm_for(subject)
            .map(|(split, arm)| (split, arm.as_str().to_owned()))
    }

    /// Registers chat prompt `id`: its messages in order, each
    /// `{"role", "content"}` (content a str or a renderer), and
    /// `{"history": name}` where the messages passed under `name` at render
    /// time go. Pinned blocks (`head`, `tail`) attach to the first system
    /// message, or message `attach`; `model` and `metadata` are what
    /// renders report.
    #[pyo3(signature = (id, messages, *, head = None, tail = None, description = None, attach = None, model = None, metadata = None))]
    #[allow(clippy::too_many_arguments)]
    fn register_chat(
        &self,
        id: &str,
        messages: &Bound<'_, PyAny>,
        head: Option<&Bound<'_, PyAny>>,
        tail: Option<&Bound<'_, PyAny>>,
        description: Option<String>,
        attach: Option<usize>,
        model: Option<&Bound<'_, PyDict>>,
        metadata: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let mut declared = chat::chat_arg(messages, "messages")?;
        if let Some(index) = attach {
            declared = declared.attach(index);
        }
        let mut prompt = Prompt::chat(declared);
        for block in py_renderer::renderers(head, "head")? {
            prompt = prompt.pin_head(block);
        }
        for block in py_renderer::renderers(tail, "tail")? {
            prompt = prompt.pin_tail(block);
        }
        if let Some(description) = description {
            prompt = prompt.describe(description);
        }
        if let Some(model) = json_object(model, "model")? {
            prompt = prompt.with_model(model);
        }
        if let Some(metadata) = json_object(metadata, "metadata")? {
            prompt = prompt.with_metadata(metadata);
        }
        self.inner.register(id, prompt).or_raise()
    }

    /// Replaces the whole list of messages of chat prompt `id` for
    /// `locale` and every locale that falls back to it.
    fn override_chat(&self, id: &str, locale: &str, messages: &Bound<'_, PyAny>) -> PyResult<()> {
        let declared = chat::chat_arg(messages, "messages")?;
        self.inner
            .set_chat_override(id, locale, declared)
            .or_raise()
    }

    /// Renders the messages of chat prompt `id` as OpenAI's chat format (a
    /// list of `{"role", "content"}` dicts), inserting at each placeholder
    /// the messages `history` has under its name (none when it has none).
    /// A text prompt renders as one system message. With `subject`, from
    /// the state the subject is served while a split runs.
    #[pyo3(signature = (id, ctx = None, locale = None, history = None, *, subject = None))]
    fn render_messages<'py>(
        &self,
        py: Python<'py>,
        id: &str,
        ctx: Option<Bound<'_, PyAny>>,
        locale: Option<&str>,
        history: Option<&Bound<'_, PyAny>>,
        subject: Option<&str>,
    ) -> PyResult<Bound<'py, PyList>> {
        let histories = chat::histories_arg(history, "history")?;
        let output = self.answer(
            py,
            id,
            ctx,
            locale,
            &histories,
            subject,
            Form::Messages,
            false,
        )?;
        chat::messages_to_py(py, &output.into_rendering().into_messages())
    }

    /// Renders chat prompt `id` as `render_messages` does, with the model
    /// settings and metadata for the locale: `request.openai()` and
    /// `request.anthropic()` are the keyword arguments of those SDKs'
    /// `create` calls.
    #[pyo3(signature = (id, ctx = None, locale = None, history = None, *, subject = None))]
    fn render_chat(
        &self,
        py: Python<'_>,
        id: &str,
        ctx: Option<Bound<'_, PyAny>>,
        locale: Option<&str>,
        history: Option<&Bound<'_, PyAny>>,
        subject: Option<&str>,
    ) -> PyResult<ChatRequest> {
        let rendered = self.chat_trace(py, id, ctx, locale, history, subject)?;
        Ok(ChatRequest {
            id: rendered.id.to_string(),
            messages: rendered.to_messages(),
            model: rendered.model.map(|m| m.to_value()),
            metadata: rendered.metadata.map(|m| m.to_value()),
        })
    }

    /// The whole request body the provider `format` takes for prompt `id`
    /// (`"openai"`, `"openai-responses"`, `"anthropic"` or `"gemini"`): the
    /// messages (a text prompt is one system message), the model settings,
    /// the tools and the output schema for the locale, as a dict, without
    /// credentials. Raises `PromptregError` (code `invalid-contract`) for an
    /// unknown format, and (`invalid-chat`) for messages the provider's
    /// shape cannot say.
    #[pyo3(signature = (id, ctx = None, locale = None, history = None, *, format, subject = None))]
    #[allow(clippy::too_many_arguments)]
    fn provider_request(
        &self,
        py: Python<'_>,
        id: &str,
        ctx: Option<Bound<'_, PyAny>>,
        locale: Option<&str>,
        history: Option<&Bound<'_, PyAny>>,
        format: &str,
        subject: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let provider: promptreg::Provider = format.parse().or_raise()?;
        let histories = chat::histories_arg(history, "history")?;
        let call = Call {
            id,
            locale,
            histories: &histories,
            subject,
        };
        let body = self.with_request(
            py,
            ctx,
            &call,
            Form::Messages,
            false,
            |registry, request| registry.provider_request(request, provider),
        )?;
        crate::record::json_to_py(py, &body)
    }

    /// Renders chat prompt `id` as `render_messages` does and returns every
    /// message with, for each part, where it came from.
    #[pyo3(signature = (id, ctx = None, locale = None, history = None, *, subject = None))]
    fn render_messages_traced(
        &self,
        py: Python<'_>,
        id: &str,
        ctx: Option<Bound<'_, PyAny>>,
        locale: Option<&str>,
        history: Option<&Bound<'_, PyAny>>,
        subject: Option<&str>,
    ) -> PyResult<ChatTrace> {
        let rendered = self.chat_trace(py, id, ctx, locale, history, subject)?;
        ChatTrace::new(py, ChatTraceView::from(rendered))
    }

    /// Renders chat prompt `id` as role-headed text (`# system`, the
    /// content, a blank line, `# user`, ...), for a log or a review; a text
    /// prompt renders as `render` does.
    #[pyo3(signature = (id, ctx = None, locale = None, history = None, *, subject = None))]
    fn render_chat_as_text(
        &self,
        py: Python<'_>,
        id: &str,
        ctx: Option<Bound<'_, PyAny>>,
        locale: Option<&str>,
        history: Option<&Bound<'_, PyAny>>,
        subject: Option<&str>,
    ) -> PyResult<String> {
        let histories = chat::histories_arg(history, "history")?;
        let output = self.answer(
            py,
            id,
            ctx,
            locale,
            &histories,
            subject,
            Form::AsDeclared,
            false,
        )?;
        Ok(output.into_rendering().into_text())
    }

    /// Whether `id` renders as a chat prompt for `locale` (default: the
    /// registry's locale): `render` refuses it, `render_messages` renders
    /// it.
    #[pyo3(signature = (id, locale = None))]
    fn is_chat(&self, id: &str, locale: Option<&str>) -> PyResult<bool> {
        let snapshot = self.inner.snapshot();
        match locale {
            Some(locale) => snapshot.is_chat(id, locale),
            None => snapshot.is_chat(id, snapshot.locale()),
        }
        .or_raise()
    }

    /// The model settings `id` renders with for `locale` (default: the
    /// registry's locale), or `None` when it has none.
    #[pyo3(signature = (id, locale = None))]
    fn model_settings(
        &self,
        py: Python<'_>,
        id: &str,
        locale: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let settings = match locale {
            Some(locale) => self.inner.model_settings_in(id, locale),
            None => self.inner.model_settings(id),
        }
        .or_raise()?;
        optional_json_to_py(py, settings.map(|s| s.to_value()))
    }

    /// Clears the overrides, pin translations and appenders of `id` (its
    /// default and pinned blocks stay); without an id, of every prompt,
    /// including the `append_all` rules.
    #[pyo3(signature = (id = None))]
    fn reset(&self, id: Option<&str>) -> PyResult<()> {
        match id {
            Some(id) => self.inner.reset(id).or_raise(),
            None => {
                self.inner.reset_all();
                Ok(())
            }
        }
    }

    /// Whether a default or an override is registered under `id`.
    fn has(&self, id: &str) -> bool {
        self.inner.has(id)
    }

    /// Every registered id, sorted.
    fn list(&self) -> Vec<String> {
        self.inner.list().iter().map(|id| id.to_string()).collect()
    }

    fn __contains__(&self, id: &str) -> bool {
        self.inner.has(id)
    }

    fn __len__(&self) -> usize {
        self.inner.list().len()
    }

    /// Sets the locale of renders that do not name one; the next render
    /// uses it.
    fn set_locale(&self, locale: &str) -> PyResult<()> {
        self.inner.set_locale(locale).or_raise()
    }

    /// The locale of renders that do not name one (initially `en`), in its
    /// canonical form.
    #[getter]
    fn locale(&self) -> String {
        self.inner.locale().to_string()
    }

    /// Sets the locale whose overrides are tried after the render locale's
    /// own, before the default (initially `en`).
    fn set_fallback_locale(&self, locale: &str) -> PyResult<()> {
        self.inner.set_fallback_locale(locale).or_raise()
    }

    /// The fallback locale.
    #[getter]
    fn fallback_locale(&self) -> String {
        self.inner.fallback_locale().to_string()
    }

    /// Reads the user's configuration declared by `spec` (settings files
    /// and prompt folders under `home` and `cwd`) into the registry.
    /// Renders read no files: call `reload` after files change, or `watch`.
    /// On error (`ConfigError`) the previous configuration stays.
    #[pyo3(signature = (spec, *, home, cwd = None, settings_env = None))]
    fn load_config(
        &self,
        py: Python<'_>,
        spec: &ConfigSpec,
        home: String,
        cwd: Option<String>,
        settings_env: Option<String>,
    ) -> PyResult<LoadReport> {
        let options = load_options(home, cwd, settings_env);
        let spec = spec.inner.clone();
        let report = py
            .detach(|| self.inner.load_config(spec, options))
            .or_raise()?;
        Ok(LoadReport::from(report))
    }

    /// Reads again the packs installed from folders and the user's
    /// configuration, and publishes them together; on error nothing
    /// changes.
    fn reload(&self, py: Python<'_>) -> PyResult<LoadReport> {
        let report = py.detach(|| self.inner.reload()).or_raise()?;
        Ok(LoadReport::from(report))
    }

    /// Removes the user's configuration; renders use the host's prompts
    /// only.
    fn unload_config(&self) {
        self.inner.unload_config();
    }

    /// Follows the files of the loaded configuration and of packs installed
    /// from folders, reloads when they change and calls `callback` with
    /// each reload that changed something, on the watcher's own thread
    /// (holding the GIL). Runs until `close()`, or the end of the process.
    #[pyo3(signature = (callback, *, debounce = None))]
    fn watch(
        slf: &Bound<'_, Self>,
        callback: &Bound<'_, PyAny>,
        debounce: Option<f64>,
    ) -> PyResult<Watcher> {
        watch::start(&slf.get().inner, callback, debounce)
    }

    /// Follows `label` of `pack` on the `promptreg serve` at `server`: the
    /// last good bundle from the disk cache (or `bundle`) is installed now,
    /// then the server's whenever the label moves, from the follower's own
    /// thread; renders never wait for the network. Never raises for the
    /// network: failures are in `status()` and `on_change`, which is
    /// called on the follower's thread (holding the GIL).
    #[pyo3(signature = (
        server,
        *,
        pack,
        label = None,
        key = None,
        cache_dir = None,
        disk_cache = true,
        poll_interval = None,
        timeout = None,
        idle_timeout = None,
        report_interval = None,
        reports = true,
        instance_id = None,
        instance_name = None,
        trust_keys = None,
        bundle = None,
        on_change = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn follow(
        &self,
        py: Python<'_>,
        server: String,
        pack: String,
        label: Option<String>,
        key: Option<String>,
        cache_dir: Option<String>,
        disk_cache: bool,
        poll_interval: Option<f64>,
        timeout: Option<f64>,
        idle_timeout: Option<f64>,
        report_interval: Option<f64>,
        reports: bool,
        instance_id: Option<String>,
        instance_name: Option<String>,
        trust_keys: Option<Vec<String>>,
        bundle: Option<String>,
        on_change: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Follower> {
        let options = FollowOptions {
            server,
            pack,
            label,
            key,
            cache_dir,
            disk_cache,
            poll_interval,
            timeout,
            idle_timeout,
            report_interval,
            reports,
            instance_id,
            instance_name,
            trust_keys,
            bundle,
            on_change,
        };
        follow::start(py, &self.inner, options)
    }

    fn __repr__(&self) -> String {
        format!(
            "PromptRegistry(prompts={}, locale='{}')",
            self.inner.list().len(),
            self.inner.locale()
        )
    }
}

/// An optional dict of plain data (model settings, metadata) as the
/// library's JSON object.
fn json_object(
    value: Option<&Bound<'_, PyDict>>,
    name: &str,
) -> PyResult<Option<promptreg::JsonObject>> {
    let Some(value) = value else {
        return Ok(None);
    };
    let json: serde_json::Value = pythonize::depythonize(value)
        .map_err(|e| PyValueError::new_err(format!("`{name}` must be plain data: {e}")))?;
    Ok(promptreg::JsonObject::from_value(json))
}
