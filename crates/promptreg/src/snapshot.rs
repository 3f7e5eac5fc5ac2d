//! [`Snapshot`]: one immutable, consistent state of a registry.
//!
//! Writers build a new snapshot from the current one and publish it whole;
//! readers render from the snapshot they loaded, so a render never sees half
//! of a change.

use std::any::{Any, type_name};
use std::sync::Arc;

use serde::Serialize;

use crate::Map;
use crate::chat::{Chat, Item, Message, MessageSource, RenderedChat, RenderedMessage, Role};
use crate::compose::{self, Appender, Matched, Part, Pins, Plan, Rendered, Slot};
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::error::{Error, ErrorKind};
use crate::id::{self, PromptId};
use crate::json_object::JsonObject;
use crate::layer::{Layer, LayerChoice};
use crate::locale::{IntoLocale, Locale};
use crate::locale_match::{self, LocaleStep, match_locale, script_index};
use crate::prompt::{Pin, Prompt};
use crate::provenance::Provenance;
use crate::renderer::{RenderCx, Renderer};
use crate::suggest;

/// An immutable state of a [`PromptRegistry`](crate::PromptRegistry).
///
/// [`PromptRegistry::snapshot`](crate::PromptRegistry::snapshot) returns
/// one. Rendering several prompts from the same snapshot guarantees they all
/// see the same overrides, appenders and locale, even while other threads
/// change the registry. A snapshot is cheap to hold and to clone.
#[derive(Clone)]
pub struct Snapshot {
    entries: Map<PromptId, Arc<Entry>>,
    global: Vec<Appender>,
    locale: Locale,
    fallback: Locale,
    next_seq: u64,
    layer: Option<Arc<dyn Layer>>,
}

/// Something wrong with what is registered under one id; see
/// [`Snapshot::problems`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RegistryProblem {
    /// The id.
    pub id: PromptId,
    /// What is wrong, as a warning with a suggestion.
    pub diagnostic: Diagnostic,
}

impl std::fmt::Display for RegistryProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.diagnostic.fmt(f)
    }
}

/// Everything registered under one id.
#[derive(Clone, Default)]
struct Entry {
    default: Option<Prompt>,
    overrides: Map<Box<str>, Variant>,
    /// Translations of the default's pinned blocks, by locale key.
    pins: Map<Box<str>, PinVariant>,
    /// Model settings of a locale, whole (a source merges them with the
    /// default's before), by locale key.
    models: Map<Box<str>, ModelVariant>,
    /// The locale keys of `overrides`, `pins` and `models` by language and script
    /// (`zh-Hant`), likeliest region first, then by tag: the same-script
    /// step of locale matching, computed before the snapshot is published
    /// so a render only looks it up.
    by_script: Map<Box<str>, Box<[Box<str>]>>,
    /// A variant changed since `by_script` was computed. A change marks it
    /// and [`Snapshot::index_changed`] recomputes it once: a pack of n
    /// variants indexes them once, not n times.
    scripts_stale: bool,
    appenders: Vec<Appender>,
}

/// A locale override of the body.
#[derive(Clone)]
struct Variant {
    locale: Locale,
    renderer: Renderer,
    /// The messages of a chat variant; `renderer` is then unused.
    chat: Option<Arc<Chat>>,
    provenance: Option<Arc<Provenance>>,
}

