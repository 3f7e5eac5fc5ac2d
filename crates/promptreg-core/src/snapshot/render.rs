//! Renders: text, messages and traces, composed from the body locale
//! matching finds, the pinned blocks, the user's block and the appenders.

use std::any::Any;
use std::sync::Arc;

use serde::Serialize;

use crate::chat::{Chat, Item, Message, MessageSource, RenderedChat, RenderedMessage, Role};
use crate::compose::{self, Matched, Part, Pins, Plan, Prepared, Rendered, Slot};
use crate::error::{Error, ErrorKind};
use crate::id::PromptId;
use crate::layer::LayerChoice;
use crate::locale::{IntoLocale, Locale};
use crate::prompt::Pin;
use crate::renderer::{RenderCx, Renderer};
use crate::rendering::{Form, RenderRequest, Rendering, Traced, in_locale};

use super::Snapshot;
use super::entry::{Body, Entry};
use super::history::{Histories, check_history, check_history_roles, insert_history};
use super::memo::Decision;

impl Snapshot {
    /// Renders `id` for the current locale with context `ctx`: a
    /// [`RenderRequest`] of [`Form::Text`].
    ///
    /// # Errors
    ///
    /// See [`PromptRegistry::render`](crate::PromptRegistry::render).
    #[inline]
    pub fn render<C: Serialize + Any>(&self, id: &str, ctx: &C) -> Result<String, Error> {
        let request = RenderRequest::new(id, ctx).form(Form::Text);
        self.plain_request(&request).map(Rendering::into_text)
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
    #[inline]
    pub fn render_in<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: impl IntoLocale,
    ) -> Result<String, Error> {
        in_locale(locale, |locale| {
            let request = RenderRequest::new(id, ctx).locale(locale).form(Form::Text);
            self.plain_request(&request).map(Rendering::into_text)
        })
    }

    /// Renders `id` for the current locale and records where every part came
    /// from.
    ///
    /// # Errors
    ///
    /// See [`PromptRegistry::render`](crate::PromptRegistry::render).
    pub fn render_traced<C: Serialize + Any>(&self, id: &str, ctx: &C) -> Result<Rendered, Error> {
        self.traced_request(&RenderRequest::new(id, ctx).form(Form::Text))?
            .into_text()
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
        in_locale(locale, |locale| {
            let request = RenderRequest::new(id, ctx).locale(locale).form(Form::Text);
            self.traced_request(&request)?.into_text()
        })
    }

    /// [`compose`](Self::compose) of an entry already looked up.
    #[inline]
    pub(super) fn compose_entry<C: Serialize + Any>(
        &self,
        id: &PromptId,
        entry: &Entry,
        ctx: &C,
        locale: &Locale,
        trace: Option<&mut Vec<Part>>,
    ) -> Result<String, Error> {
        if trace.is_none()
            && let Some(Decision::Text(prepared)) = self.decision(id, entry, locale)
        {
            // Static parts need no render context.
            if let Some(text) = prepared.copy_static() {
                return Ok(text);
            }
            return with_cx(ctx, locale, &self.fallback, |cx| {
                prepared.compose(cx).map_err(|(index, failure)| {
                    match self.text_plan(id, entry, locale) {
                        Ok(plan) => compose::failed_at(id, &plan, index, cx, failure),
                        Err(err) => err,
                    }
                })
            });
        }
        let plan = self.text_plan(id, entry, locale)?;
        with_cx(ctx, locale, &self.fallback, |cx| {
            compose::compose(id, &plan, cx, trace)
        })
    }

