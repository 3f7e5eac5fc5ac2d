//! Templates: minijinja with strict undefined variables, no escaping, a fuel
//! limit, and no loading of other files: a pack's prompts include its
//! snippets, held in memory.
//!
//! A prompt file is literal text unless its front matter says
//! `template: true`: prompts often contain `{{` for code.

// Checking what a template uses serves the files of `config` and `packs`;
// with `templates` alone only compiling and rendering are used.
#![cfg_attr(not(feature = "config"), allow(dead_code))]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use minijinja::value::{Object, Serde, Value, ValueKind};
use minijinja::{AutoEscape, Environment, ErrorKind as TemplateErrorKind, UndefinedBehavior};

use crate::diagnostic::{Diagnostic, DiagnosticCode, LineIndex, Position};
use crate::locale::Locale;
use crate::renderer::{Compute, RenderCx, Renderer};
use crate::snippet::{self, RenderLocales, Snippets};
use crate::template_tags::{self, includes_of};

/// The most instructions one render of a template may run; a runaway loop
/// stops with an error instead of hanging the caller.
pub const TEMPLATE_FUEL: u64 = 100_000;

/// How deep macros and nested blocks may recurse.
const RECURSION_LIMIT: usize = 64;

const NAME: &str = "prompt";

/// The variable every template can use besides the context: the render's
/// locale tag.
pub const LOCALE_VARIABLE: &str = "locale";

/// A variable a template declares in its front matter.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    /// The name, as used in the template.
    pub name: String,
    /// Whether a render without it in the context is an error.
    pub required: bool,
    /// The value used when the context lacks it.
    pub default: Option<serde_json::Value>,
    /// The shape its value must have, when declared (`type: list`).
    pub kind: Option<VariableType>,
    /// The JSON Schema its value must match, when declared (`schema:`).
    pub schema: Option<VariableSchema>,
    /// What it is, for people filling it in (`description:`).
    pub description: Option<String>,
}

/// A JSON Schema a variable's value must match, compiled once, when the
/// file is read: each render checks the value given against it.
#[derive(Clone)]
pub struct VariableSchema {
    schema: Arc<serde_json::Value>,
    check: Arc<SchemaCheck>,
}

/// Why a value does not match a schema (`None`: it does), each problem at
/// the path below the value.
type SchemaCheck = dyn Fn(&serde_json::Value) -> Option<String> + Send + Sync;

impl VariableSchema {
    /// `schema`, checked by `check`: why a value does not match it, or
    /// `None` when it does.
    pub fn new(
        schema: serde_json::Value,
        check: impl Fn(&serde_json::Value) -> Option<String> + Send + Sync + 'static,
    ) -> VariableSchema {
        VariableSchema {
            schema: Arc::new(schema),
            check: Arc::new(check),
        }
    }

    /// The schema, as written.
    pub fn schema(&self) -> &serde_json::Value {
        &self.schema
    }

    /// Why `value` does not match the schema, if it does not.
    pub fn violation(&self, value: &serde_json::Value) -> Option<String> {
        (self.check)(value)
    }
}

impl fmt::Debug for VariableSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("VariableSchema").field(&self.schema).finish()
    }
}

impl PartialEq for VariableSchema {
    fn eq(&self, other: &VariableSchema) -> bool {
        self.schema == other.schema
    }
}

/// The shape a template variable declares with `type:` in front matter.
///
/// A context value of another shape makes the render fail with
/// [`ErrorKind::Template`](crate::ErrorKind::Template), naming the
/// variable, the expected and the given type: a string where the template
/// loops over a list would otherwise render letter by letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum VariableType {
    /// Text.
    String,
    /// An integer or a floating-point number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A sequence (a JSON array, a `Vec`).
    List,
    /// A map (a JSON object, a struct).
    Object,
}

impl VariableType {
    /// The name used in front matter: `string`, `number`, `boolean`,
    /// `list` or `object`.
    pub fn as_str(self) -> &'static str {
        match self {
            VariableType::String => "string",
            VariableType::Number => "number",
            VariableType::Boolean => "boolean",
            VariableType::List => "list",
            VariableType::Object => "object",
        }
    }

    /// Whether `value` has this shape.
    fn admits(self, value: &Value) -> bool {
        shape(value) == self.as_str()
    }
}

