//! [`Provider`]: a rendered prompt as the complete request body a model
//! provider takes, without credentials: its messages, the model settings,
//! the tools and the output schema of its [`Contract`].
//!
//! | provider | body of | messages | tools | output schema |
//! |---|---|---|---|---|
//! | `openai` | Chat Completions | `messages` | `tools[].function` | `response_format.json_schema` |
//! | `openai-responses` | Responses | `input` | `tools[]` (flat) | `text.format` |
//! | `anthropic` | Messages | `system` + `messages` | `tools[].input_schema` | `output_config.format` |
//! | `gemini` | `generateContent` | `systemInstruction` + `contents` | `tools[].functionDeclarations` | `generationConfig.responseJsonSchema` |
//!
//! The model settings go where each provider takes them: at the top of
//! the body, or (Gemini, whose model is named in the URL) in
//! `generationConfig`, `model` left out. A pack writes them once, in
//! Chat Completions' words, and each is renamed to the provider's
//! ([`Provider::setting_name`]): `max_tokens` is `max_output_tokens` for
//! Responses and `maxOutputTokens` for Gemini, `stop` is
//! `stop_sequences` for Anthropic, and Gemini's keys are camelCase. Other
//! settings are copied as written; keys the contract sets (`tools`,
//! `response_format`, ...) are the contract's. A tool or an output schema is marked `strict` when its
//! schema meets OpenAI's strict mode (every object closed with
//! `additionalProperties: false` and every property required), so a
//! provider that enforces it can.

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value, json};

use crate::chat::{Message, Role};
use crate::contract::{Contract, Tool};
use crate::error::{Error, ErrorKind};
use crate::json_object::JsonObject;

/// A provider's request shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI's Chat Completions (`POST /v1/chat/completions`).
    OpenAiChat,
    /// OpenAI's Responses (`POST /v1/responses`).
    OpenAiResponses,
    /// Anthropic's Messages (`POST /v1/messages`).
    Anthropic,
    /// Google's Gemini `generateContent`.
    Gemini,
}

impl Provider {
    /// Every provider, in the order of [`Provider::as_str`]'s names.
    pub const ALL: [Provider; 4] = [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
    ];

