//! [`Snapshot`]: one immutable, consistent state of a registry.
//!
//! Writers build a new snapshot from the current one and publish it whole;
//! readers render from the snapshot they loaded, so a render never sees half
//! of a change.

mod entry;
mod history;
mod memo;
mod provider;
mod render;
mod request;
mod write;

use std::sync::Arc;

use crate::Map;
use crate::compose::Appender;
use crate::contract::Contract;
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::error::{Error, ErrorKind};
use crate::id::{self, PromptId};
use crate::json_object::JsonObject;
use crate::layer::Layer;
use crate::locale::{IntoLocale, Locale};
use crate::locale_match::{self, LocaleStep, match_locale};
use crate::prompt::Prompt;
use crate::suggest;

use entry::{Body, Entry};
pub(crate) use history::Histories;
use memo::{Memo, Slots};
pub(crate) use render::chat_as_text;

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
    /// The entries' places in `memo`.
    slots: Slots,
    /// What renders decided, once the snapshot is published.
    memo: Memo,
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
    /// use promptreg_core::PromptRegistry;
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
    /// # Ok::<(), promptreg_core::Error>(())
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
    pub fn layer(&self) -> Option<&Arc<dyn Layer>> {
        self.layer.as_ref()
    }

    /// How a render of `id` in `locale` finds its body: the steps of
    /// locale matching, as [`Rendered::lookup`](crate::Rendered::lookup) lists them, and the locale
    /// variant they find (`None`: the default). Renders nothing, so it
    /// answers for templates that need a context too.
    ///
    /// ```
    /// use promptreg_core::{Locale, LocaleStep, PromptRegistry};
    ///
    /// let registry = PromptRegistry::new();
    /// registry.register_default("greeting", "Hello.")?;
    /// registry.set_override("greeting", "zh-TW", "你好。")?;
    /// let found = registry.snapshot().locale_lookup("greeting", "zh-HK")?;
    /// let variant = found.matched.expect("a variant");
    /// assert_eq!(variant.locale, Locale::parse("zh-TW")?);
    /// assert_eq!(variant.step, LocaleStep::SameScript);
    /// assert!(registry.snapshot().locale_lookup("greeting", "fr")?.matched.is_none());
    /// # Ok::<(), promptreg_core::Error>(())
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

    /// The contract `id` renders with for `locale`: the one locale
    /// matching finds among the locales given their own (a translation of
    /// its tools' descriptions), else the default's. `None` when it has
    /// none.
    ///
    /// # Errors
    ///
    /// As [`model_settings`](Self::model_settings).
    pub fn contract(
        &self,
        id: &str,
        locale: impl IntoLocale,
    ) -> Result<Option<Arc<Contract>>, Error> {
        let locale = locale.into_locale()?;
        let (_, entry) = self.lookup(id)?;
        Ok(self.contract_of(entry, &locale).cloned())
    }

    fn contract_of<'a>(&'a self, entry: &'a Entry, locale: &Locale) -> Option<&'a Arc<Contract>> {
        let default = || entry.default.as_ref()?.contract.as_ref();
        if entry.contracts.is_empty() {
            return default();
        }
        match self.find(entry, locale, |key| entry.contracts.get(key)) {
            Some((variant, _)) => Some(&variant.contract),
            None => default(),
        }
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
    #[inline]
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
}
