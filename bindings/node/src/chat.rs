//! Chat prompts from JavaScript: messages declared as `{ role, content }`
//! and `{ history: name }` items, histories passed to a render as
//! `{ name: [{ role, content }, ...] }`, and rendered messages as
//! `{ role, content }`, the shape chat APIs take.

use napi::bindgen_prelude::{Either, Unknown};
use napi::{Env, Result};
use napi_derive::napi;
use promptreg::{Chat, Message, Role};

use crate::args;
use crate::errors::throw_type_error;
use crate::js::undefined;

/// A chat message: who speaks and what is said.
#[napi(object)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant`, `tool` or a role the prompt
    /// declares.
    pub role: String,
    /// What is said.
    pub content: String,
}

impl From<Message> for ChatMessage {
    fn from(message: Message) -> Self {
        ChatMessage {
            role: message.role.to_string(),
            content: message.content,
        }
    }
}

/// What `renderAny` gives: a text prompt's text, or a chat prompt's
/// messages.
#[napi(object)]
pub struct Rendering {
    /// Which of the two the prompt renders to.
    #[napi(ts_type = "'text' | 'messages'")]
    pub kind: String,
    /// A text prompt's text.
    pub text: Option<String>,
    /// A chat prompt's messages, histories inserted.
    pub messages: Option<Vec<ChatMessage>>,
}

impl From<promptreg::Rendering> for Rendering {
    fn from(rendering: promptreg::Rendering) -> Self {
        match rendering {
            promptreg::Rendering::Text(text) => Rendering {
                kind: "text".to_owned(),
                text: Some(text),
                messages: None,
            },
            promptreg::Rendering::Messages(messages) => Rendering {
                kind: "messages".to_owned(),
                text: None,
                messages: Some(messages.into_iter().map(ChatMessage::from).collect()),
            },
        }
    }
}

/// One item a chat prompt declares: a message, or the place of a history.
#[napi]
pub type ChatItem = Either<ChatMessageDeclaration, HistoryPlaceholder>;

/// A message a chat prompt declares (`registerChat`, `overrideChat`).
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct ChatMessageDeclaration {
    /// `system`, `user`, `assistant`, `tool` or a role of the
    /// application's own.
    pub role: String,
    /// Its text, or a function rendering it.
    #[napi(ts_type = "string | ((ctx: any, locale: string) => string)")]
    pub content: String,
}

/// Where the messages passed under `history` at render time go.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct HistoryPlaceholder {
    /// The placeholder's name, a key of a render's `histories`.
    pub history: String,
}

/// Options of `registerChat`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct ChatOptions {
    /// Pinned blocks before the content of the message the rules attach
    /// to.
    #[napi(ts_type = "Array<string | ((ctx: any, locale: string) => string)>")]
    pub head: Option<Vec<String>>,
    /// Pinned blocks after it (and before appenders).
    #[napi(ts_type = "Array<string | ((ctx: any, locale: string) => string)>")]
    pub tail: Option<Vec<String>>,
    /// What the prompt is for (`promptreg list`).
    pub description: Option<String>,
    /// The message (from 0, placeholders left out) that pinned blocks and
    /// appenders attach to, instead of the first `system` message.
    pub attach: Option<u32>,
    /// The model settings renders report (`renderMessagesTraced`,
    /// `modelSettings`).
    #[napi(ts_type = "Record<string, unknown>")]
    pub model: Option<serde_json::Value>,
    /// The prompt's metadata.
    #[napi(ts_type = "Record<string, unknown>")]
    pub metadata: Option<serde_json::Value>,
}

/// The messages argument of `registerChat` and `overrideChat`: an array of
/// `{ role, content }` (content a renderer) and `{ history }` items.
pub(crate) fn chat_arg(env: &Env, value: Unknown<'_>, name: &str) -> Result<Chat> {
    let items = args::array(
        env,
        value,
        name,
        "messages `{ role, content }` and placeholders `{ history }`",
    )?;
    let mut chat = Chat::new();
    for (i, item) in items.into_iter().enumerate() {
        let name = format!("{name}[{i}]");
        let item = args::plain_object(env, item, &name)?;
        let field = |key: &str| -> Result<Option<Unknown<'_>>> {
            Ok(item
                .get::<Unknown<'_>>(key)?
                .filter(|v| !args::is_absent(Some(v))))
        };
        let (role, content, history) = (field("role")?, field("content")?, field("history")?);
        chat = match (history, role) {
            (Some(_), Some(_)) => {
                return Err(throw_type_error(
                    env,
                    format!(
                        "`{name}` must be a message `{{ role, content }}` or a placeholder `{{ history }}`, not both"
                    ),
                ));
            }
            (Some(history), None) => {
                chat.history(args::string(env, history, &format!("{name}.history"))?)
            }
            (None, role) => {
                let role = match role {
                    Some(role) => args::string(env, role, &format!("{name}.role"))?,
                    None => {
                        return Err(throw_type_error(
                            env,
                            format!(
                                "`{name}` must be a message `{{ role, content }}` or a placeholder `{{ history }}`"
                            ),
                        ));
                    }
                };
                let content = match content {
                    Some(content) => args::renderer(env, content, &format!("{name}.content"))?,
                    None => {
                        return Err(throw_type_error(
                            env,
                            format!(
                                "`{name}.content` must be a string or a function `(ctx, locale) => string`, not undefined"
                            ),
                        ));
                    }
                };
                chat.message(Role::named(&role), content)
            }
        };
    }
    Ok(chat)
}

/// The histories argument of a chat render: an object whose keys are
/// placeholder names and whose values are arrays of `{ role, content }`.
pub(crate) fn histories_arg(
    env: &Env,
    value: Option<Unknown<'_>>,
    name: &str,
) -> Result<Vec<(String, Vec<Message>)>> {
    let Some(value) = value.filter(|v| !args::is_absent(Some(v))) else {
        return Ok(Vec::new());
    };
    let object = args::plain_object(env, value, name)?;
    let mut histories = Vec::new();
    for key in napi::bindgen_prelude::Object::keys(&object)? {
        let name = format!("{name}.{key}");
        let Some(messages) = object.get::<Unknown<'_>>(&key)? else {
            continue;
        };
        let items = args::array(env, messages, &name, "messages `{ role, content }`")?;
        let mut history = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let name = format!("{name}[{i}]");
            let item = args::plain_object(env, item, &name)?;
            let field = |key: &str| -> Result<Unknown<'_>> {
                match item.get::<Unknown<'_>>(key)? {
                    Some(value) => Ok(value),
                    None => undefined(env),
                }
            };
            let role = args::string(env, field("role")?, &format!("{name}.role"))?;
            let content = args::string(env, field("content")?, &format!("{name}.content"))?;
            history.push(Message::new(Role::named(&role), content));
        }
        histories.push((key, history));
    }
    Ok(histories)
}

/// Histories as the library takes them.
pub(crate) fn borrowed(histories: &[(String, Vec<Message>)]) -> Vec<(&str, &[Message])> {
    histories
        .iter()
        .map(|(name, messages)| (name.as_str(), messages.as_slice()))
        .collect()
}
