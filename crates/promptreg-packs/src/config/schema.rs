//! The JSON Schema of an application's settings file, so editors complete
//! and validate it.

use schemars::Schema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use super::mode::Mode;
use super::settings::PromptSettings;
use super::spec::{ConfigSpec, KeyPattern, PromptField};

/// The JSON Schema (draft 2020-12) of `spec`'s settings files: the declared
/// keys and patterns under `prompts`, `promptsDir`, `trustedProjects`, and
/// the legacy keys (marked deprecated). Unknown keys are refused at every level, as the
/// loader refuses them.
///
/// ```
/// # use promptreg_packs::config::{settings_schema, ConfigSpec};
/// let spec = ConfigSpec::builder("app").key("auditor").key_pattern("tool-*").prompts_dir(".app/prompts").build()?;
/// let schema = settings_schema(&spec);
/// let prompts = &schema.as_value()["properties"]["prompts"];
/// assert!(prompts["properties"]["auditor"].is_object());
/// assert!(prompts["patternProperties"]["^tool-.+$"].is_object());
/// assert_eq!(prompts["additionalProperties"], false);
/// # Ok::<(), promptreg_core::Error>(())
/// ```
pub fn settings_schema(spec: &ConfigSpec) -> Schema {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let block = generator.subschema_for::<PromptSettings>().to_value();
    let mode = generator.subschema_for::<Mode>().to_value();
    let defs = generator.take_definitions(true);

    let keys: Map<String, Value> = spec
        .keys()
        .map(|k| (k.to_string(), block.clone()))
        .collect();
    let patterns: Map<String, Value> = spec
        .patterns()
        .iter()
        .map(|p| (pattern_regex(p), block.clone()))
        .collect();
    let mut properties = Map::new();
    properties.insert("$schema".into(), json!({ "type": "string" }));
    properties.insert(
        "prompts".into(),
        json!({
            "description": "Per-prompt settings: how the user's block combines with the application's prompt.",
            "type": "object",
            "properties": keys,
            "patternProperties": patterns,
            "additionalProperties": false,
        }),
    );
    properties.insert(
        "promptsDir".into(),
        json!({
            "description": format!("The prompts directory (default `{}`): relative to home and to the project, `~/...` or absolute.", spec.prompts_dir()),
            "type": ["string", "null"],
        }),
    );
    properties.insert(
        "trustedProjects".into(),
        json!({
            "description": "Only in the global settings file: project folders (`~/...` or absolute) whose configuration may read files outside the project; a folder trusts the folders below it. `promptreg trust DIR` adds one.",
            "type": ["array", "null"],
            "items": { "type": "string", "minLength": 1 },
        }),
    );
    for alias in spec.legacy_aliases() {
        let mut schema = match alias.field {
            PromptField::Mode => json!({ "anyOf": [mode.clone(), { "type": "null" }] }),
            PromptField::Inline | PromptField::File => json!({ "type": ["string", "null"] }),
        };
        schema["description"] = json!(format!("Legacy alias of `{}`.", alias.target()));
        schema["deprecated"] = json!(true);
        properties.insert(alias.name.clone(), schema);
    }

    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": format!("{} prompt settings", spec.name()),
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
        "$defs": defs,
    });
    Schema::try_from(root).unwrap_or_default()
}

/// `tool-*` -> `^tool-.+$`; ids hold no regex syntax but `.`.
fn pattern_regex(pattern: &KeyPattern) -> String {
    let text = pattern.to_string().replace('.', "\\.");
    format!("^{}$", text.replace('*', ".+"))
}
