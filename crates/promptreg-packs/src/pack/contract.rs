//! A prompt file's contract: the `tools` and `output` of its front matter.
//!
//! A default file declares them:
//!
//! ```yaml
//! tools:
//!   - name: open_page
//!     description: Open a page of the site and read it.
//!     parameters:
//!       type: object
//!       properties:
//!         path: { type: string, description: "The page's path: /tents" }
//!       required: [path]
//!       additionalProperties: false
//! output:
//!   name: verdict
//!   description: The audit's verdict
//!   schema: { type: object, properties: { pass: { type: boolean } } }
//! ```
//!
//! A locale variant translates their descriptions, never a name or a
//! schema, by tool name and property name (`a.b` for a nested one):
//!
//! ```yaml
//! tools:
//!   open_page:
//!     description: サイトのページを開いて読みます。
//!     parameters: { path: "ページのパス：/tents" }
//! output:
//!   description: 監査の判定
//!   properties: { pass: 合格かどうか }
//! ```
//!
//! Every schema is checked by [`json_schema::check`]; what a provider
//! would refuse or not enforce is a warning ([`DiagnosticCode::ProviderRule`]).

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::contract::{Contract, OutputSchema, Tool};
use crate::diagnostic::{Diagnostic, DiagnosticCode, Diagnostics, LineIndex};
use crate::front_matter::Document;
use crate::id::PromptId;
use crate::json_object::JsonObject;
use crate::json_schema;
use crate::model_check::kind;
use crate::provenance::Provenance;
use crate::suggest;

use super::shared_contract::SharedContract;

/// The keys of a tool in a default file.
const TOOL_KEYS: [&str; 3] = ["name", "description", "parameters"];
/// The keys of `output` in a default file.
const OUTPUT_KEYS: [&str; 3] = ["name", "description", "schema"];
/// The keys of a tool's translation in a variant.
const TOOL_TRANSLATION_KEYS: [&str; 2] = ["description", "parameters"];
/// The keys of `output` in a variant.
const OUTPUT_TRANSLATION_KEYS: [&str; 2] = ["description", "properties"];

/// Reads the contract a default file declares (`None`: it declares none);
/// errors and warnings go to `diagnostics`, and an error gives `None` in
/// the outer option: the file is not loaded.
pub(super) fn read(
    doc: &Document<'_>,
    (id, path): (&PromptId, &Path),
    shared: &SharedContract,
    provenance: &Arc<Provenance>,
    diagnostics: &mut Diagnostics,
) -> Option<Option<Contract>> {
    let mut out = Reader::new(doc, path, shared);
    out.declared_once(doc);
    let tools = match &doc.meta.tools {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| out.tool(i, item))
            .collect(),
        Some(other) => {
            out.error(
                &["tools"],
                format!("`tools` is {}, not a list of tools", kind(other)),
                Some(
                    "list each tool with `- name: ...`, `description: ...`, `parameters: ...`"
                        .to_owned(),
                ),
            );
            Vec::new()
        }
    };
    out.unique_names(&tools);
    let output = doc.meta.output.as_ref().and_then(|o| out.output(o, id));
    let failed = out.failed;
    diagnostics.extend(out.diagnostics);
    if failed {
        return None;
    }
    if tools.is_empty() && output.is_none() {
        return Some(None);
    }
    // Names were checked to be unique and not empty above.
    let contract = Contract::new(tools, output).ok()?;
    Some(Some(contract.with_provenance(Arc::clone(provenance))))
}

/// The contract a default file's `text` declares, to compare two
/// versions of a prompt: `None` when it declares none, or when the file
/// does not read (`check` says why).
///
/// ```
/// use promptreg_core::PromptId;
/// use promptreg_packs::pack::declared_contract;
///
/// let id = PromptId::new("p")?;
/// let file = "---\ntools:\n  - name: open\n    description: Open a page.\n---\nGuide.\n";
/// let contract = declared_contract(&id, file).unwrap();
/// assert_eq!(contract.tools()[0].name(), "open");
/// assert!(declared_contract(&id, "Guide.\n").is_none());
/// # Ok::<(), promptreg_core::Error>(())
/// ```
pub fn declared_contract(id: &PromptId, text: &str) -> Option<Contract> {
    declared_contract_with(id, text, std::iter::empty::<(&str, &str)>())
}