    /// Its name: `openai`, `openai-responses`, `anthropic`, `gemini`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAiChat => "openai",
            Provider::OpenAiResponses => "openai-responses",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
        }
    }

    /// The name this provider gives the model setting `key`, written as
    /// Chat Completions names it: `max_tokens` is `max_output_tokens` for
    /// Responses and `maxOutputTokens` for Gemini, `stop` is
    /// `stop_sequences` for Anthropic and `stopSequences` for Gemini,
    /// every Gemini key is camelCase; any other key as written.
    ///
    /// ```
    /// use promptreg_core::Provider;
    ///
    /// assert_eq!(Provider::OpenAiResponses.setting_name("max_tokens"), "max_output_tokens");
    /// assert_eq!(Provider::Gemini.setting_name("top_p"), "topP");
    /// assert_eq!(Provider::Anthropic.setting_name("temperature"), "temperature");
    /// ```
    pub fn setting_name(self, key: &str) -> String {
        let tokens = matches!(
            key,
            "max_tokens" | "max_completion_tokens" | "max_output_tokens"
        );
        match self {
            Provider::OpenAiChat => key.to_owned(),
            Provider::OpenAiResponses if tokens => "max_output_tokens".to_owned(),
            Provider::Anthropic if tokens => "max_tokens".to_owned(),
            Provider::Anthropic if key == "stop" => "stop_sequences".to_owned(),
            Provider::OpenAiResponses | Provider::Anthropic => key.to_owned(),
            Provider::Gemini if tokens => "maxOutputTokens".to_owned(),
            Provider::Gemini if key == "stop" => "stopSequences".to_owned(),
            Provider::Gemini => camel_case(key),
        }
    }

    /// `settings` as this provider names them; a `stop` text becomes a
    /// list where the provider takes only lists.
    fn settings(self, settings: Map<String, Value>) -> Map<String, Value> {
        settings
            .into_iter()
            .filter(|(key, _)| !(self == Provider::Gemini && key == "model"))
            .map(|(key, value)| {
                let name = self.setting_name(&key);
                let value = match value {
                    Value::String(stop) if key == "stop" && name != key => json!([stop]),
                    value => value,
                };
                (name, value)
            })
            .collect()
    }

    /// The body of a request for `messages`, with `model` settings and
    /// `contract`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidChat`] for Anthropic and Gemini, whose system
    /// text comes before the conversation and whose turns are the user's
    /// and the model's: a system message after the first other message, or
    /// a message of another role (`tool`, a declared role).
    pub fn request(
        self,
        messages: &[Message],
        model: Option<&JsonObject>,
        contract: Option<&Contract>,
    ) -> Result<Value, Error> {
        let settings = self.settings(model.map(JsonObject::to_map).unwrap_or_default());
        let contract = contract.filter(|c| !c.is_empty());
        let mut body = match self {
            Provider::Gemini => {
                let mut body = Map::new();
                let config = settings;
                if !config.is_empty() {
                    body.insert("generationConfig".into(), Value::Object(config));
                }
                body
            }
            _ => settings,
        };
        match self {
            Provider::OpenAiChat => {
                body.insert(
                    "messages".into(),
                    Value::Array(messages.iter().map(openai_message).collect()),
                );
            }
            Provider::OpenAiResponses => {
                body.insert(
                    "input".into(),
                    Value::Array(messages.iter().map(openai_message).collect()),
                );
            }
            Provider::Anthropic => {
                let (system, rest) = self.split_system(messages)?;
                if !system.is_empty() {
                    body.insert("system".into(), json!(system));
                }
                let turns = rest
                    .iter()
                    .map(|m| json!({ "role": anthropic_role(&m.role), "content": m.content }));
                body.insert("messages".into(), Value::Array(turns.collect()));
            }
            Provider::Gemini => {
                let (system, rest) = self.split_system(messages)?;
                if !system.is_empty() {
                    body.insert(
                        "systemInstruction".into(),
                        json!({ "parts": [{ "text": system }] }),
                    );
                }
                let turns = rest.iter().map(
                    |m| json!({ "role": gemini_role(&m.role), "parts": [{ "text": m.content }] }),
                );
                body.insert("contents".into(), Value::Array(turns.collect()));
            }
        }
        if let Some(contract) = contract {
            self.add_contract(&mut body, contract);
        }
        Ok(Value::Object(body))
    }

    /// The leading system messages' text, joined by a blank line, and the
    /// conversation after them, each a user's or an assistant's message.
    fn split_system(self, messages: &[Message]) -> Result<(String, &[Message]), Error> {
        let leading = messages
            .iter()
            .take_while(|m| m.role == Role::System)
            .count();
        let system: Vec<&str> = messages[..leading]
            .iter()
            .map(|m| m.content.as_str())
            .collect();
        let rest = &messages[leading..];
        if let Some((i, message)) = rest
            .iter()
            .enumerate()
            .find(|(_, m)| m.role != Role::User && m.role != Role::Assistant)
        {
            return Err(Error::new(
                ErrorKind::InvalidChat,
                format!(
                    "message {} has role `{}`: {self}'s messages are the user's and the assistant's, after the leading system messages",
                    leading + i + 1,
                    message.role
                ),
            )
            .with_suggestion("declare the system text first, or send the messages in OpenAI's shape"));
        }
        Ok((system.join("\n\n"), rest))
    }

    /// [`request`](Self::request)'s body as JSON text: the same body,
    /// its tools copied from the text kept with the contract rather than
    /// built as a tree, then written (what a server or a binding sends
    /// on).
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub fn request_json(
        self,
        messages: &[Message],
        model: Option<&JsonObject>,
        contract: Option<&Contract>,
    ) -> Result<String, Error> {
        let contract = contract.filter(|c| !c.is_empty());
        let Value::Object(mut body) = self.request(messages, model, None)? else {
            return Err(Error::new(
                ErrorKind::InvalidContract,
                "a request body is an object",
            ));
        };
        let tools = contract.and_then(|c| c.shaped(self).tools_json.as_deref());
        if let Some(contract) = contract {
            self.add_output(&mut body, contract);
        }
        if tools.is_some() {
            body.remove("tools");
        }
        let mut text = serde_json::to_string(&body)
            .map_err(|e| Error::new(ErrorKind::InvalidContract, e.to_string()))?;
        if let Some(tools) = tools {
            // `{...}` becomes `{...,"tools":[...]}`.
            text.pop();
            if !body.is_empty() {
                text.push(',');
            }
            text.push_str("\"tools\":");
            text.push_str(tools);
            text.push('}');
        }
        Ok(text)
    }

    fn add_contract(self, body: &mut Map<String, Value>, contract: &Contract) {
        if let Some(tools) = &contract.shaped(self).tools {
            body.insert("tools".into(), tools.clone());
        }
        self.add_output(body, contract);
    }

    fn add_output(self, body: &mut Map<String, Value>, contract: &Contract) {
        let shaped = contract.shaped(self);
        let Some(output) = &shaped.output else {
            return;
        };
        let (outer, inner) = match self {
            Provider::OpenAiChat => ("response_format", None),
            Provider::OpenAiResponses => ("text", Some("format")),
            Provider::Anthropic => ("output_config", Some("format")),
            Provider::Gemini => ("generationConfig", None),
        };
        match (inner, body.entry(outer).or_insert_with(|| json!({}))) {
            (Some(inner), Value::Object(outer)) => {
                outer.insert(inner.into(), output.clone());
            }
            (None, Value::Object(outer)) => {
                if let Value::Object(fields) = output {
                    outer.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            }
            // A model setting of that name that is not an object: the
            // contract's shape takes its place.
            (Some(inner), slot) => *slot = json!({ inner: output }),
            (None, slot) => *slot = output.clone(),
        }
    }

    /// The tools and the output schema of `contract` in this provider's
    /// shape, computed once per contract ([`Contract::shaped`]).
    pub(crate) fn shape(self, contract: &Contract) -> Shaped {
        let tools = (!contract.tools().is_empty()).then(|| match self {
            Provider::Gemini => json!([{
                "functionDeclarations": contract.tools().iter().map(|t| json!({
                    "name": t.name(),
                    "description": t.description(),
                    "parametersJsonSchema": t.parameters().to_value(),
                })).collect::<Vec<_>>(),
            }]),
            _ => Value::Array(contract.tools().iter().map(|t| self.tool(t)).collect()),
        });
        let output = contract.output().map(|output| {
            let schema = output.schema().to_value();
            let strict = is_strict(&schema);
            let mut named = json!({ "name": output.name(), "schema": schema, "strict": strict });
            if let Some(description) = output.description() {
                named["description"] = json!(description);
            }
            match self {
                Provider::OpenAiChat => json!({ "type": "json_schema", "json_schema": named }),
                Provider::OpenAiResponses => {
                    named["type"] = json!("json_schema");
                    named
                }
                Provider::Anthropic => {
                    json!({ "type": "json_schema", "schema": named["schema"].take() })
                }
                Provider::Gemini => json!({
                    "responseMimeType": "application/json",
                    "responseJsonSchema": named["schema"].take(),
                }),
            }
        });
        let tools_json = tools
            .as_ref()
            .and_then(|tools| serde_json::to_string(tools).ok())
            .map(String::into_boxed_str);
        Shaped {
            tools,
            tools_json,
            output,
        }
    }

    fn tool(self, tool: &Tool) -> Value {
        let parameters = tool.parameters().to_value();
        let strict = is_strict(&parameters);
        match self {
            Provider::OpenAiChat => json!({
                "type": "function",
                "function": {
                    "name": tool.name(),
                    "description": tool.description(),
                    "parameters": parameters,
                    "strict": strict,
                },
            }),
            Provider::OpenAiResponses => json!({
                "type": "function",
                "name": tool.name(),
                "description": tool.description(),
                "parameters": parameters,
                "strict": strict,
            }),
            _ => json!({
                "name": tool.name(),
                "description": tool.description(),
                "input_schema": parameters,
            }),
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Provider {
    type Err = Error;

    fn from_str(name: &str) -> Result<Provider, Error> {
        match name {
            "openai" | "openai-chat" => Ok(Provider::OpenAiChat),
            _ => Provider::ALL
                .into_iter()
                .find(|p| p.as_str() == name)
                .ok_or_else(|| {
                    let names: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
                    Error::new(
                        ErrorKind::InvalidContract,
                        format!("no provider is named `{name}`"),
                    )
                    .with_suggestion(format!("one of: {}", names.join(", ")))
                }),
        }
    }
}

/// A contract in one provider's shape: the value of its `tools` and of
/// its output schema's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shaped {
    pub(crate) tools: Option<Value>,
    /// `tools` as JSON text, which a body written as text copies.
    pub(crate) tools_json: Option<Box<str>>,
    pub(crate) output: Option<Value>,
}

/// `{"role", "content"}`, as both OpenAI shapes take a message.
fn openai_message(message: &Message) -> Value {
    json!({ "role": message.role.as_str(), "content": message.content })
}

/// Anthropic's roles are `user` and `assistant`.
fn anthropic_role(role: &Role) -> &'static str {
    match role {
        Role::Assistant => "assistant",
        _ => "user",
    }
}

/// Gemini's roles are `user` and `model`.
fn gemini_role(role: &Role) -> &'static str {
    match role {
        Role::Assistant => "model",
        _ => "user",
    }
}