/// The body a render uses: text, or the messages of a chat prompt.
#[derive(Clone, Copy)]
enum Body<'a> {
    Text(&'a Renderer),
    Chat(&'a Chat),
}

impl<'a> Body<'a> {
    fn of(renderer: &'a Renderer, chat: Option<&'a Arc<Chat>>) -> Self {
        match chat {
            Some(chat) => Body::Chat(chat),
            None => Body::Text(renderer),
        }
    }
}

/// The histories a chat render inserts, by placeholder name.
pub(crate) type Histories<'h> = [(&'h str, &'h [Message])];

/// One locale's model settings.
#[derive(Clone)]
struct ModelVariant {
    locale: Locale,
    settings: JsonObject,
}

/// One locale's translations of pinned blocks, by position (`None`: not
/// translated in this locale).
#[derive(Clone)]
struct PinVariant {
    locale: Locale,
    head: Vec<Option<Renderer>>,
    tail: Vec<Option<Renderer>>,
    provenance: Option<Arc<Provenance>>,
}

impl PinVariant {
    fn block(&self, pin: Pin) -> Option<&Renderer> {
        match pin {
            Pin::Head(i) => self.head.get(i)?.as_ref(),
            Pin::Tail(i) => self.tail.get(i)?.as_ref(),
        }
    }
}

impl Entry {
    fn is_registered(&self) -> bool {
        self.default.is_some() || !self.overrides.is_empty()
    }

    /// Drops every override, pin translation and appender.
    fn clear_variants(&mut self) {
        self.overrides.clear();
        self.pins.clear();
        self.models.clear();
        self.by_script.clear();
        self.scripts_stale = false;
        self.appenders.clear();
    }

    /// Recomputes the same-script index after variants changed.
    fn index_scripts(&mut self) {
        let locales = self.overrides.values().map(|v| &v.locale);
        let locales = locales
            .chain(self.pins.values().map(|v| &v.locale))
            .chain(self.models.values().map(|v| &v.locale));
        self.by_script = script_index(locales);
        self.scripts_stale = false;
    }
}

// Read side.
impl Snapshot {
    /// Whether a default or an override is registered under `id`.
    pub fn has(&self, id: &str) -> bool {
        self.entries.get(id).is_some_and(|e| e.is_registered())
    }

    /// Every registered id (default or override), sorted by byte order.
    pub fn list(&self) -> Vec<PromptId> {
        let mut ids: Vec<PromptId> = self
            .entries
            .iter()
            .filter(|(_, e)| e.is_registered())
            .map(|(id, _)| id.clone())
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Ids that have overrides or appenders but no default, sorted: most
    /// often a misspelt id, whose rules never reach the prompt they were
    /// meant for. Each is a warning ([`DiagnosticCode::NoDefault`]) with
    /// "did you mean" when a registered default is close.
    ///
    /// An id with overrides still renders in their locales, and a default
    /// may be registered later (a subsystem loaded after the host configured
    /// it), so these are reported, never refused.
    ///
    /// ```
    /// use promptreg::PromptRegistry;
    ///
    /// let registry = PromptRegistry::new();
    /// registry.register_default("planner.system", "Plan the steps.")?;
    /// registry.append("planer.system", "Never skip a step.")?;
    ///
    /// let problems = registry.snapshot().problems();
    /// assert_eq!(problems[0].id, "planer.system");
    /// let warning = &problems[0].diagnostic;
    /// assert_eq!(warning.message, "`planer.system` has appenders but no default is registered");
    /// assert_eq!(warning.suggestion.as_deref(), Some("did you mean `planner.system`?"));
    /// # Ok::<(), promptreg::Error>(())
    /// ```
    pub fn problems(&self) -> Vec<RegistryProblem> {
        let mut orphans: Vec<(&PromptId, &Entry)> = self
            .entries
            .iter()
            .filter(|(_, e)| e.default.is_none())
            .map(|(id, e)| (id, &**e))
            .collect();
        orphans.sort_unstable_by_key(|(id, _)| *id);
        orphans
            .into_iter()
            .map(|(id, entry)| self.no_default(id, entry))
            .collect()
    }

    fn no_default(&self, id: &PromptId, entry: &Entry) -> RegistryProblem {
        let locales: Vec<String> = self
            .override_locales(id)
            .iter()
            .map(ToString::to_string)
            .collect();
        let what = match (locales.is_empty(), entry.appenders.is_empty()) {
            (false, true) => format!("overrides ({})", locales.join(", ")),
            (true, false) => "appenders".to_owned(),
            _ => format!("overrides ({}) and appenders", locales.join(", ")),
        };
        let defaults = self
            .entries
            .iter()
            .filter(|(_, e)| e.default.is_some())
            .map(|(k, _)| k.as_str());
        let hint = suggest::did_you_mean(id, defaults).unwrap_or_else(|| {
            "register a default for it, or remove the overrides and appenders if the id is misspelt"
                .to_owned()
        });
        let diagnostic = Diagnostic::warning(
            DiagnosticCode::NoDefault,
            format!("`{id}` has {what} but no default is registered"),
        )
        .suggest(Some(hint));
        RegistryProblem {
            id: id.clone(),
            diagnostic,
        }
    }

    /// The registered default of `id`, with its pinned blocks and
    /// description.
    pub fn default_prompt(&self, id: &str) -> Option<&Prompt> {
        self.entries.get(id)?.default.as_ref()
    }

    /// The locales `id` has overrides for, sorted.
    pub fn override_locales(&self, id: &str) -> Vec<Locale> {
        let mut locales: Vec<Locale> = self
            .entries
            .get(id)
            .map(|e| e.overrides.values().map(|v| v.locale.clone()).collect())
            .unwrap_or_default();
        locales.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        locales
    }

    /// The locale used by renders that do not name one.
    pub fn locale(&self) -> &Locale {
        &self.locale
    }

    /// The locale whose overrides are tried after the render locale's chain.
    pub fn fallback_locale(&self) -> &Locale {
        &self.fallback
    }

    /// The layer over the prompts (the user's configuration), if any.
    #[cfg_attr(not(feature = "config"), allow(dead_code))]
    pub(crate) fn layer(&self) -> Option<&Arc<dyn Layer>> {
        self.layer.as_ref()
    }

    /// Renders `id` for the current locale with context `ctx`.
    ///
    /// # Errors
    ///
    /// See [`PromptRegistry::render`](crate::PromptRegistry::render).
    pub fn render<C: Serialize + Any>(&self, id: &str, ctx: &C) -> Result<String, Error> {
        self.compose(id, ctx, &self.locale, None)
    }

    /// Renders `id`, a prompt that needs no context, for the current locale.
    ///
    /// # Errors
    ///
    /// See [`PromptRegistry::render_plain`](crate::PromptRegistry::render_plain).
    pub fn render_plain(&self, id: &str) -> Result<String, Error> {
        self.render(id, &())
    }

    /// Renders `id` for `locale` with context `ctx`.
    ///
    /// # Errors
    ///
    /// See [`PromptRegistry::render`](crate::PromptRegistry::render).
    pub fn render_in<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: impl IntoLocale,
    ) -> Result<String, Error> {
        match locale.as_parsed() {
            Some(locale) => self.compose(id, ctx, locale, None),
            None => self.compose(id, ctx, &locale.into_locale()?, None),
        }
    }

    /// Renders `id` for the current locale and records where every part came
    /// from.
    ///
    /// # Errors
    ///
    /// See [`PromptRegistry::render`](crate::PromptRegistry::render).
    pub fn render_traced<C: Serialize + Any>(&self, id: &str, ctx: &C) -> Result<Rendered, Error> {
        self.traced(id, ctx, self.locale.clone())
    }

    /// Renders `id` for `locale` and records where every part came from.
    ///
    /// # Errors
    ///
    /// See [`PromptRegistry::render`](crate::PromptRegistry::render).
    pub fn render_traced_in<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: impl IntoLocale,
    ) -> Result<Rendered, Error> {
        self.traced(id, ctx, locale.into_locale()?)
    }

    fn traced<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: Locale,
    ) -> Result<Rendered, Error> {
        let mut parts = Vec::new();
        let text = self.compose(id, ctx, &locale, Some(&mut parts))?;
        let (id, entry) = self.lookup(id)?;
        Ok(Rendered {
            id: id.clone(),
            text,
            model: self.model_of(entry, &locale).cloned(),
            metadata: entry.default.as_ref().and_then(|d| d.metadata.clone()),
            lookup: locale_match::lookup(&locale, &self.fallback),
            locale,
            parts,
        })
    }

    fn compose<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: &Locale,
        trace: Option<&mut Vec<Part>>,
    ) -> Result<String, Error> {
        let (id, entry) = self.lookup(id)?;
        let (slot, body) = self.body(id, entry, locale)?;
        let Body::Text(body) = body else {
            return Err(chat_as_text(id, locale));
        };
        let plan = self.plan(id, entry, locale, (slot, body), With::EVERYTHING);
        with_cx(ctx, locale, &self.fallback, |cx| {
            compose::compose(id, &plan, cx, trace)
        })
    }

    /// The parts of one composition: the body given, the user's blocks
    /// when `user` (the layer chooses them), and the pinned blocks and
    /// appenders when `attached`.
    #[inline]
    fn plan<'a>(
        &'a self,
        id: &PromptId,
        entry: &'a Entry,
        locale: &'a Locale,
        body: (Slot<'a>, &'a Renderer),
        with: With,
    ) -> Plan<'a> {
        let user = match with.user_block {
            true => self.user_choice(id, locale),
            false => None,
        };
        if !with.rules {
            return Plan {
                head: Pins::Default(&[]),
                pins_provenance: None,
                body,
                user,
                tail: Pins::Default(&[]),
                appenders: &[],
                global: &[],
            };
        }
        // Most prompts have no translated pins: their blocks are used as
        // they are, with no lookup.
        let (head, tail) = match &entry.default {
            Some(d) if entry.pins.is_empty() => (Pins::Default(d.head()), Pins::Default(d.tail())),
            _ => (
                self.pins(entry, locale, Pin::Head),
                self.pins(entry, locale, Pin::Tail),
            ),
        };
        Plan {
            head,
            pins_provenance: entry.default.as_ref().and_then(|d| d.provenance.as_ref()),
            body,
            user,
            tail,
            appenders: &entry.appenders,
            global: &self.global,
        }
    }

    fn user_choice(&self, id: &PromptId, locale: &Locale) -> Option<LayerChoice<'_>> {
        self.layer
            .as_deref()
            .and_then(|l| l.choose(id, locale, &self.fallback))
    }

    /// Renders the messages of `id` for `locale`, inserting `history` at
    /// its placeholders; a text prompt is one `system` message. With
    /// `trace`, each message records its parts. `M` is what the caller
    /// keeps of each message, so the untraced render builds its list once.
    fn compose_messages<C: Serialize + Any, M: From<RenderedMessage>>(
        &self,
        id: &str,
        ctx: &C,
        locale: &Locale,
        history: &Histories<'_>,
        trace: bool,
    ) -> Result<Vec<M>, Error> {
        let (id, entry) = self.lookup(id)?;
        let (slot, body) = self.body(id, entry, locale)?;
        let chat = match body {
            Body::Chat(chat) => chat,
            Body::Text(text) => {
                check_history(id, None, history)?;
                let plan = self.plan(id, entry, locale, (slot, text), With::EVERYTHING);
                let mut parts = Vec::new();
                let content = with_cx(ctx, locale, &self.fallback, |cx| {
                    compose::compose(id, &plan, cx, trace.then_some(&mut parts))
                })?;
                let message = RenderedMessage {
                    role: Role::System,
                    content,
                    parts,
                    source: MessageSource::Prompt { index: 0 },
                };
                return Ok([message]
                    .into_iter()
                    .filter(|m| !m.content.is_empty())
                    .map(M::from)
                    .collect());
            }
        };
        check_history(id, Some(chat), history)?;
        check_history_roles(id, chat, history)?;
        let (attached, user_target) = (chat.attached(), chat.user_target());
        let mut out = Vec::with_capacity(chat.items.len());
        let mut index = 0;
        with_cx(ctx, locale, &self.fallback, |cx| {
            for (at, item) in chat.items.iter().enumerate() {
                let (role, content) = match item {
                    Item::Message(role, content) => (role, content),
                    Item::History(name) => {
                        insert_history(history, name, &mut out);
                        continue;
                    }
                };
                let with = With {
                    user_block: Some(at) == user_target,
                    rules: Some(at) == attached,
                };
                let plan = self.plan(id, entry, locale, (slot, content), with);
                let mut parts = Vec::new();
                let content = compose::compose(id, &plan, cx, trace.then_some(&mut parts))?;
                // A message that renders blank is left out, as a blank part is.
                if !content.is_empty() {
                    out.push(M::from(RenderedMessage {
                        role: role.clone(),
                        content,
                        parts,
                        source: MessageSource::Prompt { index },
                    }));
                }
                index += 1;
            }
            Ok(out)
        })
    }

    /// Renders the messages of chat prompt `id` for the current locale,
    /// with `history` inserted at its placeholders (`&[]` for none).
    ///
    /// # Errors
    ///
    /// See [`PromptRegistry::render_messages`](crate::PromptRegistry::render_messages).
    pub fn render_messages<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        history: &Histories<'_>,
    ) -> Result<Vec<Message>, Error> {
        self.render_messages_in(id, ctx, self.locale.clone(), history)
    }

    /// [`render_messages`](Self::render_messages) for `locale`.
    ///
    /// # Errors
    ///
    /// See [`PromptRegistry::render_messages`](crate::PromptRegistry::render_messages).
    pub fn render_messages_in<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: impl IntoLocale,
        history: &Histories<'_>,
    ) -> Result<Vec<Message>, Error> {
        match locale.as_parsed() {
            Some(locale) => self.compose_messages(id, ctx, locale, history, false),
            None => self.compose_messages(id, ctx, &locale.into_locale()?, history, false),
        }
    }

    /// Renders the messages of `id` for `locale` and records where every
    /// part of every message came from.
    ///
    /// # Errors
    ///
    /// See [`PromptRegistry::render_messages`](crate::PromptRegistry::render_messages).
    pub fn render_messages_traced_in<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: impl IntoLocale,
        history: &Histories<'_>,
    ) -> Result<RenderedChat, Error> {
        let locale = locale.into_locale()?;
        let messages = self.compose_messages(id, ctx, &locale, history, true)?;
        let (id, entry) = self.lookup(id)?;
        Ok(RenderedChat {
            id: id.clone(),
            messages,
            model: self.model_of(entry, &locale).cloned(),
            metadata: entry.default.as_ref().and_then(|d| d.metadata.clone()),
            lookup: locale_match::lookup(&locale, &self.fallback),
            locale,
        })
    }

    /// Renders chat prompt `id` as role-headed text
    /// ([`messages_as_text`](crate::messages_as_text)), when text is what
    /// is wanted (a log, a review); a text prompt renders as it always does.
    ///
    /// # Errors
    ///
    /// See [`PromptRegistry::render_messages`](crate::PromptRegistry::render_messages).
    pub fn render_chat_as_text<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: impl IntoLocale,
        history: &Histories<'_>,
    ) -> Result<String, Error> {
        let locale = locale.into_locale()?;
        if !self.is_chat(id, &locale)? {
            check_history(&PromptId::new(id)?, None, history)?;
            return self.compose(id, ctx, &locale, None);
        }
        let messages: Vec<Message> = self.compose_messages(id, ctx, &locale, history, false)?;
        Ok(crate::chat::messages_as_text(
            messages.iter().map(|m| (&m.role, m.content.as_str())),
        ))
    }

    /// How a render of `id` in `locale` finds its body: the steps of
    /// locale matching, as [`Rendered::lookup`] lists them, and the locale
    /// variant they find (`None`: the default). Renders nothing, so it
    /// answers for templates that need a context too.
    ///
    /// ```
    /// use promptreg::{Locale, LocaleStep, PromptRegistry};
    ///
    /// let registry = PromptRegistry::new();
    /// registry.register_default("greeting", "Hello.")?;
    /// registry.set_override("greeting", "zh-TW", "你好。")?;
    /// let found = registry.snapshot().locale_lookup("greeting", "zh-HK")?;
    /// let variant = found.matched.expect("a variant");
    /// assert_eq!(variant.locale, Locale::parse("zh-TW")?);
    /// assert_eq!(variant.step, LocaleStep::SameScript);
    /// assert!(registry.snapshot().locale_lookup("greeting", "fr")?.matched.is_none());
    /// # Ok::<(), promptreg::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownId`] when `id` is not registered;
    /// [`ErrorKind::InvalidLocale`] when `locale` is not a valid tag.
    pub fn locale_lookup(
        &self,
        id: &str,
        locale: impl IntoLocale,
    ) -> Result<locale_match::LocaleLookup, Error> {
        let locale = locale.into_locale()?;
        let (_, entry) = self.lookup(id)?;
        let matched = self
            .find(entry, &locale, |key| entry.overrides.get(key))
            .map(|(variant, step)| locale_match::LocaleMatch {
                locale: variant.locale.clone(),
                step,
            });
        Ok(locale_match::LocaleLookup {
            steps: locale_match::lookup(&locale, &self.fallback),
            locale,
            matched,
        })
    }

    /// A history passed to text prompt `id`: refused, as it has no
    /// placeholder (see [`crate::Rendering`]).
    pub(crate) fn refuse_history_of_text(
        &self,
        id: &str,
        history: &Histories<'_>,
    ) -> Result<(), Error> {
        let (id, _) = self.lookup(id)?;
        check_history(id, None, history)
    }

    /// Whether `id` renders as chat messages in `locale`: the default or
    /// the locale variant locale matching finds is a chat prompt.
    ///
    /// # Errors
    ///
    /// As [`model_settings`](Self::model_settings), and
    /// [`ErrorKind::NoPromptForLocale`].
    pub fn is_chat(&self, id: &str, locale: impl IntoLocale) -> Result<bool, Error> {
        let locale = locale.into_locale()?;
        let (id, entry) = self.lookup(id)?;
        let (_, body) = self.body(id, entry, &locale)?;
        Ok(matches!(body, Body::Chat(_)))
    }

    /// The model settings `id` renders with for `locale`: those locale
    /// matching finds among the locales given their own (as for the body),
    /// else the default's. `None` when it has none.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownId`] when `id` is not registered;
    /// [`ErrorKind::InvalidLocale`] when `locale` is not a valid tag.
    pub fn model_settings(
        &self,
        id: &str,
        locale: impl IntoLocale,
    ) -> Result<Option<JsonObject>, Error> {
        let locale = locale.into_locale()?;
        let (_, entry) = self.lookup(id)?;
        Ok(self.model_of(entry, &locale).cloned())
    }

    fn model_of<'a>(&'a self, entry: &'a Entry, locale: &Locale) -> Option<&'a JsonObject> {
        let default = || entry.default.as_ref()?.model.as_ref();
        if entry.models.is_empty() {
            return default();
        }
        match self.find(entry, locale, |key| entry.models.get(key)) {
            Some((variant, _)) => Some(&variant.settings),
            None => default(),
        }
    }

    /// The entry of a registered id, or the error saying why there is none.
    fn lookup(&self, id: &str) -> Result<(&PromptId, &Entry), Error> {
        match self.entries.get_key_value(id) {
            Some((key, entry)) if entry.is_registered() => Ok((key, entry)),
            _ => Err(self.unknown(id)),
        }
    }

    fn unknown(&self, id: &str) -> Error {
        if let Err(invalid) = id::validate(id) {
            return invalid;
        }
        let registered = self.entries.iter().filter(|(_, e)| e.is_registered());
        let err = Error::new(ErrorKind::UnknownId, format!("unknown prompt id `{id}`")).with_id(id);
        match suggest::did_you_mean(id, registered.map(|(k, _)| k.as_str())) {
            Some(hint) => err.with_suggestion(hint),
            None => err.with_suggestion("no prompt is registered under a similar id"),
        }
    }

    /// The first variant `get` finds along locale matching
    /// ([`match_locale`]) among `entry`'s variants.
    #[inline]
    fn find<'a, T>(
        &'a self,
        entry: &'a Entry,
        locale: &Locale,
        get: impl Fn(&str) -> Option<T>,
    ) -> Option<(T, LocaleStep)> {
        debug_assert!(
            !entry.scripts_stale,
            "a snapshot is read before `index_changed` ran"
        );
        match_locale(locale, &self.fallback, &entry.by_script, get)
    }

    /// The override locale matching finds, else the default.
    fn body<'a>(
        &'a self,
        id: &PromptId,
        entry: &'a Entry,
        locale: &'a Locale,
    ) -> Result<(Slot<'a>, Body<'a>), Error> {
        if !entry.overrides.is_empty() {
            let found = self.find(entry, locale, |key| entry.overrides.get(key));
            if let Some((v, step)) = found {
                let matched = Matched {
                    locale: &v.locale,
                    step,
                    provenance: v.provenance.as_ref(),
                };
                return Ok((
                    Slot::Override(matched),
                    Body::of(&v.renderer, v.chat.as_ref()),
                ));
            }
        }
        match &entry.default {
            Some(prompt) => Ok((
                Slot::Default(prompt.provenance.as_ref()),
                Body::of(prompt.body(), prompt.chat.as_ref()),
            )),
            None => Err(self.no_body(id, entry, locale)),
        }
    }

    /// The default's pinned blocks on one side (`side` is `Pin::Head` or
    /// `Pin::Tail`), each replaced by the translation locale matching finds
    /// for it.
    fn pins<'a>(
        &'a self,
        entry: &'a Entry,
        locale: &'a Locale,
        side: fn(usize) -> Pin,
    ) -> Pins<'a> {
        let Some(default) = &entry.default else {
            return Pins::Default(&[]);
        };
        let blocks = match side(0) {
            Pin::Head(_) => default.head(),
            Pin::Tail(_) => default.tail(),
        };
        if entry.pins.is_empty() || blocks.is_empty() {
            return Pins::Default(blocks);
        }
        let resolved = blocks.iter().enumerate().map(|(i, block)| {
            match self.pin_translation(entry, locale, side(i)) {
                Some((matched, text)) => (Some(matched), text),
                None => (None, block),
            }
        });
        Pins::Resolved(resolved.collect())
    }

    /// The translation of one pinned block locale matching finds.
    fn pin_translation<'a>(
        &'a self,
        entry: &'a Entry,
        locale: &'a Locale,
        pin: Pin,
    ) -> Option<(Matched<'a>, &'a Renderer)> {
        let found = self.find(entry, locale, |key| {
            let variant = entry.pins.get(key)?;
            Some((variant, variant.block(pin)?))
        });
        found.map(|((variant, text), step)| {
            let matched = Matched {
                locale: &variant.locale,
                step,
                provenance: variant.provenance.as_ref(),
            };
            (matched, text)
        })
    }

    fn no_body(&self, id: &PromptId, entry: &Entry, locale: &Locale) -> Error {
        let mut available: Vec<&str> = entry
            .overrides
            .values()
            .map(|v| v.locale.as_str())
            .collect();
        available.sort_unstable();
        Error::new(
            ErrorKind::NoPromptForLocale,
            format!(
                "prompt `{id}` has no default and no override for `{locale}` or the fallback locale `{}`",
                self.fallback
            ),
        )
        .with_id(id.as_str())
        .with_locale(locale.as_str())
        .with_suggestion(format!(
            "it has overrides for {}; register a default or an override on this locale's chain",
            available.join(", ")
        ))
    }
}

