//! Front matter: YAML between `---` lines at the top of a prompt file, as in
//! `.prompty` files and most Markdown tools.
//!
//! ```text
//! ---
//! description: Active-goal agent system prompt
//! template: true
//! variables:
//!   goal_id: { required: true, type: string }
//!   tone: { default: calm }
//! pin_head: "[PI GOAL ACTIVE goalId={{ goal_id }}]"
//! pin_tail:
//!   - Verify before you claim completion.
//! model:
//!   model: gpt-4o
//!   temperature: 0.2
//! metadata:
//!   owner: goals-team
//! ---
//! The body.
//! ```

// Descriptions, pins and variable declarations serve pack files; a
// user's file only reads `template` and its body.
#![cfg_attr(not(feature = "packs"), allow(dead_code))]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use serde_json::Value;

use crate::diagnostic::{Diagnostic, DiagnosticCode, LineIndex, Position};
use crate::json_object::JsonObject;
use crate::model_check;
use crate::pin_place::PinPlace;
use crate::prompt_file::non_blank;
use crate::renderer::Renderer;
use crate::snippet::Snippets;
use crate::suggest;
use crate::template::{Template, Variable, VariableType};

/// The front matter key of the pinned blocks before the body.
pub(crate) const PIN_HEAD: &str = "pin_head";
/// The front matter key of the pinned blocks after the body.
pub(crate) const PIN_TAIL: &str = "pin_tail";

/// What front matter may say.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FrontMatter {
    pub(crate) description: Option<String>,
    /// `None` when the file does not say: literal, but `check` warns about
    /// template syntax in it (`template: false` says the braces are meant).
    pub(crate) template: Option<bool>,
    #[serde(default)]
    variables: BTreeMap<String, Option<VariableSpec>>,
    #[serde(default)]
    pin_head: PinTexts,
    #[serde(default)]
    pin_tail: PinTexts,
    /// Model settings: free-form, the well-known keys checked
    /// (`model_check`).
    /// Any value, so that one of another type than an object gets its own
    /// message (`check_model`).
    pub(crate) model: Option<Value>,
    /// Free data about the prompt: an object.
    pub(crate) metadata: Option<Value>,
    /// The tools the prompt offers: in a default file a list of `name`,
    /// `description` and `parameters` (a JSON Schema); in a locale variant
    /// their descriptions translated, by tool name. Any value here, read
    /// by `pack::contract` with located messages.
    pub(crate) tools: Option<Value>,
    /// The shape of the answer: `name`, `description` and `schema` in a
    /// default file; `description` and `properties` (descriptions by
    /// property) in a locale variant.
    pub(crate) output: Option<Value>,
    /// `text` (the default) or `chat`: any text, so that another value
    /// gets "did you mean" (`pack::chat`).
    pub(crate) kind: Option<String>,
    /// The custom roles a chat file's headings may use.
    pub(crate) roles: Option<Vec<String>>,
    /// The message of a chat file that pins and appenders attach to.
    pub(crate) attach: Option<Attach>,
    /// A pack's locale variant: the default's text it translates
    /// (`pack::translation`), any value here so that a malformed record
    /// gets its own message.
    pub(crate) translated_from: Option<Value>,
}

