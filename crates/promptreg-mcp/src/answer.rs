//! `prompts/get`: a render as MCP prompt messages, with where every part
//! came from in `_meta`.
//!
//! MCP prompt messages are `user` or `assistant`. A text prompt is one
//! `user` message. A chat prompt's `user` and `assistant` messages keep
//! their role; its `system` messages (and any other role: `tool`, a role
//! the prompt declares) become `user` messages whose content's `_meta`
//! says the role they were written for (`promptreg/role`), so a client
//! that knows can put them back where they belong.

use promptreg::trace_view::PartView;
use promptreg::{ErrorKind, Locale, RenderRequest, Role, Snapshot, Traced};
use rmcp::ErrorData;
use rmcp::model::{GetPromptResult, MetaObject, PromptMessage, Role as McpRole};
use serde_json::{Map, Value, json};

use crate::listing::stored;

/// The render of `id` (named `name` in the session) in `locale` with
/// `context`, as the result of `prompts/get`.
/// A part of the pack's default files is in `default_locale`.
pub(crate) fn render(
    snapshot: &Snapshot,
    (name, id): (&str, &str),
    context: &Value,
    (locale, default_locale): (&Locale, &Locale),
) -> Result<GetPromptResult, ErrorData> {
    let request = RenderRequest::new(id, context).locale(locale).traced();
    let traced = snapshot
        .render_request(&request)
        .map_err(|e| render_error(name, &e))?
        .into_traced()
        .ok_or_else(|| ErrorData::internal_error("the render came back without its trace", None))?;
    let chat = matches!(traced, Traced::Chat(_));
    let rendered = traced.into_chat();
    let mut meta = Map::new();
    meta.insert("promptreg/id".into(), Value::from(id));
    meta.insert(
        "promptreg/locale".into(),
        Value::from(rendered.locale.as_str()),
    );
    meta.insert(
        "promptreg/kind".into(),
        Value::from(if chat { "chat" } else { "text" }),
    );
    let mut parts = Vec::new();
    let mut messages = Vec::with_capacity(rendered.messages.len());
    for message in &rendered.messages {
        let mut content_meta = Map::new();
        let role = match (&message.role, chat) {
            (Role::User, _) | (_, false) => McpRole::User,
            (Role::Assistant, true) => McpRole::Assistant,
            (other, true) => {
                content_meta.insert("promptreg/role".into(), Value::from(other.as_str()));
                McpRole::User
            }
        };
        let message_parts: Vec<Value> = message
            .parts
            .iter()
            .map(|part| part_meta(&PartView::new(&message.content, part), default_locale))
            .collect();
        if let Some(provenance) = message.parts.iter().find_map(|p| p.provenance.as_deref()) {
            stored(&mut meta, provenance);
        }
        if !message_parts.is_empty() {
            content_meta.insert("promptreg/parts".into(), Value::from(message_parts.clone()));
        }
        parts.extend(message_parts);
        let content_meta = (!content_meta.is_empty()).then_some(MetaObject(content_meta));
        messages.push(PromptMessage::new_text_with_meta(
            role,
            message.content.clone(),
            content_meta,
        ));
    }
    meta.insert("promptreg/parts".into(), Value::from(parts));
    let mut result = GetPromptResult::new(messages);
    result.meta = Some(MetaObject(meta));
    Ok(result)
}

/// What `_meta` says of one part: which part it is, the locale of the
/// text used (a part of the pack's default file: `default_locale`), and
/// where it stands in the store.
fn part_meta(part: &PartView, default_locale: &Locale) -> Value {
    let mut meta = Map::new();
    meta.insert("origin".into(), Value::from(part.origin.kind));
    let locale = part
        .origin
        .translation
        .as_ref()
        .map(|m| m.locale.clone())
        .or_else(|| part.origin.locale.clone())
        .or_else(|| part.provenance.as_ref()?.locale.clone())
        .or_else(|| {
            let from_pack = part.provenance.as_ref()?.source == "pack";
            from_pack.then(|| default_locale.as_str().to_owned())
        });
    if let Some(locale) = locale {
        meta.insert("locale".into(), Value::from(locale));
    }
    if let Some(provenance) = &part.provenance {
        let fields = [
            ("version", provenance.version.map(Value::from)),
            ("digest", provenance.digest.clone().map(Value::from)),
            ("label", provenance.label.clone().map(Value::from)),
            ("revision", provenance.revision.map(Value::from)),
        ];
        for (key, value) in fields {
            if let Some(value) = value {
                meta.insert(key.into(), value);
            }
        }
    }
    Value::Object(meta)
}

/// A failed render as an MCP error: what the caller sent (a context of
/// the wrong shape, a template's missing variable) is invalid params;
/// the rest is the server's.
pub(crate) fn render_error(name: &str, error: &promptreg::Error) -> ErrorData {
    let data = Some(json!({ "prompt": name, "kind": format!("{:?}", error.kind()) }));
    match error.kind() {
        ErrorKind::UnknownId | ErrorKind::InvalidId => {
            ErrorData::invalid_params(format!("no prompt named `{name}`"), data)
        }
        ErrorKind::ContextType
        | ErrorKind::Template
        | ErrorKind::InvalidLocale
        | ErrorKind::NoPromptForLocale
        | ErrorKind::InvalidChat => {
            ErrorData::invalid_params(format!("`{name}` does not render: {error}"), data)
        }
        _ => ErrorData::internal_error(format!("`{name}` does not render: {error}"), data),
    }
}
