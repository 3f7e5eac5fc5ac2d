//! What a new contract changes, each change classified: **breaking** when
//! an application written against the old contract may fail with the new
//! one, not breaking when it only adds or describes.
//!
//! | change | breaking |
//! |---|---|
//! | a tool removed (or renamed: removed and added) | yes |
//! | a tool added | no |
//! | the output schema removed | yes |
//! | the output schema added | no |
//! | a property removed | yes |
//! | a property added (optional) | no |
//! | a property becoming required | yes |
//! | an output property becoming optional | yes (the application reads it) |
//! | a type narrowed or changed | yes |
//! | a type widened | no |
//! | an enum value removed | yes |
//! | an enum value added to a tool's parameter | no |
//! | an enum value added to the output | yes (the application meets a value it does not know) |
//! | `additionalProperties` closed | yes |
//! | a description changed | no |
//!
//! The comparison follows `properties` and `items` of object and list
//! schemas; any other change of a schema's keywords (a `pattern`, a
//! bound, a `$ref`) is reported as a change that may break.

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Contract, OutputSchema, Tool};

/// One change from one contract to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContractChange {
    /// What it is about: ``tool `open_page` ``, ``tool `open_page`, parameter `path` ``,
    /// ``output `verdict`, property `tasks[].evidence` ``.
    pub subject: String,
    /// What changed: `removed`, `became required`, `type string -> integer`.
    pub what: String,
    /// Whether an application written against the old contract may fail.
    pub breaking: bool,
}

impl fmt::Display for ContractChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.breaking {
            "breaking"
        } else {
            "compatible"
        };
        write!(f, "{kind}: {} {}", self.subject, self.what)
    }
}

/// Which side of the application a schema describes: what the model
/// sends it (a tool's arguments) or what it reads back (the answer). Both
/// are read by the application, but an answer's new values reach code
/// that enumerates them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Arguments,
    Answer,
}

impl Contract {
    /// What `new` changes from this contract, each classified (see the
    /// module's table). Empty when they are the same.
    ///
    /// ```
    /// use promptreg_core::{Contract, JsonObject, Tool};
    /// use serde_json::json;
    ///
    /// let params = |v| JsonObject::from_value(v).unwrap();
    /// let old = Contract::new(vec![
    ///     Tool::new("search", "Search.", params(json!({ "type": "object", "properties": { "q": { "type": "string" } } }))),
    ///     Tool::new("open", "Open.", params(json!({ "type": "object" }))),
    /// ], None)?;
    /// let new = Contract::new(vec![
    ///     Tool::new("search", "Search the site.", params(json!({
    ///         "type": "object",
    ///         "properties": { "q": { "type": "string" } },
    ///         "required": ["q"],
    ///     }))),
    /// ], None)?;
    /// let changes: Vec<String> = old.changes_to(&new).iter().map(ToString::to_string).collect();
    /// assert_eq!(changes, [
    ///     "compatible: tool `search` description changed",
    ///     "breaking: tool `search`, parameter `q` became required",
    ///     "breaking: tool `open` removed",
    /// ]);
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    pub fn changes_to(&self, new: &Contract) -> Vec<ContractChange> {
        let mut changes = Vec::new();
        for old_tool in &self.tools {
            match new.tool(old_tool.name()) {
                Some(new_tool) => tool_changes(old_tool, new_tool, &mut changes),
                None => changes.push(change(
                    format!("tool `{}`", old_tool.name()),
                    "removed",
                    true,
                )),
            }
        }
        for new_tool in new.tools.iter().filter(|t| self.tool(t.name()).is_none()) {
            changes.push(change(
                format!("tool `{}`", new_tool.name()),
                "added",
                false,
            ));
        }
        match (&self.output, &new.output) {
            (None, None) => {}
            (Some(old), None) => {
                changes.push(change(format!("output `{}`", old.name()), "removed", true))
            }
            (None, Some(new)) => {
                changes.push(change(format!("output `{}`", new.name()), "added", false))
            }
            (Some(old), Some(new)) => output_changes(old, new, &mut changes),
        }
        changes
    }

    /// Whether any of `changes_to(new)` is breaking.
    pub fn breaks(&self, new: &Contract) -> bool {
        self.changes_to(new).iter().any(|c| c.breaking)
    }
}

