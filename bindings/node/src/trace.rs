//! The trace of a render (`renderTraced`, `explain`) as plain objects,
//! copied from the library's plain-data view of a trace
//! ([`promptreg::trace_view`]).
//!
//! The shapes follow the library's serialisation (`promptreg explain
//! --json`), with JavaScript's camelCase names and offsets in UTF-16 code
//! units, so that `trace.text.slice(part.start, part.end) === part.text`.

use napi_derive::napi;
use promptreg::trace_attributes::AttributeValue;
use promptreg::trace_view::{
    ChatTraceView, MessageView, OriginView, PartView, ProvenanceView, StepView, TraceView,
};
use serde_json::Value;

use crate::js::{saturating_i64, saturating_u32, utf16_offset};

/// A rendered prompt with where each part came from.
#[napi(object)]
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
    /// The model settings for this locale, when the prompt has some.
    #[napi(ts_type = "Record<string, unknown>")]
    pub model: Option<Value>,
    /// The prompt's metadata, when it has some.
    #[napi(ts_type = "Record<string, unknown>")]
    pub metadata: Option<Value>,
    /// The attributes to add to the span of the LLM call this prompt goes
    /// to, OpenTelemetry style: `promptreg.prompt.id`,
    /// `promptreg.prompt.version`, `promptreg.prompt.digest`,
    /// `promptreg.label`, `promptreg.revision`, `promptreg.locale` (those
    /// known).
    #[napi(ts_type = "Record<string, string | number>")]
    pub trace_attributes: Value,
}

/// One step of locale matching.
#[napi(object)]
pub struct LookupStep {
    /// The locale key, or the language and script for the same-script step.
    pub key: String,
    /// `exact`, `parent`, `same-script` or `fallback`.
    pub step: String,
}

/// One part of a rendered prompt.
#[napi(object)]
pub struct TracePart {
    /// Which part of the prompt it is.
    pub origin: PartOrigin,
    /// Where it starts in `text`, in UTF-16 code units.
    pub start: u32,
    /// Where it ends in `text`, in UTF-16 code units.
    pub end: u32,
    /// Its text.
    pub text: String,
    /// The file or setting that supplied it, when its source recorded one.
    pub provenance: Option<PartProvenance>,
    /// The snippet files its template included (`{% include "x" %}`), as
    /// the render's locale picked them; empty for none.
    pub snippets: Vec<String>,
}

/// Which part of a prompt a piece of text came from.
#[napi(object)]
pub struct PartOrigin {
    /// `pinned-head`, `default`, `override`, `user`, `pinned-tail`,
    /// `appender` or `global-appender`.
    pub kind: String,
    /// How `promptreg explain` names it: `override for \`ja\``,
    /// `appender #1`.
    pub label: String,
    /// Position among the blocks of its kind, from 0.
    pub index: Option<u32>,
    /// For an override: the locale it was registered for.
    pub locale: Option<String>,
    /// For an override: the step of locale matching that found it.
    pub step: Option<String>,
    /// For a user block: whether it takes the body's place.
    pub replaces_body: Option<bool>,
    /// For a pinned block: the locale variant whose text was used.
    pub translation: Option<LocaleMatch>,
}

/// A locale variant found by locale matching.
#[napi(object)]
pub struct LocaleMatch {
    /// The locale the variant was registered for.
    pub locale: String,
    /// The step of locale matching that found it.
    pub step: String,
}

/// Where a part came from, as its source recorded it.
#[napi(object)]
pub struct PartProvenance {
    /// `code`, `pack` or `user`.
    pub source: String,
    /// How the source names the part: `default file`, `local file`,
    /// `inline setting`.
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
    pub version: Option<i64>,
    /// That version's content digest.
    pub digest: Option<String>,
    /// The label followed.
    pub label: Option<String>,
    /// The label's revision in force.
    pub revision: Option<i64>,
    /// The split whose candidate the part is.
    pub split: Option<i64>,
    /// A locale variant translated from an older text of its default:
    /// the default changed since.
    pub stale: bool,
}

/// A settings entry: a file and a key path in it.
#[napi(object)]
pub struct SettingRef {
    /// The settings file.
    pub file: String,
    /// The key path, such as `prompts.auditor`.
    pub key_path: String,
    /// Its line, from 1.
    pub line: u32,
    /// Its column in characters, from 1.
    pub column: u32,
}