// Write side: used by the registry on a private copy before publishing it.
impl Snapshot {
    pub(crate) fn new(locale: Locale) -> Self {
        Snapshot {
            entries: Map::default(),
            global: Vec::new(),
            fallback: locale.clone(),
            locale,
            next_seq: 0,
            layer: None,
        }
    }

    fn entry_mut(&mut self, id: PromptId) -> &mut Entry {
        Arc::make_mut(self.entries.entry(id).or_default())
    }

    fn appender(&mut self, renderer: Renderer) -> Appender {
        self.next_seq += 1;
        Appender {
            seq: self.next_seq,
            renderer,
        }
    }

    pub(crate) fn register(&mut self, id: PromptId, prompt: Prompt) {
        self.entry_mut(id).default = Some(prompt);
    }

    pub(crate) fn set_override(
        &mut self,
        id: PromptId,
        locale: Locale,
        renderer: Renderer,
        provenance: Option<Arc<Provenance>>,
    ) {
        let key = locale.key().into();
        let entry = self.entry_mut(id);
        let variant = Variant {
            locale,
            renderer,
            chat: None,
            provenance,
        };
        entry.overrides.insert(key, variant);
        entry.scripts_stale = true;
    }

    /// Replaces the messages of `id` for `locale` (the whole list).
    pub(crate) fn set_chat_override(
        &mut self,
        id: PromptId,
        locale: Locale,
        chat: Arc<Chat>,
        provenance: Option<Arc<Provenance>>,
    ) {
        let key = locale.key().into();
        let entry = self.entry_mut(id);
        let variant = Variant {
            locale,
            renderer: Renderer::text(""),
            chat: Some(chat),
            provenance,
        };
        entry.overrides.insert(key, variant);
        entry.scripts_stale = true;
    }

