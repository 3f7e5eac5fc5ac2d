//! A traced render as plain data, for a host language's objects.
//!
//! [`Rendered`] and [`RenderedChat`] hold the library's own types (enums
//! marked non-exhaustive, paths, locales, shared provenance); a binding
//! that turns them into JavaScript or Python objects would have to follow
//! every variant. The views here are that work done once, in the core:
//! owned strings, numbers and names (the names of the library's JSON, as
//! `promptreg explain --json` prints them), with each part's byte range
//! and text, so that a binding only converts offsets to its own units and
//! copies fields. A variant added to [`Origin`] or [`MessageSource`] is
//! described here, where the compiler points at it.

use std::ops::Range;
use std::path::Path;

use crate::chat::{MessageSource, RenderedChat, RenderedMessage};
use crate::compose::{Origin, Part, Rendered};
use crate::json_object::JsonObject;
use crate::locale_match::{LocaleMatch, LocaleStep, LookupStep};
use crate::provenance::{Provenance, Setting, SourceKind};
use crate::trace_attributes::AttributeValue;

/// A traced text render ([`Rendered`]) as plain data.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TraceView {
    /// The prompt rendered.
    pub id: String,
    /// The locale it was rendered for.
    pub locale: String,
    /// The final text.
    pub text: String,
    /// The steps of locale matching, in the order they were tried.
    pub lookup: Vec<StepView>,
    /// The non-blank parts, in order, ranges into `text`.
    pub parts: Vec<PartView>,
    /// The model settings for this locale.
    pub model: Option<JsonObject>,
    /// The prompt's metadata.
    pub metadata: Option<JsonObject>,
    /// The attributes for the span of the LLM call
    /// ([`Rendered::trace_attributes`]).
    pub trace_attributes: Vec<(&'static str, AttributeValue)>,
}

/// A traced chat render ([`RenderedChat`]) as plain data.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ChatTraceView {
    /// The prompt rendered.
    pub id: String,
    /// The locale it was rendered for.
    pub locale: String,
    /// The steps of locale matching, in the order they were tried.
    pub lookup: Vec<StepView>,
    /// The messages, in order, with their parts.
    pub messages: Vec<MessageView>,
    /// The model settings for this locale.
    pub model: Option<JsonObject>,
    /// The prompt's metadata.
    pub metadata: Option<JsonObject>,
    /// The attributes for the span of the LLM call
    /// ([`RenderedChat::trace_attributes`]).
    pub trace_attributes: Vec<(&'static str, AttributeValue)>,
}

/// One rendered message with its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MessageView {
    /// Who speaks.
    pub role: String,
    /// What is said, as sent.
    pub content: String,
    /// The non-blank parts, ranges into `content` (none for a message of a
    /// history).
    pub parts: Vec<PartView>,
    /// Where the message came from.
    pub source: SourceView,
}

/// Where a rendered message came from ([`MessageSource`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SourceView {
    /// `prompt` or `history`.
    pub kind: &'static str,
    /// Its position among the prompt's messages, or in the history.
    pub index: usize,
    /// For a message of a history: the placeholder's name.
    pub name: Option<String>,
}

/// One step of locale matching ([`LookupStep`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StepView {
    /// The locale key, or the language and script for the same-script step.
    pub key: String,
    /// `exact`, `parent`, `same-script` or `fallback`.
    pub step: &'static str,
}

/// One part of a render ([`Part`]) with its text.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PartView {
    /// Which part of the prompt it is.
    pub origin: OriginView,
    /// Its span in the text (or message content), in bytes.
    pub range: Range<usize>,
    /// Its text.
    pub text: String,
    /// The file or setting that supplied it, when its source recorded one.
    pub provenance: Option<ProvenanceView>,
    /// The snippet files its template included.
    pub snippets: Vec<String>,
}

/// Which part of a prompt a piece of text came from ([`Origin`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OriginView {
    /// `pinned-head`, `default`, `override`, `user`, `pinned-tail`,
    /// `appender` or `global-appender`.
    pub kind: &'static str,
    /// How `promptreg explain` names it (`override for \`ja\``).
    pub label: String,
    /// Position among the blocks of its kind, from 0.
    pub index: Option<usize>,
    /// For an override: the locale it was registered for.
    pub locale: Option<String>,
    /// For an override: the step of locale matching that found it.
    pub step: Option<&'static str>,
    /// For a user block: whether it takes the body's place.
    pub replaces_body: Option<bool>,
    /// For a pinned block: the locale variant whose text was used.
    pub translation: Option<MatchView>,
}

/// A locale variant found by locale matching ([`LocaleMatch`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MatchView {
    /// The locale the variant was registered for.
    pub locale: String,
    /// The step of locale matching that found it.
    pub step: &'static str,
}

/// Where a part came from ([`Provenance`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProvenanceView {
    /// `code`, `pack` or `user`.
    pub source: &'static str,
    /// How the source names the part.
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
    pub chosen_by: Option<SettingView>,
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
    /// A locale variant translated from an older text of its default.
    pub stale: bool,
}

