//! [`JsonObject`]: a prompt's model settings and metadata, carried by the
//! core without knowing what they mean.

use std::sync::Arc;

/// A JSON object the core carries as it is: a prompt's model settings
/// (model name, temperature, response format, tools) or its metadata.
///
/// The core stores the object as its JSON text, so it needs no JSON
/// library and a clone is one reference count: a render hands the
/// settings out without copying them. Building one and reading its keys
/// need `serde_json`, which comes with the `templates` feature (and so
/// with `config` and `packs`); without it no source can give settings,
/// and a prompt has none.
///
/// ```
/// use promptreg_core::JsonObject;
///
/// let settings = JsonObject::from_value(serde_json::json!({ "model": "gpt-4o", "temperature": 0.2 }));
/// let settings = settings.expect("an object");
/// assert_eq!(settings.model_name().as_deref(), Some("gpt-4o"));
/// assert_eq!(settings.get("temperature"), Some(serde_json::json!(0.2)));
/// assert_eq!(settings.as_json(), r#"{"model":"gpt-4o","temperature":0.2}"#);
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct JsonObject {
    /// Written by `serde_json` from a map: always a valid JSON object.
    json: Arc<str>,
}

impl JsonObject {
    /// The object as compact JSON text, keys sorted.
    pub fn as_json(&self) -> &str {
        &self.json
    }
}

impl std::fmt::Debug for JsonObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.json)
    }
}

impl JsonObject {
    /// The object `map`.
    pub fn new(map: serde_json::Map<String, serde_json::Value>) -> Self {
        let value = serde_json::Value::Object(map);
        JsonObject {
            json: value.to_string().into(),
        }
    }

    /// The object `value`, or `None` when it is not an object.
    pub fn from_value(value: serde_json::Value) -> Option<Self> {
        match value {
            serde_json::Value::Object(map) => Some(JsonObject::new(map)),
            _ => None,
        }
    }

    /// The object as a map.
    pub fn to_map(&self) -> serde_json::Map<String, serde_json::Value> {
        // The text was written from a map, so it parses back; an empty map
        // stands in rather than a panic.
        serde_json::from_str(&self.json).unwrap_or_default()
    }

    /// The object as a JSON value.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::Value::Object(self.to_map())
    }

    /// The value of a top-level key.
    pub fn get(&self, key: &str) -> Option<serde_json::Value> {
        self.to_map().remove(key)
    }

    /// The `model` key, when it is a string: the model's name in model
    /// settings.
    pub fn model_name(&self) -> Option<String> {
        match self.get("model")? {
            serde_json::Value::String(name) => Some(name),
            _ => None,
        }
    }

    /// This object with the top-level keys of `over` replacing its own
    /// (a shallow merge: a key of `over` replaces the whole value, objects
    /// included), as a locale variant's model settings apply over its
    /// default's.
    pub fn merged(&self, over: &JsonObject) -> JsonObject {
        let mut map = self.to_map();
        map.extend(over.to_map());
        JsonObject::new(map)
    }
}

impl serde::Serialize for JsonObject {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: serde_json::Value) -> JsonObject {
        JsonObject::from_value(value).unwrap()
    }

    #[test]
    fn only_objects_are_json_objects() {
        assert!(JsonObject::from_value(json!([1])).is_none());
        assert!(JsonObject::from_value(json!("gpt")).is_none());
    }

    #[test]
    fn a_merge_replaces_top_level_keys_whole() {
        let default = object(
            json!({ "model": "a", "temperature": 0.2, "response_format": { "type": "json_object", "x": 1 } }),
        );
        let variant = object(json!({ "temperature": 0.7, "response_format": { "type": "text" } }));
        assert_eq!(
            default.merged(&variant).to_value(),
            json!({ "model": "a", "temperature": 0.7, "response_format": { "type": "text" } })
        );
    }

    #[test]
    fn it_serialises_as_the_object_and_compares_by_content() {
        let settings = object(json!({ "b": 1, "a": [true] }));
        assert_eq!(
            serde_json::to_value(&settings).unwrap(),
            json!({ "a": [true], "b": 1 })
        );
        assert_eq!(settings, object(json!({ "a": [true], "b": 1 })));
        assert_eq!(format!("{settings:?}"), r#"{"a":[true],"b":1}"#);
    }

    #[test]
    fn the_model_name_is_the_model_key_when_a_string() {
        assert_eq!(
            object(json!({ "model": "m" })).model_name().as_deref(),
            Some("m")
        );
        assert_eq!(object(json!({ "model": 3 })).model_name(), None);
    }
}