    /// Sets the text of pinned block `pin` for `locale`. When `id` has a
    /// default, `pin` must be one of its blocks.
    pub(crate) fn translate_pin(
        &mut self,
        id: PromptId,
        locale: Locale,
        pin: Pin,
        renderer: Renderer,
    ) -> Result<(), Error> {
        if let Some(default) = self.default_prompt(id.as_str()) {
            let (blocks, index) = match pin {
                Pin::Head(i) => (default.head().len(), i),
                Pin::Tail(i) => (default.tail().len(), i),
            };
            if index >= blocks {
                return Err(no_such_pin(&id, &locale, pin, blocks));
            }
        }
        self.set_pin_translation(id, locale, pin, renderer, None);
        Ok(())
    }

    /// Sets the text of pinned block `pin` for `locale`, unchecked.
    pub(crate) fn set_pin_translation(
        &mut self,
        id: PromptId,
        locale: Locale,
        pin: Pin,
        renderer: Renderer,
        provenance: Option<Arc<Provenance>>,
    ) {
        let entry = self.entry_mut(id);
        let variant = entry
            .pins
            .entry(locale.key().into())
            .or_insert_with(|| PinVariant {
                locale,
                head: Vec::new(),
                tail: Vec::new(),
                provenance: None,
            });
        variant.provenance = provenance;
        let (blocks, index) = match pin {
            Pin::Head(i) => (&mut variant.head, i),
            Pin::Tail(i) => (&mut variant.tail, i),
        };
        if blocks.len() <= index {
            blocks.resize(index + 1, None);
        }
        blocks[index] = Some(renderer);
        entry.scripts_stale = true;
    }

