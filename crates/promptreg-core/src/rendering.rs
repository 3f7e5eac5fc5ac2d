//! A render of any prompt, text or chat: the one request every render is,
//! and the one place that decides which form it takes and what a history
//! means for it.
//!
//! A render is one value, a [`RenderRequest`]: the prompt's id, its
//! context, the locale (else the registry's), the histories, the subject
//! (which arm of a split it is served), the [`Form`] wanted and whether
//! the trace is wanted. One method answers it,
//! [`PromptRegistry::render_request`](crate::PromptRegistry::render_request)
//! (and [`Snapshot::render_request`]), with a [`RenderOutput`]. The other
//! `render*` methods are shorthands for one request each.
//!
//! The rule: a chat prompt renders to its messages, inserting each history
//! at its placeholder; a text prompt renders to its text, and a history
//! given to it (one with any name, even an empty list) is refused with
//! [`ErrorKind::InvalidChat`](crate::ErrorKind::InvalidChat), since it has
//! no placeholder to insert it at. No history at all is what every prompt
//! takes. The `promptreg` tool, the server and both bindings render
//! through here.

use std::any::Any;
use std::borrow::Cow;

use serde::Serialize;

use crate::chat::{Message, MessageSource, RenderedChat, RenderedMessage, Role, messages_as_text};
use crate::compose::Rendered;
use crate::error::Error;
use crate::locale::{IntoLocale, Locale};
use crate::snapshot::{Histories, Snapshot};

/// What a render of any prompt gives: its text, or a chat prompt's
/// messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rendering {
    /// A text prompt's text.
    Text(String),
    /// A chat prompt's messages, histories inserted.
    Messages(Vec<Message>),
}

impl Rendering {
    /// The text: a text prompt's own, or messages as role-headed text
    /// ([`messages_as_text`]).
    #[inline]
    pub fn into_text(self) -> String {
        match self {
            Rendering::Text(text) => text,
            Rendering::Messages(messages) => role_headed(&messages),
        }
    }

    /// The messages: a chat prompt's, or a text prompt's text as one
    /// `system` message (none when it is blank).
    pub fn into_messages(self) -> Vec<Message> {
        match self {
            Rendering::Messages(messages) => messages,
            Rendering::Text(text) if text.is_empty() => Vec::new(),
            Rendering::Text(text) => vec![Message::new(Role::System, text)],
        }
    }
}

/// A render of any prompt with where every part came from. It serialises
/// as the render it holds (what `explain --json` prints).
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Traced {
    /// A text prompt's render and its parts.
    Text(Rendered),
    /// A chat prompt's messages and their parts.
    Chat(RenderedChat),
}

impl Traced {
    /// The render without its trace.
    pub fn into_rendering(self) -> Rendering {
        match self {
            Traced::Text(rendered) => Rendering::Text(rendered.text),
            Traced::Chat(chat) => Rendering::Messages(chat.to_messages()),
        }
    }

    /// A text prompt's render; a chat prompt's is refused with
    /// [`ErrorKind::ChatPrompt`](crate::ErrorKind::ChatPrompt), as
    /// [`render_traced`](crate::PromptRegistry::render_traced) refuses it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::ChatPrompt`](crate::ErrorKind::ChatPrompt) for a chat
    /// prompt's render.
    pub fn into_text(self) -> Result<Rendered, Error> {
        match self {
            Traced::Text(rendered) => Ok(rendered),
            Traced::Chat(chat) => Err(crate::snapshot::chat_as_text(&chat.id, &chat.locale)),
        }
    }

    /// As messages: a chat prompt's, or a text prompt's render as one
    /// `system` message with its parts (none when it is blank).
    pub fn into_chat(self) -> RenderedChat {
        let rendered = match self {
            Traced::Chat(chat) => return chat,
            Traced::Text(rendered) => rendered,
        };
        let message = RenderedMessage {
            role: Role::System,
            content: rendered.text,
            parts: rendered.parts,
            source: MessageSource::Prompt { index: 0 },
        };
        RenderedChat {
            id: rendered.id,
            locale: rendered.locale,
            lookup: rendered.lookup,
            messages: [message]
                .into_iter()
                .filter(|m| !m.content.is_empty())
                .collect(),
            model: rendered.model,
            metadata: rendered.metadata,
            contract: rendered.contract,
        }
    }
}

