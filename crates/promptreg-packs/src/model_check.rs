//! Checks of the well-known keys of a prompt's model settings (front matter
//! `model:`). The object is free-form, as providers add keys all the time;
//! the keys every provider shares are checked for their type and range, so
//! a typo such as `temperature: "0.2"` fails at load, not at the provider.
//!
//! A response format's schema is checked for its shape (an object, a known
//! `type`, `properties` of schemas, `required` names, `items` a schema),
//! recursively: the mistakes people make by hand. A full check against the
//! JSON Schema meta-schema would need a validator crate for a check
//! providers repeat anyway.

use serde_json::{Map, Value};

/// One thing wrong in the settings: where (key path below `model`), what,
/// and how to fix it.
#[derive(Debug, PartialEq)]
pub(crate) struct SettingProblem {
    /// Keys from the top of the settings, `model` first.
    pub(crate) path: Vec<String>,
    pub(crate) message: String,
    pub(crate) suggestion: String,
}

/// The types a JSON Schema `type` may name.
const SCHEMA_TYPES: [&str; 7] = [
    "object", "array", "string", "number", "integer", "boolean", "null",
];

/// The request fields a prompt's model settings may carry, by provider
/// convention: OpenAI's Chat Completions and Responses APIs, and
/// Anthropic's Messages API (the conversation itself, `messages`, `input`
/// and `system`, is the prompt and not a setting). Another key is likely
/// a typo (`modle`, `max_token`) and gets a warning, unless the pack lists
/// it in `extra_model_keys`.
pub(crate) const KNOWN_KEYS: &[&str] = &[
    // Shared by both.
    "model",
    "max_tokens",
    "metadata",
    "service_tier",
    "stream",
    "temperature",
    "tool_choice",
    "tools",
    "top_p",
    // OpenAI: Chat Completions.
    "audio",
    "frequency_penalty",
    "function_call",
    "functions",
    "logit_bias",
    "logprobs",
    "max_completion_tokens",
    "modalities",
    "n",
    "parallel_tool_calls",
    "prediction",
    "presence_penalty",
    "prompt_cache_key",
    "reasoning_effort",
    "response_format",
    "safety_identifier",
    "seed",
    "stop",
    "store",
    "stream_options",
    "top_logprobs",
    "user",
    "verbosity",
    "web_search_options",
    // OpenAI: Responses.
    "background",
    "include",
    "max_output_tokens",
    "max_tool_calls",
    "prompt_cache_retention",
    "reasoning",
    "text",
    "truncation",
    // Anthropic: Messages.
    "container",
    "mcp_servers",
    "stop_sequences",
    "thinking",
    "top_k",
];

/// A warning for every top-level key of `settings` that is neither a known
/// request field nor one of `extra` (the pack's `extra_model_keys`).
pub(crate) fn unknown_keys(settings: &Map<String, Value>, extra: &[String]) -> Vec<SettingProblem> {
    settings
        .keys()
        .filter(|key| !KNOWN_KEYS.contains(&key.as_str()) && !extra.contains(key))
        .map(|key| {
            let list = "list it in `extra_model_keys` in promptreg.toml";
            let suggestion = match crate::suggest::did_you_mean(key, KNOWN_KEYS.iter().copied()) {
                Some(hint) => format!("{hint} Or, if your provider takes it, {list}"),
                None => format!("if your provider takes it, {list}"),
            };
            SettingProblem {
                path: vec!["model".to_owned(), key.clone()],
                message: format!("`{key}` is not a model setting OpenAI or Anthropic knows"),
                suggestion,
            }
        })
        .collect()
}

/// Every problem of `settings`, the value of front matter key `model`.
pub(crate) fn check(settings: &Map<String, Value>) -> Vec<SettingProblem> {
    let mut problems = Vec::new();
    let mut cx = Cx {
        path: vec!["model".to_owned()],
        problems: &mut problems,
    };
    for (key, value) in settings {
        cx.path.push(key.clone());
        match key.as_str() {
            "model" => cx.string(value, "the model's name, such as `gpt-4o`"),
            "temperature" => cx.number_in(value, 0.0, 2.0),
            "top_p" => cx.number_in(value, 0.0, 1.0),
            "max_tokens" => cx.positive_integer(value),
            "response_format" => cx.response_format(value),
            "tools" => cx.tools(value),
            _ => {}
        }
        cx.path.pop();
    }
    problems
}

struct Cx<'a> {
    path: Vec<String>,
    problems: &'a mut Vec<SettingProblem>,
}

