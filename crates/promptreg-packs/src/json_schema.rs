//! JSON Schemas written in a pack (a tool's parameters, an output schema),
//! checked before anything uses them: bounded in size and depth, every
//! `$ref` inside the schema itself (a remote one is refused, never
//! fetched), valid against the JSON Schema 2020-12 meta-schema, and
//! compiled. Keys that are no keyword of the vocabulary are warned about,
//! with the nearest keyword: validation would ignore them silently.

use serde_json::Value;

use crate::model_check::kind;
use crate::suggest;

/// The largest schema read, as compact JSON.
pub(crate) const MAX_SCHEMA_BYTES: usize = 256 * 1024;

/// The deepest a schema may nest (objects and arrays).
pub(crate) const MAX_SCHEMA_DEPTH: usize = 64;

/// One thing wrong with a schema: where (its path of keys below the
/// schema), what, how to fix it, and whether it stops the load.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SchemaProblem {
    pub(crate) path: Vec<String>,
    pub(crate) message: String,
    pub(crate) suggestion: Option<String>,
    pub(crate) is_error: bool,
}

impl SchemaProblem {
    fn error(path: Vec<String>, message: String, suggestion: Option<String>) -> Self {
        SchemaProblem {
            path,
            message,
            suggestion,
            is_error: true,
        }
    }
}

/// The keywords of JSON Schema 2020-12 (core, applicator, unevaluated,
/// validation, meta-data, format and content vocabularies), and those of
/// earlier drafts schemas still carry.
const KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "$defs",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "prefixItems",
    "items",
    "contains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "definitions",
    "dependencies",
    "additionalItems",
    "$recursiveRef",
    "$recursiveAnchor",
];

/// Keywords whose value is a schema.
const SCHEMA_VALUED: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "items",
    "contains",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
    "additionalItems",
];

/// Keywords whose value is an object of schemas by name.
const SCHEMA_MAPS: &[&str] = &[
    "$defs",
    "definitions",
    "properties",
    "patternProperties",
    "dependentSchemas",
];

/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Every problem of `schema`: errors first found stop the checks that
/// need them (a schema too deep is not walked further).
pub(crate) fn check(schema: &Value) -> Vec<SchemaProblem> {
    let size = serde_json::to_string(schema).map_or(usize::MAX, |s| s.len());
    if size > MAX_SCHEMA_BYTES {
        return vec![SchemaProblem::error(
            Vec::new(),
            format!(
                "the schema is {size} bytes of JSON, more than the {MAX_SCHEMA_BYTES} a schema may have"
            ),
            Some("split it, or share parts through `$defs`".to_owned()),
        )];
    }
    if !matches!(schema, Value::Object(_) | Value::Bool(_)) {
        return vec![SchemaProblem::error(
            Vec::new(),
            format!(
                "a JSON Schema is an object (or `true`/`false`), not {}",
                kind(schema)
            ),
            Some("write the schema as a mapping: `type: object`, `properties: ...`".to_owned()),
        )];
    }
    let mut problems = Vec::new();
    walk(schema, &mut Vec::new(), 0, &mut problems);
    if problems.iter().any(|p| p.is_error) {
        return problems;
    }
    let meta = jsonschema::draft202012::meta::validator();
    for error in meta.iter_errors(schema) {
        problems.push(SchemaProblem::error(
            pointer_path(error.instance_path().as_str()),
            format!("not a valid JSON Schema: {error}"),
            Some(
                "see https://json-schema.org/draft/2020-12 for what each keyword takes".to_owned(),
            ),
        ));
    }
    if problems.iter().any(|p| p.is_error) {
        return problems;
    }
    if let Err(error) = jsonschema::draft202012::new(schema) {
        problems.push(SchemaProblem::error(
            Vec::new(),
            format!("the schema does not compile: {error}"),
            None,
        ));
    }
    problems
}