    /// Sets the model settings of `id` for `locale`, replacing the
    /// default's whole.
    pub(crate) fn set_model_settings(
        &mut self,
        id: PromptId,
        locale: Locale,
        settings: JsonObject,
    ) {
        let key = locale.key().into();
        let entry = self.entry_mut(id);
        entry.models.insert(key, ModelVariant { locale, settings });
        entry.scripts_stale = true;
    }

    /// Removes the model settings of `id` for exactly `locale`.
    #[cfg_attr(not(feature = "packs"), allow(dead_code))]
    pub(crate) fn remove_model_settings(&mut self, id: &str, locale: &Locale) {
        if let Some(entry) = self.entries.get_mut(id) {
            let entry = Arc::make_mut(entry);
            entry.models.remove(locale.key());
            entry.scripts_stale = true;
        }
    }

    /// Removes the default of `id`; its overrides and appenders stay.
    #[cfg_attr(not(feature = "config"), allow(dead_code))]
    #[cfg_attr(not(feature = "packs"), allow(dead_code))]
    pub(crate) fn unregister(&mut self, id: &str) {
        if let Some(entry) = self.entries.get_mut(id) {
            Arc::make_mut(entry).default = None;
        }
    }

    /// Removes the override of `id` for exactly `locale`.
    #[cfg_attr(not(feature = "config"), allow(dead_code))]
    #[cfg_attr(not(feature = "packs"), allow(dead_code))]
    pub(crate) fn remove_override(&mut self, id: &str, locale: &Locale) {
        if let Some(entry) = self.entries.get_mut(id) {
            let entry = Arc::make_mut(entry);
            entry.overrides.remove(locale.key());
            entry.scripts_stale = true;
        }
    }