impl Cx<'_> {
    fn report(&mut self, message: String, suggestion: impl Into<String>) {
        self.problems.push(SettingProblem {
            path: self.path.clone(),
            message,
            suggestion: suggestion.into(),
        });
    }

    /// The key the problem is at, for messages: the diagnostic names the
    /// whole path beside them.
    fn key(&self) -> String {
        let last = self.path.last().map_or("model", String::as_str);
        match last.parse::<usize>() {
            Ok(i) => format!("item {}", i + 1),
            Err(_) => format!("`{last}`"),
        }
    }

    fn string(&mut self, value: &Value, what: &str) {
        if !value.is_string() {
            let message = format!("{} must be a string, not {}", self.key(), kind(value));
            self.report(
                message,
                format!("give {what}, quoted if it looks like a number"),
            );
        }
    }

    fn number_in(&mut self, value: &Value, low: f64, high: f64) {
        let message = match value.as_f64() {
            Some(n) if (low..=high).contains(&n) => return,
            Some(n) => format!("{} is {n}, outside {low} to {high}", self.key()),
            None => format!("{} must be a number, not {}", self.key(), kind(value)),
        };
        self.report(
            message,
            format!("give a number from {low} to {high}, unquoted"),
        );
    }

    fn positive_integer(&mut self, value: &Value) {
        if value.as_u64().is_some_and(|n| n > 0) {
            return;
        }
        let message = format!(
            "{} must be a positive integer, not {}",
            self.key(),
            kind(value)
        );
        self.report(
            message,
            "give a whole number of tokens, such as 1024, unquoted",
        );
    }

    fn object<'v>(&mut self, value: &'v Value, what: &str) -> Option<&'v Map<String, Value>> {
        let object = value.as_object();
        if object.is_none() {
            let message = format!("{} must be an object, not {}", self.key(), kind(value));
            self.report(message, format!("give {what} as a mapping of keys"));
        }
        object
    }

    /// `{ type, json_schema: { name, schema } }` (OpenAI) or
    /// `{ type, schema }`: the schema, where given, must be one.
    fn response_format(&mut self, value: &Value) {
        let Some(format) = self.object(value, "the response format") else {
            return;
        };
        if let Some(kind) = format.get("type") {
            self.nested("type", |cx| {
                cx.string(kind, "the format's type, such as `json_schema`")
            });
        }
        if let Some(schema) = format.get("schema") {
            self.nested("schema", |cx| cx.schema(schema));
        }
        if let Some(json_schema) = format.get("json_schema") {
            self.nested("json_schema", |cx| {
                let Some(json_schema) = cx.object(json_schema, "`name` and `schema`") else {
                    return;
                };
                match json_schema.get("schema") {
                    Some(schema) => cx.nested("schema", |cx| cx.schema(schema)),
                    None => cx.report(
                        format!("{} has no `schema`", cx.key()),
                        "add `schema:`, the JSON Schema of the response",
                    ),
                }
            });
        }
    }

    fn nested(&mut self, key: &str, check: impl FnOnce(&mut Self)) {
        self.path.push(key.to_owned());
        check(self);
        self.path.pop();
    }

    /// The shape of a JSON Schema: an object (or `true`/`false`), a known
    /// `type`, `properties` of schemas, `required` names, `items` a schema.
    fn schema(&mut self, value: &Value) {
        if value.is_boolean() {
            return;
        }
        let Some(schema) = self.object(value, "a JSON Schema") else {
            return;
        };
        if let Some(kind) = schema.get("type") {
            self.nested("type", |cx| cx.schema_type(kind));
        }
        if let Some(properties) = schema.get("properties") {
            self.nested("properties", |cx| {
                let Some(properties) = cx.object(properties, "one schema per property") else {
                    return;
                };
                for (name, property) in properties {
                    cx.nested(name, |cx| cx.schema(property));
                }
            });
        }
        if let Some(required) = schema.get("required") {
            self.nested("required", |cx| cx.names(required));
        }
        if let Some(items) = schema.get("items") {
            self.nested("items", |cx| cx.schema(items));
        }
    }

    fn schema_type(&mut self, value: &Value) {
        let valid = |v: &Value| v.as_str().is_some_and(|t| SCHEMA_TYPES.contains(&t));
        let ok = match value {
            Value::Array(types) => !types.is_empty() && types.iter().all(valid),
            other => valid(other),
        };
        if ok {
            return;
        }
        let given = value
            .as_str()
            .map_or_else(|| kind(value).to_owned(), |t| format!("`{t}`"));
        let hint = value
            .as_str()
            .and_then(|t| crate::suggest::did_you_mean(t, SCHEMA_TYPES))
            .unwrap_or_else(|| format!("a JSON Schema type is one of {}", SCHEMA_TYPES.join(", ")));
        self.report(
            format!("{} is {given}, not a JSON Schema type", self.key()),
            hint,
        );
    }

    fn names(&mut self, value: &Value) {
        let ok = value
            .as_array()
            .is_some_and(|names| names.iter().all(Value::is_string));
        if !ok {
            self.report(
                format!("{} must be a list of property names", self.key()),
                "list the names of the required properties, such as [title, summary]",
            );
        }
    }

    /// A list of tool declarations, each with a `name` (or, OpenAI's
    /// shape, `function.name`).
    fn tools(&mut self, value: &Value) {
        let Some(tools) = value.as_array() else {
            let message = format!("{} must be a list, not {}", self.key(), kind(value));
            self.report(message, "give one entry per tool, each with a `name`");
            return;
        };
        for (i, tool) in tools.iter().enumerate() {
            self.nested(&i.to_string(), |cx| {
                let Some(tool) = cx.object(tool, "a tool, with a `name`") else {
                    return;
                };
                let function_name = tool.get("function").and_then(|f| f.get("name"));
                if !tool
                    .get("name")
                    .or(function_name)
                    .is_some_and(Value::is_string)
                {
                    cx.report(
                        format!("{} declares a tool without a `name`", cx.key()),
                        "give the tool a `name` (or `function: { name: … }`)",
                    );
                }
            });
        }
    }
}