/// Front matter `attach`: a message's number (from 1), or a role
/// (`system`: its first message; `last-user`: its last).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum Attach {
    Number(usize),
    Role(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct VariableSpec {
    required: Option<bool>,
    default: Option<serde_json::Value>,
    #[serde(rename = "type")]
    kind: Option<VariableType>,
    schema: Option<serde_json::Value>,
    description: Option<String>,
}

/// The texts of the pinned blocks on one side: one text or a list.
#[derive(Debug, Default, Deserialize)]
#[serde(untagged)]
enum PinTexts {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

impl PinTexts {
    fn texts(&self) -> &[String] {
        match self {
            PinTexts::None => &[],
            PinTexts::One(text) => std::slice::from_ref(text),
            PinTexts::Many(texts) => texts,
        }
    }
}

/// A prompt file split into its front matter and body.
#[derive(Debug)]
pub(crate) struct Document<'a> {
    pub(crate) meta: FrontMatter,
    pub(crate) body: &'a str,
    /// The whole file.
    text: &'a str,
    /// Where the YAML between the fences starts and ends in `text`.
    front_matter: std::ops::Range<usize>,
    /// How many lines precede the body in the file.
    body_line_offset: usize,
    /// The snippets its templates may include: a pack's, for its files.
    snippets: Option<Arc<Snippets>>,
}

/// The front matter fences: `---` alone on a line.
pub(crate) fn is_fence(line: &str) -> bool {
    line.trim_end() == "---"
}

impl<'a> Document<'a> {
    /// Splits `text`. A file whose first line is `---` has front matter,
    /// which ends at the next `---` line.
    pub(crate) fn parse(text: &'a str, path: &Path) -> Result<Self, Diagnostic> {
        Document::parse_all(text, path).map_err(|mut problems| problems.swap_remove(0))
    }

    /// [`parse`](Self::parse), with every problem it finds (each unknown
    /// key of the front matter, not only the first): never an empty list.
    pub(crate) fn parse_all(text: &'a str, path: &Path) -> Result<Self, Vec<Diagnostic>> {
        let mut lines = text.split_inclusive('\n');
        let starts_with_fence = lines.next().is_some_and(is_fence);
        if !starts_with_fence {
            return Ok(Document {
                meta: FrontMatter::default(),
                body: text,
                text,
                front_matter: 0..0,
                body_line_offset: 0,
                snippets: None,
            });
        }
        let yaml_start = text.find('\n').map_or(text.len(), |i| i + 1);
        let mut offset = yaml_start;
        for (line_count, line) in (2..).zip(lines) {
            if is_fence(line) {
                let yaml = &text[yaml_start..offset];
                let document = Document {
                    meta: parse_yaml(yaml, path)?,
                    body: &text[offset + line.len()..],
                    text,
                    front_matter: yaml_start..offset,
                    body_line_offset: line_count,
                    snippets: None,
                };
                document.check_schemas(path)?;
                document.check_defaults(path).map_err(|d| vec![d])?;
                return Ok(document);
            }
            offset += line.len();
        }
        Err(vec![
            Diagnostic::error(
                DiagnosticCode::FrontMatter,
                "front matter is not closed: add a `---` line after it",
            )
            .in_file(path)
            .at(&LineIndex::new(text), 0..3),
        ])
    }

    /// Lets the file's templates include `snippets` (a pack's).
    pub(crate) fn with_snippets(mut self, snippets: &Arc<Snippets>) -> Self {
        self.snippets = Some(Arc::clone(snippets));
        self
    }

    /// The declared variables.
    pub(crate) fn variables(&self) -> Vec<Variable> {
        self.meta
            .variables
            .iter()
            .map(|(name, spec)| {
                let spec = spec.as_ref();
                let default = spec.and_then(|s| s.default.clone());
                Variable {
                    name: name.clone(),
                    required: spec.and_then(|s| s.required).unwrap_or(default.is_none()),
                    default,
                    kind: spec.and_then(|s| s.kind),
                    schema: spec
                        .and_then(|s| s.schema.as_ref())
                        .and_then(|schema| crate::json_schema::variable_schema(name, schema)),
                    description: spec.and_then(|s| s.description.clone()),
                }
            })
            .collect()
    }

    /// Whether the file is a template (`template: true`).
    pub(crate) fn is_template(&self) -> bool {
        self.meta.template == Some(true)
    }

    /// The byte offset in the file where the body starts (the body runs to
    /// the end of the file).
    pub(crate) fn body_offset(&self, text: &str) -> usize {
        text.len() - self.body.len()
    }

    /// Every variable's `schema` is a JSON Schema a render can check
    /// ([`json_schema::check`](crate::json_schema::check)), each error at
    /// its key.
    fn check_schemas(&self, path: &Path) -> Result<(), Vec<Diagnostic>> {
        let mut errors = Vec::new();
        for (name, spec) in &self.meta.variables {
            let Some(schema) = spec.as_ref().and_then(|s| s.schema.as_ref()) else {
                continue;
            };
            let problems = crate::json_schema::check(schema);
            for problem in problems.into_iter().filter(|p| p.is_error) {
                let mut keys = vec!["variables".to_owned(), name.clone(), "schema".to_owned()];
                keys.extend(problem.path);
                let d = Diagnostic::error(DiagnosticCode::FrontMatter, problem.message)
                    .in_file(path)
                    .key_path(keys.join("."))
                    .suggest(problem.suggestion);
                let span = self
                    .nested_key_span(&keys)
                    .or_else(|| self.variable_span(name));
                errors.push(match span {
                    Some(span) => d.at(&LineIndex::new(self.text), span),
                    None => d,
                });
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// Every declared default has its variable's declared type and
    /// matches its schema.
    fn check_defaults(&self, path: &Path) -> Result<(), Diagnostic> {
        let mismatch = self.variables().into_iter().find_map(|v| {
            let schema = || {
                let why = v.schema.as_ref()?.violation(v.default.as_ref()?)?;
                Some(format!(
                    "the declared `default` of `{}` does not match its schema: {why}",
                    v.name
                ))
            };
            Some((v.default_mismatch().or_else(schema)?, v.name))
        });
        let Some((message, name)) = mismatch else {
            return Ok(());
        };
        let d = Diagnostic::error(DiagnosticCode::FrontMatter, message)
            .in_file(path)
            .suggest(Some(
                "make the default match the declared `type` and `schema`, or change them"
                    .to_owned(),
            ));
        Err(match self.variable_span(&name) {
            Some(span) => d.at(&LineIndex::new(self.text), span),
            None => d,
        })
    }

    /// Every problem of the model settings and metadata, each an error at
    /// its key: `model` and `metadata` are objects, and the settings'
    /// well-known keys have their types. A file with any is not loaded.
    pub(crate) fn settings_problems(&self, path: &Path) -> Vec<Diagnostic> {
        let shapes = [
            ("model", &self.meta.model),
            ("metadata", &self.meta.metadata),
        ]
        .into_iter()
        .filter_map(|(key, value)| not_an_object(key, value.as_ref()?));
        let settings = self.meta.model.as_ref().and_then(Value::as_object);
        let problems = shapes.chain(settings.map(model_check::check).unwrap_or_default());
        let error = |message| Diagnostic::error(DiagnosticCode::ModelSettings, message);
        problems
            .map(|problem| self.setting_diagnostic(path, problem, error))
            .collect()
    }

    /// A warning for every model setting key no provider convention knows
    /// and `extra_keys` does not list.
    pub(crate) fn settings_warnings(&self, path: &Path, extra_keys: &[String]) -> Vec<Diagnostic> {
        let Some(settings) = self.meta.model.as_ref().and_then(Value::as_object) else {
            return Vec::new();
        };
        let warning = |message| Diagnostic::warning(DiagnosticCode::UnknownModelSetting, message);
        model_check::unknown_keys(settings, extra_keys)
            .into_iter()
            .map(|problem| self.setting_diagnostic(path, problem, warning))
            .collect()
    }

    fn setting_diagnostic(
        &self,
        path: &Path,
        problem: model_check::SettingProblem,
        new: impl Fn(String) -> Diagnostic,
    ) -> Diagnostic {
        let d = new(problem.message)
            .in_file(path)
            .key_path(problem.path.join("."))
            .suggest(Some(problem.suggestion));
        match self.nested_key_span(&problem.path) {
            Some(span) => d.at(&LineIndex::new(self.text), span),
            None => d,
        }
    }

    /// The model settings, if the front matter gives any.
    pub(crate) fn model_settings(&self) -> Option<JsonObject> {
        self.meta.model.clone().and_then(JsonObject::from_value)
    }

    /// The metadata, if the front matter gives any.
    pub(crate) fn metadata(&self) -> Option<JsonObject> {
        self.meta.metadata.clone().and_then(JsonObject::from_value)
    }

    /// The byte range of the deepest key of `path` (top-level key first,
    /// then nested keys, list positions as numbers) found in block-style
    /// YAML; the top-level key's when a nested one is written inline.
    pub(crate) fn nested_key_span(&self, path: &[String]) -> Option<std::ops::Range<usize>> {
        let (top, nested) = path.split_first()?;
        let mut found = self.key_span(top)?;
        let mut indent = 0;
        for key in nested {
            match self.child_span(found.start, indent, key) {
                Some((span, child_indent)) => (found, indent) = (span, child_indent),
                None => break,
            }
        }
        Some(found)
    }

    /// Below the key at `start` (indented by `indent`), the span and indent
    /// of child `key`: a `key:` line, or for a number the item of a `- `
    /// list at that position.
    fn child_span(
        &self,
        start: usize,
        indent: usize,
        key: &str,
    ) -> Option<(std::ops::Range<usize>, usize)> {
        let yaml_end = self.front_matter.end;
        let mut offset = start + self.text.get(start..yaml_end)?.find('\n')? + 1;
        let position = key.parse::<usize>().ok();
        let mut items = 0;
        for line in self.text.get(offset..yaml_end)?.split_inclusive('\n') {
            let content = line.trim_start();
            let at = line.len() - content.len();
            if !content.trim().is_empty() && at <= indent {
                return None;
            }
            let (content, at) = match content.strip_prefix("- ") {
                Some(item) if position.is_some() => {
                    if position == Some(items) {
                        return Some((offset + at..offset + at + 1, at));
                    }
                    items += 1;
                    (item, at + 2)
                }
                Some(item) => (item, at + 2),
                None => (content, at),
            };
            let is_key = content
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'));
            if position.is_none() && is_key {
                return Some((offset + at..offset + at + key.len(), at));
            }
            offset += line.len();
        }
        None
    }

    /// The byte range of a declared variable's name in the file: the first
    /// indented `name:` line after the `variables` key.
    pub(crate) fn variable_span(&self, name: &str) -> Option<std::ops::Range<usize>> {
        let start = self.key_span("variables")?.start;
        let mut offset = start;
        for line in self
            .text
            .get(start..self.front_matter.end)?
            .split_inclusive('\n')
        {
            let indented = line.trim_start();
            let indent = line.len() - indented.len();
            let declares = indent > 0
                && indented
                    .strip_prefix(name)
                    .is_some_and(|rest| rest.trim_start().starts_with(':'));
            if declares {
                return Some(offset + indent..offset + indent + name.len());
            }
            offset += line.len();
        }
        None
    }

    /// Whether the front matter gives model settings or metadata.
    pub(crate) fn has_settings(&self) -> bool {
        self.meta.model.is_some() || self.meta.metadata.is_some()
    }

    /// Whether the front matter says anything only a chat prompt may say.
    pub(crate) fn has_chat_keys(&self) -> bool {
        self.meta.kind.is_some() || self.meta.roles.is_some() || self.meta.attach.is_some()
    }

    /// Whether the front matter declares pinned blocks.
    pub(crate) fn has_pins(&self) -> bool {
        !self.meta.pin_head.texts().is_empty() || !self.meta.pin_tail.texts().is_empty()
    }

    /// The body as a renderer: a template when the front matter says so.
    pub(crate) fn body_renderer(&self, path: &Path) -> Result<Renderer, Diagnostic> {
        self.renderer(path, self.body, self.body_line_offset)
    }

    /// Whether the front matter declares variables.
    pub(crate) fn declares_variables(&self) -> bool {
        !self.meta.variables.is_empty()
    }

    /// The body as a renderer, using `variables` when the front matter
    /// declares none (a locale variant inherits its default's).
    pub(crate) fn body_renderer_with(
        &self,
        path: &Path,
        variables: &[Variable],
    ) -> Result<Renderer, Diagnostic> {
        if !self.is_template() || self.declares_variables() {
            return self.body_renderer(path);
        }
        self.compile(path, self.body, self.body_line_offset, variables)
    }

    /// The pinned head and tail blocks as renderers.
    pub(crate) fn pin_renderers(
        &self,
        path: &Path,
    ) -> Result<(Vec<Renderer>, Vec<Renderer>), Diagnostic> {
        self.pin_renderers_with(path, &self.variables())
    }

    /// The pinned blocks as renderers, using `variables` when the front
    /// matter declares none (a locale variant inherits its default's).
    pub(crate) fn pin_renderers_with(
        &self,
        path: &Path,
        inherited: &[Variable],
    ) -> Result<(Vec<Renderer>, Vec<Renderer>), Diagnostic> {
        let variables = match self.declares_variables() {
            true => self.variables(),
            false => inherited.to_vec(),
        };
        let build = |blocks: &PinTexts, key: &str| -> Result<Vec<Renderer>, Diagnostic> {
            let places = self
                .key_span(key)
                .map(|span| PinPlace::under_key(self.text, span.start))
                .unwrap_or_default();
            let line_offset = self.pin_line_offset(key);
            let compile = |(i, text): (usize, &String)| match places.get(i) {
                Some(place) => self
                    .compile(path, text, 0, &variables)
                    .map_err(|problem| place.locate(problem, self.text)),
                None => self.compile(path, text, line_offset, &variables),
            };
            blocks.texts().iter().enumerate().map(compile).collect()
        };
        Ok((
            build(&self.meta.pin_head, PIN_HEAD)?,
            build(&self.meta.pin_tail, PIN_TAIL)?,
        ))
    }

    /// How many pinned blocks the front matter gives under `key`
    /// (`pin_head` or `pin_tail`).
    pub(crate) fn pin_count(&self, key: &str) -> usize {
        self.pin_texts(key).len()
    }

    /// The texts of the pinned blocks under `key` (`pin_head` or
    /// `pin_tail`), as written.
    pub(crate) fn pin_texts(&self, key: &str) -> &[String] {
        match key {
            PIN_HEAD => self.meta.pin_head.texts(),
            _ => self.meta.pin_tail.texts(),
        }
    }

    /// The whole file.
    pub(crate) fn text(&self) -> &'a str {
        self.text
    }

    /// How many file lines precede the first line of the blocks under
    /// `key`: a block scalar (`|`, `>`) or a list starts on the line after
    /// the key, a plain or quoted text on the key's line. Lines of a list's
    /// later items count from its first.
    fn pin_line_offset(&self, key: &str) -> usize {
        let Some(span) = self.key_span(key) else {
            return 1;
        };
        let line = Position::of_offset(self.text, span.start).line;
        let rest = self.text[span.end..].lines().next().unwrap_or_default();
        let value = rest.trim_start().trim_start_matches(':').trim();
        match value.is_empty() || value.starts_with(['|', '>']) {
            true => line,
            false => line - 1,
        }
    }

    /// The byte range of a top-level front matter key in the file.
    pub(crate) fn key_span(&self, key: &str) -> Option<std::ops::Range<usize>> {
        let yaml = self.text.get(self.front_matter.clone())?;
        let mut start = self.front_matter.start;
        for line in yaml.split_inclusive('\n') {
            let is_key = line
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'));
            if is_key {
                return Some(start..start + key.len());
            }
            start += line.len();
        }
        None
    }

    fn renderer(
        &self,
        path: &Path,
        text: &str,
        line_offset: usize,
    ) -> Result<Renderer, Diagnostic> {
        self.compile(path, text, line_offset, &self.variables())
    }

    /// `text` as a renderer: a template, with `variables`, when the front
    /// matter says so; `line_offset` lines of the file precede it.
    pub(crate) fn compile(
        &self,
        path: &Path,
        text: &str,
        line_offset: usize,
        variables: &[Variable],
    ) -> Result<Renderer, Diagnostic> {
        if !self.is_template() {
            return Ok(Renderer::text(text));
        }
        Template::compile_with(
            path,
            text,
            line_offset,
            variables.to_vec(),
            self.snippets.as_ref(),
        )
        .map(Renderer::from_compute)
    }
}

/// The problem with `model` or `metadata` (`key`) when `value` is not an
/// object.
fn not_an_object(key: &str, value: &Value) -> Option<model_check::SettingProblem> {
    if value.is_object() {
        return None;
    }
    let example = match key {
        "model" => "model: { model: gpt-4o, temperature: 0.2 }",
        _ => "metadata: { owner: your-team }",
    };
    Some(model_check::SettingProblem {
        path: vec![key.to_owned()],
        message: format!(
            "`{key}` must be an object, not {}",
            model_check::kind(value)
        ),
        suggestion: format!("give its keys, indented below it or as `{example}`"),
    })
}

fn parse_yaml(yaml: &str, path: &Path) -> Result<FrontMatter, Vec<Diagnostic>> {
    if non_blank(yaml).is_none() {
        return Ok(FrontMatter::default());
    }
    let at = |d: Diagnostic, location: Option<serde_saphyr::Location>| {
        let mut d = d.in_file(path);
        if let Some(location) = location {
            // The YAML starts on the line after the opening fence.
            d.position = Some(Position {
                line: location.line() as usize + 1,
                column: location.column() as usize,
            });
        }
        d.with_excerpt(&LineIndex::new(yaml), 1)
    };
    serde_saphyr::from_str::<Option<FrontMatter>>(yaml)
        .map(Option::unwrap_or_default)
        .map_err(|e| {
            let unknown = unknown_top_level_keys(yaml, &e);
            if !unknown.is_empty() {
                return unknown
                    .into_iter()
                    .map(|(d, location)| at(d, Some(location)))
                    .collect();
            }
            let (message, suggestion) = explain(&e);
            let d =
                Diagnostic::error(DiagnosticCode::FrontMatter, message).suggest(Some(suggestion));
            vec![at(d, e.location())]
        })
}

/// For an unknown key of the front matter's top level, every unknown key
/// there, each with where it is: `check` reports them all at once. Empty
/// for any other error.
fn unknown_top_level_keys(
    yaml: &str,
    e: &serde_saphyr::Error,
) -> Vec<(Diagnostic, serde_saphyr::Location)> {
    let serde_saphyr::Error::SerdeUnknownField { expected, .. } = e.without_snippet() else {
        return Vec::new();
    };
    if !expected.contains(&PIN_HEAD) {
        return Vec::new();
    }
    let Ok(keys) = serde_saphyr::from_str::<TopLevelKeys>(yaml) else {
        return Vec::new();
    };
    keys.0
        .into_iter()
        .filter(|key| !expected.contains(&key.value.as_str()))
        .map(|key| {
            let (message, hint) = unknown_key(&key.value, expected);
            let d = Diagnostic::error(DiagnosticCode::FrontMatter, message).suggest(Some(hint));
            (d, key.referenced)
        })
        .collect()
}

/// The keys of a YAML mapping, each with its place, values skipped.
struct TopLevelKeys(Vec<serde_saphyr::Spanned<String>>);

impl<'de> Deserialize<'de> for TopLevelKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = TopLevelKeys;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping")
            }

            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<TopLevelKeys, M::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key()? {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(TopLevelKeys(keys))
            }
        }
        deserializer.deserialize_map(Keys)
    }
}