    /// The plan of text prompt `id` in `locale`.
    fn text_plan<'a>(
        &'a self,
        id: &PromptId,
        entry: &'a Entry,
        locale: &'a Locale,
    ) -> Result<Plan<'a>, Error> {
        let (slot, body) = self.body(id, entry, locale)?;
        let Body::Text(body) = body else {
            return Err(chat_as_text(id, locale));
        };
        Ok(self.plan(id, entry, locale, (slot, body), With::EVERYTHING))
    }

    /// What renders of `id` in `locale` do, decided by the first of them
    /// (see [`Memo`](super::memo::Memo)).
    #[inline]
    pub(super) fn decision(
        &self,
        id: &PromptId,
        entry: &Entry,
        locale: &Locale,
    ) -> Option<&Decision> {
        let decide = |budget: &_| match self.body(id, entry, locale) {
            Ok((slot, Body::Text(body))) => {
                let plan = self.plan(id, entry, locale, (slot, body), With::EVERYTHING);
                Decision::Text(Prepared::of(&plan, budget))
            }
            Ok((slot, Body::Chat(chat))) => {
                let with = With::messages(chat);
                let messages = chat.items.iter().enumerate().map(|(at, item)| {
                    let Item::Message(_, content) = item else {
                        return None;
                    };
                    let plan = self.plan(id, entry, locale, (slot, content), with(at));
                    Some(Prepared::of(&plan, budget))
                });
                Decision::Chat(Arc::clone(chat), messages.collect())
            }
            Err(_) => Decision::Full,
        };
        self.memo
            .decision(locale, entry.slot, self.slots.len(), decide)
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
    pub(super) fn compose_messages<C: Serialize + Any, M: From<RenderedMessage>>(
        &self,
        id: &PromptId,
        entry: &Entry,
        ctx: &C,
        locale: &Locale,
        history: &Histories<'_>,
        trace: bool,
    ) -> Result<Vec<M>, Error> {
        let decision = if trace {
            None
        } else {
            self.decision(id, entry, locale)
        };
        // The body's slot where the parts are not prepared.
        let (chat, prepared, slot) = match decision {
            Some(Decision::Chat(chat, prepared)) => (&**chat, Some(prepared), None),
            Some(Decision::Text(_)) => {
                return self.text_as_message(id, entry, ctx, locale, history, false);
            }
            _ => match self.body(id, entry, locale)? {
                (slot, Body::Chat(chat)) => (&**chat, None, Some(slot)),
                (_, Body::Text(_)) => {
                    return self.text_as_message(id, entry, ctx, locale, history, trace);
                }
            },
        };
        check_history(id, Some(chat), history)?;
        check_history_roles(id, chat, history)?;
        let with = With::messages(chat);
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
                let plan = |slot| self.plan(id, entry, locale, (slot, content), with(at));
                let mut parts = Vec::new();
                let body_slot = || match slot {
                    Some(slot) => Ok(slot),
                    None => self.body(id, entry, locale).map(|(slot, _)| slot),
                };
                let content = match prepared.and_then(|p| p.get(at)?.as_ref()) {
                    Some(prepared) => {
                        prepared
                            .compose(cx)
                            .map_err(|(part, failure)| match body_slot() {
                                Ok(slot) => compose::failed_at(id, &plan(slot), part, cx, failure),
                                Err(err) => err,
                            })?
                    }
                    None => {
                        compose::compose(id, &plan(body_slot()?), cx, trace.then_some(&mut parts))?
                    }
                };
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

    /// A text prompt rendered as messages: one `system` message, none if
    /// it renders blank.
    fn text_as_message<C: Serialize + Any, M: From<RenderedMessage>>(
        &self,
        id: &PromptId,
        entry: &Entry,
        ctx: &C,
        locale: &Locale,
        history: &Histories<'_>,
        trace: bool,
    ) -> Result<Vec<M>, Error> {
        check_history(id, None, history)?;
        let mut parts = Vec::new();
        let content = self.compose_entry(id, entry, ctx, locale, trace.then_some(&mut parts))?;
        let message = RenderedMessage {
            role: Role::System,
            content,
            parts,
            source: MessageSource::Prompt { index: 0 },
        };
        Ok([message]
            .into_iter()
            .filter(|m| !m.content.is_empty())
            .map(M::from)
            .collect())
    }

    /// Renders the messages of chat prompt `id` for the current locale,
    /// with `history` inserted at its placeholders (`&[]` for none): a
    /// [`RenderRequest`] of [`Form::Messages`].
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
        let request = RenderRequest::new(id, ctx)
            .histories(history)
            .form(Form::Messages);
        self.plain_request(&request).map(Rendering::into_messages)
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
        in_locale(locale, |locale| {
            let request = RenderRequest::new(id, ctx)
                .locale(locale)
                .histories(history)
                .form(Form::Messages);
            self.plain_request(&request).map(Rendering::into_messages)
        })
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
        in_locale(locale, |locale| {
            let request = RenderRequest::new(id, ctx)
                .locale(locale)
                .histories(history)
                .form(Form::Messages);
            self.traced_request(&request).map(Traced::into_chat)
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
        in_locale(locale, |locale| {
            let request = RenderRequest::new(id, ctx)
                .locale(locale)
                .histories(history);
            self.plain_request(&request).map(Rendering::into_text)
        })
    }

    /// The override locale matching finds, else the default.
    pub(super) fn body<'a>(
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

/// Runs `render` with the render context of `ctx` in `locale`; templates
/// serialise the context at most once.
#[inline]
fn with_cx<C: Serialize + Any, R>(
    ctx: &C,
    locale: &Locale,
    fallback: &Locale,
    render: impl FnOnce(&RenderCx<'_>) -> R,
) -> R {
    let cx = RenderCx::new(ctx, locale, fallback);
    render(&cx)
}

/// The error for a chat prompt rendered as text.
pub(crate) fn chat_as_text(id: &PromptId, locale: &Locale) -> Error {
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

    /// What each message of `chat` takes, by its position in the list.
    fn messages(chat: &Chat) -> impl Fn(usize) -> With {
        let (user_target, attached) = (chat.user_target(), chat.attached());
        move |at| With {
            user_block: Some(at) == user_target,
            rules: Some(at) == attached,
        }
    }
}