    /// Removes every pin translation of `id` for exactly `locale`.
    #[cfg_attr(not(feature = "config"), allow(dead_code))]
    #[cfg_attr(not(feature = "packs"), allow(dead_code))]
    pub(crate) fn remove_pin_translations(&mut self, id: &str, locale: &Locale) {
        if let Some(entry) = self.entries.get_mut(id) {
            let entry = Arc::make_mut(entry);
            entry.pins.remove(locale.key());
            entry.scripts_stale = true;
        }
    }

    pub(crate) fn append(&mut self, id: PromptId, renderer: Renderer) {
        let appender = self.appender(renderer);
        self.entry_mut(id).appenders.push(appender);
    }

    pub(crate) fn append_all(&mut self, renderer: Renderer) {
        let appender = self.appender(renderer);
        self.global.push(appender);
    }

    /// Clears the overrides, pin translations and appenders of `id`,
    /// keeping its default.
    pub(crate) fn reset(&mut self, id: &str) -> Result<(), Error> {
        let Some(entry) = self.entries.get_mut(id) else {
            return Err(self.unknown(id));
        };
        let entry = Arc::make_mut(entry);
        entry.clear_variants();
        if entry.default.is_none() {
            self.entries.remove(id);
        }
        Ok(())
    }

    /// Clears every override and appender, global rules included.
    pub(crate) fn reset_all(&mut self) {
        self.entries.retain(|_, entry| entry.default.is_some());
        for entry in self.entries.values_mut() {
            Arc::make_mut(entry).clear_variants();
        }
        self.global.clear();
    }