impl fmt::Display for VariableType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A value's shape in the words of [`VariableType`], or what else it is.
fn shape(value: &Value) -> &'static str {
    match value.kind() {
        ValueKind::String => "string",
        ValueKind::Number => "number",
        ValueKind::Bool => "boolean",
        ValueKind::Seq | ValueKind::Iterable => "list",
        ValueKind::Map | ValueKind::Plain => "object",
        ValueKind::None => "null",
        ValueKind::Undefined => "undefined",
        ValueKind::Bytes => "bytes",
        _ => "value",
    }
}

/// A compiled template and what it declares.
pub(crate) struct Template {
    env: Environment<'static>,
    path: PathBuf,
    line_offset: usize,
    variables: Vec<Variable>,
    defaults: Arc<BTreeMap<String, Value>>,
    /// The snippet variants its environment holds: template name -> file.
    snippets: BTreeMap<String, PathBuf>,
}

impl fmt::Debug for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Template")
            .field("path", &self.path)
            .field("variables", &self.variables)
            .finish_non_exhaustive()
    }
}

/// A template is a renderer kind the core computes through its extension
/// point: the context is serialised into template values once per render,
/// shared by the render's templated parts.
impl Compute for Template {
    fn render(&self, cx: &RenderCx<'_>) -> Result<String, String> {
        let ctx = cx.converted(|ctx| Value::from(Serde(ctx)));
        Template::render(self, &ctx, cx.locale(), cx.fallback())
    }

    /// The render, and the snippet files its includes reached.
    fn render_recording(&self, cx: &RenderCx<'_>) -> (Result<String, String>, Vec<PathBuf>) {
        let (text, names) = snippet::recording_includes(|| Compute::render(self, cx));
        let files = names
            .iter()
            .filter_map(|name| self.snippet_file(name))
            .map(Path::to_path_buf)
            .collect();
        (text, files)
    }

    fn source(&self) -> Option<String> {
        Template::source(self)
    }
}

/// Templates written in code: `Renderer::compile_template`.
pub trait CompileTemplate: Sized {
    /// A minijinja template written in code: it sees the render context by
    /// field name and `locale`, fails on an undefined variable, and runs at
    /// most [`TEMPLATE_FUEL`] instructions. `name` names it in errors.
    ///
    /// ```
    /// use promptreg_packs::prelude::*;
    /// use promptreg_core::{PromptRegistry, Renderer};
    ///
    /// let registry = PromptRegistry::new();
    /// let greeting = Renderer::compile_template("greeting", "Greet {{ name }} in {{ locale }}.")?;
    /// registry.register_default("greeting.system", greeting)?;
    /// let ctx = serde_json::json!({ "name": "Ada" });
    /// assert_eq!(registry.render_in("greeting.system", &ctx, "ja")?, "Greet Ada in ja.");
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) with the syntax
    /// error's line when the template does not compile.
    fn compile_template(name: &str, source: &str) -> Result<Self, crate::Error>;
}

impl CompileTemplate for Renderer {
    fn compile_template(name: &str, source: &str) -> Result<Self, crate::Error> {
        let template = Template::compile(Path::new(name), source, 0, Vec::new())
            .map_err(|d| crate::Error::from_diagnostics(vec![d]))?;
        Ok(Renderer::from_compute(template))
    }
}

impl Template {
    /// The snippet file a template name of its environment stands for.
    pub(crate) fn snippet_file(&self, template_name: &str) -> Option<&Path> {
        self.snippets.get(template_name).map(PathBuf::as_path)
    }

    /// Compiles `source`, the body of `path` starting on line
    /// `line_offset + 1`. A syntax error is a diagnostic naming the file
    /// and line. Nothing can be included: `{% include %}` is an error.
    pub(crate) fn compile(
        path: &Path,
        source: &str,
        line_offset: usize,
        variables: Vec<Variable>,
    ) -> Result<Self, Diagnostic> {
        Template::compile_with(path, source, line_offset, variables, None)
    }