/// Walks the schema at `path`: its depth, its `$ref`s and its keywords.
fn walk(schema: &Value, path: &mut Vec<String>, depth: usize, problems: &mut Vec<SchemaProblem>) {
    if depth > MAX_SCHEMA_DEPTH {
        problems.push(SchemaProblem::error(
            path.clone(),
            format!("the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"),
            Some("share the repeated part through `$defs` and `$ref`".to_owned()),
        ));
        return;
    }
    let Value::Object(map) = schema else {
        return;
    };
    for (key, value) in map {
        path.push(key.clone());
        if key == "$ref" {
            check_ref(value, path, problems);
        } else if SCHEMA_VALUED.contains(&key.as_str()) {
            walk(value, path, depth + 1, problems);
        } else if SCHEMA_MAPS.contains(&key.as_str()) {
            if let Value::Object(schemas) = value {
                for (name, schema) in schemas {
                    path.push(name.clone());
                    walk(schema, path, depth + 2, problems);
                    path.pop();
                }
            }
        } else if SCHEMA_LISTS.contains(&key.as_str()) {
            if let Value::Array(schemas) = value {
                for (i, schema) in schemas.iter().enumerate() {
                    path.push(i.to_string());
                    walk(schema, path, depth + 2, problems);
                    path.pop();
                }
            }
        } else if !KEYWORDS.contains(&key.as_str()) {
            problems.push(SchemaProblem {
                path: path.clone(),
                message: format!("`{key}` is no JSON Schema keyword: validation ignores it"),
                suggestion: suggest::nearest(key, KEYWORDS.iter().copied())
                    .map(|k| format!("did you mean `{k}`?")),
                is_error: false,
            });
        } else if depth_of(value) + depth > MAX_SCHEMA_DEPTH {
            // `enum`, `const`, `default`, `examples`: data, bounded too.
            problems.push(SchemaProblem::error(
                path.clone(),
                format!("the value of `{key}` nests deeper than {MAX_SCHEMA_DEPTH} levels"),
                None,
            ));
        }
        path.pop();
    }
}

/// A `$ref` must point inside the schema: `#`, `#/$defs/name`, `#anchor`.
fn check_ref(value: &Value, path: &[String], problems: &mut Vec<SchemaProblem>) {
    match value.as_str() {
        Some(reference) if reference.starts_with('#') => {}
        Some(reference) => problems.push(SchemaProblem::error(
            path.to_vec(),
            format!("`$ref: {reference}` leaves the schema: a reference is never fetched"),
            Some("put the shared part under `$defs` and refer to it as `#/$defs/NAME`".to_owned()),
        )),
        None => problems.push(SchemaProblem::error(
            path.to_vec(),
            format!("`$ref` is {}, not a reference", kind(value)),
            Some("write it as `#/$defs/NAME`".to_owned()),
        )),
    }
}

/// How deep `value` nests, up to one past the bound.
fn depth_of(value: &Value) -> usize {
    fn go(value: &Value, depth: usize) -> usize {
        if depth > MAX_SCHEMA_DEPTH {
            return depth;
        }
        match value {
            Value::Array(items) => items
                .iter()
                .map(|v| go(v, depth + 1))
                .max()
                .unwrap_or(depth),
            Value::Object(map) => map
                .values()
                .map(|v| go(v, depth + 1))
                .max()
                .unwrap_or(depth),
            _ => depth,
        }
    }
    go(value, 0)
}

/// How many of a value's problems [`violations`] reports.
#[cfg(feature = "testing")]
const MAX_VIOLATIONS: usize = 10;

/// Why `value` does not validate against `schema` (a schema the pack's
/// checks accepted), each problem with the path to the value
/// (`tasks.0.evidence`, or `(the whole value)`); empty when it validates.
#[cfg(feature = "testing")]
pub(crate) fn violations(schema: &Value, value: &Value) -> Vec<String> {
    let validator = match jsonschema::draft202012::new(schema) {
        Ok(validator) => validator,
        Err(error) => return vec![format!("the schema does not compile: {error}")],
    };
    validator
        .iter_errors(value)
        .take(MAX_VIOLATIONS)
        .map(|error| {
            let path = pointer_path(error.instance_path().as_str()).join(".");
            let at = if path.is_empty() {
                "(the whole value)".to_owned()
            } else {
                format!("`{path}`")
            };
            format!("at {at}: {error}")
        })
        .collect()
}

