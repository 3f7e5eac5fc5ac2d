//! [`Prompt`]: what a subsystem declares as a prompt's built-in default.

use std::sync::Arc;

use crate::chat::Chat;
use crate::contract::Contract;
use crate::json_object::JsonObject;
use crate::provenance::Provenance;
use crate::renderer::{IntoRenderer, Renderer};

/// A prompt's built-in default: its body, the pinned blocks that survive any
/// override, and a one-line description.
///
/// Pinned blocks carry what the application depends on, whatever the
/// wording around it (load-bearing markers such as `[PI GOAL ACTIVE]`, an
/// objective, a verification contract). They are rendered in every case:
/// when a locale override or a user's file replaces the body, and after
/// [`reset`](crate::PromptRegistry::reset).
///
/// A pinned block can be worded per locale without being removable:
/// [`PromptRegistry::translate_pin`](crate::PromptRegistry::translate_pin)
/// gives one block (a [`Pin`], by side and position) its text for a
/// locale, found by the same locale matching as a body override; locales
/// without a translation keep the text given here. In a pack, a
/// `<id>.<locale>.md` variant translates the blocks of its default with
/// `pin_head` and `pin_tail`, matched by position.
///
/// ```
/// use promptreg_core::{Locale, Prompt, PromptRegistry};
///
/// #[derive(serde::Serialize)]
/// struct Goal { id: u32 }
///
/// let registry = PromptRegistry::new();
/// registry.register(
///     "goal-running",
///     Prompt::new("Work on the goal until it is done.")
///         .pin_head(|goal: &Goal, _: &Locale| format!("[PI GOAL ACTIVE goalId={}]", goal.id))
///         .pin_tail("Verify before you claim completion.")
///         .describe("Active-goal agent system prompt"),
/// )?;
/// registry.set_override("goal-running", "en", "Delegate the work to a team.")?;
///
/// assert_eq!(
///     registry.render("goal-running", &Goal { id: 7 })?,
///     "[PI GOAL ACTIVE goalId=7]\n\nDelegate the work to a team.\n\nVerify before you claim completion."
/// );
/// # Ok::<(), promptreg_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Prompt {
    pub(crate) body: Renderer,
    /// The messages of a chat prompt; `body` is then empty and unused.
    pub(crate) chat: Option<Arc<Chat>>,
    pub(crate) head: Vec<Renderer>,
    pub(crate) tail: Vec<Renderer>,
    pub(crate) description: Option<Arc<str>>,
    /// The settings to call the model with; a locale may have its own
    /// (`PromptRegistry::set_model_settings`).
    pub(crate) model: Option<JsonObject>,
    /// Free data about the prompt, for the application and listings.
    pub(crate) metadata: Option<JsonObject>,
    /// The tools it offers and the shape of its answer; a locale may have
    /// its own translation (`PromptRegistry::set_contract`).
    pub(crate) contract: Option<Arc<Contract>>,
    /// Where the source that declared it says it came from (a pack file).
    pub(crate) provenance: Option<Arc<Provenance>>,
}

impl Prompt {
    /// A chat prompt's messages in place of its body: what a source read
    /// from a chat file.
    pub fn with_chat(mut self, chat: Arc<Chat>) -> Self {
        self.chat = Some(chat);
        self
    }

    /// Its pinned blocks, head and tail, in order, in place of any pinned
    /// before.
    pub fn with_pins(mut self, head: Vec<Renderer>, tail: Vec<Renderer>) -> Self {
        self.head = head;
        self.tail = tail;
        self
    }

    /// Where the source that declared it says it came from (a pack file).
    pub fn with_provenance(mut self, provenance: Arc<Provenance>) -> Self {
        self.provenance = Some(provenance);
        self
    }

    /// Where the source that declared it says it came from, when it said.
    pub fn provenance(&self) -> Option<&Arc<Provenance>> {
        self.provenance.as_ref()
    }

    /// A prompt whose default body is `body`.
    pub fn new<M>(body: impl IntoRenderer<M>) -> Self {
        Prompt {
            body: body.into_renderer(),
            chat: None,
            head: Vec::new(),
            tail: Vec::new(),
            description: None,
            model: None,
            metadata: None,
            contract: None,
            provenance: None,
        }
    }

    /// A chat prompt: a list of messages with roles (see [`Chat`] for
    /// where pinned blocks, appenders and the user's configuration go).
    /// Render it with
    /// [`render_messages`](crate::PromptRegistry::render_messages).
    pub fn chat(chat: Chat) -> Self {
        Prompt {
            chat: Some(Arc::new(chat)),
            ..Prompt::new("")
        }
    }

    /// The messages, for a chat prompt.
    pub fn as_chat(&self) -> Option<&Chat> {
        self.chat.as_deref()
    }

    /// Whether it is a chat prompt.
    pub fn is_chat(&self) -> bool {
        self.chat.is_some()
    }

    /// Adds a pinned block before the body (after earlier head blocks).
    pub fn pin_head<M>(mut self, block: impl IntoRenderer<M>) -> Self {
        self.head.push(block.into_renderer());
        self
    }

    /// Adds a pinned block after the body (after earlier tail blocks).
    pub fn pin_tail<M>(mut self, block: impl IntoRenderer<M>) -> Self {
        self.tail.push(block.into_renderer());
        self
    }

    /// Sets the one-line description shown by listings.
    pub fn describe(mut self, description: impl Into<Arc<str>>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the model settings (model name, temperature, response format,
    /// tools: whatever the application sends beside the prompt). Renders
    /// return them in [`Rendered::model`](crate::Rendered::model); a
    /// locale can have its own with
    /// [`set_model_settings`](crate::PromptRegistry::set_model_settings).
    pub fn with_model(mut self, settings: JsonObject) -> Self {
        self.model = Some(settings);
        self
    }

    /// Sets the tools the prompt offers and the shape of its answer:
    /// renders return them ([`Rendered::contract`](crate::Rendered::contract)),
    /// and a request for a provider
    /// ([`PromptRegistry::provider_request`](crate::PromptRegistry::provider_request))
    /// carries them in the provider's shape. An empty contract is none.
    pub fn with_contract(mut self, contract: Contract) -> Self {
        self.contract = (!contract.is_empty()).then(|| Arc::new(contract));
        self
    }

    /// The contract of the default, if any.
    pub fn contract(&self) -> Option<&Contract> {
        self.contract.as_deref()
    }

    /// Sets free metadata about the prompt (owner, tags, a ticket).
    pub fn with_metadata(mut self, metadata: JsonObject) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// The default body (empty for a chat prompt: see
    /// [`as_chat`](Self::as_chat)).
    pub fn body(&self) -> &Renderer {
        &self.body
    }

    /// The pinned head blocks, in order.
    pub fn head(&self) -> &[Renderer] {
        &self.head
    }

    /// The pinned tail blocks, in order.
    pub fn tail(&self) -> &[Renderer] {
        &self.tail
    }

    /// The one-line description, if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The model settings of the default, if any.
    pub fn model_settings(&self) -> Option<&JsonObject> {
        self.model.as_ref()
    }

    /// The metadata, if any.
    pub fn metadata(&self) -> Option<&JsonObject> {
        self.metadata.as_ref()
    }
}

/// One pinned block of a prompt's default, by side and position (counted
/// from 0 in the order the blocks were pinned): what
/// [`translate_pin`](crate::PromptRegistry::translate_pin) gives a locale's
/// text for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pin {
    /// A block before the body ([`Prompt::pin_head`]).
    Head(usize),
    /// A block after the body ([`Prompt::pin_tail`]).
    Tail(usize),
}