/// [`declared_contract`], the file naming shared tools and schemas among
/// `shared_files` (by path in the pack: `tools/open_page.yaml`,
/// `schemas/audit_verdict.json`; other paths are left alone).
///
/// ```
/// use promptreg_core::PromptId;
/// use promptreg_packs::pack::declared_contract_with;
///
/// let id = PromptId::new("p")?;
/// let file = "---\ntools: [open_page]\n---\nGuide.\n";
/// let shared = [("tools/open_page.yaml", "description: Open a page.\n")];
/// let contract = declared_contract_with(&id, file, shared).unwrap();
/// assert_eq!(contract.tools()[0].origin(), Some("tools/open_page.yaml"));
/// # Ok::<(), promptreg_core::Error>(())
/// ```
pub fn declared_contract_with<P: AsRef<str>, T: AsRef<str>>(
    id: &PromptId,
    text: &str,
    shared_files: impl IntoIterator<Item = (P, T)>,
) -> Option<Contract> {
    let path = Path::new("");
    let doc = Document::parse(text, path).ok()?;
    let provenance = Arc::new(Provenance::new(
        crate::provenance::SourceKind::Pack,
        "default file",
    ));
    let files: Vec<(std::path::PathBuf, String)> = shared_files
        .into_iter()
        .map(|(p, t)| (path.join(p.as_ref()), t.as_ref().to_owned()))
        .collect();
    let shared = super::shared_contract::build(path, &files, &mut Diagnostics::default());
    let mut diagnostics = Diagnostics::default();
    read(&doc, (id, path), &shared, &provenance, &mut diagnostics).flatten()
}

/// Reads a locale variant's translation of `default`'s descriptions: the
/// default's contract with them replaced (`None` when the variant gives
/// none). Errors go to `diagnostics` and give `None` in the outer option.
pub(super) fn translate(
    doc: &Document<'_>,
    default: Option<&Contract>,
    id: &PromptId,
    path: &Path,
    provenance: &Arc<Provenance>,
    diagnostics: &mut Diagnostics,
) -> Option<Option<Contract>> {
    if doc.meta.tools.is_none() && doc.meta.output.is_none() {
        return Some(None);
    }
    // A variant translates what its default declared: it names nothing.
    let nothing_shared = SharedContract::default();
    let mut out = Reader::new(doc, path, &nothing_shared);
    let Some(default) = default else {
        let key = if doc.meta.tools.is_some() {
            "tools"
        } else {
            "output"
        };
        out.error(
            &[key],
            format!("a locale variant translates the contract of its default, and the default of `{id}` declares none"),
            Some(format!("declare `{key}` in the default file, then translate its descriptions here")),
        );
        diagnostics.extend(out.diagnostics);
        return None;
    };
    let mut tools = default.tools().to_vec();
    if let Some(given) = &doc.meta.tools {
        out.translate_tools(given, &mut tools);
    }
    let mut output = default.output().cloned();
    if let Some(given) = &doc.meta.output {
        out.translate_output(given, &mut output);
    }
    let failed = out.failed;
    diagnostics.extend(out.diagnostics);
    if failed {
        return None;
    }
    let contract = Contract::new(tools, output).ok()?;
    Some(Some(contract.with_provenance(Arc::clone(provenance))))
}

/// Reads one file's contract, collecting located diagnostics.
struct Reader<'d, 'a> {
    doc: &'d Document<'a>,
    path: &'d Path,
    /// The pack's shared tools and schemas, which the file may name.
    shared: &'d SharedContract,
    diagnostics: Vec<Diagnostic>,
    failed: bool,
}

impl<'d, 'a> Reader<'d, 'a> {
    fn new(doc: &'d Document<'a>, path: &'d Path, shared: &'d SharedContract) -> Self {
        Reader {
            doc,
            path,
            shared,
            diagnostics: Vec::new(),
            failed: false,
        }
    }