/// The changes between two contracts that may be absent: a prompt that
/// gains or loses its whole contract.
pub fn changes_between(old: Option<&Contract>, new: Option<&Contract>) -> Vec<ContractChange> {
    let empty = Contract::default();
    old.unwrap_or(&empty).changes_to(new.unwrap_or(&empty))
}

fn change(subject: String, what: impl Into<String>, breaking: bool) -> ContractChange {
    ContractChange {
        subject,
        what: what.into(),
        breaking,
    }
}

fn tool_changes(old: &Tool, new: &Tool, out: &mut Vec<ContractChange>) {
    let subject = format!("tool `{}`", old.name());
    if old.description() != new.description() {
        out.push(change(subject.clone(), "description changed", false));
    }
    let (a, b) = (old.parameters().to_value(), new.parameters().to_value());
    let at = |path: &str| match path {
        "" => format!("{subject}, its parameters"),
        path => format!("{subject}, parameter `{path}`"),
    };
    schema_changes(&a, &b, "", Side::Arguments, &at, out, 0);
}

fn output_changes(old: &OutputSchema, new: &OutputSchema, out: &mut Vec<ContractChange>) {
    let subject = format!("output `{}`", old.name());
    if old.name() != new.name() {
        out.push(change(
            subject.clone(),
            format!("renamed to `{}`", new.name()),
            true,
        ));
    }
    if old.description() != new.description() {
        out.push(change(subject.clone(), "description changed", false));
    }
    let (a, b) = (old.schema().to_value(), new.schema().to_value());
    let at = |path: &str| match path {
        "" => format!("{subject}, its schema"),
        path => format!("{subject}, property `{path}`"),
    };
    schema_changes(&a, &b, "", Side::Answer, &at, out, 0);
}

/// How deep the comparison follows nested schemas; a schema was bounded
/// deeper than this where it was read.
const MAX_DEPTH: usize = 64;

/// The keywords the comparison reads itself; a change of any other is a
/// change that may break.
const COMPARED: [&str; 9] = [
    "type",
    "properties",
    "required",
    "enum",
    "additionalProperties",
    "items",
    "description",
    "title",
    "examples",
];

