//! A prompt's arguments: what its declared variables say about them (in
//! listings and completions, since MCP arguments carry no type), and the
//! strings a client sends turned into the values the variables declare.

use promptreg::Variable;
use promptreg::pack::PackPrompt;
use rmcp::ErrorData;
use rmcp::model::{JsonObject, PromptArgument};
use serde_json::{Map, Value, json};

/// The most bytes a request's arguments may take together: a render's
/// cost grows with its context.
pub const MAX_ARGUMENT_BYTES: usize = 1 << 20;

/// What one declared variable says about its argument.
pub(crate) struct Declared<'a>(pub(crate) &'a Variable);

impl Declared<'_> {
    /// The declared shape: `type:`, else its schema's `type` (`integer`
    /// is kept: it is what a client should send), in the words of
    /// `type:` (`list`, not `array`).
    pub(crate) fn shape(&self) -> Option<&str> {
        if let Some(kind) = self.0.kind {
            return Some(kind.as_str());
        }
        match self.schema()?.get("type")?.as_str()? {
            "array" => Some("list"),
            "null" => None,
            other => Some(other),
        }
    }

    fn schema(&self) -> Option<&Map<String, Value>> {
        self.0.schema.as_ref()?.schema().as_object()
    }

    /// The values its schema allows (`enum`, or `const`).
    pub(crate) fn choices(&self) -> Option<Vec<&Value>> {
        let schema = self.schema()?;
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            return Some(values.iter().collect());
        }
        schema.get("const").map(|value| vec![value])
    }

    /// The values its schema gives as `examples`.
    pub(crate) fn examples(&self) -> Vec<&Value> {
        self.schema()
            .and_then(|s| s.get("examples"))
            .and_then(Value::as_array)
            .map(|values| values.iter().collect())
            .unwrap_or_default()
    }

    /// What its description says: the declared description, then the
    /// type, the values allowed and the default.
    fn description(&self) -> Option<String> {
        let mut facts = Vec::new();
        if let Some(shape) = self.shape() {
            facts.push(match shape {
                "list" | "object" => format!("{shape}, as JSON"),
                _ => shape.to_owned(),
            });
        }
        if let Some(choices) = self.choices() {
            facts.push(format!("one of {}", listed(&choices)));
        }
        if let Some(default) = &self.0.default {
            facts.push(format!("default {}", shown(default)));
        }
        let own = self
            .0
            .description
            .clone()
            .or_else(|| Some(self.schema()?.get("description")?.as_str()?.to_owned()));
        match (own, facts.is_empty()) {
            (None, true) => None,
            (None, false) => Some(capitalised(&facts.join("; "))),
            (Some(own), true) => Some(own),
            (Some(own), false) => Some(format!(
                "{} ({})",
                own.trim_end_matches('.'),
                facts.join("; ")
            )),
        }
    }

    /// The MCP argument.
    pub(crate) fn argument(&self) -> PromptArgument {
        let argument = PromptArgument::new(&self.0.name).with_required(self.0.required);
        match self.description() {
            Some(description) => argument.with_description(description),
            None => argument,
        }
    }

    /// What `_meta` says of it: its type, values, default, examples and
    /// schema, as declared.
    pub(crate) fn meta(&self) -> Value {
        let mut meta = Map::new();
        meta.insert("required".into(), Value::Bool(self.0.required));
        if let Some(shape) = self.shape() {
            meta.insert("type".into(), Value::from(shape));
        }
        if let Some(choices) = self.choices() {
            meta.insert(
                "enum".into(),
                Value::from_iter(choices.into_iter().cloned()),
            );
        }
        if let Some(default) = &self.0.default {
            meta.insert("default".into(), default.clone());
        }
        let examples = self.examples();
        if !examples.is_empty() {
            meta.insert(
                "examples".into(),
                Value::from_iter(examples.into_iter().cloned()),
            );
        }
        if let Some(schema) = &self.0.schema {
            meta.insert("schema".into(), schema.schema().clone());
        }
        Value::Object(meta)
    }

    /// The value a client sent, as the variable declares it: a string
    /// parsed as a number, a boolean, or JSON for a list or an object.
    fn coerce(&self, given: Value) -> Result<Value, String> {
        let Value::String(text) = given else {
            // A client that sends JSON values is taken at its word; the
            // render checks their type.
            return Ok(given);
        };
        let value = match self.shape() {
            Some("number") => number(&text).ok_or("a number, such as 3 or 2.5")?,
            Some("integer") => text
                .trim()
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| "an integer, such as 3")?,
            Some("boolean") => match text.trim() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => return Err("`true` or `false`".into()),
            },
            Some("list") => match serde_json::from_str(&text) {
                Ok(list @ Value::Array(_)) => list,
                _ => return Err("a list as JSON, such as [\"a\", \"b\"]".into()),
            },
            Some("object") => match serde_json::from_str(&text) {
                Ok(object @ Value::Object(_)) => object,
                _ => return Err("an object as JSON, such as {\"key\": \"value\"}".into()),
            },
            _ => Value::String(text),
        };
        if let Some(choices) = self.choices().filter(|c| !c.contains(&&value)) {
            return Err(format!("one of {}", listed(&choices)));
        }
        if let Some(why) = self.0.schema.as_ref().and_then(|s| s.violation(&value)) {
            return Err(format!("a value its schema allows ({why})"));
        }
        Ok(value)
    }
}