    /// The shared tool `name`, at `at`.
    fn shared_tool(&mut self, name: &str, at: &[&str]) -> Option<Tool> {
        match self.shared.tool(name) {
            Ok(shared) => {
                let parameters = JsonObject::from_value(shared.parameters.clone())?;
                let tool = Tool::new(name, shared.description.as_str(), parameters)
                    .with_origin(shared.file.as_str());
                self.provider_rules(&tool, at);
                Some(tool)
            }
            Err(hint) => {
                self.error(
                    at,
                    format!("the pack shares no tool `{name}` (tools/{name}.yaml)"),
                    Some(hint),
                );
                None
            }
        }
    }

    /// A schema at `at`: given whole, or the name of a shared one (whose
    /// file is returned with it).
    fn schema_or_shared(&mut self, value: &Value, at: &[&str]) -> Option<(Value, Option<String>)> {
        let Value::String(name) = value else {
            return self.schema(value, at).map(|schema| (schema, None));
        };
        match self.shared.schema(name) {
            Ok(shared) => Some((shared.schema.clone(), Some(shared.file.clone()))),
            Err(hint) => {
                self.error(
                    at,
                    format!("the pack shares no schema `{name}` (schemas/{name}.yaml)"),
                    Some(hint),
                );
                None
            }
        }
    }

    /// Tools and an output schema are declared in `tools` and `output`, or
    /// (before they were) as opaque model settings, not both.
    fn declared_once(&mut self, doc: &Document<'_>) {
        let settings = doc.meta.model.as_ref().and_then(Value::as_object);
        for (key, setting) in [("tools", "tools"), ("output", "response_format")] {
            let given = match key {
                "tools" => doc.meta.tools.is_some(),
                _ => doc.meta.output.is_some(),
            };
            if given && settings.is_some_and(|s| s.contains_key(setting)) {
                self.error(
                    &["model", setting],
                    format!("`model.{setting}` and `{key}` both declare the prompt's {key}"),
                    Some(format!(
                        "keep `{key}`: it is checked, translated and shaped for each provider"
                    )),
                );
            }
        }
    }

    /// A diagnostic at `key_path` (keys from the top of the front matter).
    fn located(&self, d: Diagnostic, key_path: &[&str]) -> Diagnostic {
        let keys: Vec<String> = key_path.iter().map(|k| (*k).to_owned()).collect();
        let d = d.in_file(self.path).key_path(keys.join("."));
        match self.doc.nested_key_span(&keys) {
            Some(span) => d.at(&LineIndex::new(self.doc.text()), span),
            None => d,
        }
    }

    fn error(&mut self, key_path: &[&str], message: String, suggestion: Option<String>) {
        let d = Diagnostic::error(DiagnosticCode::Contract, message).suggest(suggestion);
        self.diagnostics.push(self.located(d, key_path));
        self.failed = true;
    }

    fn warning(
        &mut self,
        code: DiagnosticCode,
        key_path: &[&str],
        message: String,
        suggestion: Option<String>,
    ) {
        let d = Diagnostic::warning(code, message).suggest(suggestion);
        self.diagnostics.push(self.located(d, key_path));
    }

    /// A mapping's keys outside `allowed` are errors, with the nearest.
    fn known_keys(&mut self, map: &Map<String, Value>, allowed: &[&str], at: &[&str], what: &str) {
        for key in map.keys().filter(|k| !allowed.contains(&k.as_str())) {
            let hint = suggest::nearest(key, allowed.iter().copied()).map_or_else(
                || format!("{what} takes {}", allowed.join(", ")),
                |k| format!("did you mean `{k}`?"),
            );
            let mut path = at.to_vec();
            path.push(key);
            self.error(&path, format!("{what} has no key `{key}`"), Some(hint));
        }
    }

