//! Chat prompts: an ordered list of messages, each with a role, as LLM
//! applications send them; and what rendering one returns.
//!
//! A chat prompt declares its messages ([`Chat`]); a render gives each
//! message's content through the same composition as a text prompt, in
//! the message the rules attach to (see [`Chat`]), and returns a list of
//! [`Message`]s.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::compose::Part;
use crate::contract::Contract;
use crate::id::PromptId;
use crate::json_object::JsonObject;
use crate::locale::Locale;
use crate::locale_match::LookupStep;
use crate::renderer::{IntoRenderer, Renderer};

/// The role of a chat message: one of the four every provider knows, or
/// a custom one the prompt declares (`critic`).
///
/// It serialises as its name (`"system"`), so a [`Message`] serialises to
/// OpenAI's `{"role", "content"}` shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Role {
    /// Instructions to the model.
    System,
    /// What the person said.
    User,
    /// What the model answered.
    Assistant,
    /// A tool's result.
    Tool,
    /// A role the prompt declares (front matter `roles: [critic]`).
    Custom(Arc<str>),
}

/// The roles every chat prompt may use without declaring them.
pub const BUILT_IN_ROLES: [&str; 4] = ["system", "user", "assistant", "tool"];

impl Role {
    /// The role named `name`: a built-in one, else a custom role.
    pub fn named(name: &str) -> Role {
        match name {
            "system" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            other => Role::Custom(other.into()),
        }
    }

    /// The role's name, as it is sent.
    pub fn as_str(&self) -> &str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Custom(name) => name,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Role {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Ok(Role::named(&name))
    }
}

/// One rendered chat message: what an application sends a chat model.
///
/// ```
/// use promptreg_core::{Message, Role};
///
/// let message = Message::new(Role::User, "Where are the tents?");
/// assert_eq!(
///     serde_json::to_string(&message).unwrap(),
///     r#"{"role":"user","content":"Where are the tents?"}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: String,
}

impl Message {
    /// A message of `role` saying `content`.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
        }
    }
}

/// Messages as the role-headed text a pack's chat file is written in:
/// `# role` on a line, the content below it, one blank line between
/// messages. What `promptreg render` prints and
/// [`render_chat_as_text`](crate::PromptRegistry::render_chat_as_text)
/// returns.
pub fn messages_as_text<'a>(messages: impl IntoIterator<Item = (&'a Role, &'a str)>) -> String {
    let mut out = String::new();
    for (role, content) in messages {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str("# ");
        out.push_str(role.as_str());
        out.push('\n');
        out.push_str(content);
    }
    out
}

/// One item of a chat prompt: a message, or the place where a history the
/// caller passes is inserted.
#[derive(Clone, Debug)]
pub enum Item {
    /// A message: its role and what renders its content.
    Message(Role, Renderer),
    /// Where the caller's history of this name goes.
    History(Arc<str>),
}

/// The messages of a chat prompt as declared: a default
/// ([`Prompt::chat`](crate::Prompt::chat)) or a locale variant
/// ([`PromptRegistry::set_chat_override`](crate::PromptRegistry::set_chat_override)).
///
/// Where the registry's rules go:
///
/// - pinned blocks and appenders attach to one message: the one
///   [`attach`](Self::attach) names, else the first `system` message,
///   else the first message;
/// - the user's configuration (a prompt file or inline text) goes to the
///   first `system` message, else to that same attached message: mode
///   `override` replaces that message's content (pinned blocks stay),
///   `append` modes add to it;
/// - a locale variant replaces the whole list;
/// - templates render per message with the same context;
/// - a history placeholder takes the messages the caller passes under its
///   name, none when it passes none.
///
/// ```
/// use promptreg_core::{Chat, Message, Prompt, PromptRegistry, Role};
///
/// let registry = PromptRegistry::new();
/// registry.register(
///     "narrator",
///     Prompt::chat(
///         Chat::new()
///             .system("You narrate what you do on the page.")
///             .user("Find the tents.")
///             .assistant("Opening /tents.")
///             .history("conversation"),
///     )
///     .pin_tail("Never invent prices."),
/// )?;
/// registry.append("narrator", "Answer in one sentence.")?;
///
/// let turns = [Message::new(Role::User, "And backpacks?")];
/// let messages = registry.render_messages("narrator", &(), &[("conversation", &turns[..])])?;
/// assert_eq!(messages[0].content, "You narrate what you do on the page.\n\nNever invent prices.\n\nAnswer in one sentence.");
/// assert_eq!(messages.len(), 4);
/// assert_eq!(messages[3], turns[0]);
/// # Ok::<(), promptreg_core::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Chat {
    pub(crate) items: Vec<Item>,
    /// The message (counted among messages, from 0) the rules attach to.
    attach: Option<usize>,
    /// Custom roles declared beyond those of its messages, which a history
    /// may use (front matter `roles: [critic]`).
    declared_roles: Vec<Arc<str>>,
}