/// A settings entry ([`Setting`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SettingView {
    /// The settings file.
    pub file: String,
    /// The key path, such as `prompts.auditor`.
    pub key_path: String,
    /// Its line, from 1.
    pub line: usize,
    /// Its column in characters, from 1.
    pub column: usize,
}

impl From<Rendered> for TraceView {
    fn from(rendered: Rendered) -> Self {
        let trace_attributes = rendered.trace_attributes();
        let parts = parts(&rendered.text, &rendered.parts);
        TraceView {
            id: rendered.id.to_string(),
            locale: rendered.locale.to_string(),
            lookup: steps(&rendered.lookup),
            parts,
            text: rendered.text,
            model: rendered.model,
            metadata: rendered.metadata,
            trace_attributes,
        }
    }
}

impl From<RenderedChat> for ChatTraceView {
    fn from(chat: RenderedChat) -> Self {
        let trace_attributes = chat.trace_attributes();
        ChatTraceView {
            id: chat.id.to_string(),
            locale: chat.locale.to_string(),
            lookup: steps(&chat.lookup),
            messages: chat.messages.into_iter().map(MessageView::from).collect(),
            model: chat.model,
            metadata: chat.metadata,
            trace_attributes,
        }
    }
}

impl From<RenderedMessage> for MessageView {
    fn from(message: RenderedMessage) -> Self {
        MessageView {
            role: message.role.to_string(),
            parts: parts(&message.content, &message.parts),
            content: message.content,
            source: SourceView::from(&message.source),
        }
    }
}

impl From<&MessageSource> for SourceView {
    fn from(source: &MessageSource) -> Self {
        match source {
            MessageSource::Prompt { index } => SourceView {
                kind: "prompt",
                index: *index,
                name: None,
            },
            MessageSource::History { name, index } => SourceView {
                kind: "history",
                index: *index,
                name: Some(name.clone()),
            },
        }
    }
}

fn steps(lookup: &[LookupStep]) -> Vec<StepView> {
    lookup
        .iter()
        .map(|step| StepView {
            key: step.key.clone(),
            step: step.step.as_str(),
        })
        .collect()
}

fn parts(text: &str, parts: &[Part]) -> Vec<PartView> {
    parts.iter().map(|part| PartView::new(text, part)).collect()
}

impl PartView {
    /// Part `part` of `text`.
    pub fn new(text: &str, part: &Part) -> Self {
        PartView {
            origin: OriginView::from(&part.origin),
            range: part.range.clone(),
            text: text.get(part.range.clone()).unwrap_or_default().to_owned(),
            provenance: part.provenance.as_deref().map(ProvenanceView::from),
            snippets: part.snippets.iter().map(|f| lossy(f)).collect(),
        }
    }
}

impl From<&Origin> for OriginView {
    fn from(origin: &Origin) -> Self {
        let view = |kind| OriginView {
            kind,
            label: origin.to_string(),
            index: None,
            locale: None,
            step: None,
            replaces_body: None,
            translation: None,
        };
        match origin {
            Origin::PinnedHead { index, translation } => OriginView {
                index: Some(*index),
                translation: translation.as_ref().map(MatchView::from),
                ..view("pinned-head")
            },
            Origin::Default => view("default"),
            Origin::Override { locale, step } => OriginView {
                locale: Some(locale.to_string()),
                step: Some(step.as_str()),
                ..view("override")
            },
            Origin::User { replaces_body } => OriginView {
                replaces_body: Some(*replaces_body),
                ..view("user")
            },
            Origin::PinnedTail { index, translation } => OriginView {
                index: Some(*index),
                translation: translation.as_ref().map(MatchView::from),
                ..view("pinned-tail")
            },
            Origin::Appender { index } => OriginView {
                index: Some(*index),
                ..view("appender")
            },
            Origin::GlobalAppender { index } => OriginView {
                index: Some(*index),
                ..view("global-appender")
            },
        }
    }
}

impl From<&LocaleMatch> for MatchView {
    fn from(matched: &LocaleMatch) -> Self {
        MatchView {
            locale: matched.locale.to_string(),
            step: matched.step.as_str(),
        }
    }
}

impl From<&Provenance> for ProvenanceView {
    fn from(provenance: &Provenance) -> Self {
        ProvenanceView {
            source: provenance.source.as_str(),
            what: provenance.what.clone(),
            file: provenance.file.as_deref().map(shown),
            target: provenance.target.as_deref().map(shown),
            locale: provenance.locale.as_ref().map(|l| l.to_string()),
            mode: provenance.mode.clone(),
            chosen_by: provenance.chosen_by.as_ref().map(SettingView::from),
            version: provenance.version,
            digest: provenance.digest.clone(),
            label: provenance.label.clone(),
            revision: provenance.revision,
            split: provenance.split,
            stale: provenance.stale,
        }
    }
}

