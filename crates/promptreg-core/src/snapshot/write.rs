//! The write side: what the registry changes on a private copy of a
//! snapshot before publishing it.

use std::sync::Arc;

use crate::Map;
use crate::chat::Chat;
use crate::compose::Appender;
use crate::contract::Contract;
use crate::error::{Error, ErrorKind};
use crate::id::PromptId;
use crate::json_object::JsonObject;
use crate::layer::Layer;
use crate::locale::Locale;
use crate::prompt::{Pin, Prompt};
use crate::provenance::Provenance;
use crate::renderer::Renderer;

use super::Snapshot;
use super::entry::{ContractVariant, Entry, ModelVariant, PinVariant, Variant};
use super::memo::{Memo, Slots};

impl Snapshot {
    pub(crate) fn new(locale: Locale) -> Self {
        Snapshot {
            entries: Map::default(),
            global: Vec::new(),
            fallback: locale.clone(),
            locale,
            next_seq: 0,
            layer: None,
            slots: Slots::default(),
            memo: Memo::default(),
        }
    }

    fn entry_mut(&mut self, id: PromptId) -> &mut Entry {
        let slots = &mut self.slots;
        let entry = self
            .entries
            .entry(id)
            .or_insert_with(|| Arc::new(Entry::new(slots.take())));
        Arc::make_mut(entry)
    }

    fn appender(&mut self, renderer: Renderer) -> Appender {
        self.next_seq += 1;
        Appender {
            seq: self.next_seq,
            renderer,
        }
    }

    /// Registers `prompt` as the default of `id`, in place of any.
    pub fn register(&mut self, id: PromptId, prompt: Prompt) {
        self.entry_mut(id).default = Some(prompt);
    }

    /// Replaces the body of `id` for exactly `locale`, unchecked, with
    /// where the override came from.
    pub fn set_override(
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
    pub fn set_chat_override(
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
    pub fn set_pin_translation(
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
    pub fn set_model_settings(&mut self, id: PromptId, locale: Locale, settings: JsonObject) {
        let key = locale.key().into();
        let entry = self.entry_mut(id);
        entry.models.insert(key, ModelVariant { locale, settings });
        entry.scripts_stale = true;
    }

    /// The contract of `id`'s default, if it has one.
    pub fn default_contract(&self, id: &str) -> Option<Arc<Contract>> {
        self.entries.get(id)?.default.as_ref()?.contract.clone()
    }

    /// Sets the contract of `id` for `locale` (its tools' descriptions
    /// translated), replacing the default's whole.
    pub fn set_contract(&mut self, id: PromptId, locale: Locale, contract: Arc<Contract>) {
        let key = locale.key().into();
        let entry = self.entry_mut(id);
        entry
            .contracts
            .insert(key, ContractVariant { locale, contract });
        entry.scripts_stale = true;
    }

    /// Removes the model settings of `id` for exactly `locale`.
    pub fn remove_model_settings(&mut self, id: &str, locale: &Locale) {
        if let Some(entry) = self.entries.get_mut(id) {
            let entry = Arc::make_mut(entry);
            entry.models.remove(locale.key());
            entry.scripts_stale = true;
        }
    }

    /// Removes the default of `id`; its overrides and appenders stay.
    pub fn unregister(&mut self, id: &str) {
        if let Some(entry) = self.entries.get_mut(id) {
            Arc::make_mut(entry).default = None;
        }
    }

    /// Removes the override of `id` for exactly `locale`.
    pub fn remove_override(&mut self, id: &str, locale: &Locale) {
        if let Some(entry) = self.entries.get_mut(id) {
            let entry = Arc::make_mut(entry);
            entry.overrides.remove(locale.key());
            entry.scripts_stale = true;
        }
    }

    /// Removes every pin translation of `id` for exactly `locale`.
    pub fn remove_pin_translations(&mut self, id: &str, locale: &Locale) {
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
        if entry.default.is_none()
            && let Some(removed) = self.entries.remove(id)
        {
            self.slots.give_back(removed.slot);
        }
        Ok(())
    }

    /// Clears every override and appender, global rules included.
    pub(crate) fn reset_all(&mut self) {
        let slots = &mut self.slots;
        self.entries.retain(|_, entry| {
            let keep = entry.default.is_some();
            if !keep {
                slots.give_back(entry.slot);
            }
            keep
        });
        for entry in self.entries.values_mut() {
            Arc::make_mut(entry).clear_variants();
        }
        self.global.clear();
    }

    /// The locale of renders that name none.
    pub fn set_locale(&mut self, locale: Locale) {
        self.locale = locale;
    }

    /// The locale whose chain is tried last.
    pub fn set_fallback_locale(&mut self, locale: Locale) {
        self.fallback = locale;
    }

    /// Puts `layer` (the user's configuration) over the prompts, or
    /// takes it away.
    pub fn set_layer(&mut self, layer: Option<Arc<dyn Layer>>) {
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
        self.memo = Memo::sealed();
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