impl Chat {
    /// An empty list; add messages with the methods below.
    pub fn new() -> Self {
        Chat::default()
    }

    /// Adds a message of `role`.
    pub fn message<M>(mut self, role: Role, content: impl IntoRenderer<M>) -> Self {
        self.items
            .push(Item::Message(role, content.into_renderer()));
        self
    }

    /// Adds a `system` message.
    pub fn system<M>(self, content: impl IntoRenderer<M>) -> Self {
        self.message(Role::System, content)
    }

    /// Adds a `user` message.
    pub fn user<M>(self, content: impl IntoRenderer<M>) -> Self {
        self.message(Role::User, content)
    }

    /// Adds an `assistant` message.
    pub fn assistant<M>(self, content: impl IntoRenderer<M>) -> Self {
        self.message(Role::Assistant, content)
    }

    /// Adds the place where the history named `name` is inserted at render
    /// time.
    pub fn history(mut self, name: impl Into<Arc<str>>) -> Self {
        self.items.push(Item::History(name.into()));
        self
    }

    /// Declares a custom role that a history passed at render time may
    /// use although no declared message has it. A history message of any
    /// other role that is not built in is refused.
    pub fn role(mut self, name: impl Into<Arc<str>>) -> Self {
        self.declared_roles.push(name.into());
        self
    }

    /// The roles a history may use: the built-in ones, those of its
    /// messages and the declared ones.
    /// Its items in order: messages and history placeholders.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// Every role its messages and histories may use: the built-in ones and
    /// those declared.
    pub fn known_roles(&self) -> impl Iterator<Item = &str> {
        BUILT_IN_ROLES
            .into_iter()
            .chain(self.roles().map(Role::as_str))
            .chain(self.declared_roles.iter().map(|r| &**r))
    }

    /// Attaches pinned blocks and appenders to message `index` (counted
    /// among messages, from 0, placeholders left out) instead of the first
    /// `system` message. An index past the last message is refused when
    /// the prompt is registered.
    pub fn attach(mut self, index: usize) -> Self {
        self.attach = Some(index);
        self
    }

    /// How many messages it declares (placeholders left out).
    pub fn message_count(&self) -> usize {
        self.messages().count()
    }

    /// The roles of the declared messages, in order.
    pub fn roles(&self) -> impl Iterator<Item = &Role> {
        self.messages().map(|(_, role, _)| role)
    }

    /// The names of the history placeholders, in order.
    pub fn placeholders(&self) -> impl Iterator<Item = &str> {
        self.items.iter().filter_map(|item| match item {
            Item::History(name) => Some(&**name),
            Item::Message(..) => None,
        })
    }

    /// The declared messages with their position in `items`.
    fn messages(&self) -> impl Iterator<Item = (usize, &Role, &Renderer)> {
        self.items
            .iter()
            .enumerate()
            .filter_map(|(at, item)| match item {
                Item::Message(role, content) => Some((at, role, content)),
                Item::History(_) => None,
            })
    }

    /// The position in [`items`](Self::items) of the message the pins and
    /// appenders attach to.
    pub fn attached(&self) -> Option<usize> {
        match self.attach {
            Some(index) => self.messages().nth(index).map(|(at, ..)| at),
            None => self
                .first_system()
                .or_else(|| self.messages().next().map(|(at, ..)| at)),
        }
    }

    /// The position in `items` of the message the user's configuration
    /// goes to.
    pub(crate) fn user_target(&self) -> Option<usize> {
        self.first_system().or_else(|| self.attached())
    }

    fn first_system(&self) -> Option<usize> {
        self.messages()
            .find(|(_, role, _)| **role == Role::System)
            .map(|(at, ..)| at)
    }

    /// What is wrong with it as a declaration: no message, or an
    /// [`attach`](Self::attach) index past the last one.
    pub(crate) fn problem(&self) -> Option<String> {
        let count = self.message_count();
        match self.attach {
            _ if count == 0 => Some("a chat prompt needs at least one message".to_owned()),
            Some(index) if index >= count => Some(format!(
                "it attaches its rules to message {index} (from 0), but has {count} message{}",
                if count == 1 { "" } else { "s" }
            )),
            _ => None,
        }
    }
}

/// Where a rendered message came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum MessageSource {
    /// A message the prompt declares; `index` counts its messages from 0.
    Prompt {
        /// Position among the declared messages.
        index: usize,
    },
    /// A message of a history the caller passed.
    History {
        /// The placeholder's name.
        name: String,
        /// Position in the history passed.
        index: usize,
    },
}