/// `schema` (checked already by [`check`]) as a template variable's,
/// compiled once; a value's problems name their path below the variable
/// `name` (`tasks.0.title`). `None` when it does not compile.
pub(crate) fn variable_schema(
    name: &str,
    schema: &Value,
) -> Option<crate::template::VariableSchema> {
    let validator = jsonschema::draft202012::new(schema).ok()?;
    let name = name.to_owned();
    Some(crate::template::VariableSchema::new(
        schema.clone(),
        move |value| {
            // Most values match: the quick check first, the reasons only
            // for one that does not.
            if validator.is_valid(value) {
                return None;
            }
            let problems: Vec<String> = validator
                .iter_errors(value)
                .take(3)
                .map(|error| {
                    let mut path = vec![name.clone()];
                    path.extend(pointer_path(error.instance_path().as_str()));
                    format!("at `{}`: {error}", path.join("."))
                })
                .collect();
            (!problems.is_empty()).then(|| problems.join("; "))
        },
    ))
}

/// `/properties/a~1b/type` as its keys: `properties`, `a/b`, `type`.
pub(crate) fn pointer_path(pointer: &str) -> Vec<String> {
    pointer
        .split('/')
        .skip(1)
        .map(|segment| segment.replace("~1", "/").replace("~0", "~"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(schema: Value) -> Vec<String> {
        check(&schema)
            .into_iter()
            .filter(|p| p.is_error)
            .map(|p| format!("{}: {}", p.path.join("."), p.message))
            .collect()
    }

    #[test]
    fn a_valid_schema_has_no_problem() {
        let schema = json!({
            "type": "object",
            "properties": { "path": { "type": "string", "description": "a page" } },
            "required": ["path"],
            "$defs": { "tag": { "type": "string" } },
            "additionalProperties": false,
        });
        assert_eq!(check(&schema), []);
    }

    #[test]
    fn a_schema_against_the_meta_schema_is_located() {
        let found = errors(json!({ "type": "object", "properties": { "a": { "type": "strin" } } }));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("properties.a.type: not a valid JSON Schema"),
            "{found:?}"
        );
        let found = errors(json!({ "required": "a" }));
        assert!(
            found[0].starts_with("required: not a valid JSON Schema"),
            "{found:?}"
        );
    }

    #[test]
    fn a_remote_reference_is_refused_and_never_fetched() {
        let found = errors(json!({ "$ref": "https://example.invalid/schema.json" }));
        assert_eq!(
            found,
            [
                "$ref: `$ref: https://example.invalid/schema.json` leaves the schema: a reference is never fetched"
            ]
        );
        assert_eq!(
            errors(json!({ "properties": { "a": { "$ref": "other.json#/x" } } })).len(),
            1
        );
        // Inside the schema is fine; a dangling one does not compile.
        assert_eq!(
            errors(json!({ "$defs": { "a": { "type": "string" } }, "$ref": "#/$defs/a" })),
            Vec::<String>::new()
        );
        let dangling = errors(json!({ "$ref": "#/$defs/missing" }));
        assert_eq!(dangling.len(), 1, "{dangling:?}");
        assert!(dangling[0].contains("does not compile"), "{dangling:?}");
    }

    #[test]
    fn unknown_keywords_are_warnings_with_the_nearest_keyword() {
        let problems = check(&json!({ "type": "object", "requried": ["a"] }));
        assert_eq!(problems.len(), 1);
        assert!(!problems[0].is_error);
        assert_eq!(problems[0].path, ["requried"]);
        assert_eq!(
            problems[0].suggestion.as_deref(),
            Some("did you mean `required`?")
        );
        // A property may be named like anything.
        assert_eq!(
            check(&json!({ "properties": { "requried": { "type": "string" } } })),
            []
        );
    }

    #[test]
    fn size_depth_and_shape_are_bounded() {
        let mut deep = json!({ "type": "string" });
        for _ in 0..1_000 {
            deep = json!({ "items": deep });
        }
        let found = errors(deep);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].contains("nests deeper than 64 levels"),
            "{found:?}"
        );
        let mut data = json!(1);
        for _ in 0..100 {
            data = json!([data]);
        }
        assert!(errors(json!({ "enum": data }))[0].contains("value of `enum` nests deeper"));
        let big = json!({ "description": "x".repeat(MAX_SCHEMA_BYTES) });
        assert!(errors(big)[0].contains("more than the 262144 a schema may have"));
        assert!(errors(json!("object"))[0].contains("not a string"));
    }

    #[test]
    fn pointers_become_key_paths() {
        assert_eq!(
            pointer_path("/properties/a~1b/type"),
            ["properties", "a/b", "type"]
        );
        assert_eq!(pointer_path(""), Vec::<String>::new());
    }
}