/// "unknown front matter key", and "did you mean" among `expected`.
fn unknown_key(field: &str, expected: &[&str]) -> (String, String) {
    let known = || {
        let names: Vec<String> = expected.iter().map(|k| format!("`{k}`")).collect();
        format!("the keys here are {}", names.join(", "))
    };
    let hint = suggest::did_you_mean(field, expected.iter().copied()).unwrap_or_else(known);
    (format!("unknown front matter key `{field}`"), hint)
}

/// The message and suggestion for a front matter error: a misspelt key
/// (`templat:`) gets "did you mean", among the keys allowed where it is.
fn explain(e: &serde_saphyr::Error) -> (String, String) {
    if let serde_saphyr::Error::SerdeUnknownField {
        field, expected, ..
    } = e.without_snippet()
    {
        return unknown_key(field, expected);
    }
    let summary = yaml_error_summary(e);
    let hint = suggest::for_serde_message(&summary).unwrap_or_else(|| {
        "front matter may set `description`, `template`, `variables`, `pin_head`, `pin_tail`, `model` (an object), `metadata` (an object), `kind`, `roles` and `attach`"
            .to_owned()
    });
    (format!("invalid front matter: {summary}"), hint)
}

/// The first line of the parser's message, without its source snippet and
/// the position the diagnostic carries anyway.
pub(crate) fn yaml_error_summary(e: &serde_saphyr::Error) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or("").trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    match first
        .strip_prefix("line ")
        .and_then(|rest| rest.split_once(": "))
    {
        Some((position, message)) if position.contains("column") => message.to_owned(),
        _ => first.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Document<'_>, Diagnostic> {
        Document::parse(text, Path::new("p.md"))
    }

    fn problems(text: &str) -> Vec<Diagnostic> {
        parse(text).unwrap().settings_problems(Path::new("p.md"))
    }

    #[test]
    fn a_file_without_front_matter_is_all_body() {
        let doc = parse("Plain {{ text }}.\n").unwrap();
        assert_eq!(doc.body, "Plain {{ text }}.\n");
        assert!(!doc.is_template());
    }

    #[test]
    fn front_matter_is_split_from_the_body() {
        let doc = parse("---\ndescription: A prompt\ntemplate: true\nvariables:\n  a:\n  b: { default: 2 }\n---\nBody\n").unwrap();
        assert_eq!(doc.body, "Body\n");
        assert_eq!(doc.meta.description.as_deref(), Some("A prompt"));
        assert!(doc.is_template());
        let vars = doc.variables();
        assert_eq!((vars[0].name.as_str(), vars[0].required), ("a", true));
        assert_eq!((vars[1].name.as_str(), vars[1].required), ("b", false));
        assert_eq!(doc.body_line_offset, 7);
    }

    #[test]
    fn pins_take_one_block_or_a_list() {
        let doc = parse("---\npin_head: H\npin_tail: [T1, T2]\n---\nB").unwrap();
        let (head, tail) = doc.pin_renderers(Path::new("p.md")).unwrap();
        assert_eq!(head.len(), 1);
        assert_eq!(tail.len(), 2);
        assert_eq!(tail[1].as_text(), Some("T2"));
    }

    #[test]
    fn a_template_error_in_a_pin_names_the_line_of_the_pin() {
        let path = Path::new("p.md");
        for (text, line) in [
            (
                "---\ntemplate: true\npin_tail: |\n  ok\n  {% if %}\n---\nB",
                5,
            ),
            ("---\ntemplate: true\npin_head: \"{% if %}\"\n---\nB", 3),
            (
                "---\ntemplate: true\npin_head: x\npin_tail:\n  - \"{% if %}\"\n---\nB",
                5,
            ),
        ] {
            let err = parse(text).unwrap().pin_renderers(path).unwrap_err();
            assert_eq!(err.position.map(|p| p.line), Some(line), "{text}");
        }
    }

    #[test]
    fn unclosed_front_matter_is_an_error() {
        let err = parse("---\ndescription: x\nBody").unwrap_err();
        assert!(err.message.contains("not closed"), "{err}");
    }

    #[test]
    fn unknown_keys_and_bad_yaml_are_errors_with_a_line() {
        let err = parse("---\ndescription: x\ntemplat: true\n---\nB").unwrap_err();
        assert_eq!(err.code, DiagnosticCode::FrontMatter);
        assert_eq!(err.position.map(|p| p.line), Some(3), "{err}");
        assert_eq!(err.suggestion.as_deref(), Some("did you mean `template`?"));
        // Every unknown key at once, each at its line.
        let all = Document::parse_all(
            "---\ndescripton: x\ntemplat: true\nkind: text\n---\nB",
            Path::new("p.md"),
        )
        .unwrap_err();
        let found: Vec<_> = all
            .iter()
            .map(|d| (d.message.as_str(), d.position.map(|p| p.line)))
            .collect();
        assert_eq!(
            found,
            [
                ("unknown front matter key `descripton`", Some(2)),
                ("unknown front matter key `templat`", Some(3))
            ]
        );
        assert_eq!(
            all[0].suggestion.as_deref(),
            Some("did you mean `description`?")
        );
        let err = parse("---\nvariables:\n  a: { requird: true }\n---\nB").unwrap_err();
        assert_eq!(err.suggestion.as_deref(), Some("did you mean `required`?"));
        let err = parse("---\ndescription: [unclosed\n---\nB").unwrap_err();
        assert_eq!(err.code, DiagnosticCode::FrontMatter);
    }

    #[test]
    fn model_settings_and_metadata_are_free_objects() {
        let doc = parse("---\nmodel:\n  model: m\n  temperature: 0.5\n  seed: 7\nmetadata:\n  owner: me\n---\nB").unwrap();
        let model = doc.model_settings().unwrap();
        assert_eq!(
            model.as_json(),
            r#"{"model":"m","seed":7,"temperature":0.5}"#
        );
        assert_eq!(doc.metadata().unwrap().as_json(), r#"{"owner":"me"}"#);
        let err = problems("---\nmodel: gpt-4o\n---\nB").remove(0);
        assert_eq!(err.code, DiagnosticCode::ModelSettings);
        assert_eq!(err.message, "`model` must be an object, not a string");
        assert_eq!(err.position.map(|p| p.line), Some(2), "{err}");
    }

    #[test]
    fn a_wrong_model_setting_is_an_error_at_its_key_path() {
        let text = "---\nmodel:\n  model: m\n  response_format:\n    type: json_schema\n    json_schema:\n      name: x\n      schema:\n        type: obejct\n  tools:\n    - name: a\n    - description: b\n---\nB";
        let all = problems(text);
        assert_eq!(all.len(), 2, "every problem: {all:?}");
        let err = &all[0];
        assert_eq!(err.code, DiagnosticCode::ModelSettings);
        assert_eq!(
            err.key_path.as_deref(),
            Some("model.response_format.json_schema.schema.type")
        );
        let position = err.position.unwrap();
        assert_eq!((position.line, position.column), (9, 9), "{err}");
        assert_eq!(err.suggestion.as_deref(), Some("did you mean `object`?"));
        let err =
            &problems("---\nmodel:\n  tools:\n    - name: a\n    - description: b\n---\nB")[0];
        assert_eq!(err.key_path.as_deref(), Some("model.tools.1"));
        assert_eq!(
            err.position.map(|p| (p.line, p.column)),
            Some((5, 5)),
            "{err}"
        );
        let err = &problems("---\nmodel: { temperature: 3 }\n---\nB")[0];
        assert_eq!(
            err.position.map(|p| (p.line, p.column)),
            Some((2, 1)),
            "{err}"
        );
    }
}