/// The context of a render of `prompt` (`None`: a prompt the pack does
/// not declare) from a request's arguments, each coerced to its declared
/// type; the errors name the argument and what it expects.
pub(crate) fn context(
    name: &str,
    prompt: Option<&PackPrompt>,
    arguments: Option<JsonObject>,
) -> Result<Value, ErrorData> {
    let arguments = arguments.unwrap_or_default();
    let size = serde_json::to_vec(&arguments).map_or(usize::MAX, |bytes| bytes.len());
    if size > MAX_ARGUMENT_BYTES {
        return Err(invalid(
            format!(
                "the arguments of `{name}` take {size} bytes, more than the {MAX_ARGUMENT_BYTES} a request may send"
            ),
            json!({ "prompt": name, "bytes": size, "limit": MAX_ARGUMENT_BYTES }),
        ));
    }
    let Some(prompt) = prompt.filter(|p| !p.variables().is_empty() || !p.is_template()) else {
        // Undeclared: a template that declares nothing takes anything.
        return Ok(Value::Object(arguments));
    };
    let variables = prompt.variables();
    let mut context = Map::new();
    for (argument, value) in arguments {
        let Some(variable) = variables.iter().find(|v| v.name == argument) else {
            let takes = match variables.len() {
                0 => "it takes none".to_owned(),
                _ => format!("it takes {}", names(variables)),
            };
            return Err(invalid(
                format!("prompt `{name}` has no argument `{argument}`: {takes}"),
                json!({ "prompt": name, "argument": argument }),
            ));
        };
        let value = Declared(variable).coerce(value).map_err(|expected| {
            invalid(
                format!("argument `{argument}` of `{name}` must be {expected}"),
                json!({ "prompt": name, "argument": argument, "expected": expected }),
            )
        })?;
        context.insert(argument, value);
    }
    if let Some(missing) = variables
        .iter()
        .find(|v| v.required && !context.contains_key(&v.name))
    {
        let what = missing
            .description
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        return Err(invalid(
            format!("prompt `{name}` needs argument `{}`{what}", missing.name),
            json!({ "prompt": name, "argument": missing.name }),
        ));
    }
    Ok(Value::Object(context))
}

fn invalid(message: String, data: Value) -> ErrorData {
    ErrorData::invalid_params(message, Some(data))
}

fn number(text: &str) -> Option<Value> {
    let text = text.trim();
    if let Ok(integer) = text.parse::<i64>() {
        return Some(Value::from(integer));
    }
    let float = text.parse::<f64>().ok().filter(|f| f.is_finite())?;
    serde_json::Number::from_f64(float).map(Value::Number)
}

/// A value as a person reads it in a description: a string as it is.
pub(crate) fn shown(value: &Value) -> String {
    match value {
        Value::String(text) if text.is_empty() => "`\"\"`".to_owned(),
        Value::String(text) => format!("`{text}`"),
        other => format!("`{other}`"),
    }
}

fn listed(values: &[&Value]) -> String {
    let shown: Vec<String> = values.iter().map(|v| shown(v)).collect();
    shown.join(", ")
}

fn names(variables: &[Variable]) -> String {
    let names: Vec<String> = variables.iter().map(|v| format!("`{}`", v.name)).collect();
    names.join(", ")
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use promptreg::pack::Pack;
    use proptest::prelude::*;
    use rmcp::model::ErrorCode;

    use super::*;

    fn pack() -> Pack {
        let brief = "---
template: true
variables:
  topic: { required: true, schema: { type: string, maxLength: 20 } }
  words: { type: number, default: 100 }
  count: { schema: { type: integer, minimum: 0 } }
  tone: { schema: { enum: [plain, friendly] } }
  bullets: { type: boolean, default: false }
  points: { type: list, default: [] }
  extra: { type: object, default: {} }
---
{{ topic }}
";
        Pack::from_files(
            "/p",
            [
                ("promptreg.toml", "name = \"p\"\nkeys = [\"brief\"]\n"),
                ("defaults/brief.md", brief),
            ],
        )
        .unwrap()
    }

    /// Any JSON value, a few levels deep.
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            ".{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Whatever a client sends, the arguments give a context or an
        /// invalid-params error naming the prompt; never a panic.
        #[test]
        fn any_arguments_give_a_context_or_a_named_error(
            arguments in prop::collection::btree_map(
                prop_oneof![Just("topic".to_owned()), Just("words".to_owned()), Just("count".to_owned()),
                    Just("tone".to_owned()), Just("bullets".to_owned()), Just("points".to_owned()),
                    Just("extra".to_owned()), "[a-z]{1,8}"],
                prop_oneof![json_value(), ".{0,40}".prop_map(Value::String)],
                0..8,
            )
        ) {
            let pack = pack();
            let arguments: JsonObject = arguments.into_iter().collect();
            match context("brief", pack.prompt("brief"), Some(arguments)) {
                Ok(context) => prop_assert!(context.get("topic").is_some()),
                Err(error) => {
                    prop_assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
                    prop_assert!(error.message.contains("`brief`"), "{}", error.message);
                }
            }
        }
    }

    #[test]
    fn strings_become_the_declared_types() {
        let pack = pack();
        let given = serde_json::json!({
            "topic": "returns", "words": " 2.5 ", "count": "3", "tone": "plain",
            "bullets": "false", "points": "[1, \"a\"]", "extra": "{\"k\": null}",
        });
        let context = context("brief", pack.prompt("brief"), given.as_object().cloned()).unwrap();
        assert_eq!(
            context,
            serde_json::json!({
                "topic": "returns", "words": 2.5, "count": 3, "tone": "plain",
                "bullets": false, "points": [1, "a"], "extra": { "k": null },
            })
        );
        let long = serde_json::json!({ "topic": "x".repeat(21) });
        let error =
            super::context("brief", pack.prompt("brief"), long.as_object().cloned()).unwrap_err();
        assert!(
            error
                .message
                .starts_with("argument `topic` of `brief` must be a value its schema allows"),
            "{}",
            error.message
        );
    }
}
