//! [`PromptRegistry`]: where prompts are declared, changed and rendered.

use std::any::Any;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use arc_swap::{ArcSwap, ArcSwapOption, Guard};
use serde::Serialize;

use crate::chat::{Chat, Message, RenderedChat};
use crate::compose::Rendered;
use crate::error::Error;
use crate::id::PromptId;
use crate::json_object::JsonObject;
use crate::locale::{IntoLocale, Locale};
use crate::prompt::{Pin, Prompt};
use crate::renderer::IntoRenderer;
use crate::rendering::{RenderOutput, RenderRequest};
use crate::snapshot::{Histories, RegistryProblem, Snapshot};
use crate::split::{Arm, SplitRule};

mod contract;

/// The registry of every system prompt of an application.
///
/// Subsystems [register defaults](Self::register_default) under stable ids;
/// the host [overrides them per locale](Self::set_override),
/// [appends rules](Self::append) and [renders](Self::render) them.
///
/// # Concurrency
///
/// `PromptRegistry` is `Send + Sync` and is meant to be shared (see
/// [`global`](Self::global)). Its state is an immutable [`Snapshot`]: a
/// change builds a new snapshot and publishes it atomically, so a render
/// sees the state before or after each change, never a mix, and renders
/// never wait behind a writer. Writers are serialised among themselves.
pub struct PromptRegistry {
    shared: Arc<Shared>,
}

/// The registry's state, shared with the threads that act on it (the file
/// watcher, a follower): what a source changes a registry through.
///
/// Every change copies the current [`Snapshot`], applies the change and
/// publishes the copy with one atomic swap; a change that fails publishes
/// nothing. Writers are serialised among themselves; renders never wait.
pub struct Shared {
    state: ArcSwap<Snapshot>,
    /// Serialises writers; holds what the sources need to read again (the
    /// packs installed from folders), which only their own modules look
    /// into.
    writer: Mutex<Sources>,
    /// The state a split's candidate serves its share of subjects, when a
    /// source (a follower) set one.
    candidate: ArcSwapOption<Candidate>,
}

/// A split's candidate: which subjects it serves, and its state, derived
/// again from the registry's state at every change, so the host's
/// registrations and the user's configuration apply to both arms alike.
struct Candidate {
    rule: SplitRule,
    derive: Box<dyn Fn(&Snapshot) -> Snapshot + Send + Sync>,
    state: ArcSwap<Snapshot>,
}

/// What sources keep in a registry to read again, each of its own type
/// (the packs installed from folders); the core never looks inside.
pub type Sources = Vec<Arc<dyn Any + Send + Sync>>;

impl Shared {
    /// The state in force now.
    pub fn current(&self) -> Guard<Arc<Snapshot>> {
        self.state.load()
    }

    /// Applies `change` to a copy of the current state and publishes it; on
    /// error nothing is published.
    pub fn try_update(
        &self,
        change: impl FnOnce(&mut Snapshot) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.try_update_with_sources(|next, _| change(next))
    }

    /// [`try_update`](Self::try_update), also handing `change` what the
    /// sources keep.
    pub fn try_update_with_sources(
        &self,
        change: impl FnOnce(&mut Snapshot, &mut Sources) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut sources = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let mut next = Snapshot::clone(&self.current());
        change(&mut next, &mut sources)?;
        next.index_changed();
        if let Some(candidate) = &*self.candidate.load() {
            let mut derived = (candidate.derive)(&next);
            derived.index_changed();
            candidate.state.store(Arc::new(derived));
        }
        self.state.store(Arc::new(next));
        Ok(())
    }

    /// Serves the subjects `rule` picks the state `derive` makes of the
    /// registry's (now, and after every change), until
    /// [`clear_candidate`](Self::clear_candidate).
    pub fn set_candidate(
        &self,
        rule: SplitRule,
        derive: impl Fn(&Snapshot) -> Snapshot + Send + Sync + 'static,
    ) {
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let mut derived = derive(&self.current());
        derived.index_changed();
        self.candidate.store(Some(Arc::new(Candidate {
            rule,
            derive: Box::new(derive),
            state: ArcSwap::from_pointee(derived),
        })));
    }

    /// Every subject gets the registry's own state again.
    pub fn clear_candidate(&self) {
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        self.candidate.store(None);
    }