    /// A text at `key` of `map`: `None` (and an error when `required`)
    /// when it is missing or not a text.
    fn text(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        at: &[&str],
        required: bool,
    ) -> Option<String> {
        let mut path = at.to_vec();
        path.push(key);
        match map.get(key) {
            Some(Value::String(text)) if !text.trim().is_empty() => Some(text.clone()),
            Some(Value::String(_)) | None if required => {
                self.error(
                    &path,
                    format!("`{key}` is missing or blank"),
                    Some(format!("give the `{key}`")),
                );
                None
            }
            Some(Value::String(_)) | None => None,
            Some(other) => {
                self.error(
                    &path,
                    format!("`{key}` is {}, not a text", kind(other)),
                    None,
                );
                None
            }
        }
    }

    /// One tool of a default file's list.
    fn tool(&mut self, index: usize, item: &Value) -> Option<Tool> {
        let i = index.to_string();
        let at = ["tools", i.as_str()];
        if let Value::String(name) = item {
            return self.shared_tool(name, &at);
        }
        let Value::Object(map) = item else {
            self.error(
                &at,
                format!("tool {} is {}, not a mapping", index + 1, kind(item)),
                None,
            );
            return None;
        };
        self.known_keys(map, &TOOL_KEYS, &at, "a tool");
        let name = self.text(map, "name", &at, true);
        let description = self.text(map, "description", &at, true);
        let parameters = match map.get("parameters") {
            None => Some((
                serde_json::json!({ "type": "object", "properties": {} }),
                None,
            )),
            Some(schema) => self.schema_or_shared(schema, &["tools", i.as_str(), "parameters"]),
        };
        let (name, description, (parameters, origin)) = (name?, description?, parameters?);
        let mut tool = Tool::new(name, description, JsonObject::from_value(parameters)?);
        if let Some(origin) = origin {
            tool = tool.with_origin(origin);
        }
        self.provider_rules(&tool, &at);
        Some(tool)
    }

