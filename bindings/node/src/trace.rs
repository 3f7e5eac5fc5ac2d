//! The trace of a render (`renderTraced`, `explain`) as plain objects.
//!
//! The shapes follow the library's serialisation (`promptreg explain
//! --json`), with JavaScript's camelCase names and offsets in UTF-16 code
//! units, so that `trace.text.slice(part.start, part.end) === part.text`.

use napi_derive::napi;
use promptreg::{Origin, Part, Provenance, Rendered, RenderedChat, RenderedMessage};
use serde::Serialize;
use serde_json::Value;

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

impl From<&RenderedChat> for ChatTrace {
    fn from(rendered: &RenderedChat) -> Self {
        ChatTrace {
            id: rendered.id.to_string(),
            locale: rendered.locale.to_string(),
            lookup: lookup(&rendered.lookup),
            messages: rendered.messages.iter().map(TraceMessage::from).collect(),
            model: rendered.model.as_ref().map(|m| m.to_value()),
            metadata: rendered.metadata.as_ref().map(|m| m.to_value()),
            trace_attributes: attributes(rendered.trace_attributes()),
        }
    }
}

impl From<&RenderedMessage> for TraceMessage {
    fn from(message: &RenderedMessage) -> Self {
        // The library's serialisation is the one description of a source's
        // fields (`MessageSource` is non-exhaustive); read them from it.
        let source = serde_json::to_value(&message.source).unwrap_or(Value::Null);
        TraceMessage {
            role: message.role.to_string(),
            content: message.content.clone(),
            parts: message
                .parts
                .iter()
                .map(|part| TracePart::new(&message.content, part))
                .collect(),
            source: MessageSource {
                kind: source
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                index: source
                    .get("index")
                    .and_then(Value::as_u64)
                    .map_or(0, |i| u32::try_from(i).unwrap_or(u32::MAX)),
                name: source
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            },
        }
    }
}

/// The steps of locale matching.
fn lookup(steps: &[promptreg::LookupStep]) -> Vec<LookupStep> {
    steps
        .iter()
        .map(|step| LookupStep {
            key: step.key.clone(),
            step: name_of(&step.step),
        })
        .collect()
}

impl From<&Rendered> for Trace {
    fn from(rendered: &Rendered) -> Self {
        Trace {
            id: rendered.id.to_string(),
            locale: rendered.locale.to_string(),
            text: rendered.text.clone(),
            lookup: lookup(&rendered.lookup),
            parts: rendered
                .parts
                .iter()
                .map(|part| TracePart::new(&rendered.text, part))
                .collect(),
            model: rendered.model.as_ref().map(|m| m.to_value()),
            metadata: rendered.metadata.as_ref().map(|m| m.to_value()),
            trace_attributes: attributes(rendered.trace_attributes()),
        }
    }
}

impl TracePart {
    /// Part `part` of `text`.
    fn new(text: &str, part: &Part) -> Self {
        TracePart {
            origin: PartOrigin::from(&part.origin),
            start: utf16_offset(text, part.range.start),
            end: utf16_offset(text, part.range.end),
            text: text.get(part.range.clone()).unwrap_or_default().to_owned(),
            provenance: part.provenance.as_deref().map(PartProvenance::from),
            snippets: part
                .snippets
                .iter()
                .map(|f| f.to_string_lossy().into_owned())
                .collect(),
        }
    }
}

impl From<&Origin> for PartOrigin {
    fn from(origin: &Origin) -> Self {
        // The library's serialisation is the one description of an origin's
        // fields (`Origin` is non-exhaustive); read them from it.
        let fields = serde_json::to_value(origin).unwrap_or(Value::Null);
        let text = |key: &str| fields.get(key).and_then(Value::as_str).map(str::to_owned);
        let translation = fields.get("translation").and_then(|t| {
            Some(LocaleMatch {
                locale: t.get("locale")?.as_str()?.to_owned(),
                step: t.get("step")?.as_str()?.to_owned(),
            })
        });
        PartOrigin {
            kind: text("kind").unwrap_or_default(),
            label: origin.to_string(),
            index: fields
                .get("index")
                .and_then(Value::as_u64)
                .and_then(|i| u32::try_from(i).ok()),
            locale: text("locale"),
            step: text("step"),
            replaces_body: fields.get("replaces_body").and_then(Value::as_bool),
            translation,
        }
    }
}

impl From<&Provenance> for PartProvenance {
    fn from(provenance: &Provenance) -> Self {
        let path = |p: &std::path::Path| p.display().to_string();
        PartProvenance {
            source: name_of(&provenance.source),
            what: provenance.what.clone(),
            file: provenance.file.as_deref().map(path),
            target: provenance.target.as_deref().map(path),
            locale: provenance.locale.as_ref().map(|l| l.to_string()),
            mode: provenance.mode.clone(),
            chosen_by: provenance.chosen_by.as_ref().map(|setting| SettingRef {
                file: path(&setting.file),
                key_path: setting.key_path.clone(),
                line: saturating_u32(setting.line),
                column: saturating_u32(setting.column),
            }),
            version: provenance.version.map(saturating_i64),
            digest: provenance.digest.clone(),
            label: provenance.label.clone(),
            revision: provenance.revision.map(saturating_i64),
            split: provenance.split.map(saturating_i64),
            stale: provenance.stale,
        }
    }
}

/// The serialised name of a unit variant (`same-script`, `pack`).
fn name_of(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(name)) => name,
        _ => String::new(),
    }
}

/// The UTF-16 offset of byte offset `byte` of `text`.
pub(crate) fn utf16_offset(text: &str, byte: usize) -> u32 {
    let prefix = text.get(..byte).unwrap_or(text);
    saturating_u32(prefix.encode_utf16().count())
}

fn saturating_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Tracing attributes as one object, name -> value.
fn attributes(pairs: Vec<(&'static str, promptreg::trace_attributes::AttributeValue)>) -> Value {
    let map = pairs
        .into_iter()
        .map(|(name, value)| {
            (
                name.to_owned(),
                serde_json::to_value(value).unwrap_or(Value::Null),
            )
        })
        .collect();
    Value::Object(map)
}

pub(crate) fn saturating_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::utf16_offset;

    #[test]
    fn offsets_count_utf16_code_units() {
        let text = "あa😀b";
        assert_eq!(utf16_offset(text, 0), 0);
        assert_eq!(utf16_offset(text, "あ".len()), 1);
        assert_eq!(utf16_offset(text, "あa".len()), 2);
        // An emoji is two code units in JavaScript.
        assert_eq!(utf16_offset(text, "あa😀".len()), 4);
    }
}