/// The form a render takes ([`RenderRequest::form`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Form {
    /// What the prompt is: a text prompt's text, a chat prompt's messages.
    /// A history given to a text prompt is refused.
    #[default]
    AsDeclared,
    /// Text: a chat prompt is refused with
    /// [`ErrorKind::ChatPrompt`](crate::ErrorKind::ChatPrompt) before
    /// anything renders (what [`render`](crate::PromptRegistry::render)
    /// does).
    Text,
    /// Messages: a text prompt is one `system` message, none when it
    /// renders blank (what
    /// [`render_messages`](crate::PromptRegistry::render_messages) does).
    Messages,
}

/// One render: which prompt, with what, for whom, in which form, traced
/// or not. Built with [`new`](Self::new) and the methods below; answered
/// by [`PromptRegistry::render_request`](crate::PromptRegistry::render_request)
/// or [`Snapshot::render_request`].
///
/// ```
/// use promptreg_core::{Chat, Message, Prompt, PromptRegistry, RenderRequest, Rendering, Role};
///
/// let registry = PromptRegistry::new();
/// registry.register("chat", Prompt::chat(Chat::new().system("Help.").history("turns")))?;
/// registry.set_chat_override("chat", "fr", Chat::new().system("Aidez.").history("turns"))?;
/// let turns = [Message::new(Role::User, "Salut")];
/// let histories = [("turns", &turns[..])];
///
/// let request = RenderRequest::new("chat", &())
///     .locale_tag("fr-CA")?
///     .histories(&histories)
///     .subject("user-42");
/// let messages = registry.render_request(&request)?.into_rendering().into_messages();
/// assert_eq!(messages[0].content, "Aidez.");
///
/// // The same request, traced.
/// let traced = registry.render_request(&request.traced())?.into_traced();
/// assert!(traced.is_some());
/// # Ok::<(), promptreg_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RenderRequest<'a, C> {
    pub(crate) id: &'a str,
    pub(crate) ctx: &'a C,
    pub(crate) locale: Option<Cow<'a, Locale>>,
    pub(crate) histories: &'a Histories<'a>,
    pub(crate) subject: Option<&'a str>,
    pub(crate) form: Form,
    pub(crate) traced: bool,
}

impl<'a, C: Serialize + Any> RenderRequest<'a, C> {
    /// A render of `id` with context `ctx`: in the registry's locale, no
    /// history, no subject, [`Form::AsDeclared`], untraced.
    #[inline]
    pub fn new(id: &'a str, ctx: &'a C) -> Self {
        RenderRequest {
            id,
            ctx,
            locale: None,
            histories: &[],
            subject: None,
            form: Form::AsDeclared,
            traced: false,
        }
    }

    /// For `locale`, instead of the registry's.
    #[inline]
    #[must_use]
    pub fn locale(mut self, locale: &'a Locale) -> Self {
        self.locale = Some(Cow::Borrowed(locale));
        self
    }

    /// For `locale`, a tag parsed now, or a [`Locale`] taken as it is.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidLocale`](crate::ErrorKind::InvalidLocale).
    pub fn locale_tag(mut self, locale: impl IntoLocale) -> Result<Self, Error> {
        self.locale = Some(Cow::Owned(locale.into_locale()?));
        Ok(self)
    }

    /// With these histories, by placeholder name (see
    /// [`render_messages`](crate::PromptRegistry::render_messages)).
    #[inline]
    #[must_use]
    pub fn histories(mut self, histories: &'a Histories<'a>) -> Self {
        self.histories = histories;
        self
    }

    /// For `subject`: while a split runs on a followed label, the
    /// registry renders from the state the subject's arm is served
    /// ([`PromptRegistry::snapshot_for`](crate::PromptRegistry::snapshot_for)).
    /// A [`Snapshot`] is one state: it renders a subject's request as any
    /// other.
    #[inline]
    #[must_use]
    pub fn subject(mut self, subject: &'a str) -> Self {
        self.subject = Some(subject);
        self
    }

    /// In `form` ([`Form::AsDeclared`] unless set).
    #[inline]
    #[must_use]
    pub fn form(mut self, form: Form) -> Self {
        self.form = form;
        self
    }