/// Whether `schema` meets OpenAI's strict mode: every object schema in it
/// lists all its properties as required and closes itself with
/// `additionalProperties: false`.
pub fn is_strict(schema: &Value) -> bool {
    strict_problems(schema).is_empty()
}

/// Where `schema` falls short of OpenAI's strict mode, each as the JSON
/// Pointer of the object schema and what it lacks.
pub fn strict_problems(schema: &Value) -> Vec<(String, String)> {
    let mut problems = Vec::new();
    walk(schema, String::new(), &mut problems, 0);
    problems
}

/// How deep [`strict_problems`] looks: a schema deeper than this was
/// refused where it was read.
const MAX_DEPTH: usize = 64;

fn walk(schema: &Value, at: String, problems: &mut Vec<(String, String)>, depth: usize) {
    let Value::Object(map) = schema else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    let is_object = map.get("type") == Some(&json!("object")) || map.contains_key("properties");
    if is_object {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            problems.push((at.clone(), "`additionalProperties: false`".to_owned()));
        }
        let properties: Vec<&String> = map
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let missing: Vec<&str> = properties
            .iter()
            .map(|p| p.as_str())
            .filter(|p| !required.contains(p))
            .collect();
        if !missing.is_empty() {
            problems.push((
                at.clone(),
                format!("every property required (not: {})", missing.join(", ")),
            ));
        }
    }
    for (key, value) in map {
        let child = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        match value {
            Value::Object(_) => walk(value, child, problems, depth + 1),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, format!("{child}/{i}"), problems, depth + 1);
                }
            }
            _ => {}
        }
    }
}