    /// [`compile`](Self::compile), for a pack's prompt file: with the
    /// pack's `snippets`, which `{% include "name" %}` can include.
    pub(crate) fn compile_with(
        path: &Path,
        source: &str,
        line_offset: usize,
        variables: Vec<Variable>,
        snippets: Option<&Arc<Snippets>>,
    ) -> Result<Self, Diagnostic> {
        let mut env = environment();
        env.add_template_owned(NAME, source.to_owned())
            .map_err(|e| syntax_error(&e, path, source, line_offset))?;
        let held = match snippets {
            Some(snippets) => add_snippets(&mut env, snippets, path, source, line_offset)?,
            None => {
                no_includes(path, source, line_offset)?;
                BTreeMap::new()
            }
        };
        let defaults = variables
            .iter()
            .filter_map(|v| Some((v.name.clone(), Value::from(Serde(v.default.as_ref()?)))))
            .collect();
        Ok(Template {
            env,
            path: path.to_path_buf(),
            line_offset,
            variables,
            defaults: Arc::new(defaults),
            snippets: held,
        })
    }

    /// The variables `name` (the template or one of its snippets) reads
    /// from outside itself.
    fn reads(&self, name: &str) -> Vec<String> {
        match self.env.get_template(name) {
            Ok(template) => template.undeclared_variables(false).into_iter().collect(),
            Err(_) => Vec::new(),
        }
    }

    /// What the template and every snippet it can include read.
    fn all_reads(&self) -> BTreeSet<String> {
        std::iter::once(NAME)
            .chain(self.snippets.keys().map(String::as_str))
            .flat_map(|name| self.reads(name))
            .collect()
    }

    /// Variables the template uses but does not declare (the locale aside).
    pub(crate) fn undeclared_variables(&self) -> BTreeSet<String> {
        // Declared variables, `locale` and built-in functions such as `range`.
        let known: BTreeSet<&str> = self
            .variables
            .iter()
            .map(|v| v.name.as_str())
            .chain([LOCALE_VARIABLE])
            .chain(self.env.globals().map(|(name, _)| name))
            .collect();
        self.all_reads()
            .into_iter()
            .filter(|name| !known.contains(name.as_str()))
            .collect()
    }

    /// Every variable the template, and the snippets it includes, read
    /// from outside themselves, declared or not.
    pub(crate) fn used_variables(&self) -> BTreeSet<String> {
        self.all_reads()
    }

    /// A warning for every variable used but not declared.
    pub(crate) fn undeclared_diagnostics(&self) -> Vec<Diagnostic> {
        self.undeclared_variables()
            .into_iter()
            .map(|name| {
                let mut d = Diagnostic::warning(
                    DiagnosticCode::UndeclaredVariable,
                    format!("template uses `{name}`, which its front matter does not declare"),
                )
                .in_file(&self.path)
                .suggest(Some(format!(
                    "declare it under `variables:`, as `{name}: {{ required: true }}` or with a `default`"
                )));
                d.position = self.first_use(&name);
                d
            })
            .collect()
    }

    /// The template's source text, as compiled.
    pub(crate) fn source(&self) -> Option<String> {
        let template = self.env.get_template(NAME).ok()?;
        Some(template.source().to_owned())
    }

    /// Where the template first reads variable `name`, in the file's lines.
    fn first_use(&self, name: &str) -> Option<Position> {
        let template = self.env.get_template(NAME).ok()?;
        let source = template.source();
        let at = template_tags::first_use(source, name)?;
        let line_start = source[..at].rfind('\n').map_or(0, |i| i + 1);
        Some(Position {
            line: source[..at].matches('\n').count() + 1 + self.line_offset,
            column: source[line_start..at].chars().count() + 1,
        })
    }

