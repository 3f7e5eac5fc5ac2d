//! The trace of a render (`render_traced`, `explain`,
//! `render_messages_traced`) as typed objects, copied from the library's
//! plain-data view of a trace ([`promptreg::trace_view`]).
//!
//! The shapes follow the library's serialisation (`promptreg explain
//! --json`). A part's `start` and `end` count characters (code points), so
//! that `trace.text[part.start:part.end] == part.text`; `byte_range` is the
//! same span in the UTF-8 encoding, as the library reports it.

use promptreg::trace_attributes::AttributeValue;
use promptreg::trace_view::{
    ChatTraceView, MessageView, OriginView, PartView, ProvenanceView, StepView, TraceView,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::record::{optional_json_to_py, record};

/// A rendered prompt with where each part came from.
#[pyclass(frozen, get_all, module = "promptreg")]
pub struct Trace {
    /// The prompt rendered.
    pub id: String,
    /// The locale it was rendered for.
    pub locale: String,
    /// The final text, the same as `render` returns.
    pub text: String,
    /// The steps of locale matching, in the order they were tried.
    pub lookup: Vec<LookupStep>,
    /// The non-blank parts, in order.
    pub parts: Vec<TracePart>,
    /// The model settings for this locale, or `None`.
    pub model: Py<PyAny>,
    /// The prompt's metadata, or `None`.
    pub metadata: Py<PyAny>,
    /// The attributes for the span of the LLM call this prompt goes to,
    /// OpenTelemetry style (`promptreg.prompt.id`, ...).
    pub trace_attributes: Py<PyAny>,
}

record!(Trace[id, locale, text, lookup, parts, model, metadata, trace_attributes]);

/// One step of locale matching.
#[pyclass(frozen, get_all, module = "promptreg")]
#[derive(Clone)]
pub struct LookupStep {
    /// The locale key, or the language and script for the same-script step.
    pub key: String,
    /// `exact`, `parent`, `same-script` or `fallback`.
    pub step: String,
}

record!(LookupStep[key, step]);

/// One part of a rendered prompt or message.
#[pyclass(frozen, get_all, module = "promptreg")]
#[derive(Clone)]
pub struct TracePart {
    /// Which part of the prompt it is.
    pub origin: PartOrigin,
    /// Where it starts in the text, in characters.
    pub start: usize,
    /// Where it ends in the text, in characters.
    pub end: usize,
    /// Its span in the text's UTF-8 encoding, in bytes.
    pub byte_range: (usize, usize),
    /// Its text.
    pub text: String,
    /// The file or setting that supplied it, when its source recorded one.
    pub provenance: Option<PartProvenance>,
    /// The snippet files its template included, as the locale picked them.
    pub snippets: Vec<String>,
}

record!(TracePart[origin, start, end, byte_range, text, provenance, snippets]);

/// Which part of a prompt a piece of text came from.
#[pyclass(frozen, get_all, module = "promptreg")]
#[derive(Clone)]
pub struct PartOrigin {
    /// `pinned-head`, `default`, `override`, `user`, `pinned-tail`,
    /// `appender` or `global-appender`.
    pub kind: String,
    /// How `promptreg explain` names it: ``override for `ja` ``.
    pub label: String,
    /// Position among the blocks of its kind, from 0.
    pub index: Option<u64>,
    /// For an override: the locale it was registered for.
    pub locale: Option<String>,
    /// For an override: the step of locale matching that found it.
    pub step: Option<String>,
    /// For a user block: whether it takes the body's place.
    pub replaces_body: Option<bool>,
    /// For a pinned block: the locale variant whose text was used.
    pub translation: Option<LocaleMatch>,
}

record!(PartOrigin[kind, label, index, locale, step, replaces_body, translation]);

/// A locale variant found by locale matching.
#[pyclass(frozen, get_all, module = "promptreg")]
#[derive(Clone)]
pub struct LocaleMatch {
    /// The locale the variant was registered for.
    pub locale: String,
    /// The step of locale matching that found it.
    pub step: String,
}

record!(LocaleMatch[locale, step]);

/// Where a part came from, as its source recorded it.
#[pyclass(frozen, get_all, module = "promptreg")]
#[derive(Clone)]
pub struct PartProvenance {
    /// `code`, `pack` or `user`.
    pub source: String,
    /// How the source names the part: `default file`, `inline setting`.
    pub what: String,
    /// The file it was read from.
    pub file: Option<String>,
    /// The file actually read, when `file` is a symbolic link.
    pub target: Option<String>,
    /// The locale the file is for.
    pub locale: Option<String>,
    /// The mode in force, for a block of the user's configuration.
    pub mode: Option<String>,
    /// The settings entry that configured it.
    pub chosen_by: Option<SettingRef>,
    /// For a followed pack: the prompt's version in the store.
    pub version: Option<u64>,
    /// That version's content digest.
    pub digest: Option<String>,
    /// The label followed.
    pub label: Option<String>,
    /// The label's revision in force.
    pub revision: Option<u64>,
    /// The split whose candidate the part is.
    pub split: Option<u64>,
    /// A locale variant translated from an older text of its default:
    /// the default changed since.
    pub stale: bool,
}

record!(PartProvenance[source, what, file, target, locale, mode, chosen_by, version, digest, label, revision, split, stale]);

/// A settings entry: a file and a key path in it.
#[pyclass(frozen, get_all, module = "promptreg")]
#[derive(Clone)]
pub struct SettingRef {
    /// The settings file.
    pub file: String,
    /// The key path, such as `prompts.auditor`.
    pub key_path: String,
    /// Its line, from 1.
    pub line: usize,
    /// Its column in characters, from 1.
    pub column: usize,
}

record!(SettingRef[file, key_path, line, column]);

/// A rendered chat prompt with where each part of each message came from.
#[pyclass(frozen, get_all, module = "promptreg")]
pub struct ChatTrace {
    /// The prompt rendered.
    pub id: String,
    /// The locale it was rendered for.
    pub locale: String,
    /// The steps of locale matching, in the order they were tried.
    pub lookup: Vec<LookupStep>,
    /// The messages, in order, with their parts.
    pub messages: Vec<TraceMessage>,
    /// The model settings for this locale, or `None`.
    pub model: Py<PyAny>,
    /// The prompt's metadata, or `None`.
    pub metadata: Py<PyAny>,
    /// The attributes for the span of the LLM call, as `Trace` has them.
    pub trace_attributes: Py<PyAny>,
}

record!(ChatTrace[id, locale, lookup, messages, model, metadata, trace_attributes]);

/// One rendered message of a chat prompt with its parts.
#[pyclass(frozen, get_all, module = "promptreg")]
#[derive(Clone)]
pub struct TraceMessage {
    /// Who speaks.
    pub role: String,
    /// What is said, as sent.
    pub content: String,
    /// The non-blank parts of `content` (none for a message of a history).
    pub parts: Vec<TracePart>,
    /// Whether the prompt declares it or a history brought it.
    pub source: MessageSource,
}

record!(TraceMessage[role, content, parts, source]);

/// Where a rendered message came from.
#[pyclass(frozen, get_all, module = "promptreg")]
#[derive(Clone)]
pub struct MessageSource {
    /// `prompt` or `history`.
    pub kind: String,
    /// Its position among the prompt's messages, or in the history.
    pub index: u64,
    /// For a history message: the placeholder's name.
    pub name: Option<String>,
}

record!(MessageSource[kind, index, name]);

impl Trace {
    pub(crate) fn new(py: Python<'_>, view: TraceView) -> PyResult<Self> {
        Ok(Trace {
            parts: parts(&view.text, view.parts),
            id: view.id,
            locale: view.locale,
            text: view.text,
            lookup: view.lookup.into_iter().map(LookupStep::from).collect(),
            model: optional_json_to_py(py, view.model.map(|m| m.to_value()))?,
            metadata: optional_json_to_py(py, view.metadata.map(|m| m.to_value()))?,
            trace_attributes: attributes(py, view.trace_attributes)?,
        })
    }
}

impl ChatTrace {
    pub(crate) fn new(py: Python<'_>, view: ChatTraceView) -> PyResult<Self> {
        Ok(ChatTrace {
            id: view.id,
            locale: view.locale,
            lookup: view.lookup.into_iter().map(LookupStep::from).collect(),
            messages: view.messages.into_iter().map(TraceMessage::from).collect(),
            model: optional_json_to_py(py, view.model.map(|m| m.to_value()))?,
            metadata: optional_json_to_py(py, view.metadata.map(|m| m.to_value()))?,
            trace_attributes: attributes(py, view.trace_attributes)?,
        })
    }
}

impl From<MessageView> for TraceMessage {
    fn from(message: MessageView) -> Self {
        TraceMessage {
            parts: parts(&message.content, message.parts),
            role: message.role,
            content: message.content,
            source: MessageSource {
                kind: message.source.kind.to_owned(),
                index: message.source.index as u64,
                name: message.source.name,
            },
        }
    }
}

impl From<StepView> for LookupStep {
    fn from(step: StepView) -> Self {
        LookupStep {
            key: step.key,
            step: step.step.to_owned(),
        }
    }
}

/// The parts of `text`, with offsets in characters.
fn parts(text: &str, parts: Vec<PartView>) -> Vec<TracePart> {
    let chars = |byte: usize| text.get(..byte).unwrap_or(text).chars().count();
    parts
        .into_iter()
        .map(|part| TracePart {
            start: chars(part.range.start),
            end: chars(part.range.end),
            byte_range: (part.range.start, part.range.end),
            origin: PartOrigin::from(part.origin),
            text: part.text,
            provenance: part.provenance.map(PartProvenance::from),
            snippets: part.snippets,
        })
        .collect()
}

impl From<OriginView> for PartOrigin {
    fn from(origin: OriginView) -> Self {
        PartOrigin {
            kind: origin.kind.to_owned(),
            label: origin.label,
            index: origin.index.map(|i| i as u64),
            locale: origin.locale,
            step: origin.step.map(str::to_owned),
            replaces_body: origin.replaces_body,
            translation: origin.translation.map(|t| LocaleMatch {
                locale: t.locale,
                step: t.step.to_owned(),
            }),
        }
    }
}

impl From<ProvenanceView> for PartProvenance {
    fn from(provenance: ProvenanceView) -> Self {
        PartProvenance {
            source: provenance.source.to_owned(),
            what: provenance.what,
            file: provenance.file,
            target: provenance.target,
            locale: provenance.locale,
            mode: provenance.mode,
            chosen_by: provenance.chosen_by.map(|setting| SettingRef {
                file: setting.file,
                key_path: setting.key_path,
                line: setting.line,
                column: setting.column,
            }),
            version: provenance.version,
            digest: provenance.digest,
            label: provenance.label,
            revision: provenance.revision,
            split: provenance.split,
            stale: provenance.stale,
        }
    }
}

/// Tracing attributes as one dict, name -> str or int, in the order of
/// their names (as the Node.js binding's object has them).
fn attributes(
    py: Python<'_>,
    mut pairs: Vec<(&'static str, AttributeValue)>,
) -> PyResult<Py<PyAny>> {
    pairs.sort_by_key(|(name, _)| *name);
    let dict = PyDict::new(py);
    for (name, value) in pairs {
        match value {
            AttributeValue::String(text) => dict.set_item(name, text)?,
            AttributeValue::Int(n) => dict.set_item(name, n)?,
        }
    }
    Ok(dict.into_any().unbind())
}
