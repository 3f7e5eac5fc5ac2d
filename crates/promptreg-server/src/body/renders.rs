//! Renders on the server: the request, the rendered text or messages, and
//! the traced render `explain` shows.

use std::collections::BTreeMap;

use promptreg::Message;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// A render on the server.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenderRequest {
    /// The label to render from.
    #[serde(default = "production")]
    pub label: String,
    /// A BCP 47 locale; the pack's default locale when absent.
    pub locale: Option<String>,
    /// The template context.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub context: Value,
    /// For a chat prompt: the conversation history per placeholder name
    /// (`{"conversation": [{"role": "user", "content": "..."}]}`).
    #[serde(default)]
    #[schema(value_type = Object)]
    pub history: BTreeMap<String, Vec<Message>>,
    /// The subject (a user, a session) to render for: while a split runs
    /// on the label, the subjects its share picks get its candidate, as a
    /// follower's `render_for` does.
    #[serde(default)]
    pub subject: Option<String>,
    /// A render only: also return the whole request body this provider
    /// takes (messages, model settings, tools, output schema), as
    /// `provider_request`.
    #[serde(default)]
    pub format: Option<ProviderFormat>,
}

/// A provider's request shape.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
pub enum ProviderFormat {
    /// OpenAI's Chat Completions.
    #[serde(rename = "openai")]
    OpenAi,
    /// OpenAI's Responses.
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Anthropic's Messages.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Google's Gemini `generateContent`.
    #[serde(rename = "gemini")]
    Gemini,
}

impl From<ProviderFormat> for promptreg::Provider {
    fn from(format: ProviderFormat) -> promptreg::Provider {
        match format {
            ProviderFormat::OpenAi => promptreg::Provider::OpenAiChat,
            ProviderFormat::OpenAiResponses => promptreg::Provider::OpenAiResponses,
            ProviderFormat::Anthropic => promptreg::Provider::Anthropic,
            ProviderFormat::Gemini => promptreg::Provider::Gemini,
        }
    }
}

impl RenderRequest {
    /// The histories as the library's render calls take them.
    pub(crate) fn histories(&self) -> Vec<(&str, &[Message])> {
        self.history
            .iter()
            .map(|(name, messages)| (name.as_str(), messages.as_slice()))
            .collect()
    }
}

fn production() -> String {
    "production".to_owned()
}

/// A split and the arm of a render's subject.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SplitArm {
    /// The split's id.
    pub split: u64,
    /// `stable` or `candidate`.
    pub arm: String,
}

/// A rendered prompt.
#[derive(Debug, Serialize, ToSchema)]
pub struct RenderResponse {
    /// The prompt id.
    pub id: String,
    /// The label it was rendered from.
    pub label: String,
    /// The locale asked for.
    pub locale: String,
    /// The text the application sends; for a chat prompt, its messages as
    /// role-headed text (`# system`, the content, ...).
    pub text: String,
    /// A chat prompt's messages, in OpenAI's `{"role", "content"}` shape;
    /// absent for a text prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub messages: Option<Vec<Message>>,
    /// The model settings declared for the prompt, if any.
    #[schema(value_type = Option<Object>)]
    pub model: Option<Value>,
    /// The prompt's contract for the locale: its tools and output schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub contract: Option<Value>,
    /// With a `format`: the whole request body that provider takes,
    /// without credentials.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub provider_request: Option<Box<serde_json::value::RawValue>>,
    /// With a `subject`, while a split runs on the label: the split, and
    /// the arm the subject gets (`stable`, `candidate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitArm>,
    /// What is worth knowing about the request (a `locale` of no known
    /// language, which matches no variant); absent when nothing is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A render with every part and its origin (`promptreg explain`).
#[derive(Debug, Serialize, ToSchema)]
pub struct ExplainResponse {
    /// The label it was rendered from.
    pub label: String,
    /// As a render's `warnings`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The trace: the text, the locale lookup, and every part with its
    /// origin and provenance.
    #[schema(value_type = Object)]
    pub rendered: Value,
    /// As a render's `split`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitArm>,
}