    /// Renders with `ctx` (the render context, serialised), the declared
    /// defaults and the locale; snippets in the variant `locale` matches
    /// (with `fallback` as the registry's fallback locale).
    pub(crate) fn render(
        &self,
        ctx: &Value,
        locale: &Locale,
        fallback: &Locale,
    ) -> Result<String, String> {
        if ctx.kind() == ValueKind::Invalid {
            // The context did not serialise: say why, not that every
            // variable is missing.
            let shown = ctx.to_string();
            let why = shown
                .strip_prefix("<invalid value: ")
                .and_then(|s| s.strip_suffix('>'))
                .unwrap_or(&shown);
            return Err(format!(
                "template {} cannot read the context: {why}",
                self.path.display()
            ));
        }
        let missing: Vec<&str> = self
            .variables
            .iter()
            .filter(|v| v.required && !self.defaults.contains_key(&v.name) && !has(ctx, &v.name))
            .map(|v| v.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "template {} needs {} the context does not have: {}",
                self.path.display(),
                if missing.len() == 1 {
                    "a variable"
                } else {
                    "variables"
                },
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if let Some(message) = self.wrong_types(ctx).or_else(|| self.schema_violation(ctx)) {
            return Err(format!("template {}: {message}", self.path.display()));
        }
        let scope = Value::from_object(Scope {
            ctx: ctx.clone(),
            defaults: Arc::clone(&self.defaults),
            locale: Value::from(locale.as_str()),
        });
        let template = self
            .env
            .get_template(NAME)
            .map_err(|e| self.failure(&e, ctx))?;
        let _locales = (!self.snippets.is_empty()).then(|| RenderLocales::enter(locale, fallback));
        template.render(scope).map_err(|e| self.failure(&e, ctx))
    }

    /// The first context value whose shape is not its variable's declared
    /// type. A `null` stands for "not given" when the variable is optional.
    fn wrong_types(&self, ctx: &Value) -> Option<String> {
        self.variables.iter().find_map(|v| {
            let value = ctx.get_attr(&v.name).ok().filter(|v| !v.is_undefined())?;
            if value.is_none() && !v.required {
                return None;
            }
            mismatch(v, &value, "the context gives")
        })
    }

    /// The first context value that does not match its variable's
    /// declared schema, and why. A `null` stands for "not given" when the
    /// variable is optional.
    fn schema_violation(&self, ctx: &Value) -> Option<String> {
        self.variables.iter().find_map(|v| {
            let schema = v.schema.as_ref()?;
            let value = ctx.get_attr(&v.name).ok().filter(|v| !v.is_undefined())?;
            if value.is_none() && !v.required {
                return None;
            }
            let json = match serde_json::to_value(&value) {
                Ok(json) => json,
                Err(e) => return Some(format!("variable `{}` is not JSON: {e}", v.name)),
            };
            let why = schema.violation(&json)?;
            Some(format!(
                "variable `{}` does not match its schema: {why}",
                v.name
            ))
        })
    }

    fn failure(&self, outer: &minijinja::Error, ctx: &Value) -> String {
        // An error inside a snippet comes wrapped in one per include.
        let e = innermost(outer);
        let snippet = e.name().and_then(|name| self.snippets.get(name));
        let at = match (snippet, e.line()) {
            (Some(file), Some(line)) => format!("{}:{line}", file.display()),
            (Some(file), None) => file.display().to_string(),
            (None, Some(line)) => format!("{}:{}", self.path.display(), line + self.line_offset),
            (None, None) => self.path.display().to_string(),
        };
        let at = match (snippet, outer.line()) {
            (Some(_), Some(line)) => format!(
                "{at} (included from {}:{})",
                self.path.display(),
                line + self.line_offset
            ),
            _ => at,
        };
        match e.kind() {
            TemplateErrorKind::OutOfFuel => format!(
                "template {at} ran out of fuel after {TEMPLATE_FUEL} instructions (a loop that does not end?)"
            ),
            TemplateErrorKind::UndefinedError => {
                let unknown: Vec<String> = self
                    .undeclared_variables()
                    .into_iter()
                    .filter(|name| !has(ctx, name))
                    .map(|name| format!("`{name}`"))
                    .collect();
                match unknown.is_empty() {
                    true => format!("template {at} uses an undefined value: {}", describe(e)),
                    false => format!(
                        "template {at} uses undefined variable {} (not in the context and not declared with a default)",
                        unknown.join(", ")
                    ),
                }
            }
            _ => format!("template {at} failed: {}", describe(e)),
        }
    }
}

/// An environment with the limits every template runs under, holding no
/// template yet.
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_fuel(Some(TEMPLATE_FUEL));
    env.set_recursion_limit(RECURSION_LIMIT);
    // Only the templates added exist: nothing is read from anywhere.
    env.set_loader(|_| Ok(None::<String>));
    env
}

