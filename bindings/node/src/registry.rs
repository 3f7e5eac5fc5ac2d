//! `PromptRegistry`: the seed's API shape over the Rust registry.

use promptreg::prelude::*;
use std::cell::OnceCell;
use std::sync::Arc;

use napi::bindgen_prelude::{Function, Unknown};
use napi::{Env, Result};
use napi_derive::napi;
use promptreg::trace_view::{ChatTraceView, TraceView};
use promptreg::{ErrorKind, Form, Pin, Prompt, RenderOutput, Traced};

use crate::args;
use crate::chat::{self, ChatMessage, Rendering};
use crate::config;
use crate::diagnostic::LoadReport;
use crate::errors::{self, OrThrow};
use crate::follow::{self, Follower};
pub use crate::handle::PromptRegistry;
use crate::handle::Shared;
use crate::js::undefined;
use crate::js_renderer::JsRenderCx;
use crate::render::Call;
use crate::trace::{ChatTrace, Trace};
use crate::watch::{self, WatchOptions, Watcher};

thread_local! {
    /// The process-wide registry of this JavaScript thread: JavaScript
    /// functions cannot cross threads, so each worker has its own.
    static GLOBAL: OnceCell<Arc<Shared>> = const { OnceCell::new() };
}

impl PromptRegistry {
    /// Answers the request `call` makes in `form`, traced when `traced`.
    fn answer(
        &self,
        env: &Env,
        ctx: Option<Unknown<'_>>,
        call: &Call,
        form: Form,
        traced: bool,
    ) -> Result<RenderOutput> {
        self.render_with(env, ctx, |registry, cx| {
            call.with_request(cx, form, traced, |request| registry.render_request(request))
        })
    }

    /// The trace of a text render.
    fn text_trace(&self, env: &Env, ctx: Option<Unknown<'_>>, call: &Call) -> Result<Trace> {
        let traced = trace_of(self.answer(env, ctx, call, Form::Text, true)?)?;
        let rendered = traced.into_text().or_throw(env)?;
        Ok(Trace::from(TraceView::from(rendered)))
    }

    /// Renders with a context made for this call, turning a JavaScript
    /// renderer's failure into the error it deserves.
    fn render_with<T>(
        &self,
        env: &Env,
        ctx: Option<Unknown<'_>>,
        render: impl FnOnce(
            &promptreg::PromptRegistry,
            &JsRenderCx,
        ) -> std::result::Result<T, promptreg::Error>,
    ) -> Result<T> {
        let cx = JsRenderCx::new(env, ctx.filter(|c| !args::is_absent(Some(c))))?;
        render(self.inner(), &cx).map_err(|error| match cx.take_failure() {
            Some(failure) if error.kind() == ErrorKind::RendererPanicked => {
                // The library says "panicked": from JavaScript, it failed.
                let message = error.to_string().replacen(
                    " panicked while rendering",
                    " failed while rendering",
                    1,
                );
                if failure.is_type_error() {
                    return errors::throw_type_error(env, message);
                }
                errors::throw_as(env, &error, message, failure.thrown(env))
            }
            _ if error.kind() == ErrorKind::ChatPrompt => {
                // The library names its Rust methods: name the binding's.
                let message = error
                    .to_string()
                    .replace("`render_messages`", "`renderMessages`")
                    .replace("`render_chat_as_text`", "`renderChatAsText`");
                errors::throw_as(env, &error, message, None)
            }
            _ => errors::throw(env, &error),
        })
    }
}

/// The trace a traced request gives.
fn trace_of(output: RenderOutput) -> Result<Traced> {
    output
        .into_traced()
        .ok_or_else(|| napi::Error::from_reason("a traced render gave no trace"))
}

/// The arm of a split a subject gets (`armFor`).
#[napi(object)]
pub struct ArmFor {
    /// The split's id.
    pub split: i64,
    /// `stable` or `candidate`.
    pub arm: String,
}

