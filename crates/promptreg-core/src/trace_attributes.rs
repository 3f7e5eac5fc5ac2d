//! The attributes a host adds to the span of its LLM call, so that an
//! answer traces to the exact prompt that produced it:
//! [`Rendered::trace_attributes`].
//!
//! The names follow OpenTelemetry's rules for attribute names: lowercase,
//! namespaced with dots, words joined by `_`, under the library's own
//! namespace `promptreg.` (the semantic conventions have none for a
//! prompt registry's ids). Those of a followed pack come from its
//! provenance; a prompt of the host's own code has only its id and locale.
//!
//! ```
//! use promptreg_core::PromptRegistry;
//! use promptreg_core::trace_attributes::{LOCALE, PROMPT_ID};
//!
//! let registry = PromptRegistry::new();
//! registry.register_default("narrator", "Narrate the page.")?;
//! let rendered = registry.render_traced("narrator", &())?;
//! let attributes = rendered.trace_attributes();
//! assert_eq!(attributes[0].0, PROMPT_ID);
//! assert!(attributes.iter().any(|(name, _)| *name == LOCALE));
//! // span.set_attribute(KeyValue::new(name, value)) for each, in the host.
//! # Ok::<(), promptreg_core::Error>(())
//! ```

use serde::Serialize;

use crate::chat::RenderedChat;
use crate::compose::{Origin, Part, Rendered};
use crate::contract::Contract;
use crate::id::PromptId;
use crate::locale::Locale;

/// The prompt's id: `narrator`.
pub const PROMPT_ID: &str = "promptreg.prompt.id";
/// Its version in the store it was followed from: `12`.
pub const PROMPT_VERSION: &str = "promptreg.prompt.version";
/// That version's content digest (SHA-256, hex).
pub const PROMPT_DIGEST: &str = "promptreg.prompt.digest";
/// The label followed: `production`.
pub const LABEL: &str = "promptreg.label";
/// The label's revision in force: `7`.
pub const REVISION: &str = "promptreg.revision";
/// The locale rendered for: `fr-CA`.
pub const LOCALE: &str = "promptreg.locale";
/// The split whose candidate was rendered: `4` (absent for the label's
/// own state).
pub const SPLIT: &str = "promptreg.split";
/// The arm of that split: `candidate`.
pub const ARM: &str = "promptreg.arm";
/// The digest of the contract (tools and output schema) the prompt was
/// rendered with ([`Contract::digest`](crate::Contract::digest)); absent
/// for a prompt without one.
pub const CONTRACT_DIGEST: &str = "promptreg.contract.digest";

/// An attribute's value: text or a whole number, as OpenTelemetry's
/// `Value::String` and `Value::I64`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum AttributeValue {
    /// Text.
    String(String),
    /// A whole number.
    Int(i64),
}

impl std::fmt::Display for AttributeValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttributeValue::String(s) => f.write_str(s),
            AttributeValue::Int(n) => write!(f, "{n}"),
        }
    }
}

impl Rendered {
    /// The attributes of this render for a tracing span, in the order
    /// [`PROMPT_ID`], [`PROMPT_VERSION`], [`PROMPT_DIGEST`], [`LABEL`],
    /// [`REVISION`], [`SPLIT`], [`ARM`], [`LOCALE`], [`CONTRACT_DIGEST`]; those unknown are left out (a prompt of
    /// the host's code has no version). They come from the provenance of
    /// the prompt's body, else of its first part that has a version.
    pub fn trace_attributes(&self) -> Vec<(&'static str, AttributeValue)> {
        attributes(
            &self.id,
            &self.locale,
            &self.parts,
            self.contract.as_deref(),
        )
    }
}

impl RenderedChat {
    /// The attributes of this render for a tracing span, as
    /// [`Rendered::trace_attributes`] gives them: from the parts of its
    /// messages.
    pub fn trace_attributes(&self) -> Vec<(&'static str, AttributeValue)> {
        let parts: Vec<Part> = self
            .messages
            .iter()
            .flat_map(|m| m.parts.iter().cloned())
            .collect();
        attributes(&self.id, &self.locale, &parts, self.contract.as_deref())
    }
}

fn attributes(
    id: &PromptId,
    locale: &Locale,
    parts: &[Part],
    contract: Option<&Contract>,
) -> Vec<(&'static str, AttributeValue)> {
    let body = |origin: &Origin| matches!(origin, Origin::Default | Origin::Override { .. });
    let stored = parts
        .iter()
        .filter(|p| body(&p.origin))
        .chain(parts)
        .find_map(|p| p.provenance.as_ref().filter(|p| p.version.is_some()));
    let int = |n: u64| AttributeValue::Int(i64::try_from(n).unwrap_or(i64::MAX));
    let mut attributes = vec![(PROMPT_ID, AttributeValue::String(id.to_string()))];
    if let Some(provenance) = stored {
        let values = [
            (PROMPT_VERSION, provenance.version.map(int)),
            (
                PROMPT_DIGEST,
                provenance.digest.clone().map(AttributeValue::String),
            ),
            (LABEL, provenance.label.clone().map(AttributeValue::String)),
            (REVISION, provenance.revision.map(int)),
            (SPLIT, provenance.split.map(int)),
            (
                ARM,
                provenance
                    .split
                    .map(|_| AttributeValue::String("candidate".to_owned())),
            ),
        ];
        attributes.extend(values.into_iter().filter_map(|(k, v)| Some((k, v?))));
    }
    attributes.push((LOCALE, AttributeValue::String(locale.to_string())));
    if let Some(contract) = contract {
        attributes.push((CONTRACT_DIGEST, AttributeValue::String(contract.digest())));
    }
    attributes
}