/// A syntax error of `source` (the part of `path` after `line_offset`
/// lines) as a diagnostic at its line and column, with an excerpt around
/// that place (on a long line, the window around it).
fn syntax_error(e: &minijinja::Error, path: &Path, source: &str, line_offset: usize) -> Diagnostic {
    let mut d = Diagnostic::error(
        DiagnosticCode::TemplateSyntax,
        format!("template {}", describe(e)),
    )
    .in_file(path);
    let lines = LineIndex::new(source);
    let Some(range) = e.range() else {
        let line = e.line().unwrap_or(1) + line_offset;
        d.position = Some(Position { line, column: 1 });
        return d.with_excerpt(&lines, line_offset);
    };
    // The span is in `source`, not in the file: its position and excerpt
    // are shifted by the lines before it, and no file span is recorded.
    let mut position = lines.position(range.start);
    position.line += line_offset;
    let mut excerpt = lines.excerpt(range);
    excerpt.first_line += line_offset;
    d.position = Some(position);
    d.excerpt = Some(excerpt);
    d
}

/// Checks that `source` compiles on its own, as a snippet file does.
#[cfg(feature = "packs")]
pub(crate) fn check_syntax(path: &Path, source: &str) -> Result<(), Diagnostic> {
    environment()
        .add_template_owned(NAME, source.to_owned())
        .map_err(|e| syntax_error(&e, path, source, 0))
}

/// Adds every snippet variant the template at `path` can reach to `env`,
/// and resolves its includes by the render's locale: the template names
/// held and their files. An include that cannot be resolved is an error.
fn add_snippets(
    env: &mut Environment<'static>,
    snippets: &Arc<Snippets>,
    path: &Path,
    source: &str,
    line_offset: usize,
) -> Result<BTreeMap<String, PathBuf>, Diagnostic> {
    if let Some(problem) = snippets
        .check_includes(path, source, line_offset)
        .into_iter()
        .next()
    {
        return Err(problem);
    }
    let includes = includes_of(source);
    let reachable = snippets.reachable(&includes);
    let mut held = BTreeMap::new();
    for (name, file) in snippets.files_named(&reachable) {
        let template_name = file.template_name(name);
        env.add_template_owned(template_name.clone(), file.source.clone())
            .map_err(|e| syntax_error(&e, &file.path, &file.source, 0))?;
        held.insert(template_name, file.path.clone());
    }
    if !held.is_empty() {
        let snippets = Arc::clone(snippets);
        env.set_path_join_callback(move |name, _| snippet::resolve_in_render(&snippets, name));
    }
    Ok(held)
}

/// Outside a pack's prompt files nothing can be included: the first
/// include tag is an error.
fn no_includes(path: &Path, source: &str, line_offset: usize) -> Result<(), Diagnostic> {
    let Some(include) = includes_of(source).into_iter().next() else {
        return Ok(());
    };
    let lines = LineIndex::new(source);
    let local = lines.position(include.span.start);
    let mut d = Diagnostic::error(
        DiagnosticCode::Snippet,
        format!(
            "`{{% {} %}}` is not allowed here: only a pack's prompt files include snippets",
            include.keyword
        ),
    )
    .in_file(path)
    .suggest(Some(
        "write the text out; a user's prompt file or a template given in code includes nothing"
            .to_owned(),
    ));
    d.position = Some(Position {
        line: local.line + line_offset,
        column: local.column,
    });
    Err(d.with_excerpt(&lines, line_offset))
}

/// The error at the bottom of a chain of include errors.
fn innermost(e: &minijinja::Error) -> &minijinja::Error {
    let mut current = e;
    while current.kind() == TemplateErrorKind::BadInclude {
        match std::error::Error::source(current).and_then(|s| s.downcast_ref::<minijinja::Error>())
        {
            Some(inner) => current = inner,
            None => break,
        }
    }
    current
}