/// What a value is, for messages: "a string", "a list".
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(settings: Value) -> Vec<(String, String)> {
        check(settings.as_object().unwrap())
            .into_iter()
            .map(|p| (p.path.join("."), p.message))
            .collect()
    }

    #[test]
    fn well_formed_settings_have_no_problem() {
        let settings = json!({
            "model": "gpt-4o", "temperature": 0.7, "top_p": 1, "max_tokens": 512,
            "response_format": { "type": "json_schema", "json_schema": { "name": "step", "schema": {
                "type": "object", "properties": { "action": { "type": ["string", "null"] },
                "steps": { "type": "array", "items": { "type": "string" } } },
                "required": ["action"] } } },
            "tools": [{ "name": "search" }, { "type": "function", "function": { "name": "open" } }],
            "seed": "anything goes for keys not checked"
        });
        assert_eq!(problems(settings), []);
    }

    #[test]
    fn wrong_types_and_ranges_name_their_key_path() {
        let found = problems(json!({
            "model": 4, "temperature": "0.2", "top_p": 1.5, "max_tokens": 0,
        }));
        let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "model.max_tokens",
                "model.model",
                "model.temperature",
                "model.top_p"
            ]
        );
        assert_eq!(found[2].1, "`temperature` must be a number, not a string");
        assert_eq!(found[3].1, "`top_p` is 1.5, outside 0 to 1");
    }

    #[test]
    fn a_response_format_schema_is_checked_for_its_shape() {
        let found = problems(json!({ "response_format": { "json_schema": { "schema": {
            "type": "obejct", "properties": { "a": { "type": 3 }, "b": "string" }, "required": "a"
        } } } }));
        let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        let schema = "model.response_format.json_schema.schema";
        assert_eq!(
            paths,
            [
                format!("{schema}.type"),
                format!("{schema}.properties.a.type"),
                format!("{schema}.properties.b"),
                format!("{schema}.required"),
            ]
        );
        let typo = &check(
            &json!({ "response_format": { "schema": { "type": "obejct" } } })
                .as_object()
                .unwrap()
                .clone(),
        )[0];
        assert_eq!(typo.suggestion, "did you mean `object`?");
        assert_eq!(
            problems(json!({ "response_format": { "json_schema": { "name": "x" } } }))[0].1,
            "`json_schema` has no `schema`"
        );
        assert_eq!(
            problems(json!({ "response_format": "json" }))[0].1,
            "`response_format` must be an object, not a string"
        );
    }

    #[test]
    fn tools_need_a_name() {
        let found = problems(json!({ "tools": [{ "name": "a" }, { "description": "x" }, "b"] }));
        assert_eq!(
            found,
            [
                (
                    "model.tools.1".to_owned(),
                    "item 2 declares a tool without a `name`".to_owned()
                ),
                (
                    "model.tools.2".to_owned(),
                    "item 3 must be an object, not a string".to_owned()
                ),
            ]
        );
        assert_eq!(
            problems(json!({ "tools": { "name": "a" } }))[0].1,
            "`tools` must be a list, not an object"
        );
    }
}
