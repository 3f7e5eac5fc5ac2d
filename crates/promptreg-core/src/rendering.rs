//! A render of any prompt, text or chat: the one place that decides which
//! it is and what a history means for it.
//!
//! The rule: a chat prompt renders to its messages, inserting each history
//! at its placeholder; a text prompt renders to its text, and a history
//! given to it (one with any name, even an empty list) is refused with
//! [`ErrorKind::InvalidChat`](crate::ErrorKind::InvalidChat), since it has
//! no placeholder to insert it at. No history at all is what every prompt
//! takes. The `promptreg` tool, the server and the Node.js package all
//! render through here.

use std::any::Any;

use serde::Serialize;

use crate::chat::{Message, RenderedChat};
use crate::compose::Rendered;
use crate::error::Error;
use crate::locale::IntoLocale;
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

impl Snapshot {
    /// Renders `id` for `locale` as what it is: text, or messages for a
    /// chat prompt, with `history` at its placeholders.
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
        let locale = locale.into_locale()?;
        if self.is_chat(id, &locale)? {
            return Ok(Rendering::Messages(
                self.render_messages_in(id, ctx, &locale, history)?,
            ));
        }
        self.refuse_history_of_text(id, history)?;
        Ok(Rendering::Text(self.render_in(id, ctx, &locale)?))
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
        let locale = locale.into_locale()?;
        if self.is_chat(id, &locale)? {
            return Ok(Traced::Chat(
                self.render_messages_traced_in(id, ctx, &locale, history)?,
            ));
        }
        self.refuse_history_of_text(id, history)?;
        Ok(Traced::Text(self.render_traced_in(id, ctx, &locale)?))
    }
}