impl Variable {
    /// Why the declared default does not have the declared type, if it
    /// does not.
    pub(crate) fn default_mismatch(&self) -> Option<String> {
        let default = Value::from(Serde(self.default.as_ref()?));
        mismatch(self, &default, "its declared `default` is")
    }
}

/// Says why `value` does not fit `variable`'s declared type, if it does not.
fn mismatch(variable: &Variable, value: &Value, given: &str) -> Option<String> {
    let expected = variable.kind?;
    if expected.admits(value) {
        return None;
    }
    let found = match shape(value) {
        "null" => "null".to_owned(),
        shape if shape.starts_with(['a', 'e', 'i', 'o', 'u']) => {
            format!("an {shape} ({})", preview(value))
        }
        shape => format!("a {shape} ({})", preview(value)),
    };
    Some(format!(
        "variable `{}` is declared `type: {expected}`, but {given} {found}",
        variable.name
    ))
}

/// A value as JSON-like text, cut short: enough to recognise it.
fn preview(value: &Value) -> String {
    const LIMIT: usize = 40;
    let text = match value.kind() {
        ValueKind::String => format!("{:?}", value.as_str().unwrap_or_default()),
        ValueKind::Bool => value.is_true().to_string(),
        _ => value.to_string(),
    };
    match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn has(ctx: &Value, name: &str) -> bool {
    ctx.get_attr(name).is_ok_and(|v| !v.is_undefined())
}

fn describe(e: &minijinja::Error) -> String {
    match e.detail() {
        Some(detail) => format!("{}: {detail}", e.kind()),
        None => e.kind().to_string(),
    }
}

/// What a template sees: the context first, then declared defaults, then
/// `locale`.
#[derive(Debug)]
struct Scope {
    ctx: Value,
    defaults: Arc<BTreeMap<String, Value>>,
    locale: Value,
}

impl Object for Scope {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let name = key.as_str()?;
        if let Ok(value) = self.ctx.get_attr(name)
            && !value.is_undefined()
        {
            return Some(value);
        }
        if let Some(value) = self.defaults.get(name) {
            return Some(value.clone());
        }
        (name == LOCALE_VARIABLE).then(|| self.locale.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile(source: &str, variables: Vec<Variable>) -> Template {
        Template::compile(Path::new("t.md"), source, 0, variables).unwrap()
    }

    fn en() -> Locale {
        Locale::parse("en").unwrap()
    }

    fn ctx(json: serde_json::Value) -> Value {
        Value::from(Serde(json))
    }

    #[test]
    fn renders_context_fields_and_the_locale() {
        let t = compile("Hello {{ brand }} in {{ locale }}", vec![]);
        let out = t
            .render(&ctx(serde_json::json!({ "brand": "Acme" })), &en(), &en())
            .unwrap();
        assert_eq!(out, "Hello Acme in en");
    }

    #[test]
    fn values_are_text_never_template_code_and_never_escaped() {
        let t = compile("{{ secret }}", vec![]);
        let out = t
            .render(
                &ctx(serde_json::json!({ "secret": "{{ other }} <b>&" })),
                &en(),
                &en(),
            )
            .unwrap();
        assert_eq!(out, "{{ other }} <b>&");
    }

    #[test]
    fn a_context_that_does_not_serialise_is_an_error_saying_why() {
        struct Unreadable;
        impl serde::Serialize for Unreadable {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("a socket is not data"))
            }
        }
        let t = compile("Hello {{ brand }}", vec![]);
        let err = t
            .render(&Value::from(Serde(Unreadable)), &en(), &en())
            .unwrap_err();
        assert!(err.contains("t.md cannot read the context"), "{err}");
        assert!(err.contains("a socket is not data"), "{err}");
        assert!(!err.contains("undefined"), "{err}");
    }

    #[test]
    fn an_undefined_variable_is_an_error_naming_it_and_the_file() {
        let t = compile("line one\n{{ brnd }}", vec![]);
        let err = t
            .render(&ctx(serde_json::json!({ "brand": "Acme" })), &en(), &en())
            .unwrap_err();
        assert!(err.contains("`brnd`"), "{err}");
        assert!(err.contains("t.md:2"), "{err}");
    }

    #[test]
    fn required_variables_are_checked_and_defaults_fill_in() {
        let variables = vec![
            Variable {
                name: "goal_id".into(),
                required: true,
                default: None,
                kind: None,
                schema: None,
                description: None,
            },
            Variable {
                name: "tone".into(),
                required: false,
                default: Some("calm".into()),
                kind: None,
                schema: None,
                description: None,
            },
        ];
        let t = compile("{{ goal_id }} {{ tone }}", variables);
        let err = t
            .render(&ctx(serde_json::json!({})), &en(), &en())
            .unwrap_err();
        assert!(err.contains("`goal_id`"), "{err}");
        let out = t
            .render(&ctx(serde_json::json!({ "goal_id": 7 })), &en(), &en())
            .unwrap();
        assert_eq!(out, "7 calm");
        let out = t
            .render(
                &ctx(serde_json::json!({ "goal_id": 7, "tone": "warm" })),
                &en(),
                &en(),
            )
            .unwrap();
        assert_eq!(out, "7 warm");
    }

    #[test]
    fn a_runaway_loop_runs_out_of_fuel() {
        let t = compile(
            "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
            vec![],
        );
        let err = t
            .render(&ctx(serde_json::json!({})), &en(), &en())
            .unwrap_err();
        assert!(err.contains("ran out of fuel"), "{err}");
    }

    #[test]
    fn recursion_is_bounded() {
        let t = compile(
            "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
            vec![],
        );
        assert!(t.render(&ctx(serde_json::json!({})), &en(), &en()).is_err());
    }

    #[test]
    fn other_files_cannot_be_loaded() {
        for source in [
            "{% include '/etc/passwd' %}",
            "x\n  {% import 'm' as m %}",
            "{% extends name %}",
        ] {
            let err = Template::compile(Path::new("t.md"), source, 2, vec![]).unwrap_err();
            assert_eq!(err.code, DiagnosticCode::Snippet, "{source}");
            assert!(
                err.message
                    .contains("only a pack's prompt files include snippets")
            );
        }
        let err = Template::compile(Path::new("t.md"), "x\n  {% import 'm' as m %}", 2, vec![])
            .unwrap_err();
        assert_eq!(err.position, Some(Position { line: 4, column: 3 }));
    }

    #[test]
    fn a_syntax_error_names_the_file_line() {
        let err = Template::compile(Path::new("t.md"), "ok\n{% if %}", 3, vec![]).unwrap_err();
        assert_eq!(err.code, DiagnosticCode::TemplateSyntax);
        assert_eq!(err.position.unwrap().line, 5);
    }

    #[test]
    fn a_syntax_error_names_its_column_and_shows_its_place_on_a_long_line() {
        let long = format!(
            "{} {{{{ name }}}} and {{% endfi %}} {}",
            "a".repeat(300),
            "b".repeat(300)
        );
        let err =
            Template::compile(Path::new("t.md"), &format!("ok\n{long}"), 3, vec![]).unwrap_err();
        let at = long.find("endfi").unwrap();
        let position = err.position.unwrap();
        assert_eq!(position.line, 5);
        assert!(
            (at - 3..=at + 1).contains(&(position.column - 1)),
            "column {} for `endfi` at byte {at}",
            position.column
        );
        let excerpt = err.excerpt.unwrap();
        assert_eq!(excerpt.first_line, 4);
        assert!(
            excerpt.text[excerpt.span.clone()].contains("endfi"),
            "{excerpt:?}"
        );
    }

    #[test]
    fn used_variables_include_declared_ones_and_skip_local_ones() {
        let t = compile(
            "{{ brand }}{% for x in items %}{{ x }}{% endfor %}{% set y = 1 %}{{ y }}",
            vec![],
        );
        assert_eq!(
            t.used_variables(),
            BTreeSet::from(["brand".to_owned(), "items".to_owned()])
        );
    }

    #[test]
    fn undeclared_variables_are_listed() {
        let variables = vec![Variable {
            name: "brand".into(),
            required: true,
            default: None,
            kind: None,
            schema: None,
            description: None,
        }];
        let t = compile("{{ brand }} {{ persona }} {{ locale }}", variables);
        assert_eq!(
            t.undeclared_variables(),
            BTreeSet::from(["persona".to_owned()])
        );
    }

    fn typed(name: &str, kind: VariableType, required: bool) -> Variable {
        Variable {
            name: name.into(),
            required,
            default: None,
            kind: Some(kind),
            schema: None,
            description: None,
        }
    }

    #[test]
    fn a_value_of_the_wrong_type_is_an_error_naming_the_variable_and_both_types() {
        let t = compile(
            "{% for item in pantry %}{{ item }}, {% endfor %}",
            vec![typed("pantry", VariableType::List, true)],
        );
        let err = t
            .render(&ctx(serde_json::json!({ "pantry": "rice" })), &en(), &en())
            .unwrap_err();
        assert_eq!(
            err,
            "template t.md: variable `pantry` is declared `type: list`, but the context gives a string (\"rice\")"
        );
        let out = t
            .render(
                &ctx(serde_json::json!({ "pantry": ["rice", "beans"] })),
                &en(),
                &en(),
            )
            .unwrap();
        assert_eq!(out, "rice, beans, ");
    }

    #[test]
    fn every_type_admits_its_values_and_refuses_the_others() {
        let values = [
            ("string", serde_json::json!("text")),
            ("number", serde_json::json!(4.5)),
            ("number", serde_json::json!(-3)),
            ("boolean", serde_json::json!(true)),
            ("list", serde_json::json!([1, 2])),
            ("object", serde_json::json!({ "a": 1 })),
        ];
        for kind in [
            VariableType::String,
            VariableType::Number,
            VariableType::Boolean,
            VariableType::List,
            VariableType::Object,
        ] {
            let t = compile("{{ v }}", vec![typed("v", kind, true)]);
            for (shape, value) in &values {
                let result = t.render(&ctx(serde_json::json!({ "v": value })), &en(), &en());
                assert_eq!(
                    result.is_ok(),
                    *shape == kind.as_str(),
                    "{kind} with {value}: {result:?}"
                );
            }
        }
    }

    #[test]
    fn null_is_absent_for_an_optional_variable_and_wrong_for_a_required_one() {
        let optional = compile(
            "{% if v is none %}absent{% endif %}",
            vec![typed("v", VariableType::String, false)],
        );
        let null = ctx(serde_json::json!({ "v": null }));
        assert_eq!(optional.render(&null, &en(), &en()).unwrap(), "absent");
        let required = compile("{{ v }}", vec![typed("v", VariableType::String, true)]);
        let err = required.render(&null, &en(), &en()).unwrap_err();
        assert!(err.ends_with("but the context gives null"), "{err}");
    }

    #[test]
    fn a_default_of_the_wrong_type_is_reported() {
        let mut variable = typed("tasks", VariableType::List, false);
        variable.default = Some(serde_json::json!("none"));
        assert_eq!(
            variable.default_mismatch().unwrap(),
            "variable `tasks` is declared `type: list`, but its declared `default` is a string (\"none\")"
        );
        variable.default = Some(serde_json::json!([]));
        assert_eq!(variable.default_mismatch(), None);
    }

    #[test]
    fn undeclared_variables_are_reported_where_they_are_first_read() {
        let source = "Intro {{ \"persona\" }} {# persona #}\n{% raw %}{{ persona }}{% endraw %}\n  x.persona {{ item.persona }}\nA {{ persona | upper }}";
        let t = Template::compile(Path::new("t.md"), source, 5, vec![]).unwrap();
        let warnings = t.undeclared_diagnostics();
        let persona: Vec<_> = warnings
            .iter()
            .filter(|d| d.message.contains("`persona`"))
            .collect();
        assert_eq!(persona.len(), 1);
        assert_eq!(persona[0].position, Some(Position { line: 9, column: 6 }));
    }
}