/// `top_p` as `topP`.
fn camel_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        match c {
            '_' if !out.is_empty() => upper = true,
            c if upper => {
                out.extend(c.to_uppercase());
                upper = false;
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::OutputSchema;

    fn object(value: Value) -> JsonObject {
        JsonObject::from_value(value).unwrap()
    }

    fn contract() -> Contract {
        let path = json!({
            "type": "object",
            "properties": { "path": { "type": "string" } },
            "required": ["path"],
            "additionalProperties": false,
        });
        let verdict = json!({
            "type": "object",
            "properties": { "pass": { "type": "boolean" }, "reasons": { "type": "array", "items": { "type": "string" } } },
            "required": ["pass"],
        });
        Contract::new(
            vec![Tool::new("open_page", "Open a page.", object(path))],
            Some(
                OutputSchema::new("verdict", object(verdict))
                    .with_description("The audit's verdict"),
            ),
        )
        .unwrap()
    }

    fn messages() -> Vec<Message> {
        vec![
            Message::new(Role::System, "You guide visitors."),
            Message::new(Role::User, "Where are the tents?"),
            Message::new(Role::Assistant, "On /tents."),
        ]
    }

    fn settings() -> JsonObject {
        object(json!({ "model": "m-1", "temperature": 0.2 }))
    }

    #[test]
    fn the_body_as_text_is_the_body() {
        let with_tools_setting =
            object(json!({ "model": "m-1", "tools": "not these", "max_tokens": 9 }));
        for provider in Provider::ALL {
            for settings in [None, Some(&with_tools_setting)] {
                for contract in [None, Some(contract())] {
                    let tree = provider
                        .request(&messages(), settings, contract.as_ref())
                        .unwrap();
                    let text = provider
                        .request_json(&messages(), settings, contract.as_ref())
                        .unwrap();
                    let parsed: Value = serde_json::from_str(&text).unwrap();
                    assert_eq!(parsed, tree, "{provider}: {text}");
                }
            }
        }
    }

    #[test]
    fn settings_are_renamed_as_each_provider_names_them() {
        let settings = object(json!({
            "model": "m-1", "max_tokens": 800, "top_p": 0.9, "stop": "END", "seed": 7,
        }));
        let shaped = |provider: Provider| {
            let body = provider
                .request(&messages(), Some(&settings), None)
                .unwrap();
            let mut keys: Vec<String> = match provider {
                Provider::Gemini => body["generationConfig"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .cloned()
                    .collect(),
                _ => body.as_object().unwrap().keys().cloned().collect(),
            };
            keys.retain(|k| {
                !matches!(
                    k.as_str(),
                    "messages"
                        | "input"
                        | "system"
                        | "contents"
                        | "systemInstruction"
                        | "generationConfig"
                )
            });
            keys.sort();
            (keys, body)
        };
        let (keys, _) = shaped(Provider::OpenAiChat);
        assert_eq!(keys, ["max_tokens", "model", "seed", "stop", "top_p"]);
        let (keys, _) = shaped(Provider::OpenAiResponses);
        assert_eq!(
            keys,
            ["max_output_tokens", "model", "seed", "stop", "top_p"]
        );
        let (keys, body) = shaped(Provider::Anthropic);
        assert_eq!(
            keys,
            ["max_tokens", "model", "seed", "stop_sequences", "top_p"]
        );
        assert_eq!(body["stop_sequences"], json!(["END"]));
        let (keys, body) = shaped(Provider::Gemini);
        assert_eq!(keys, ["maxOutputTokens", "seed", "stopSequences", "topP"]);
        assert_eq!(body["generationConfig"]["stopSequences"], json!(["END"]));
    }

    #[test]
    fn openai_chat_completions() {
        let body = Provider::OpenAiChat
            .request(&messages(), Some(&settings()), Some(&contract()))
            .unwrap();
        assert_eq!(body["model"], "m-1");
        assert_eq!(body["temperature"], 0.2);
        assert_eq!(
            body["messages"][0],
            json!({ "role": "system", "content": "You guide visitors." })
        );
        assert_eq!(body["tools"][0]["type"], "function");
        assert_eq!(body["tools"][0]["function"]["name"], "open_page");
        assert_eq!(body["tools"][0]["function"]["strict"], true);
        let format = &body["response_format"];
        assert_eq!(format["type"], "json_schema");
        assert_eq!(format["json_schema"]["name"], "verdict");
        assert_eq!(format["json_schema"]["description"], "The audit's verdict");
        // `reasons` is optional and the object open: not strict.
        assert_eq!(format["json_schema"]["strict"], false);
    }

    #[test]
    fn openai_responses() {
        let body = Provider::OpenAiResponses
            .request(&messages(), Some(&settings()), Some(&contract()))
            .unwrap();
        assert_eq!(body["input"].as_array().unwrap().len(), 3);
        assert_eq!(body["tools"][0]["name"], "open_page");
        assert_eq!(body["tools"][0]["parameters"]["required"], json!(["path"]));
        assert_eq!(body["text"]["format"]["type"], "json_schema");
        assert_eq!(body["text"]["format"]["name"], "verdict");
        assert!(body.get("messages").is_none());
    }

    #[test]
    fn anthropic_messages() {
        let body = Provider::Anthropic
            .request(&messages(), Some(&settings()), Some(&contract()))
            .unwrap();
        assert_eq!(body["system"], "You guide visitors.");
        assert_eq!(
            body["messages"],
            json!([
                { "role": "user", "content": "Where are the tents?" },
                { "role": "assistant", "content": "On /tents." },
            ])
        );
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
        assert_eq!(body["output_config"]["format"]["type"], "json_schema");
        assert_eq!(
            body["output_config"]["format"]["schema"]["required"],
            json!(["pass"])
        );
    }

    #[test]
    fn gemini_generate_content() {
        let body = Provider::Gemini
            .request(&messages(), Some(&settings()), Some(&contract()))
            .unwrap();
        assert!(
            body.get("model").is_none(),
            "Gemini names the model in the URL"
        );
        assert_eq!(
            body["systemInstruction"],
            json!({ "parts": [{ "text": "You guide visitors." }] })
        );
        assert_eq!(
            body["contents"][1],
            json!({ "role": "model", "parts": [{ "text": "On /tents." }] })
        );
        let declarations = &body["tools"][0]["functionDeclarations"];
        assert_eq!(declarations[0]["name"], "open_page");
        assert_eq!(declarations[0]["parametersJsonSchema"]["type"], "object");
        let config = &body["generationConfig"];
        assert_eq!(config["temperature"], 0.2);
        assert_eq!(config["responseMimeType"], "application/json");
        assert_eq!(config["responseJsonSchema"]["type"], "object");
    }

    #[test]
    fn no_contract_leaves_settings_and_messages_alone() {
        let body = Provider::OpenAiChat
            .request(&messages(), None, None)
            .unwrap();
        assert_eq!(
            body.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["messages"]
        );
        let body = Provider::Anthropic
            .request(&messages()[..1], None, None)
            .unwrap();
        assert_eq!(
            body,
            json!({ "system": "You guide visitors.", "messages": [] })
        );
    }

    #[test]
    fn anthropic_and_gemini_refuse_what_their_shape_cannot_say() {
        let late = [
            Message::new(Role::User, "Hi"),
            Message::new(Role::System, "Be brief."),
        ];
        for provider in [Provider::Anthropic, Provider::Gemini] {
            let err = provider.request(&late, None, None).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidChat);
            assert!(
                err.to_string().contains("message 2 has role `system`"),
                "{err}"
            );
        }
        let tool = [Message::new(Role::Tool, "42")];
        assert!(Provider::Anthropic.request(&tool, None, None).is_err());
        assert!(Provider::OpenAiChat.request(&late, None, None).is_ok());
    }

    #[test]
    fn names_parse_and_print() {
        for provider in Provider::ALL {
            assert_eq!(provider.as_str().parse::<Provider>().unwrap(), provider);
        }
        assert_eq!(
            "openai-chat".parse::<Provider>().unwrap(),
            Provider::OpenAiChat
        );
        let err = "claude".parse::<Provider>().unwrap_err();
        assert!(err.to_string().contains("`claude`"), "{err}");
    }

    #[test]
    fn strict_mode_names_what_an_object_lacks() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": { "type": "string" },
                "b": { "type": "object", "properties": { "c": { "type": "number" } }, "required": ["c"] },
            },
            "required": ["a"],
            "additionalProperties": false,
        });
        let problems = strict_problems(&schema);
        assert_eq!(
            problems,
            [
                (String::new(), "every property required (not: b)".to_owned()),
                (
                    "/properties/b".to_owned(),
                    "`additionalProperties: false`".to_owned()
                ),
            ]
        );
        assert!(is_strict(
            &json!({ "type": "object", "properties": {}, "additionalProperties": false })
        ));
    }
}
