//! The JSON Schema of a test file, for editors (Taplo, Even Better TOML).

use serde_json::{Value, json};

/// The JSON Schema (draft 2020-12) of a prompt test file,
/// `tests/<name>.toml`: what an editor needs to complete and check one.
///
/// ```
/// let schema = promptreg_packs::testing::test_file_schema();
/// assert_eq!(schema["required"], serde_json::json!(["prompt"]));
/// assert!(schema["$defs"]["case"]["properties"]["matches"].is_object());
/// ```
pub fn test_file_schema() -> Value {
    let texts = |what: &str| {
        json!({
            "description": what,
            "oneOf": [
                { "type": "string" },
                { "type": "array", "items": { "type": "string" } }
            ]
        })
    };
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "promptreg prompt tests",
        "description": "Test cases of one prompt of a pack: tests/<name>.toml",
        "type": "object",
        "additionalProperties": false,
        "required": ["prompt"],
        "properties": {
            "prompt": { "type": "string", "description": "The id of the prompt the cases render" },
            "case": { "type": "array", "items": { "$ref": "#/$defs/case" } }
        },
        "$defs": {
            "case": {
                "type": "object",
                "additionalProperties": false,
                "required": ["name"],
                "properties": {
                    "name": {
                        "type": "string",
                        "pattern": "^[A-Za-z0-9_-]+$",
                        "description": "Unique in the file; part of the snapshot's file name"
                    },
                    "locale": { "type": "string", "description": "A BCP-47 tag; default: the pack's default locale" },
                    "context": { "type": "object", "description": "The render context" },
                    "context_file": { "type": "string", "description": "A JSON file beside the test file, instead of `context`" },
                    "history": {
                        "type": "array",
                        "description": "A conversation history, for chat prompts",
                        "items": {
                            "type": "object",
                            "additionalProperties": false,
                            "required": ["role", "content"],
                            "properties": {
                                "role": { "type": "string" },
                                "content": { "type": "string" }
                            }
                        }
                    },
                    "contains": texts("Text the render must contain"),
                    "not_contains": texts("Text the render must not contain"),
                    "matches": texts("Regular expressions (the `regex` crate) that must find a match"),
                    "equals": { "type": "string", "description": "The whole text" },
                    "snapshot": { "type": "boolean", "description": "Compare with tests/snapshots/<prompt>.<case>.txt" },
                    "roles": {
                        "type": "array",
                        "items": { "type": "string" },
                        "description": "The roles of a chat prompt's messages, in order"
                    },
                    "answer": {
                        "description": "A sample model answer that must validate against the prompt's output schema: a value, or a string of JSON text"
                    },
                    "tool_call": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["name"],
                        "properties": {
                            "name": { "type": "string", "description": "A tool the prompt offers" },
                            "arguments": { "description": "Arguments that must validate against the tool's parameters: a value, or a string of JSON text" }
                        },
                        "description": "A sample tool call that must validate against the tool"
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_lists_every_key_a_case_accepts() {
        let schema = test_file_schema();
        let properties = schema["$defs"]["case"]["properties"].as_object().unwrap();
        let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
        let mut expected = super::super::file::CASE_KEYS.to_vec();
        expected.sort_unstable();
        let mut keys = keys;
        keys.sort_unstable();
        assert_eq!(keys, expected);
    }
}