#[napi]
impl PromptRegistry {
    /// An empty, independent registry whose locale and fallback locale are
    /// `en`.
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self::wrap(Arc::default())
    }

    /// The process-wide registry (per JavaScript thread: a worker has its
    /// own), created empty on first use. Every call returns a handle on
    /// the same registry.
    #[napi]
    pub fn global() -> PromptRegistry {
        GLOBAL.with(|global| Self::wrap(Arc::clone(global.get_or_init(Default::default))))
    }

    /// Registers the default of `id`: the body rendered when no override
    /// matches. A later registration replaces the default and keeps the
    /// id's overrides and appenders.
    #[napi]
    pub fn register_default(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "string | ((ctx: any, locale: string) => string)")] render: Unknown<
            '_,
        >,
    ) -> Result<()> {
        let id = args::string(&env, id, "id")?;
        let render = args::renderer(&env, render, "render")?;
        self.inner().register_default(&id, render).or_throw(&env)
    }

    /// Registers a default with pinned blocks (rendered whatever replaces
    /// the body) and a description.
    #[napi]
    pub fn register(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(
            ts_arg_type = "{ body: string | ((ctx: any, locale: string) => string); head?: Array<string | ((ctx: any, locale: string) => string)>; tail?: Array<string | ((ctx: any, locale: string) => string)>; description?: string }"
        )]
        declaration: Unknown<'_>,
    ) -> Result<()> {
        let id = args::string(&env, id, "id")?;
        let declaration = args::plain_object(&env, declaration, "declaration")?;
        let field = |name: &str| declaration.get::<Unknown<'_>>(name);
        let body = field("body")?.unwrap_or(undefined(&env)?);
        let mut prompt = Prompt::new(args::renderer(&env, body, "declaration.body")?);
        for block in args::renderers(&env, field("head")?, "declaration.head")? {
            prompt = prompt.pin_head(block);
        }
        for block in args::renderers(&env, field("tail")?, "declaration.tail")? {
            prompt = prompt.pin_tail(block);
        }
        let description =
            args::optional_string(&env, field("description")?, "declaration.description")?;
        if let Some(description) = description {
            prompt = prompt.describe(description);
        }
        self.inner().register(&id, prompt).or_throw(&env)
    }

    /// Replaces the body of `id` for `locale` and every locale that falls
    /// back to it; a later call for the same id and locale wins. Pinned
    /// blocks and appenders still apply.
    #[napi(js_name = "override")]
    pub fn set_override(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "string")] locale: Unknown<'_>,
        #[napi(ts_arg_type = "string | ((ctx: any, locale: string) => string)")] render: Unknown<
            '_,
        >,
    ) -> Result<()> {
        let id = args::string(&env, id, "id")?;
        let locale = args::string(&env, locale, "locale")?;
        let render = args::renderer(&env, render, "render")?;
        self.inner()
            .set_override(&id, locale.as_str(), render)
            .or_throw(&env)
    }

    /// Gives pinned block `index` (from 0) of the `position` (`"head"` or
    /// `"tail"`) blocks of `id` its own text for `locale`.
    #[napi]
    pub fn translate_pin(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "string")] locale: Unknown<'_>,
        #[napi(ts_arg_type = "'head' | 'tail'")] position: Unknown<'_>,
        #[napi(ts_arg_type = "number")] index: Unknown<'_>,
        #[napi(ts_arg_type = "string | ((ctx: any, locale: string) => string)")] render: Unknown<
            '_,
        >,
    ) -> Result<()> {
        let id = args::string(&env, id, "id")?;
        let locale = args::string(&env, locale, "locale")?;
        let position = args::string(&env, position, "position")?;
        let index = args::index(&env, index, "index")?;
        let pin = match position.as_str() {
            "head" => Pin::Head(index),
            "tail" => Pin::Tail(index),
            other => {
                return Err(errors::throw_type_error(
                    &env,
                    format!("`position` must be \"head\" or \"tail\", not {other:?}"),
                ));
            }
        };
        let render = args::renderer(&env, render, "render")?;
        self.inner()
            .translate_pin(&id, locale.as_str(), pin, render)
            .or_throw(&env)
    }

    /// Appends a block to `id` in every locale; appenders stack in the
    /// order they are registered.
    #[napi]
    pub fn append(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "string | ((ctx: any, locale: string) => string)")] extra: Unknown<'_>,
    ) -> Result<()> {
        let id = args::string(&env, id, "id")?;
        let extra = args::renderer(&env, extra, "extra")?;
        self.inner().append(&id, extra).or_throw(&env)
    }

    /// Appends a block to every prompt, including prompts registered
    /// later. `reset(id)` keeps these rules; `reset()` removes them.
    #[napi]
    pub fn append_all(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string | ((ctx: any, locale: string) => string)")] extra: Unknown<'_>,
    ) -> Result<()> {
        let extra = args::renderer(&env, extra, "extra")?;
        self.inner().append_all(extra).or_throw(&env)
    }

    /// Renders `id` with `ctx` for `locale` (default: the registry's
    /// locale, see `setLocale`). JavaScript renderers run now, on this
    /// thread. `options.subject` renders from the state the subject is
    /// served while a split runs (see `renderFor`).
    #[napi]
    pub fn render(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "any")] ctx: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "string")] locale: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "RenderOptions")] options: Option<Unknown<'_>>,
    ) -> Result<String> {
        let call = Call::new(&env, id, locale, None, options)?;
        let output = self.answer(&env, ctx, &call, Form::Text, false)?;
        Ok(output.into_rendering().into_text())
    }

    /// Renders `id` as `render` does and returns the text with, for every
    /// part, where it came from.
    #[napi]
    pub fn render_traced(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "any")] ctx: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "string")] locale: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "RenderOptions")] options: Option<Unknown<'_>>,
    ) -> Result<Trace> {
        let call = Call::new(&env, id, locale, None, options)?;
        self.text_trace(&env, ctx, &call)
    }

    /// Renders `id` as `render` does, from the state `subject` is served:
    /// while a split runs on a followed label, its candidate for the
    /// subjects its share picks (by the subject's key and the split's id:
    /// the same subject, the same arm, in every process), else the
    /// registry's own. The same as `render` with `{ subject }`.
    #[napi]
    pub fn render_for(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] subject: Unknown<'_>,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "any")] ctx: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "string")] locale: Option<Unknown<'_>>,
    ) -> Result<String> {
        let call = Call::for_subject(&env, subject, id, locale)?;
        let output = self.answer(&env, ctx, &call, Form::Text, false)?;
        Ok(output.into_rendering().into_text())
    }

    /// `renderTraced` from the state `subject` is served (see
    /// `renderFor`): the parts of a candidate name its split, and
    /// `traceAttributes` carry `promptreg.split` and `promptreg.arm`.
    #[napi]
    pub fn render_traced_for(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] subject: Unknown<'_>,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "any")] ctx: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "string")] locale: Option<Unknown<'_>>,
    ) -> Result<Trace> {
        let call = Call::for_subject(&env, subject, id, locale)?;
        self.text_trace(&env, ctx, &call)
    }

    /// The split running on a followed label and the arm `subject` gets
    /// (`{ split: 4, arm: 'candidate' }`), or `null` when no split runs.
    #[napi(ts_return_type = "{ split: number, arm: 'stable' | 'candidate' } | null")]
    pub fn arm_for(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] subject: Unknown<'_>,
    ) -> Result<Option<ArmFor>> {
        let subject = args::string(&env, subject, "subject")?;
        Ok(self.inner().arm_for(&subject).map(|(split, arm)| ArmFor {
            split: i64::try_from(split).unwrap_or(i64::MAX),
            arm: arm.as_str().to_owned(),
        }))
    }

    /// The same as `renderTraced`, named after `promptreg explain`.
    #[napi]
    pub fn explain(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "any")] ctx: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "string")] locale: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "RenderOptions")] options: Option<Unknown<'_>>,
    ) -> Result<Trace> {
        self.render_traced(env, id, ctx, locale, options)
    }

    /// Registers chat prompt `id`: its messages in order, each
    /// `{ role, content }` (content a string or a renderer function), and
    /// `{ history: name }` where the messages passed under `name` at render
    /// time go. `options` adds pinned blocks (`head`, `tail`, attached to
    /// the first `system` message, or message `attach`), a `description`,
    /// and the `model` settings and `metadata` renders report. A later
    /// registration replaces the default and keeps the id's overrides and
    /// appenders.
    #[napi]
    pub fn register_chat(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "Array<ChatItem>")] messages: Unknown<'_>,
        #[napi(ts_arg_type = "ChatOptions")] options: Option<Unknown<'_>>,
    ) -> Result<()> {
        let id = args::string(&env, id, "id")?;
        let mut declared = chat::chat_arg(&env, messages, "messages")?;
        let options = match options {
            Some(o) if !args::is_absent(Some(&o)) => Some(args::plain_object(&env, o, "options")?),
            _ => None,
        };
        let field = |name: &str| match &options {
            Some(options) => options.get::<Unknown<'_>>(name),
            None => Ok(None),
        };
        if let Some(index) = args::optional_index(&env, field("attach")?, "options.attach")? {
            declared = declared.attach(index);
        }
        let mut prompt = Prompt::chat(declared);
        for block in args::renderers(&env, field("head")?, "options.head")? {
            prompt = prompt.pin_head(block);
        }
        for block in args::renderers(&env, field("tail")?, "options.tail")? {
            prompt = prompt.pin_tail(block);
        }
        if let Some(description) =
            args::optional_string(&env, field("description")?, "options.description")?
        {
            prompt = prompt.describe(description);
        }
        if let Some(model) = args::optional_json_object(&env, field("model")?, "options.model")? {
            prompt = prompt.with_model(model);
        }
        if let Some(metadata) =
            args::optional_json_object(&env, field("metadata")?, "options.metadata")?
        {
            prompt = prompt.with_metadata(metadata);
        }
        self.inner().register(&id, prompt).or_throw(&env)
    }

    /// Replaces the whole list of messages of chat prompt `id` for
    /// `locale` and every locale that falls back to it, as `override` does
    /// a text prompt's body. Pinned blocks and appenders still apply.
    #[napi]
    pub fn override_chat(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "string")] locale: Unknown<'_>,
        #[napi(ts_arg_type = "Array<ChatItem>")] messages: Unknown<'_>,
    ) -> Result<()> {
        let id = args::string(&env, id, "id")?;
        let locale = args::string(&env, locale, "locale")?;
        let declared = chat::chat_arg(&env, messages, "messages")?;
        self.inner()
            .set_chat_override(&id, locale.as_str(), declared)
            .or_throw(&env)
    }

    /// Renders the messages of chat prompt `id` with `ctx` for `locale`
    /// (default: the registry's locale), inserting at each `{ history }`
    /// placeholder the messages `histories` has under its name (none when
    /// it has none). A text prompt renders as one `system` message; a
    /// message that renders blank is left out. `options.subject` renders
    /// from the state the subject is served while a split runs.
    #[napi]
    pub fn render_messages(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "any")] ctx: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "string")] locale: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "Record<string, ChatMessage[]>")] histories: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "RenderOptions")] options: Option<Unknown<'_>>,
    ) -> Result<Vec<ChatMessage>> {
        let call = Call::new(&env, id, locale, histories, options)?;
        let output = self.answer(&env, ctx, &call, Form::Messages, false)?;
        let messages = output.into_rendering().into_messages();
        Ok(messages.into_iter().map(ChatMessage::from).collect())
    }

    /// Renders `id` as what it is, one call for any prompt: a text prompt
    /// gives `{ kind: 'text', text }`, a chat prompt
    /// `{ kind: 'messages', messages }` with at each `{ history }`
    /// placeholder the messages `histories` has under its name. A history
    /// given to a text prompt (any name, even an empty list) is refused with
    /// `InvalidChat`: it has no placeholder. The `promptreg` tool and the
    /// server render by the same rule.
    #[napi]
    pub fn render_any(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "any")] ctx: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "string")] locale: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "Record<string, ChatMessage[]>")] histories: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "RenderOptions")] options: Option<Unknown<'_>>,
    ) -> Result<Rendering> {
        let call = Call::new(&env, id, locale, histories, options)?;
        let output = self.answer(&env, ctx, &call, Form::AsDeclared, false)?;
        Ok(Rendering::from(output.into_rendering()))
    }

    /// The whole request body the provider `format` takes for `id`
    /// (`'openai'`, `'openai-responses'`, `'anthropic'` or `'gemini'`): the
    /// messages (a text prompt is one `system` message), the model settings,
    /// the tools and the output schema for the locale, without credentials.
    /// Throws `InvalidContract` for an unknown format, and `InvalidChat`
    /// for messages the provider's shape cannot say.
    #[napi(ts_return_type = "Record<string, unknown>")]
    #[allow(clippy::too_many_arguments)]
    pub fn provider_request(
        &self,
        env: Env,
        #[napi(ts_arg_type = "'openai' | 'openai-responses' | 'anthropic' | 'gemini'")]
        format: Unknown<'_>,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "any")] ctx: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "string")] locale: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "Record<string, ChatMessage[]>")] histories: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "RenderOptions")] options: Option<Unknown<'_>>,
    ) -> Result<serde_json::Value> {
        let format = args::string(&env, format, "format")?;
        let provider: promptreg::Provider = format.parse().or_throw(&env)?;
        let call = Call::new(&env, id, locale, histories, options)?;
        self.render_with(&env, ctx, |registry, cx| {
            call.with_request(cx, Form::Messages, false, |request| {
                registry.provider_request(request, provider)
            })
        })
    }

    /// Renders chat prompt `id` as `renderMessages` does and returns every
    /// message with, for each part, where it came from, and the model
    /// settings and metadata for the locale.
    #[napi]
    pub fn render_messages_traced(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "any")] ctx: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "string")] locale: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "Record<string, ChatMessage[]>")] histories: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "RenderOptions")] options: Option<Unknown<'_>>,
    ) -> Result<ChatTrace> {
        let call = Call::new(&env, id, locale, histories, options)?;
        let traced = trace_of(self.answer(&env, ctx, &call, Form::Messages, true)?)?;
        Ok(ChatTrace::from(ChatTraceView::from(traced.into_chat())))
    }

    /// Renders chat prompt `id` as role-headed text (`# system`, the
    /// content, a blank line, `# user`, ...), for a log or a review; a
    /// text prompt renders as `render` does.
    #[napi]
    pub fn render_chat_as_text(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "any")] ctx: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "string")] locale: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "Record<string, ChatMessage[]>")] histories: Option<Unknown<'_>>,
        #[napi(ts_arg_type = "RenderOptions")] options: Option<Unknown<'_>>,
    ) -> Result<String> {
        let call = Call::new(&env, id, locale, histories, options)?;
        let output = self.answer(&env, ctx, &call, Form::AsDeclared, false)?;
        Ok(output.into_rendering().into_text())
    }

    /// Whether `id` renders as a chat prompt for `locale` (default: the
    /// registry's locale): `render` refuses it, `renderMessages` renders
    /// it.
    #[napi]
    pub fn is_chat(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "string")] locale: Option<Unknown<'_>>,
    ) -> Result<bool> {
        let id = args::string(&env, id, "id")?;
        let snapshot = self.inner().snapshot();
        match args::optional_string(&env, locale, "locale")? {
            Some(locale) => snapshot.is_chat(&id, locale.as_str()),
            None => snapshot.is_chat(&id, snapshot.locale().clone()),
        }
        .or_throw(&env)
    }

    /// The model settings `id` renders with for `locale` (default: the
    /// registry's locale), or `null` when it has none.
    #[napi(ts_return_type = "Record<string, unknown> | null")]
    pub fn model_settings(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Unknown<'_>,
        #[napi(ts_arg_type = "string")] locale: Option<Unknown<'_>>,
    ) -> Result<Option<serde_json::Value>> {
        let id = args::string(&env, id, "id")?;
        let settings = match args::optional_string(&env, locale, "locale")? {
            Some(locale) => self.inner().model_settings_in(&id, locale.as_str()),
            None => self.inner().model_settings(&id),
        }
        .or_throw(&env)?;
        Ok(settings.map(|s| s.to_value()))
    }

    /// Clears the overrides, pin translations and appenders of `id` (its
    /// default and pinned blocks stay); without an id, of every prompt,
    /// including the `appendAll` rules.
    #[napi]
    pub fn reset(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] id: Option<Unknown<'_>>,
    ) -> Result<()> {
        match args::optional_string(&env, id, "id")? {
            Some(id) => self.inner().reset(&id).or_throw(&env),
            None => {
                self.inner().reset_all();
                Ok(())
            }
        }
    }

    /// Whether a default or an override is registered under `id`.
    #[napi]
    pub fn has(&self, env: Env, #[napi(ts_arg_type = "string")] id: Unknown<'_>) -> Result<bool> {
        let id = args::string(&env, id, "id")?;
        Ok(self.inner().has(&id))
    }

    /// Every registered id, sorted.
    #[napi]
    pub fn list(&self) -> Vec<String> {
        self.inner()
            .list()
            .iter()
            .map(|id| id.to_string())
            .collect()
    }

    /// Sets the locale of renders that do not name one; the next render
    /// uses it.
    #[napi]
    pub fn set_locale(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] locale: Unknown<'_>,
    ) -> Result<()> {
        let locale = args::string(&env, locale, "locale")?;
        self.inner().set_locale(locale.as_str()).or_throw(&env)
    }

    /// The locale of renders that do not name one (initially `en`), in its
    /// canonical form.
    #[napi(getter)]
    pub fn locale(&self) -> String {
        self.inner().locale().to_string()
    }

    /// Sets the locale whose overrides are tried after the render locale's
    /// own, before the default (initially `en`).
    #[napi]
    pub fn set_fallback_locale(
        &self,
        env: Env,
        #[napi(ts_arg_type = "string")] locale: Unknown<'_>,
    ) -> Result<()> {
        let locale = args::string(&env, locale, "locale")?;
        self.inner()
            .set_fallback_locale(locale.as_str())
            .or_throw(&env)
    }

    /// The fallback locale.
    #[napi(getter)]
    pub fn fallback_locale(&self) -> String {
        self.inner().fallback_locale().to_string()
    }

    /// Reads the user's configuration declared by `spec` (settings files
    /// and prompt folders under `options.home` and `options.cwd`) into the
    /// registry. Renders read no files: call `reload` after files change,
    /// or `watch`. On error the previous configuration stays.
    #[napi]
    pub fn load_config(
        &self,
        env: Env,
        #[napi(ts_arg_type = "ConfigSpec")] spec: Unknown<'_>,
        #[napi(ts_arg_type = "LoadOptions")] options: Unknown<'_>,
    ) -> Result<LoadReport> {
        let spec = config::spec_arg(&env, spec, "spec")?;
        let options = config::options_arg(&env, options, "options")?;
        let report = self.inner().load_config(spec, options).or_throw(&env)?;
        Ok(LoadReport::from(report))
    }

    /// Reads again the packs installed from folders and the user's
    /// configuration, and publishes them together; on error nothing
    /// changes.
    #[napi]
    pub fn reload(&self, env: Env) -> Result<LoadReport> {
        let report = self.inner().reload().or_throw(&env)?;
        Ok(LoadReport::from(report))
    }

    /// Removes the user's configuration; renders use the host's prompts
    /// only.
    #[napi]
    pub fn unload_config(&self) {
        self.inner().unload_config();
    }

    /// Follows the files of the loaded configuration and of packs installed
    /// from folders, reloads when they change and calls `callback` with
    /// each reload that changed something, on this thread. Like
    /// `fs.watch`, an open watcher keeps the process alive: `close()` it.
    #[napi]
    pub fn watch(
        &self,
        env: Env,
        #[napi(ts_arg_type = "(event: ReloadEvent) => void")] callback: Unknown<'_>,
        #[napi(ts_arg_type = "WatchOptions")] options: Option<Unknown<'_>>,
    ) -> Result<Watcher> {
        let callback: Function<'_, watch::ReloadEvent, ()> = watch::callback_arg(&env, callback)?;
        let options: Option<WatchOptions> = match options {
            Some(o) if !args::is_absent(Some(&o)) => Some(args::object(&env, o, "options")?),
            _ => None,
        };
        watch::start(&env, &self.shared, callback, options)
    }

    /// Follows a label of a pack on a `promptreg serve` server: the last
    /// good bundle from the disk cache is installed now, then the server's
    /// whenever the label moves, from a thread of the library's own; renders
    /// never wait for the network. Never throws for the network: failures
    /// are in `status()` and `onChange`.
    #[napi]
    pub fn follow(
        &self,
        env: Env,
        #[napi(ts_arg_type = "FollowOptions")] options: Unknown<'_>,
    ) -> Result<Follower> {
        follow::start(&env, &self.shared, options)
    }
}