    /// With where every part came from: the output is
    /// [`RenderOutput::Traced`].
    #[inline]
    #[must_use]
    pub fn traced(mut self) -> Self {
        self.traced = true;
        self
    }

    /// The prompt's id.
    pub fn id(&self) -> &'a str {
        self.id
    }

    /// The subject, if one was given.
    pub fn subject_key(&self) -> Option<&'a str> {
        self.subject
    }

    /// The locale asked for; `None`: the registry's.
    pub fn locale_asked(&self) -> Option<&Locale> {
        self.locale.as_deref()
    }
}

/// What a [`RenderRequest`] gives: the render, or with
/// [`traced`](RenderRequest::traced) the render with its trace.
#[derive(Clone, Debug)]
pub enum RenderOutput {
    /// Text or messages.
    Plain(Rendering),
    /// Text or messages with where every part came from.
    Traced(Traced),
}

impl RenderOutput {
    /// The text or messages, without a trace.
    pub fn into_rendering(self) -> Rendering {
        match self {
            RenderOutput::Plain(rendering) => rendering,
            RenderOutput::Traced(traced) => traced.into_rendering(),
        }
    }

    /// The trace, for a request that asked for it.
    pub fn into_traced(self) -> Option<Traced> {
        match self {
            RenderOutput::Traced(traced) => Some(traced),
            RenderOutput::Plain(_) => None,
        }
    }
}

impl Snapshot {
    /// Renders `id` for `locale` as what it is: text, or messages for a
    /// chat prompt, with `history` at its placeholders. A
    /// [`RenderRequest`] of [`Form::AsDeclared`].
    ///
    /// ```
    /// use promptreg_core::{Chat, ErrorKind, Message, Prompt, PromptRegistry, Rendering, Role};
    ///
    /// let registry = PromptRegistry::new();
    /// registry.register_default("plain", "Be brief.")?;
    /// registry.register("chat", Prompt::chat(Chat::new().system("Help.").history("turns")))?;
    /// let turns = [Message::new(Role::User, "Hi")];
    /// let snapshot = registry.snapshot();
    ///
    /// let chat = snapshot.render_any_in("chat", &(), "en", &[("turns", &turns[..])])?;
    /// assert!(matches!(chat, Rendering::Messages(m) if m.len() == 2));
    /// assert_eq!(snapshot.render_any_in("plain", &(), "en", &[])?, Rendering::Text("Be brief.".into()));
    /// // A text prompt has no placeholder for a history.
    /// let err = snapshot.render_any_in("plain", &(), "en", &[("turns", &turns[..])]).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidChat);
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`render_in`](Self::render_in) and
    /// [`render_messages_in`](Self::render_messages_in); a history given
    /// to a text prompt is [`ErrorKind::InvalidChat`](crate::ErrorKind::InvalidChat).
    pub fn render_any_in<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: impl IntoLocale,
        history: &Histories<'_>,
    ) -> Result<Rendering, Error> {
        in_locale(locale, |locale| {
            let request = RenderRequest::new(id, ctx)
                .locale(locale)
                .histories(history);
            self.plain_request(&request)
        })
    }

    /// [`render_any_in`](Self::render_any_in) with where every part came
    /// from: what `explain` shows.
    ///
    /// # Errors
    ///
    /// As [`render_any_in`](Self::render_any_in).
    pub fn render_any_traced_in<C: Serialize + Any>(
        &self,
        id: &str,
        ctx: &C,
        locale: impl IntoLocale,
        history: &Histories<'_>,
    ) -> Result<Traced, Error> {
        in_locale(locale, |locale| {
            let request = RenderRequest::new(id, ctx)
                .locale(locale)
                .histories(history);
            self.traced_request(&request)
        })
    }
}

/// Messages as role-headed text, out of the text path's way.
fn role_headed(messages: &[Message]) -> String {
    messages_as_text(messages.iter().map(|m| (&m.role, m.content.as_str())))
}

/// Runs `render` with `locale`, parsed when it is a tag, borrowed when it
/// is a [`Locale`] already.
#[inline]
pub(crate) fn in_locale<R>(
    locale: impl IntoLocale,
    render: impl FnOnce(&Locale) -> Result<R, Error>,
) -> Result<R, Error> {
    match locale.as_parsed() {
        Some(locale) => render(locale),
        None => render(&locale.into_locale()?),
    }
}