    pub(crate) fn set_locale(&mut self, locale: Locale) {
        self.locale = locale;
    }

    pub(crate) fn set_fallback_locale(&mut self, locale: Locale) {
        self.fallback = locale;
    }

    #[cfg_attr(not(feature = "config"), allow(dead_code))]
    pub(crate) fn set_layer(&mut self, layer: Option<Arc<dyn Layer>>) {
        self.layer = layer;
    }

    /// Recomputes the same-script index of every entry whose variants
    /// changed, once each: the last step of a change, before the snapshot
    /// is published and read (`Shared::try_update`).
    pub(crate) fn index_changed(&mut self) {
        for entry in self.entries.values_mut() {
            if entry.scripts_stale {
                Arc::make_mut(entry).index_scripts();
            }
        }
    }
}

/// Runs `render` with the render context of `ctx` in `locale`; templates
/// serialise the context at most once.
#[inline]
fn with_cx<C: Serialize + Any, R>(
    ctx: &C,
    locale: &Locale,
    fallback: &Locale,
    render: impl FnOnce(&RenderCx<'_>) -> R,
) -> R {
    #[cfg(feature = "templates")]
    let serialize = || minijinja::Value::from(minijinja::value::Serde(ctx));
    let cx = RenderCx {
        ctx,
        ctx_type: type_name::<C>(),
        locale,
        fallback,
        #[cfg(feature = "templates")]
        serialize: &serialize,
        #[cfg(feature = "templates")]
        template_ctx: std::cell::OnceCell::new(),
    };
    render(&cx)
}

/// The error for a chat prompt rendered as text.
fn chat_as_text(id: &PromptId, locale: &Locale) -> Error {
    Error::new(
        ErrorKind::ChatPrompt,
        format!("prompt `{id}` is a chat prompt (for `{locale}`): it renders as messages, not one text"),
    )
    .with_id(id.as_str())
    .with_locale(locale.as_str())
    .with_suggestion(
        "render its messages with `render_messages`, or ask for role-headed text with `render_chat_as_text`",
    )
}

/// What a body is composed with: the user's block, and the rules (pinned
/// blocks and appenders). A text prompt takes both; in a chat prompt, each
/// goes to one message.
#[derive(Clone, Copy)]
struct With {
    user_block: bool,
    rules: bool,
}

impl With {
    /// A text prompt's body: the user's block and every rule.
    const EVERYTHING: With = With {
        user_block: true,
        rules: true,
    };
}

/// Every history passed is for a placeholder `chat` declares.
fn check_history(id: &PromptId, chat: Option<&Chat>, history: &Histories<'_>) -> Result<(), Error> {
    let placeholders = || chat.into_iter().flat_map(Chat::placeholders);
    let Some((name, _)) = history
        .iter()
        .find(|(name, _)| !placeholders().any(|p| p == *name))
    else {
        return Ok(());
    };
    let hint = suggest::did_you_mean(name, placeholders()).unwrap_or_else(|| {
        match placeholders().next() {
            Some(_) => format!(
                "its placeholders are {}",
                placeholders()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "pass no history, or declare a placeholder (`# history: NAME` in a chat file)"
                .to_owned(),
        }
    });
    Err(Error::new(
        ErrorKind::InvalidChat,
        format!("prompt `{id}` has no history placeholder `{name}`"),
    )
    .with_id(id.as_str())
    .with_suggestion(hint))
}

/// Every message of a history has a role the prompt knows, as a role
/// heading in a chat file must: `usr` is a typo, not a custom role.
fn check_history_roles(id: &PromptId, chat: &Chat, history: &Histories<'_>) -> Result<(), Error> {
    for (name, messages) in history {
        for (index, message) in messages.iter().enumerate() {
            let role = message.role.as_str();
            if chat.known_roles().any(|known| known == role) {
                continue;
            }
            let listed: Vec<String> = chat.known_roles().map(|r| format!("`{r}`")).collect();
            let hint = suggest::did_you_mean(role, chat.known_roles()).unwrap_or_else(|| {
                format!(
                    "the roles are {}; a custom role is declared with `roles: [{role}]` in the prompt's front matter",
                    listed.join(", ")
                )
            });
            return Err(Error::new(
                ErrorKind::InvalidChat,
                format!(
                    "message {} of history `{name}` has unknown role `{role}`",
                    index + 1
                ),
            )
            .with_id(id.as_str())
            .with_suggestion(hint));
        }
    }
    Ok(())
}

/// Adds the messages passed for placeholder `name` to `out`.
fn insert_history<M: From<RenderedMessage>>(history: &Histories<'_>, name: &str, out: &mut Vec<M>) {
    for (_, messages) in history.iter().filter(|(given, _)| *given == name) {
        let traced = messages
            .iter()
            .enumerate()
            .map(|(index, m)| RenderedMessage {
                role: m.role.clone(),
                content: m.content.clone(),
                parts: Vec::new(),
                source: MessageSource::History {
                    name: name.to_owned(),
                    index,
                },
            });
        out.extend(traced.map(M::from));
    }
}

fn no_such_pin(id: &PromptId, locale: &Locale, pin: Pin, blocks: usize) -> Error {
    let (side, index) = match pin {
        Pin::Head(i) => ("head", i),
        Pin::Tail(i) => ("tail", i),
    };
    Error::new(
        ErrorKind::UnknownPin,
        format!(
            "cannot translate pinned {side} block #{} of prompt `{id}` for `{locale}`: its default has {blocks} pinned {side} block{}",
            index + 1,
            if blocks == 1 { "" } else { "s" }
        ),
    )
    .with_id(id.as_str())
    .with_locale(locale.as_str())
    .with_suggestion("pins are counted from 0 in the order the default declares them")
}
