//! The JSON Schema of a pack file's front matter, for editors (YAML
//! language servers read JSON Schema too).

use serde_json::{Value, json};

/// The JSON Schema of the front matter of a pack's prompt files:
/// `description`, `template`, `variables`, `pin_head`, `pin_tail`, `kind`,
/// `roles`, `attach`, `model` (the well-known keys `check` validates, and
/// any other), `metadata` and `translated_from`. Unknown keys are refused, as the loader
/// refuses them. `promptreg schema front-matter` prints it.
///
/// ```
/// let schema = promptreg_packs::pack::front_matter_schema();
/// assert_eq!(schema["properties"]["kind"]["enum"], serde_json::json!(["text", "chat"]));
/// assert_eq!(schema["additionalProperties"], false);
/// ```
pub fn front_matter_schema() -> Value {
    let pins = json!({
        "description": "Pinned blocks, kept whatever replaces the body: one text or a list. In a locale variant, their translations, by position.",
        "oneOf": [{ "type": "string" }, { "type": "array", "items": { "type": "string" } }]
    });
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "promptreg pack file front matter",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "description": { "type": "string", "description": "One line shown by `promptreg list` (default files only)." },
            "template": { "type": "boolean", "description": "`true`: the body and pins are minijinja templates; `false`: literal text." },
            "tools": {
                "description": "The tools the prompt offers. A default file lists them; a locale variant translates their descriptions, by tool name.",
                "oneOf": [
                    {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "additionalProperties": false,
                            "required": ["name", "description"],
                            "properties": {
                                "name": { "type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$" },
                                "description": { "type": "string" },
                                "parameters": { "type": "object", "description": "A JSON Schema (2020-12) of the arguments, an object schema." }
                            }
                        }
                    },
                    {
                        "type": "object",
                        "additionalProperties": {
                            "type": "object",
                            "additionalProperties": false,
                            "properties": {
                                "description": { "type": "string" },
                                "parameters": { "type": "object", "additionalProperties": { "type": "string" }, "description": "Parameter descriptions by property name (`a.b` for a nested one)." }
                            }
                        }
                    }
                ]
            },
            "output": {
                "type": "object",
                "description": "The shape of the answer. A default file gives `name`, `description` and `schema`; a locale variant translates `description` and `properties` (descriptions by property name).",
                "additionalProperties": false,
                "properties": {
                    "name": { "type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$" },
                    "description": { "type": "string" },
                    "schema": { "type": "object", "description": "A JSON Schema (2020-12) of the answer." },
                    "properties": { "type": "object", "additionalProperties": { "type": "string" } }
                }
            },
            "variables": {
                "type": "object",
                "description": "The variables the template uses.",
                "additionalProperties": {
                    "oneOf": [
                        { "type": "null" },
                        {
                            "type": "object",
                            "additionalProperties": false,
                            "properties": {
                                "required": { "type": "boolean" },
                                "default": {},
                                "type": { "enum": ["string", "number", "boolean", "list", "object"] },
                                "schema": {
                                    "type": ["object", "boolean"],
                                    "description": "A JSON Schema (2020-12) the value must match, checked at each render."
                                },
                                "description": { "type": "string" }
                            }
                        }
                    ]
                }
            },
            "pin_head": pins,
            "pin_tail": pins,
            "kind": {
                "enum": ["text", "chat"],
                "description": "`text` (the default) or `chat`: messages under role headings (`# system`, `# user`, `# assistant`, `# tool`, a declared role, `# history: NAME`)."
            },
            "roles": {
                "type": "array",
                "description": "Custom roles a chat file's headings may use.",
                "items": { "type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_-]*$", "not": { "enum": ["system", "user", "assistant", "tool"] } }
            },
            "attach": {
                "description": "The message of a chat file that pinned blocks and appenders attach to: a role (its first message), `last-<role>`, or a message's number from 1. Default: the first system message.",
                "oneOf": [
                    { "type": "integer", "minimum": 1 },
                    { "type": "string", "pattern": "^(last-)?[A-Za-z][A-Za-z0-9_-]*$" }
                ]
            },
            "model": {
                "type": "object",
                "description": "Model settings sent beside the prompt; free-form, the well-known keys checked. In a locale variant: keys over the default's.",
                "properties": {
                    "model": { "type": "string" },
                    "temperature": { "type": "number", "minimum": 0, "maximum": 2 },
                    "top_p": { "type": "number", "minimum": 0, "maximum": 1 },
                    "max_tokens": { "type": "integer", "minimum": 1 },
                    "response_format": { "type": "object" },
                    "tools": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "anyOf": [
                                { "required": ["name"] },
                                { "required": ["function"], "properties": { "function": { "type": "object", "required": ["name"] } } }
                            ]
                        }
                    }
                }
            },
            "metadata": { "type": "object", "description": "Free data about the prompt (default files only)." },
            "translated_from": {
                "type": "object",
                "description": "A locale variant's record of the default's text it translates, written by `promptreg l10n mark-current` and `l10n import`: when the default changes, the variant is stale.",
                "additionalProperties": false,
                "required": ["digest"],
                "properties": {
                    "digest": { "type": "string", "pattern": "^[0-9a-f]{16}$" },
                    "body": { "type": "string" },
                    "pin_head": { "type": "array", "items": { "type": "string" } },
                    "pin_tail": { "type": "array", "items": { "type": "string" } }
                }
            }
        }
    })
}
