//! What a snapshot holds under one id: the default, its locale variants
//! (bodies, pinned-block translations, model settings, contracts) and the
//! same-script index over them.

use std::sync::Arc;

use crate::Map;
use crate::chat::Chat;
use crate::compose::Appender;
use crate::contract::Contract;
use crate::json_object::JsonObject;
use crate::locale::Locale;
use crate::locale_match::script_index;
use crate::prompt::{Pin, Prompt};
use crate::provenance::Provenance;
use crate::renderer::Renderer;

/// Everything registered under one id.
#[derive(Clone)]
pub(super) struct Entry {
    /// Its place in the snapshot's memo of render decisions.
    pub(super) slot: u32,
    pub(super) default: Option<Prompt>,
    pub(super) overrides: Map<Box<str>, Variant>,
    /// Translations of the default's pinned blocks, by locale key.
    pub(super) pins: Map<Box<str>, PinVariant>,
    /// Model settings of a locale, whole (a source merges them with the
    /// default's before), by locale key.
    pub(super) models: Map<Box<str>, ModelVariant>,
    /// A locale's contract (its tools' descriptions translated), whole, by
    /// locale key.
    pub(super) contracts: Map<Box<str>, ContractVariant>,
    /// The locale keys of `overrides`, `pins`, `models` and `contracts` by language and script
    /// (`zh-Hant`), likeliest region first, then by tag: the same-script
    /// step of locale matching, computed before the snapshot is published
    /// so a render only looks it up.
    pub(super) by_script: Map<Box<str>, Box<[Box<str>]>>,
    /// A variant changed since `by_script` was computed. A change marks it
    /// and [`Snapshot::index_changed`] recomputes it once: a pack of n
    /// variants indexes them once, not n times.
    pub(super) scripts_stale: bool,
    pub(super) appenders: Vec<Appender>,
}

/// A locale override of the body.
#[derive(Clone)]
pub(super) struct Variant {
    pub(super) locale: Locale,
    pub(super) renderer: Renderer,
    /// The messages of a chat variant; `renderer` is then unused.
    pub(super) chat: Option<Arc<Chat>>,
    pub(super) provenance: Option<Arc<Provenance>>,
}

/// The body a render uses: text, or the messages of a chat prompt.
#[derive(Clone, Copy)]
pub(super) enum Body<'a> {
    Text(&'a Renderer),
    Chat(&'a Arc<Chat>),
}

impl<'a> Body<'a> {
    pub(super) fn of(renderer: &'a Renderer, chat: Option<&'a Arc<Chat>>) -> Self {
        match chat {
            Some(chat) => Body::Chat(chat),
            None => Body::Text(renderer),
        }
    }
}

/// One locale's model settings.
#[derive(Clone)]
pub(super) struct ModelVariant {
    pub(super) locale: Locale,
    pub(super) settings: JsonObject,
}

/// One locale's contract.
#[derive(Clone)]
pub(super) struct ContractVariant {
    pub(super) locale: Locale,
    pub(super) contract: Arc<Contract>,
}

/// One locale's translations of pinned blocks, by position (`None`: not
/// translated in this locale).
#[derive(Clone)]
pub(super) struct PinVariant {
    pub(super) locale: Locale,
    pub(super) head: Vec<Option<Renderer>>,
    pub(super) tail: Vec<Option<Renderer>>,
    pub(super) provenance: Option<Arc<Provenance>>,
}

impl PinVariant {
    pub(super) fn block(&self, pin: Pin) -> Option<&Renderer> {
        match pin {
            Pin::Head(i) => self.head.get(i)?.as_ref(),
            Pin::Tail(i) => self.tail.get(i)?.as_ref(),
        }
    }
}

impl Entry {
    /// An entry with nothing registered, at `slot` of the memo.
    pub(super) fn new(slot: u32) -> Self {
        Entry {
            slot,
            default: None,
            overrides: Map::default(),
            pins: Map::default(),
            models: Map::default(),
            contracts: Map::default(),
            by_script: Map::default(),
            scripts_stale: false,
            appenders: Vec::new(),
        }
    }

    pub(super) fn is_registered(&self) -> bool {
        self.default.is_some() || !self.overrides.is_empty()
    }

    /// Drops every override, pin translation and appender.
    pub(super) fn clear_variants(&mut self) {
        self.overrides.clear();
        self.pins.clear();
        self.models.clear();
        self.contracts.clear();
        self.by_script.clear();
        self.scripts_stale = false;
        self.appenders.clear();
    }

    /// Recomputes the same-script index after variants changed.
    pub(super) fn index_scripts(&mut self) {
        let locales = self.overrides.values().map(|v| &v.locale);
        let locales = locales
            .chain(self.pins.values().map(|v| &v.locale))
            .chain(self.models.values().map(|v| &v.locale))
            .chain(self.contracts.values().map(|v| &v.locale));
        self.by_script = script_index(locales);
        self.scripts_stale = false;
    }
}
