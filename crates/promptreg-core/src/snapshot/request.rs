//! The one method every render goes through: a [`RenderRequest`] answered
//! from one lookup of its id.

use std::any::Any;

use serde::Serialize;

use crate::chat::RenderedChat;
use crate::compose::Rendered;
use crate::error::Error;
use crate::id::PromptId;
use crate::locale::Locale;
use crate::locale_match;
use crate::rendering::{Form, RenderOutput, RenderRequest, Rendering, Traced};

use super::Snapshot;
use super::entry::{Body, Entry};
use super::history::check_history;
use super::memo::Decision;
use super::render::chat_as_text;

impl Snapshot {
    /// Renders `request` from this state: its text or messages, with the
    /// trace when it asks for it. The request's subject is not looked at:
    /// a snapshot is one state (the registry picks the state a subject is
    /// served, [`PromptRegistry::render_request`](crate::PromptRegistry::render_request)).
    ///
    /// # Errors
    ///
    /// As [`render`](Self::render) for a text prompt and
    /// [`render_messages`](Self::render_messages) for a chat prompt;
    /// [`ErrorKind::ChatPrompt`](crate::ErrorKind::ChatPrompt) for a chat
    /// prompt asked as [`Form::Text`];
    /// [`ErrorKind::InvalidChat`](crate::ErrorKind::InvalidChat) for a
    /// history given to a text prompt that is not asked as
    /// [`Form::Messages`].
    #[inline]
    pub fn render_request<C: Serialize + Any>(
        &self,
        request: &RenderRequest<'_, C>,
    ) -> Result<RenderOutput, Error> {
        match request.traced {
            false => self.plain_request(request).map(RenderOutput::Plain),
            true => self.traced_request(request).map(RenderOutput::Traced),
        }
    }

    /// [`render_request`](Self::render_request) without the trace, whether
    /// the request asks for it or not.
    #[inline]
    pub(crate) fn plain_request<C: Serialize + Any>(
        &self,
        request: &RenderRequest<'_, C>,
    ) -> Result<Rendering, Error> {
        let locale = request.locale.as_deref().unwrap_or(&self.locale);
        let (id, entry) = self.lookup(request.id)?;
        let (ctx, histories) = (request.ctx, request.histories);
        let messages = self.as_messages(request, id, entry, locale)?;
        if messages {
            return self
                .compose_messages(id, entry, ctx, locale, histories, false)
                .map(Rendering::Messages);
        }
        check_history(id, None, histories)?;
        self.compose_entry(id, entry, ctx, locale, None)
            .map(Rendering::Text)
    }

    /// [`render_request`](Self::render_request) with the trace, whether
    /// the request asks for it or not.
    pub(crate) fn traced_request<C: Serialize + Any>(
        &self,
        request: &RenderRequest<'_, C>,
    ) -> Result<Traced, Error> {
        let locale = request.locale.as_deref().unwrap_or(&self.locale);
        let (id, entry) = self.lookup(request.id)?;
        let (ctx, histories) = (request.ctx, request.histories);
        let messages = self.as_messages(request, id, entry, locale)?;
        if messages {
            let messages = self.compose_messages(id, entry, ctx, locale, histories, true)?;
            let about = self.about(id, entry, locale);
            return Ok(Traced::Chat(RenderedChat {
                id: about.id,
                messages,
                model: about.model,
                metadata: about.metadata,
                contract: about.contract,
                lookup: about.lookup,
                locale: about.locale,
            }));
        }
        check_history(id, None, histories)?;
        let mut parts = Vec::new();
        let text = self.compose_entry(id, entry, ctx, locale, Some(&mut parts))?;
        let about = self.about(id, entry, locale);
        Ok(Traced::Text(Rendered {
            id: about.id,
            text,
            model: about.model,
            metadata: about.metadata,
            contract: about.contract,
            lookup: about.lookup,
            locale: about.locale,
            parts,
        }))
    }

    /// What a traced render says about its prompt beside the text or
    /// messages, the same for both.
    fn about(&self, id: &PromptId, entry: &Entry, locale: &Locale) -> About {
        About {
            id: id.clone(),
            model: self.model_of(entry, locale).cloned(),
            contract: self.contract_of(entry, locale).cloned(),
            metadata: entry.default.as_ref().and_then(|d| d.metadata.clone()),
            lookup: locale_match::lookup(locale, &self.fallback),
            locale: locale.clone(),
        }
    }

    /// Whether `request` renders the entry of `id` as messages. A chat
    /// prompt asked as text is refused before a history is looked at.
    #[inline]
    fn as_messages<C>(
        &self,
        request: &RenderRequest<'_, C>,
        id: &PromptId,
        entry: &Entry,
        locale: &Locale,
    ) -> Result<bool, Error> {
        match request.form {
            Form::Text if !request.histories.is_empty() => {
                match self.is_chat_entry(id, entry, locale)? {
                    true => Err(chat_as_text(id, locale)),
                    false => Ok(false),
                }
            }
            Form::Text => Ok(false),
            Form::Messages => Ok(true),
            Form::AsDeclared => self.is_chat_entry(id, entry, locale),
        }
    }

    /// Whether the entry of `id` renders as messages in `locale`: from the
    /// decision renders keep, else from the body locale matching finds.
    #[inline]
    pub(super) fn is_chat_entry(
        &self,
        id: &PromptId,
        entry: &Entry,
        locale: &Locale,
    ) -> Result<bool, Error> {
        match self.decision(id, entry, locale) {
            Some(Decision::Text(_)) => Ok(false),
            Some(Decision::Chat(..)) => Ok(true),
            _ => {
                let (_, body) = self.body(id, entry, locale)?;
                Ok(matches!(body, Body::Chat(_)))
            }
        }
    }
}

/// The fields [`Rendered`] and [`RenderedChat`] share.
struct About {
    id: PromptId,
    contract: Option<std::sync::Arc<crate::contract::Contract>>,
    model: Option<crate::json_object::JsonObject>,
    metadata: Option<crate::json_object::JsonObject>,
    lookup: Vec<locale_match::LookupStep>,
    locale: Locale,
}