fn schema_changes(
    old: &Value,
    new: &Value,
    path: &str,
    side: Side,
    at: &dyn Fn(&str) -> String,
    out: &mut Vec<ContractChange>,
    depth: usize,
) {
    let (Value::Object(a), Value::Object(b)) = (old, new) else {
        if old != new {
            out.push(change(at(path), "schema changed", true));
        }
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    type_change(a, b, path, at, out);
    enum_change(a, b, path, side, at, out);
    closed_change(a, b, path, at, out);
    properties_change(a, b, path, side, at, out, depth);
    if let (Some(x), Some(y)) = (a.get("items"), b.get("items")) {
        schema_changes(x, y, &format!("{path}[]"), side, at, out, depth + 1);
    } else if a.get("items") != b.get("items") {
        out.push(change(at(path), "list items changed", true));
    }
    if description(a) != description(b) && !path.is_empty() {
        out.push(change(at(path), "description changed", false));
    }
    let others = |m: &Map<String, Value>| -> Map<String, Value> {
        m.iter()
            .filter(|(k, _)| !COMPARED.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let (x, y) = (others(a), others(b));
    if x != y {
        let mut keys: Vec<&String> = x
            .keys()
            .chain(y.keys())
            .filter(|k| x.get(*k) != y.get(*k))
            .collect();
        keys.sort();
        keys.dedup();
        let keys: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
        out.push(change(
            at(path),
            format!("{} changed", keys.join(", ")),
            true,
        ));
    }
}

fn description(schema: &Map<String, Value>) -> Option<&Value> {
    schema.get("description")
}

/// The types a schema allows; `None`: any.
fn types(schema: &Map<String, Value>) -> Option<Vec<String>> {
    let mut types: Vec<String> = match schema.get("type")? {
        Value::String(t) => vec![t.clone()],
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => return None,
    };
    // An integer is a number.
    if types.iter().any(|t| t == "number") && !types.iter().any(|t| t == "integer") {
        types.push("integer".to_owned());
    }
    types.sort();
    Some(types)
}

fn type_change(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    path: &str,
    at: &dyn Fn(&str) -> String,
    out: &mut Vec<ContractChange>,
) {
    let (old, new) = (types(a), types(b));
    if old == new {
        return;
    }
    let show = |t: &Option<Vec<String>>| match t {
        None => "any".to_owned(),
        Some(t) => t.join(" | "),
    };
    let widened = match (&old, &new) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(old), Some(new)) => old.iter().all(|t| new.contains(t)),
    };
    let what = format!("type {} -> {}", show(&old), show(&new));
    out.push(change(at(path), what, !widened));
}

fn enum_values(schema: &Map<String, Value>) -> Option<&Vec<Value>> {
    schema.get("enum")?.as_array()
}

fn enum_change(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    path: &str,
    side: Side,
    at: &dyn Fn(&str) -> String,
    out: &mut Vec<ContractChange>,
) {
    match (enum_values(a), enum_values(b)) {
        (None, None) => {}
        (Some(_), None) => out.push(change(
            at(path),
            "no longer restricted to its values",
            side == Side::Answer,
        )),
        (None, Some(_)) => out.push(change(at(path), "restricted to a list of values", true)),
        (Some(old), Some(new)) => {
            for value in old.iter().filter(|v| !new.contains(v)) {
                out.push(change(at(path), format!("value {value} removed"), true));
            }
            for value in new.iter().filter(|v| !old.contains(v)) {
                out.push(change(
                    at(path),
                    format!("value {value} added"),
                    side == Side::Answer,
                ));
            }
        }
    }
}

/// `additionalProperties: false` where it was open (absent or a schema).
fn closed_change(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    path: &str,
    at: &dyn Fn(&str) -> String,
    out: &mut Vec<ContractChange>,
) {
    let closed =
        |m: &Map<String, Value>| m.get("additionalProperties") == Some(&Value::Bool(false));
    match (closed(a), closed(b)) {
        (false, true) => out.push(change(at(path), "closed to other properties", true)),
        (true, false) => out.push(change(at(path), "opened to other properties", false)),
        _ => {
            let (x, y) = (a.get("additionalProperties"), b.get("additionalProperties"));
            if x != y {
                out.push(change(at(path), "`additionalProperties` changed", true));
            }
        }
    }
}

fn required(schema: &Map<String, Value>) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[allow(clippy::too_many_arguments)]
fn properties_change(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    path: &str,
    side: Side,
    at: &dyn Fn(&str) -> String,
    out: &mut Vec<ContractChange>,
    depth: usize,
) {
    let empty = Map::new();
    let old = a
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let new = b
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let (old_required, new_required) = (required(a), required(b));
    let child = |name: &str| match path {
        "" => name.to_owned(),
        path => format!("{path}.{name}"),
    };
    for (name, schema) in old {
        let here = child(name);
        let Some(new_schema) = new.get(name) else {
            out.push(change(at(&here), "removed", true));
            continue;
        };
        match (
            old_required.contains(&name.as_str()),
            new_required.contains(&name.as_str()),
        ) {
            (false, true) => out.push(change(at(&here), "became required", true)),
            (true, false) => out.push(change(at(&here), "became optional", side == Side::Answer)),
            _ => {}
        }
        schema_changes(schema, new_schema, &here, side, at, out, depth + 1);
    }
    for name in new.keys().filter(|n| !old.contains_key(*n)) {
        let required = new_required.contains(&name.as_str());
        let what = if required { "added, required" } else { "added" };
        out.push(change(
            at(&child(name)),
            what,
            required && side == Side::Arguments,
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::JsonObject;

    fn object(v: Value) -> JsonObject {
        JsonObject::from_value(v).unwrap()
    }

    fn output(schema: Value) -> Contract {
        Contract::new(
            Vec::new(),
            Some(OutputSchema::new("answer", object(schema))),
        )
        .unwrap()
    }

    fn tool(schema: Value) -> Contract {
        Contract::new(vec![Tool::new("t", "T.", object(schema))], None).unwrap()
    }

    fn changes(old: &Contract, new: &Contract) -> Vec<String> {
        old.changes_to(new)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn the_same_contract_changes_nothing() {
        let c = output(
            json!({ "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a"] }),
        );
        assert_eq!(changes(&c, &c), Vec::<String>::new());
    }

    #[test]
    fn output_properties_removed_or_made_optional_break() {
        let old = output(json!({
            "type": "object",
            "properties": { "a": { "type": "string" }, "b": { "type": "string" } },
            "required": ["a", "b"],
        }));
        let new = output(json!({
            "type": "object",
            "properties": { "a": { "type": "string" }, "c": { "type": "string" } },
            "required": [],
        }));
        assert_eq!(
            changes(&old, &new),
            [
                "breaking: output `answer`, property `a` became optional",
                "breaking: output `answer`, property `b` removed",
                "compatible: output `answer`, property `c` added",
            ]
        );
    }

    #[test]
    fn types_narrowed_break_and_widened_do_not() {
        let old = tool(
            json!({ "type": "object", "properties": { "n": { "type": ["number", "string"] } } }),
        );
        let narrowed =
            tool(json!({ "type": "object", "properties": { "n": { "type": "integer" } } }));
        let widened = tool(
            json!({ "type": "object", "properties": { "n": { "type": ["number", "string", "null"] } } }),
        );
        assert_eq!(
            changes(&old, &narrowed),
            ["breaking: tool `t`, parameter `n` type integer | number | string -> integer"]
        );
        assert_eq!(
            changes(&old, &widened),
            [
                "compatible: tool `t`, parameter `n` type integer | number | string -> integer | null | number | string"
            ]
        );
    }

    #[test]
    fn enum_values_and_closed_objects() {
        let old = output(
            json!({ "type": "object", "properties": { "v": { "enum": ["PASS", "FAIL"] } } }),
        );
        let new = output(json!({
            "type": "object",
            "properties": { "v": { "enum": ["PASS", "SKIP"] } },
            "additionalProperties": false,
        }));
        assert_eq!(
            changes(&old, &new),
            [
                "breaking: output `answer`, its schema closed to other properties",
                "breaking: output `answer`, property `v` value \"FAIL\" removed",
                "breaking: output `answer`, property `v` value \"SKIP\" added",
            ]
        );
        // A new value a tool accepts breaks nothing.
        let old = tool(json!({ "properties": { "v": { "enum": ["a"] } } }));
        let new = tool(json!({ "properties": { "v": { "enum": ["a", "b"] } } }));
        assert_eq!(
            changes(&old, &new),
            ["compatible: tool `t`, parameter `v` value \"b\" added"]
        );
    }

    #[test]
    fn nested_lists_and_other_keywords_are_followed() {
        let old = output(json!({
            "type": "object",
            "properties": { "tasks": { "type": "array", "items": {
                "type": "object", "properties": { "evidence": { "type": "string", "maxLength": 100 } }, "required": ["evidence"],
            } } },
        }));
        let new = output(json!({
            "type": "object",
            "properties": { "tasks": { "type": "array", "items": {
                "type": "object", "properties": { "evidence": { "type": "string", "maxLength": 50, "description": "Proof" } },
            } } },
        }));
        assert_eq!(
            changes(&old, &new),
            [
                "breaking: output `answer`, property `tasks[].evidence` became optional",
                "compatible: output `answer`, property `tasks[].evidence` description changed",
                "breaking: output `answer`, property `tasks[].evidence` `maxLength` changed",
            ]
        );
    }

    #[test]
    fn a_required_argument_added_breaks_and_an_optional_one_does_not() {
        let old = tool(json!({ "type": "object", "properties": {} }));
        let new = tool(json!({
            "type": "object",
            "properties": { "a": { "type": "string" }, "b": { "type": "string" } },
            "required": ["a"],
        }));
        assert_eq!(
            changes(&old, &new),
            [
                "breaking: tool `t`, parameter `a` added, required",
                "compatible: tool `t`, parameter `b` added",
            ]
        );
    }

    #[test]
    fn whole_tools_and_outputs() {
        let none = Contract::default();
        let with = tool(json!({ "type": "object" }));
        assert_eq!(changes(&none, &with), ["compatible: tool `t` added"]);
        assert_eq!(changes(&with, &none), ["breaking: tool `t` removed"]);
        assert_eq!(changes_between(None, Some(&with)).len(), 1);
        let answer = output(json!({ "type": "object" }));
        assert_eq!(
            changes(&answer, &none),
            ["breaking: output `answer` removed"]
        );
        assert!(answer.breaks(&none));
        assert!(!none.breaks(&answer));
    }
}