    /// What a provider would refuse of `tool` (at `at`), as warnings.
    fn provider_rules(&mut self, tool: &Tool, at: &[&str]) {
        let name = tool.name();
        let key = |last: &'static str| {
            let mut path = at.to_vec();
            path.push(last);
            path
        };
        if !is_portable_tool_name(name) {
            self.warning(
                DiagnosticCode::ProviderRule,
                &key("name"),
                format!("the tool name `{name}` is not `^[a-zA-Z0-9_-]{{1,64}}$`: OpenAI, Anthropic and Gemini refuse it"),
                Some("use letters, digits, `_` and `-`, at most 64".to_owned()),
            );
        }
        if tool.parameters().get("type") != Some(Value::String("object".to_owned())) {
            self.warning(
                DiagnosticCode::ProviderRule,
                &key("parameters"),
                format!("the parameters of `{name}` are not an object schema (`type: object`): Anthropic's `input_schema` must be one"),
                Some("wrap the arguments in `type: object` with `properties`".to_owned()),
            );
        }
    }

    /// Two tools of one name are an error at the second.
    fn unique_names(&mut self, tools: &[Tool]) {
        for (i, tool) in tools.iter().enumerate() {
            if tools[..i].iter().any(|t| t.name() == tool.name()) {
                let index = i.to_string();
                self.error(
                    &["tools", index.as_str(), "name"],
                    format!("two tools are named `{}`", tool.name()),
                    Some("tool names must be unique: rename one".to_owned()),
                );
            }
        }
    }

    /// A default file's `output`.
    fn output(&mut self, value: &Value, id: &PromptId) -> Option<OutputSchema> {
        if let Value::String(name) = value {
            // `output: audit_verdict`: the shared schema of that name.
            let shorthand = serde_json::json!({ "name": name, "schema": name });
            return self.output(&shorthand, id);
        }
        let Value::Object(map) = value else {
            self.error(
                &["output"],
                format!("`output` is {}, not a mapping", kind(value)),
                Some("give `schema:` (and `name:`, `description:`)".to_owned()),
            );
            return None;
        };
        if map.contains_key("properties") {
            self.error(
                &["output", "properties"],
                "`output.properties` translates descriptions in a locale variant; a default file gives the `schema`".to_owned(),
                Some("move the properties into `schema: { type: object, properties: ... }`".to_owned()),
            );
        }
        self.known_keys(
            map,
            &[&OUTPUT_KEYS[..], &["properties"]].concat(),
            &["output"],
            "`output`",
        );
        let name = match self.text(map, "name", &["output"], false) {
            Some(name) => name,
            None => id
                .as_str()
                .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_"),
        };
        let description = self.text(map, "description", &["output"], false);
        let Some(schema) = map.get("schema") else {
            self.error(
                &["output", "schema"],
                "`output` has no `schema`".to_owned(),
                Some("give the JSON Schema of the answer under `schema:`".to_owned()),
            );
            return None;
        };
        let (schema, origin) = self.schema_or_shared(schema, &["output", "schema"])?;
        if !is_portable_tool_name(&name) {
            self.warning(
                DiagnosticCode::ProviderRule,
                &["output", "name"],
                format!("the output schema's name `{name}` is not `^[a-zA-Z0-9_-]{{1,64}}$`: OpenAI refuses it"),
                None,
            );
        }
        for (pointer, lacks) in promptreg_core::provider::strict_problems(&schema) {
            let mut path = vec!["output".to_owned(), "schema".to_owned()];
            path.extend(json_schema::pointer_path(&pointer));
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            self.warning(
                DiagnosticCode::ProviderRule,
                &path,
                format!("OpenAI enforces an output schema in strict mode only, which needs {lacks} here: without it, an answer may not match"),
                Some("close every object with `additionalProperties: false` and list every property in `required` (an optional one as `type: [T, \"null\"]`)".to_owned()),
            );
        }
        let mut output = OutputSchema::new(name, JsonObject::from_value(schema)?);
        if let Some(description) = description {
            output = output.with_description(description);
        }
        if let Some(origin) = origin {
            output = output.with_origin(origin);
        }
        Some(output)
    }

    /// A JSON Schema at `at`, checked; `None` after an error.
    fn schema(&mut self, value: &Value, at: &[&str]) -> Option<Value> {
        let mut ok = true;
        for problem in json_schema::check(value) {
            let mut path: Vec<&str> = at.to_vec();
            path.extend(problem.path.iter().map(String::as_str));
            match problem.is_error {
                true => {
                    ok = false;
                    self.error(&path, problem.message, problem.suggestion);
                }
                false => self.warning(
                    DiagnosticCode::UnknownSchemaKeyword,
                    &path,
                    problem.message,
                    problem.suggestion,
                ),
            }
        }
        match (ok, value) {
            (true, Value::Object(_)) => Some(value.clone()),
            (true, _) => {
                self.error(
                    at,
                    format!("a schema here must be a mapping, not {}", kind(value)),
                    None,
                );
                None
            }
            (false, _) => None,
        }
    }

    /// A variant's `tools`: translations by tool name.
    fn translate_tools(&mut self, given: &Value, tools: &mut [Tool]) {
        let Value::Object(map) = given else {
            self.error(
                &["tools"],
                format!(
                    "a locale variant's `tools` is {}: it translates descriptions by tool name",
                    kind(given)
                ),
                Some(
                    "write `tools: { NAME: { description: ..., parameters: { PARAM: ... } } }`"
                        .to_owned(),
                ),
            );
            return;
        };
        for (name, translation) in map {
            let at = ["tools", name.as_str()];
            let Some(tool) = tools.iter_mut().find(|t| t.name() == name) else {
                let hint = suggest::nearest(name, tools.iter().map(Tool::name))
                    .map(|n| format!("did you mean `{n}`?"));
                self.error(&at, format!("the default declares no tool `{name}`"), hint);
                continue;
            };
            let Value::Object(translation) = translation else {
                self.error(
                    &at,
                    format!(
                        "the translation of `{name}` is {}, not a mapping",
                        kind(translation)
                    ),
                    None,
                );
                continue;
            };
            self.known_keys(
                translation,
                &TOOL_TRANSLATION_KEYS,
                &at,
                "a tool's translation",
            );
            if let Some(description) = self.text(translation, "description", &at, false) {
                *tool = tool.with_description(description);
            }
            if let Some(parameters) = translation.get("parameters") {
                let mut schema = tool.parameters().to_value();
                self.describe_properties(
                    parameters,
                    &mut schema,
                    &["tools", name.as_str(), "parameters"],
                );
                if let Some(schema) = JsonObject::from_value(schema) {
                    *tool = tool.with_parameters(schema);
                }
            }
        }
    }

    /// A variant's `output`: its description and its properties'.
    fn translate_output(&mut self, given: &Value, output: &mut Option<OutputSchema>) {
        let Some(current) = output.as_mut() else {
            self.error(
                &["output"],
                "the default declares no output schema to translate".to_owned(),
                Some("declare `output` in the default file".to_owned()),
            );
            return;
        };
        let Value::Object(map) = given else {
            self.error(
                &["output"],
                format!(
                    "a locale variant's `output` is {}, not a mapping",
                    kind(given)
                ),
                None,
            );
            return;
        };
        for key in ["name", "schema"] {
            if map.contains_key(key) {
                self.error(
                    &["output", key],
                    format!("a locale variant cannot change the output's `{key}`: the application reads the same answer in every locale"),
                    Some("translate `description` and `properties` only".to_owned()),
                );
            }
        }
        self.known_keys(
            map,
            &[&OUTPUT_TRANSLATION_KEYS[..], &["name", "schema"]].concat(),
            &["output"],
            "a locale variant's `output`",
        );
        let mut schema = current.schema().to_value();
        if let Some(properties) = map.get("properties") {
            self.describe_properties(properties, &mut schema, &["output", "properties"]);
        }
        let mut translated = match JsonObject::from_value(schema) {
            Some(schema) => current.with_schema(schema),
            None => current.clone(),
        };
        let description = self.text(map, "description", &["output"], false);
        if let Some(description) = description {
            translated = translated.with_description(description);
        }
        *current = translated;
    }

    /// Sets the descriptions `given` (by property name, `a.b` for a nested
    /// property) in `schema`.
    fn describe_properties(&mut self, given: &Value, schema: &mut Value, at: &[&str]) {
        let Value::Object(given) = given else {
            self.error(
                at,
                format!(
                    "`{}` is {}: give descriptions by property name",
                    at.join("."),
                    kind(given)
                ),
                None,
            );
            return;
        };
        for (name, description) in given {
            let mut path = at.to_vec();
            path.push(name);
            let Value::String(description) = description else {
                self.error(
                    &path,
                    format!(
                        "the description of `{name}` is {}, not a text",
                        kind(description)
                    ),
                    None,
                );
                continue;
            };
            match property_mut(schema, name) {
                Some(Value::Object(property)) => {
                    property.insert("description".to_owned(), Value::String(description.clone()));
                }
                _ => {
                    let names = property_names(schema);
                    let hint = suggest::nearest(name, names.iter().map(String::as_str))
                        .map(|n| format!("did you mean `{n}`?"));
                    self.error(&path, format!("the schema has no property `{name}`"), hint);
                }
            }
        }
    }
}