    /// What the sources keep, as it is now.
    pub fn sources(&self) -> Sources {
        self.writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// [`try_update`](Self::try_update) for changes that cannot fail.
    pub fn update(&self, change: impl FnOnce(&mut Snapshot)) {
        let _ = self.try_update(|s| {
            change(s);
            Ok(())
        });
    }
}

impl Default for PromptRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for PromptRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let snapshot = self.current();
        f.debug_struct("PromptRegistry")
            .field("ids", &snapshot.list())
            .field("locale", snapshot.locale())
            .field("fallback_locale", snapshot.fallback_locale())
            .finish()
    }
}

fn english() -> Locale {
    Locale::default_fallback()
}

impl PromptRegistry {
    /// An empty registry whose locale and fallback locale are `en`.
    pub fn new() -> Self {
        PromptRegistry {
            shared: Arc::new(Shared {
                state: ArcSwap::from_pointee(Snapshot::new(english())),
                writer: Mutex::new(Vec::new()),
                candidate: ArcSwapOption::empty(),
            }),
        }
    }

    /// The process-level registry, created empty on first use.
    ///
    /// Subsystems register their defaults here and the host configures it,
    /// without passing a registry around.
    pub fn global() -> &'static PromptRegistry {
        static GLOBAL: OnceLock<PromptRegistry> = OnceLock::new();
        GLOBAL.get_or_init(PromptRegistry::new)
    }

    /// The current state, for several renders that must agree with each
    /// other.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.shared.state.load_full()
    }

    /// The split running on a followed label and the arm `subject` gets,
    /// if a split runs: see [`split`](crate::split).
    pub fn arm_for(&self, subject: &str) -> Option<(u64, Arm)> {
        let candidate = self.shared.candidate.load();
        let candidate = candidate.as_ref()?;
        Some((candidate.rule.id, candidate.rule.arm(subject)))
    }

    /// The state `subject` is served: the candidate's of the split
    /// running, for the subjects its share picks (by the subject's key and
    /// the split's id, the same in every process), else the registry's
    /// own. Render from it as from [`snapshot`](Self::snapshot): text,
    /// traced, chat.
    pub fn snapshot_for(&self, subject: &str) -> Arc<Snapshot> {
        let candidate = self.shared.candidate.load();
        match &*candidate {
            Some(c) if c.rule.arm(subject) == Arm::Candidate => c.state.load_full(),
            _ => self.snapshot(),
        }
    }

    /// Renders `request` from the state its subject is served (see
    /// [`snapshot_for`](Self::snapshot_for); no subject: the registry's
    /// own): text or messages, in the form it asks, with the trace when it
    /// asks for it. Every other `render*` method is a shorthand for one
    /// request.
    ///
    /// ```
    /// use promptreg_core::{Form, PromptRegistry, RenderRequest, Rendering};
    ///
    /// let registry = PromptRegistry::new();
    /// registry.register_default("greeting", "Hello.")?;
    /// registry.set_override("greeting", "fr", "Bonjour.")?;
    /// let request = RenderRequest::new("greeting", &()).locale_tag("fr-CA")?.subject("user-7");
    /// let output = registry.render_request(&request)?;
    /// assert_eq!(output.into_rendering(), Rendering::Text("Bonjour.".into()));
    /// // As messages: a text prompt is one `system` message.
    /// let messages = registry.render_request(&request.form(Form::Messages))?.into_rendering().into_messages();
    /// assert_eq!(messages[0].content, "Bonjour.");
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// See [`Snapshot::render_request`].
    #[inline]
    pub fn render_request<C: Serialize + Any>(
        &self,
        request: &RenderRequest<'_, C>,
    ) -> Result<RenderOutput, Error> {
        self.in_state_for(request.subject, |state| state.render_request(request))
    }

    /// Runs `render` with the state `subject` is served, without taking a
    /// reference count on it.
    #[inline]
    fn in_state_for<R>(&self, subject: Option<&str>, render: impl FnOnce(&Snapshot) -> R) -> R {
        if let Some(subject) = subject {
            let candidate = self.shared.candidate.load();
            if let Some(c) = &*candidate
                && c.rule.arm(subject) == Arm::Candidate
            {
                return render(&c.state.load());
            }
        }
        render(&self.current())
    }

    /// [`render`](Self::render) of the state `subject` is served
    /// ([`snapshot_for`](Self::snapshot_for)): a [`RenderRequest`] with a
    /// subject, of [`Form::Text`](crate::Form::Text).
    ///
    /// # Errors
    ///
    /// As [`render`](Self::render).
    pub fn render_for<C: Serialize + Any>(
        &self,
        subject: &str,
        id: &str,
        ctx: &C,
    ) -> Result<String, Error> {
        let request = RenderRequest::new(id, ctx)
            .subject(subject)
            .form(crate::rendering::Form::Text);
        let output = self.render_request(&request)?;
        Ok(output.into_rendering().into_text())
    }

    /// The registry's shared state, for a source to change it through (see
    /// [`Shared`]).
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    fn current(&self) -> Guard<Arc<Snapshot>> {
        self.shared.current()
    }

    fn try_update(
        &self,
        change: impl FnOnce(&mut Snapshot) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.shared.try_update(change)
    }

    fn update(&self, change: impl FnOnce(&mut Snapshot)) {
        self.shared.update(change)
    }

    /// Registers the default of `id`: the body rendered when no override
    /// matches. A later registration of the same id replaces the default and
    /// keeps the id's overrides and appenders.
    ///
    /// ```
    /// # use promptreg_core::{Locale, PromptRegistry};
    /// struct Page { title: String }
    ///
    /// let registry = PromptRegistry::new();
    /// registry.register_default("translate.system", "Translate the page faithfully.")?;
    /// registry.register_default("planner.system", |page: &Page, locale: &Locale| {
    ///     format!("Plan the steps for `{}`. Answer in {locale}.", page.title)
    /// })?;
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidId`](crate::ErrorKind::InvalidId).
    pub fn register_default<M>(&self, id: &str, body: impl IntoRenderer<M>) -> Result<(), Error> {
        self.register(id, Prompt::new(body))
    }

    /// Registers a default with pinned blocks and a description; see
    /// [`Prompt`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidId`](crate::ErrorKind::InvalidId);
    /// [`ErrorKind::InvalidChat`](crate::ErrorKind::InvalidChat) for a
    /// chat prompt without messages or whose rules attach past its last
    /// message.
    pub fn register(&self, id: &str, prompt: Prompt) -> Result<(), Error> {
        let id = PromptId::new(id)?;
        if let Some(chat) = prompt.as_chat() {
            valid_chat(&id, chat)?;
        }
        self.update(|s| s.register(id, prompt));
        Ok(())
    }

    /// Replaces the body of `id` for `locale` and every locale that falls
    /// back to it. A later call for the same id and locale wins. Pinned
    /// blocks and appenders still apply.
    ///
    /// The id need not be registered yet: subsystems may register their
    /// defaults after the host has configured overrides.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidId`](crate::ErrorKind::InvalidId),
    /// [`ErrorKind::InvalidLocale`](crate::ErrorKind::InvalidLocale).
    pub fn set_override<M>(
        &self,
        id: &str,
        locale: impl IntoLocale,
        body: impl IntoRenderer<M>,
    ) -> Result<(), Error> {
        let id = PromptId::new(id)?;
        let locale = locale.into_locale()?;
        let body = body.into_renderer();
        self.update(|s| s.set_override(id, locale, body, None));
        Ok(())
    }

    /// Replaces the messages of chat prompt `id` for `locale` and every
    /// locale that falls back to it: the whole list, as a pack's locale
    /// variant does. Pinned blocks, appenders and the user's configuration
    /// still apply (see [`Chat`]).
    ///
    /// ```
    /// use promptreg_core::{Chat, Prompt, PromptRegistry};
    ///
    /// let registry = PromptRegistry::new();
    /// registry.register("greeter", Prompt::chat(Chat::new().system("Greet.").user("Hi")))?;
    /// registry.set_chat_override("greeter", "ja", Chat::new().system("挨拶して。").user("こんにちは"))?;
    /// let ja = registry.render_messages_in("greeter", &(), "ja-JP", &[])?;
    /// assert_eq!(ja[1].content, "こんにちは");
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidId`](crate::ErrorKind::InvalidId),
    /// [`ErrorKind::InvalidLocale`](crate::ErrorKind::InvalidLocale),
    /// [`ErrorKind::InvalidChat`](crate::ErrorKind::InvalidChat) as for
    /// [`register`](Self::register).
    pub fn set_chat_override(
        &self,
        id: &str,
        locale: impl IntoLocale,
        chat: Chat,
    ) -> Result<(), Error> {
        let id = PromptId::new(id)?;
        let locale = locale.into_locale()?;
        valid_chat(&id, &chat)?;
        self.update(|s| s.set_chat_override(id, locale, Arc::new(chat), None));
        Ok(())
    }

    /// Gives `id` its own model settings for `locale` and every locale
    /// that matches it, found by the same locale matching as a body
    /// override; other locales keep the default's
    /// ([`Prompt::with_model`]). The settings replace the default's whole:
    /// a pack merges a variant's keys over its default's before it calls
    /// this.
    ///
    /// ```
    /// use promptreg_core::{JsonObject, Prompt, PromptRegistry};
    /// use serde_json::json;
    ///
    /// let settings = |v| JsonObject::from_value(v).unwrap();
    /// let registry = PromptRegistry::new();
    /// registry.register(
    ///     "narrator",
    ///     Prompt::new("Narrate.").with_model(settings(json!({ "model": "small", "temperature": 0.2 }))),
    /// )?;
    /// registry.set_model_settings("narrator", "ja", settings(json!({ "model": "small-ja" })))?;
    ///
    /// let ja = registry.model_settings_in("narrator", "ja-JP")?.unwrap();
    /// assert_eq!(ja.model_name().as_deref(), Some("small-ja"));
    /// let fr = registry.render_traced_in("narrator", &(), "fr")?.model.unwrap();
    /// assert_eq!(fr.get("temperature"), Some(json!(0.2)));
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidId`](crate::ErrorKind::InvalidId),
    /// [`ErrorKind::InvalidLocale`](crate::ErrorKind::InvalidLocale).
    pub fn set_model_settings(
        &self,
        id: &str,
        locale: impl IntoLocale,
        settings: JsonObject,
    ) -> Result<(), Error> {
        let id = PromptId::new(id)?;
        let locale = locale.into_locale()?;
        self.update(|s| s.set_model_settings(id, locale, settings));
        Ok(())
    }

    /// Gives pinned block `pin` of `id` its own text for `locale` and every
    /// locale that matches it, as [`set_override`](Self::set_override) does
    /// for the body: a Japanese render ends with a Japanese pinned rule.
    ///
    /// The block itself stays pinned whatever replaces the body; only its
    /// text changes. Each block follows locale matching on its own, so a
    /// locale may translate some blocks and leave the others to the
    /// default's text. A translation set before the default is registered
    /// is kept, and one for a position the default does not have is
    /// never rendered.
    ///
    /// ```
    /// use promptreg_core::{Pin, Prompt, PromptRegistry};
    ///
    /// let registry = PromptRegistry::new();
    /// registry.register("auditor", Prompt::new("Audit the work.").pin_tail("Answer PASS or FAIL."))?;
    /// registry.set_override("auditor", "ja", "作業を監査してください。")?;
    /// registry.translate_pin("auditor", "ja", Pin::Tail(0), "PASS か FAIL で答えてください。")?;
    ///
    /// assert_eq!(
    ///     registry.render_in("auditor", &(), "ja-JP")?,
    ///     "作業を監査してください。\n\nPASS か FAIL で答えてください。"
    /// );
    /// assert!(registry.translate_pin("auditor", "ja", Pin::Tail(1), "…").is_err());
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidId`](crate::ErrorKind::InvalidId),
    /// [`ErrorKind::InvalidLocale`](crate::ErrorKind::InvalidLocale),
    /// [`ErrorKind::UnknownPin`](crate::ErrorKind::UnknownPin) when `id`
    /// has a default without that block.
    pub fn translate_pin<M>(
        &self,
        id: &str,
        locale: impl IntoLocale,
        pin: Pin,
        text: impl IntoRenderer<M>,
    ) -> Result<(), Error> {
        let id = PromptId::new(id)?;
        let locale = locale.into_locale()?;
        let text = text.into_renderer();
        self.try_update(|s| s.translate_pin(id, locale, pin, text))
    }

    /// Appends a block to `id` in every locale. Appenders stack in the order
    /// they are registered, interleaved with [`append_all`](Self::append_all)
    /// rules by that same order.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidId`](crate::ErrorKind::InvalidId).
    pub fn append<M>(&self, id: &str, block: impl IntoRenderer<M>) -> Result<(), Error> {
        let id = PromptId::new(id)?;
        let block = block.into_renderer();
        self.update(|s| s.append(id, block));
        Ok(())
    }

    /// Appends a block to every prompt, including prompts registered later:
    /// a compliance layer in one call.
    ///
    /// [`reset`](Self::reset) of one id keeps these rules (they belong to no
    /// single prompt); [`reset_all`](Self::reset_all) removes them.
    ///
    /// # Errors
    ///
    /// None today. It returns a `Result` like every other writer, so that
    /// callers treat them alike and a limit added later is not a breaking
    /// change.
    pub fn append_all<M>(&self, block: impl IntoRenderer<M>) -> Result<(), Error> {
        let block = block.into_renderer();
        self.update(|s| s.append_all(block));
        Ok(())
    }

    /// Clears the overrides, pin translations, locales' model settings and
    /// appenders of `id`; its default (with its model settings) and pinned
    /// blocks stay. An id with overrides or appenders but
    /// no default (a misspelt id, say; see [`problems`](Self::problems)) is
    /// cleared entirely and no longer exists afterwards.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidId`](crate::ErrorKind::InvalidId),
    /// [`ErrorKind::UnknownId`](crate::ErrorKind::UnknownId) when nothing
    /// (no default, override or appender) is registered under `id`.
    pub fn reset(&self, id: &str) -> Result<(), Error> {
        self.try_update(|s| s.reset(id))
    }

    /// Clears every override and appender, including the rules of
    /// [`append_all`](Self::append_all); defaults stay.
    pub fn reset_all(&self) {
        self.update(|s| s.reset_all());
    }

    /// Sets the locale of renders that do not name one. Takes effect on the
    /// next render; nothing is re-registered.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidLocale`](crate::ErrorKind::InvalidLocale).
    pub fn set_locale(&self, locale: impl IntoLocale) -> Result<(), Error> {
        let locale = locale.into_locale()?;
        self.update(|s| s.set_locale(locale));
        Ok(())
    }

    /// The locale of renders that do not name one (initially `en`).
    pub fn locale(&self) -> Locale {
        self.current().locale().clone()
    }

    /// Sets the locale whose overrides are tried after the render locale's
    /// own chain, before the default (initially `en`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidLocale`](crate::ErrorKind::InvalidLocale).
    pub fn set_fallback_locale(&self, locale: impl IntoLocale) -> Result<(), Error> {
        let locale = locale.into_locale()?;
        self.update(|s| s.set_fallback_locale(locale));
        Ok(())
    }

    /// The fallback locale.
    pub fn fallback_locale(&self) -> Locale {
        self.current().fallback_locale().clone()
    }

    /// Whether a default or an override is registered under `id`.
    pub fn has(&self, id: &str) -> bool {
        self.current().has(id)
    }

    /// Every registered id, sorted by byte order.
    pub fn list(&self) -> Vec<PromptId> {
        self.current().list()
    }

    /// Ids with overrides or appenders but no default; see
    /// [`Snapshot::problems`].
    pub fn problems(&self) -> Vec<RegistryProblem> {
        self.current().problems()
    }

    /// Renders `id` for the current [`locale`](Self::locale).
    ///
    /// The body is the override registered for the locale or the nearest
    /// entry of its fallback chain, then of the fallback locale's chain, else
    /// the default. Around it come the pinned blocks, after it the appenders;
    /// parts are joined by one blank line and blank parts are skipped.
    ///
    /// Static text is copied; every other renderer runs now. The render
    /// reads no files and takes no lock.
    ///
    /// A prompt that needs no context renders with `&()`, or with
    /// [`render_plain`](Self::render_plain).
    ///
    /// # The context type
    ///
    /// Typed renderers receive the context by downcasting it, so its type
    /// must be `'static`: it may own data or hold `Arc`s, but not borrow.
    /// A context that borrows, such as `struct Page<'a> { title: &'a str }`,
    /// fails to compile with "borrowed value does not live long enough ...
    /// argument requires that `page` is borrowed for `'static`". Give the
    /// struct owned fields (`String`, `Arc<str>`), or pass a
    /// `serde_json::Value` to templates. It must also implement
    /// `serde::Serialize`, which is how templates see its fields.
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::InvalidId`](crate::ErrorKind::InvalidId) or
    ///   [`ErrorKind::UnknownId`](crate::ErrorKind::UnknownId) (with the
    ///   nearest registered id as suggestion);
    /// - [`ErrorKind::NoPromptForLocale`](crate::ErrorKind::NoPromptForLocale)
    ///   when only overrides for other locales exist;
    /// - [`ErrorKind::ContextType`](crate::ErrorKind::ContextType) when a
    ///   renderer expects another context type;
    /// - [`ErrorKind::RendererPanicked`](crate::ErrorKind::RendererPanicked)
    ///   naming the part whose renderer panicked. The registry stays usable.
    pub fn render<C: Serialize + Any>(&self, id: &str, ctx: &C) -> Result<String, Error> {
        self.current().render(id, ctx)
    }

    /// Renders `id`, a prompt that needs no context, for the current
    /// locale: `render(id, &())`.
    ///
    /// ```
    /// # use promptreg_core::PromptRegistry;
    /// let registry = PromptRegistry::new();
    /// registry.register_default("translate.system", "Translate the page faithfully.")?;
    /// assert_eq!(registry.render_plain("translate.system")?, "Translate the page faithfully.");
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`render`](Self::render); a renderer that needs a context fails
    /// with [`ErrorKind::ContextType`](crate::ErrorKind::ContextType).
    pub fn render_plain(&self, id: &str) -> Result<String, Error> {
        self.render(id, &())
    }

    /// [`render_plain`](Self::render_plain) for `locale`.
    ///
    /// # Errors
    ///
    /// As [`render_in`](Self::render_in).
    pub fn render_plain_in(&self, id: &str, locale: impl IntoLocale) -> Result<String, Error> {
        self.render_in(id, &(), locale)
    }

    /// Renders `id` for `locale`; see [`render`](Self::render).
    ///
    /// # Errors
    ///
    /// As [`render`](Self::render), and
    /// [`ErrorKind::InvalidLocale`](crate::ErrorKind::InvalidLocale).
    pub fn render_in<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: impl IntoLocale,
    ) -> Result<String, Error> {
        self.current().render_in(id, ctx, locale)
    }

    /// Renders `id` for the current locale and records, for every part,
    /// where it came from and its byte range in the text.
    ///
    /// # Errors
    ///
    /// As [`render`](Self::render).
    pub fn render_traced<C: Serialize + Any>(&self, id: &str, ctx: &C) -> Result<Rendered, Error> {
        self.current().render_traced(id, ctx)
    }

    /// [`render_traced`](Self::render_traced) for `locale`.
    ///
    /// # Errors
    ///
    /// As [`render_in`](Self::render_in).
    pub fn render_traced_in<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: impl IntoLocale,
    ) -> Result<Rendered, Error> {
        self.current().render_traced_in(id, ctx, locale)
    }

    /// Renders the messages of chat prompt `id` for the current locale,
    /// inserting `history` at its placeholders: each entry is a
    /// placeholder's name and the messages to insert (`&[]` for none; a
    /// placeholder given nothing inserts nothing). A text prompt renders as
    /// one `system` message. A message that renders blank is left out.
    ///
    /// ```
    /// use promptreg_core::{Chat, Message, Prompt, PromptRegistry, Role};
    ///
    /// let registry = PromptRegistry::new();
    /// registry.register("critic", Prompt::chat(
    ///     Chat::new().system("Review the draft.").history("draft").message(Role::named("critic"), "Be harsh."),
    /// ))?;
    /// let draft = [Message::new(Role::User, "My essay.")];
    /// let messages = registry.render_messages("critic", &(), &[("draft", &draft[..])])?;
    /// let json = serde_json::to_string(&messages).unwrap();
    /// assert_eq!(json, r#"[{"role":"system","content":"Review the draft."},{"role":"user","content":"My essay."},{"role":"critic","content":"Be harsh."}]"#);
    ///
    /// // A chat prompt is not one text, unless asked for explicitly.
    /// let err = registry.render("critic", &()).unwrap_err();
    /// assert_eq!(err.kind(), promptreg_core::ErrorKind::ChatPrompt);
    /// assert!(registry.render_chat_as_text("critic", &(), "en", &[])?.starts_with("# system\nReview the draft."));
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`render`](Self::render), and
    /// [`ErrorKind::InvalidChat`](crate::ErrorKind::InvalidChat) for a
    /// history whose name is not a placeholder of the prompt (with "did
    /// you mean").
    pub fn render_messages<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        history: &Histories<'_>,
    ) -> Result<Vec<Message>, Error> {
        self.current().render_messages(id, ctx, history)
    }

    /// [`render_messages`](Self::render_messages) for `locale`.
    ///
    /// # Errors
    ///
    /// As [`render_messages`](Self::render_messages), and
    /// [`ErrorKind::InvalidLocale`](crate::ErrorKind::InvalidLocale).
    pub fn render_messages_in<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: impl IntoLocale,
        history: &Histories<'_>,
    ) -> Result<Vec<Message>, Error> {
        self.current().render_messages_in(id, ctx, locale, history)
    }

    /// [`render_messages_in`](Self::render_messages_in), recording for
    /// every message where each of its parts came from.
    ///
    /// # Errors
    ///
    /// As [`render_messages_in`](Self::render_messages_in).
    pub fn render_messages_traced_in<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: impl IntoLocale,
        history: &Histories<'_>,
    ) -> Result<RenderedChat, Error> {
        self.current()
            .render_messages_traced_in(id, ctx, locale, history)
    }

    /// Renders chat prompt `id` as role-headed text (`# system`, the
    /// content, a blank line, `# user`, ...), the syntax of a pack's chat
    /// file: for logs and reviews, when text is explicitly wanted. A text
    /// prompt renders as [`render_in`](Self::render_in) does.
    ///
    /// # Errors
    ///
    /// As [`render_messages_in`](Self::render_messages_in).
    pub fn render_chat_as_text<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: impl IntoLocale,
        history: &Histories<'_>,
    ) -> Result<String, Error> {
        self.current().render_chat_as_text(id, ctx, locale, history)
    }

    /// The model settings `id` renders with in the current locale; see
    /// [`Snapshot::model_settings`].
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownId`](crate::ErrorKind::UnknownId) when `id` is
    /// not registered.
    pub fn model_settings(&self, id: &str) -> Result<Option<JsonObject>, Error> {
        let snapshot = self.current();
        snapshot.model_settings(id, snapshot.locale().clone())
    }

    /// The model settings `id` renders with for `locale`.
    ///
    /// # Errors
    ///
    /// As [`model_settings`](Self::model_settings), and
    /// [`ErrorKind::InvalidLocale`](crate::ErrorKind::InvalidLocale).
    pub fn model_settings_in(
        &self,
        id: &str,
        locale: impl IntoLocale,
    ) -> Result<Option<JsonObject>, Error> {
        self.current().model_settings(id, locale)
    }
}

/// A chat declaration has messages, and its rules attach to one of them.
fn valid_chat(id: &PromptId, chat: &Chat) -> Result<(), Error> {
    match chat.problem() {
        Some(problem) => Err(Error::new(
            crate::error::ErrorKind::InvalidChat,
            format!("chat prompt `{id}`: {problem}"),
        )
        .with_id(id.as_str())),
        None => Ok(()),
    }
}

#[cfg(test)]
mod split_tests {
    use super::*;
    use crate::split::bucket;

    /// A subject that the split `rule` sends to `arm`.
    fn subject_on(rule: SplitRule, arm: Arm) -> String {
        (0..)
            .map(|n| format!("user-{n}"))
            .find(|s| rule.arm(s) == arm)
            .unwrap_or_default()
    }

    #[test]
    fn a_split_serves_its_candidate_to_its_share_and_follows_every_change() {
        let registry = PromptRegistry::new();
        registry.register_default("greeting", "Hello.").unwrap();
        let rule = SplitRule {
            id: 9,
            basis_points: 5000,
        };
        assert_eq!(registry.arm_for("anyone"), None);
        registry.shared.set_candidate(rule, |main| {
            let mut next = Snapshot::clone(main);
            let id = PromptId::new("greeting").unwrap();
            next.register(id, Prompt::new("Hi."));
            next
        });
        let (stable, candidate) = (
            subject_on(rule, Arm::Stable),
            subject_on(rule, Arm::Candidate),
        );
        assert!(bucket(9, &candidate) < 5000);
        assert_eq!(
            registry.render_for(&stable, "greeting", &()).unwrap(),
            "Hello."
        );
        assert_eq!(
            registry.render_for(&candidate, "greeting", &()).unwrap(),
            "Hi."
        );
        assert_eq!(registry.arm_for(&candidate), Some((9, Arm::Candidate)));
        assert_eq!(
            registry.render("greeting", &()).unwrap(),
            "Hello.",
            "no subject: stable"
        );

        // A change of the registry reaches both arms: the host's rule
        // applies to the candidate too.
        registry.append("greeting", "Be brief.").unwrap();
        let traced = registry
            .snapshot_for(&candidate)
            .render_traced("greeting", &())
            .unwrap();
        assert_eq!(traced.text, "Hi.\n\nBe brief.");
        assert_eq!(
            registry.render_for(&stable, "greeting", &()).unwrap(),
            "Hello.\n\nBe brief."
        );

        registry.shared.clear_candidate();
        assert_eq!(
            registry.render_for(&candidate, "greeting", &()).unwrap(),
            "Hello.\n\nBe brief."
        );
        assert_eq!(registry.arm_for(&candidate), None);
    }

    #[test]
    fn a_subject_picks_its_arm_for_chat_prompts_in_any_locale() {
        use crate::chat::{Chat, Message, Role};
        use crate::rendering::{Form, Rendering, Traced};

        let registry = PromptRegistry::new();
        let chat = |system: &str| Prompt::chat(Chat::new().system(system).history("turns"));
        registry.register("helper", chat("Help.")).unwrap();
        registry
            .set_chat_override(
                "helper",
                "ja",
                Chat::new().system("手伝って。").history("turns"),
            )
            .unwrap();
        let rule = SplitRule {
            id: 4,
            basis_points: 5000,
        };
        registry.shared.set_candidate(rule, |main| {
            let mut next = Snapshot::clone(main);
            let id = PromptId::new("helper").unwrap();
            let locale = Locale::parse("ja").unwrap();
            let candidate = Chat::new().system("候補。").history("turns");
            next.set_chat_override(id, locale, Arc::new(candidate), None);
            next
        });
        let (stable, candidate) = (
            subject_on(rule, Arm::Stable),
            subject_on(rule, Arm::Candidate),
        );
        let turns = [Message::new(Role::User, "こんにちは")];
        let histories = [("turns", &turns[..])];
        let request = |subject| {
            RenderRequest::new("helper", &())
                .locale_tag("ja-JP")
                .unwrap()
                .histories(&histories)
                .subject(subject)
        };
        let first =
            |output: RenderOutput| output.into_rendering().into_messages()[0].content.clone();
        assert_eq!(
            first(registry.render_request(&request(&stable)).unwrap()),
            "手伝って。"
        );
        assert_eq!(
            first(registry.render_request(&request(&candidate)).unwrap()),
            "候補。"
        );
        // Every form and the trace, from the candidate's state.
        let traced = registry
            .render_request(&request(&candidate).traced())
            .unwrap()
            .into_traced();
        let Some(Traced::Chat(chat)) = traced else {
            panic!("a chat prompt is traced as messages: {traced:?}");
        };
        assert_eq!(chat.messages[0].content, "候補。");
        assert_eq!(chat.messages[1].content, "こんにちは");
        let as_messages = registry
            .render_request(&request(&candidate).form(Form::Messages))
            .unwrap();
        assert!(matches!(as_messages.into_rendering(), Rendering::Messages(m) if m.len() == 2));
        let as_text = registry.render_request(&request(&candidate).form(Form::Text));
        assert_eq!(
            as_text.unwrap_err().kind(),
            crate::error::ErrorKind::ChatPrompt
        );
        // English has no candidate override: both arms alike.
        let en = RenderRequest::new("helper", &())
            .histories(&histories)
            .subject(&candidate);
        assert_eq!(first(registry.render_request(&en).unwrap()), "Help.");
    }

    #[test]
    fn a_request_takes_each_form_of_a_text_prompt() {
        use crate::chat::{Message, Role};
        use crate::rendering::{Form, Rendering, Traced};

        let registry = PromptRegistry::new();
        registry.register_default("plain", "Be brief.").unwrap();
        let request = RenderRequest::new("plain", &());
        let text = registry.render_request(&request).unwrap().into_rendering();
        assert_eq!(text, Rendering::Text("Be brief.".into()));
        let messages = registry
            .render_request(&request.clone().form(Form::Messages))
            .unwrap()
            .into_rendering();
        assert_eq!(
            messages,
            Rendering::Messages(vec![Message::new(Role::System, "Be brief.")])
        );
        let traced = registry.render_request(&request.clone().traced()).unwrap();
        assert!(matches!(traced.into_traced(), Some(Traced::Text(r)) if r.parts.len() == 1));
        // A history has no placeholder in a text prompt.
        let turns = [Message::new(Role::User, "Hi")];
        let histories = [("turns", &turns[..])];
        let err = registry
            .render_request(&request.histories(&histories))
            .unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::InvalidChat);
    }
}