impl From<&Setting> for SettingView {
    fn from(setting: &Setting) -> Self {
        SettingView {
            file: shown(&setting.file),
            key_path: setting.key_path.clone(),
            line: setting.line,
            column: setting.column,
        }
    }
}

/// A path as the bindings have always shown it.
fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// A snippet's path, as the bindings have always shown it.
fn lossy(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

impl LocaleStep {
    /// Its name in the library's JSON: `exact`, `parent`, `same-script`
    /// or `fallback`.
    pub fn as_str(self) -> &'static str {
        match self {
            LocaleStep::Exact => "exact",
            LocaleStep::Parent => "parent",
            LocaleStep::SameScript => "same-script",
            LocaleStep::Fallback => "fallback",
        }
    }
}

impl SourceKind {
    /// Its name in the library's JSON: `code`, `pack` or `user`.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Code => "code",
            SourceKind::Pack => "pack",
            SourceKind::User => "user",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{Chat, Message, Role};
    use crate::locale::Locale;
    use crate::prompt::Prompt;
    use crate::registry::PromptRegistry;
    use serde_json::{Value, json};

    /// The names of the views are those of the library's JSON.
    #[test]
    fn names_are_those_of_the_json() {
        let json = |v: &dyn erased_serde::Serialize| serde_json::to_value(v).unwrap();
        for step in [
            LocaleStep::Exact,
            LocaleStep::Parent,
            LocaleStep::SameScript,
            LocaleStep::Fallback,
        ] {
            assert_eq!(json(&step), json!(step.as_str()));
        }
        for source in [SourceKind::Code, SourceKind::Pack, SourceKind::User] {
            assert_eq!(json(&source), json!(source.as_str()));
        }
        let matched = LocaleMatch {
            locale: Locale::parse("ja").unwrap(),
            step: LocaleStep::Parent,
        };
        let origins = [
            Origin::PinnedHead {
                index: 1,
                translation: Some(matched.clone()),
            },
            Origin::Default,
            Origin::Override {
                locale: Locale::parse("fr").unwrap(),
                step: LocaleStep::Exact,
            },
            Origin::User {
                replaces_body: true,
            },
            Origin::PinnedTail {
                index: 0,
                translation: None,
            },
            Origin::Appender { index: 2 },
            Origin::GlobalAppender { index: 3 },
        ];
        for origin in origins {
            let view = OriginView::from(&origin);
            let fields = json(&origin);
            let text = |key: &str| fields.get(key).and_then(Value::as_str);
            assert_eq!(Some(view.kind), text("kind"));
            assert_eq!(
                view.index,
                fields
                    .get("index")
                    .and_then(Value::as_u64)
                    .map(|i| i as usize)
            );
            assert_eq!(view.locale.as_deref(), text("locale"));
            assert_eq!(view.step, text("step"));
            assert_eq!(
                view.replaces_body,
                fields.get("replaces_body").and_then(Value::as_bool)
            );
            let translation = fields.get("translation").filter(|t| !t.is_null());
            assert_eq!(
                view.translation
                    .map(|t| json!({ "locale": t.locale, "step": t.step })),
                translation.cloned()
            );
        }
        let sources = [
            MessageSource::Prompt { index: 2 },
            MessageSource::History {
                name: "turns".into(),
                index: 1,
            },
        ];
        for source in sources {
            let view = SourceView::from(&source);
            let fields = json(&source);
            assert_eq!(Some(view.kind), fields.get("kind").and_then(Value::as_str));
            assert_eq!(
                Some(view.index as u64),
                fields.get("index").and_then(Value::as_u64)
            );
            assert_eq!(
                view.name.as_deref(),
                fields.get("name").and_then(Value::as_str)
            );
        }
    }

    #[test]
    fn a_view_holds_each_part_with_its_text() {
        let registry = PromptRegistry::new();
        registry
            .register("greeter", Prompt::new("Greet.").pin_tail("Be kind."))
            .unwrap();
        registry.set_override("greeter", "fr", "Saluez.").unwrap();
        let view = TraceView::from(registry.render_traced_in("greeter", &(), "fr-CA").unwrap());
        assert_eq!(view.text, "Saluez.\n\nBe kind.");
        let texts: Vec<&str> = view.parts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, ["Saluez.", "Be kind."]);
        assert_eq!(view.parts[0].origin.kind, "override");
        assert_eq!(view.parts[0].origin.step, Some("parent"));
        assert_eq!(view.parts[1].range, 9..17);
        assert_eq!(view.lookup[0].step, "exact");

        registry
            .register(
                "chat",
                Prompt::chat(Chat::new().system("Help.").history("turns")),
            )
            .unwrap();
        let turns = [Message::new(Role::User, "Hi")];
        let chat = registry
            .render_messages_traced_in("chat", &(), "en", &[("turns", &turns[..])])
            .unwrap();
        let view = ChatTraceView::from(chat);
        assert_eq!(view.messages[0].parts[0].text, "Help.");
        assert_eq!(view.messages[1].source.kind, "history");
        assert_eq!(view.messages[1].source.name.as_deref(), Some("turns"));
    }
}