/// One rendered message with the origin of each of its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RenderedMessage {
    /// Its role.
    pub role: Role,
    /// Its content, as sent.
    pub content: String,
    /// The parts of the content in order, ranges into `content`: the
    /// message's own text (default or locale variant), and in the message
    /// the rules attach to, pinned blocks, the user's block and appenders.
    /// Empty for a history message.
    pub parts: Vec<Part>,
    /// Whether the prompt declares it or a history brought it.
    pub source: MessageSource,
}

impl From<RenderedMessage> for Message {
    fn from(message: RenderedMessage) -> Self {
        Message::new(message.role, message.content)
    }
}

impl RenderedMessage {
    /// The text of one part.
    pub fn part_text(&self, part: &Part) -> &str {
        self.content.get(part.range.clone()).unwrap_or_default()
    }
}

/// A rendered chat prompt with the provenance of every message's parts,
/// from [`render_messages_traced_in`](crate::PromptRegistry::render_messages_traced_in).
/// `promptreg explain` prints it; its serialisation is `explain --json`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RenderedChat {
    /// The prompt rendered.
    pub id: PromptId,
    /// The locale it was rendered for.
    pub locale: Locale,
    /// The steps of locale matching, in the order they were tried.
    pub lookup: Vec<LookupStep>,
    /// The messages, in order.
    pub messages: Vec<RenderedMessage>,
    /// The model settings for this locale.
    pub model: Option<JsonObject>,
    /// The prompt's metadata.
    pub metadata: Option<JsonObject>,
    /// The tools and output schema for this locale.
    pub contract: Option<Arc<Contract>>,
}

impl RenderedChat {
    /// The messages as sent, without their trace.
    pub fn to_messages(&self) -> Vec<Message> {
        self.messages
            .iter()
            .map(|m| Message::new(m.role.clone(), m.content.clone()))
            .collect()
    }

    /// The messages as role-headed text ([`messages_as_text`]).
    pub fn to_text(&self) -> String {
        messages_as_text(self.messages.iter().map(|m| (&m.role, m.content.as_str())))
    }
}

impl Serialize for RenderedChat {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;

        #[derive(Serialize)]
        struct PartWithText<'a> {
            #[serde(flatten)]
            part: &'a Part,
            text: &'a str,
        }

        #[derive(Serialize)]
        struct MessageOut<'a> {
            role: &'a Role,
            content: &'a str,
            source: &'a MessageSource,
            parts: Vec<PartWithText<'a>>,
        }

        let messages: Vec<MessageOut<'_>> = self
            .messages
            .iter()
            .map(|m| MessageOut {
                role: &m.role,
                content: &m.content,
                source: &m.source,
                parts: m
                    .parts
                    .iter()
                    .map(|part| PartWithText {
                        part,
                        text: m.part_text(part),
                    })
                    .collect(),
            })
            .collect();
        let mut out = serializer.serialize_struct("RenderedChat", 7)?;
        out.serialize_field("id", &self.id)?;
        out.serialize_field("locale", &self.locale)?;
        out.serialize_field("lookup", &self.lookup)?;
        out.serialize_field("messages", &messages)?;
        // Present when the prompt has some.
        for (key, value) in [("model", &self.model), ("metadata", &self.metadata)] {
            match value {
                Some(value) => out.serialize_field(key, value)?,
                None => out.skip_field(key)?,
            }
        }
        match &self.contract {
            Some(contract) => out.serialize_field("contract", &**contract)?,
            None => out.skip_field("contract")?,
        }
        out.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_attach_to_the_first_system_message_unless_declared() {
        let chat = Chat::new().user("u").system("s").assistant("a");
        assert_eq!((chat.attached(), chat.user_target()), (Some(1), Some(1)));
        let chat = Chat::new().history("h").user("u").assistant("a");
        assert_eq!((chat.attached(), chat.user_target()), (Some(1), Some(1)));
        let chat = Chat::new().system("s").history("h").user("u").attach(1);
        assert_eq!((chat.attached(), chat.user_target()), (Some(2), Some(0)));
    }

    #[test]
    fn an_empty_chat_or_an_attach_past_the_end_is_a_problem() {
        assert!(Chat::new().history("h").problem().is_some());
        let problem = Chat::new().system("s").attach(1).problem().unwrap();
        assert_eq!(
            problem,
            "it attaches its rules to message 1 (from 0), but has 1 message"
        );
        assert_eq!(Chat::new().system("s").attach(0).problem(), None);
    }

    #[test]
    fn messages_read_back_as_role_headed_text() {
        let (system, user) = (Role::System, Role::named("critic"));
        let text = messages_as_text([(&system, "Be brief."), (&user, "Too long.")]);
        assert_eq!(text, "# system\nBe brief.\n\n# critic\nToo long.");
    }
}