/// The schema of property `path` (`a.b`: property `b` of property `a`, or
/// of its items when `a` is a list).
fn property_mut<'v>(schema: &'v mut Value, path: &str) -> Option<&'v mut Value> {
    path.split('.').try_fold(schema, |schema, name| {
        let schema = match schema.get("properties").is_some() {
            true => schema,
            false => schema.get_mut("items")?,
        };
        schema.get_mut("properties")?.get_mut(name)
    })
}

/// The names of every property of `schema`, nested ones as `a.b`.
fn property_names(schema: &Value) -> Vec<String> {
    fn go(schema: &Value, prefix: &str, out: &mut Vec<String>, depth: usize) {
        let schema = match schema.get("properties") {
            Some(_) => schema,
            None => schema.get("items").unwrap_or(schema),
        };
        let Some(Value::Object(properties)) = schema.get("properties") else {
            return;
        };
        for (name, property) in properties {
            let full = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}.{name}")
            };
            if depth < json_schema::MAX_SCHEMA_DEPTH {
                go(property, &full, out, depth + 1);
            }
            out.push(full);
        }
    }
    let mut out = Vec::new();
    go(schema, "", &mut out, 0);
    out
}

/// `^[a-zA-Z0-9_-]{1,64}$`: what OpenAI, Anthropic and Gemini all take.
fn is_portable_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