/// A rendered chat prompt with where each part of each message came from
/// (`renderMessagesTraced`).
#[napi(object)]
pub struct ChatTrace {
    /// The prompt rendered.
    pub id: String,
    /// The locale it was rendered for.
    pub locale: String,
    /// The steps of locale matching, in the order they were tried.
    pub lookup: Vec<LookupStep>,
    /// The messages, in order, the same as `renderMessages` returns with
    /// their parts.
    pub messages: Vec<TraceMessage>,
    /// The model settings for this locale, when the prompt has some.
    #[napi(ts_type = "Record<string, unknown>")]
    pub model: Option<Value>,
    /// The prompt's metadata, when it has some.
    #[napi(ts_type = "Record<string, unknown>")]
    pub metadata: Option<Value>,
    /// The attributes to add to the span of the LLM call, as `Trace` has
    /// them.
    #[napi(ts_type = "Record<string, string | number>")]
    pub trace_attributes: Value,
}

/// One rendered message of a chat prompt with its parts.
#[napi(object)]
pub struct TraceMessage {
    /// Who speaks: `system`, `user`, `assistant`, `tool` or a declared role.
    pub role: String,
    /// What is said, as sent.
    pub content: String,
    /// The non-blank parts of `content`, in order (none for a message of a
    /// history), with offsets in UTF-16 code units into `content`.
    pub parts: Vec<TracePart>,
    /// Whether the prompt declares it or a history brought it.
    pub source: MessageSource,
}

/// Where a rendered message came from.
#[napi(object)]
pub struct MessageSource {
    /// `prompt`: a message the prompt declares; `history`: one of a
    /// history passed to the render.
    #[napi(ts_type = "'prompt' | 'history'")]
    pub kind: String,
    /// Its position among the prompt's messages, or in the history, from 0.
    pub index: u32,
    /// For a history message: the placeholder's name.
    pub name: Option<String>,
}

impl From<ChatTraceView> for ChatTrace {
    fn from(view: ChatTraceView) -> Self {
        ChatTrace {
            id: view.id,
            locale: view.locale,
            lookup: view.lookup.into_iter().map(LookupStep::from).collect(),
            messages: view.messages.into_iter().map(TraceMessage::from).collect(),
            model: view.model.map(|m| m.to_value()),
            metadata: view.metadata.map(|m| m.to_value()),
            trace_attributes: attributes(view.trace_attributes),
        }
    }
}

impl From<TraceView> for Trace {
    fn from(view: TraceView) -> Self {
        Trace {
            parts: parts(&view.text, view.parts),
            id: view.id,
            locale: view.locale,
            text: view.text,
            lookup: view.lookup.into_iter().map(LookupStep::from).collect(),
            model: view.model.map(|m| m.to_value()),
            metadata: view.metadata.map(|m| m.to_value()),
            trace_attributes: attributes(view.trace_attributes),
        }
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
                index: saturating_u32(message.source.index),
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

/// The parts of `text`, with offsets in UTF-16 code units.
fn parts(text: &str, parts: Vec<PartView>) -> Vec<TracePart> {
    parts
        .into_iter()
        .map(|part| TracePart {
            start: utf16_offset(text, part.range.start),
            end: utf16_offset(text, part.range.end),
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
            index: origin.index.and_then(|i| u32::try_from(i).ok()),
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
                line: saturating_u32(setting.line),
                column: saturating_u32(setting.column),
            }),
            version: provenance.version.map(saturating_i64),
            digest: provenance.digest,
            label: provenance.label,
            revision: provenance.revision.map(saturating_i64),
            split: provenance.split.map(saturating_i64),
            stale: provenance.stale,
        }
    }
}

/// Tracing attributes as one object, name -> value.
fn attributes(pairs: Vec<(&'static str, AttributeValue)>) -> Value {
    let map = pairs
        .into_iter()
        .map(|(name, value)| {
            let value = match value {
                AttributeValue::String(text) => Value::String(text),
                AttributeValue::Int(n) => Value::from(n),
            };
            (name.to_owned(), value)
        })
        .collect();
    Value::Object(map)
}
