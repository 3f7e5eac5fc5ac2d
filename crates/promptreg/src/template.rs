//! Templates: minijinja with strict undefined variables, no escaping, a fuel
//! limit, and no loading of other files.
//!
//! A prompt file is literal text unless its front matter says
//! `template: true`: prompts often contain `{{` for code.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use minijinja::value::{Object, Serde, Value};
use minijinja::{AutoEscape, Environment, ErrorKind as TemplateErrorKind, UndefinedBehavior};

use crate::diagnostic::{Diagnostic, DiagnosticCode, LineIndex, Position};
use crate::locale::Locale;

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
}

/// A compiled template and what it declares.
pub(crate) struct Template {
    env: Environment<'static>,
    path: PathBuf,
    line_offset: usize,
    variables: Vec<Variable>,
    defaults: Arc<BTreeMap<String, Value>>,
}

impl fmt::Debug for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Template")
            .field("path", &self.path)
            .field("variables", &self.variables)
            .finish_non_exhaustive()
    }
}

impl Template {
    /// Compiles `source`, the body of `path` starting on line
    /// `line_offset + 1`. A syntax error is a diagnostic naming the file
    /// and line.
    pub(crate) fn compile(
        path: &Path,
        source: &str,
        line_offset: usize,
        variables: Vec<Variable>,
    ) -> Result<Self, Diagnostic> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_fuel(Some(TEMPLATE_FUEL));
        env.set_recursion_limit(RECURSION_LIMIT);
        // Only this one template exists: `include` and `import` find nothing.
        env.set_loader(|_| Ok(None::<String>));
        env.add_template_owned(NAME, source.to_owned())
            .map_err(|e| {
                let line = e.line().unwrap_or(1) + line_offset;
                let mut d = Diagnostic::error(
                    DiagnosticCode::TemplateSyntax,
                    format!("template {}", describe(&e)),
                )
                .in_file(path);
                d.position = Some(Position { line, column: 1 });
                d.with_excerpt(&LineIndex::new(source), line_offset)
            })?;
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
        })
    }

    /// Variables the template uses but does not declare (the locale aside).
    pub(crate) fn undeclared_variables(&self) -> BTreeSet<String> {
        let Ok(template) = self.env.get_template(NAME) else {
            return BTreeSet::new();
        };
        // Declared variables, `locale` and built-in functions such as `range`.
        let known: BTreeSet<&str> = self
            .variables
            .iter()
            .map(|v| v.name.as_str())
            .chain([LOCALE_VARIABLE])
            .chain(self.env.globals().map(|(name, _)| name))
            .collect();
        template
            .undeclared_variables(false)
            .into_iter()
            .filter(|name| !known.contains(name.as_str()))
            .collect()
    }

    /// Every variable the template reads from outside itself, declared or
    /// not.
    pub(crate) fn used_variables(&self) -> BTreeSet<String> {
        match self.env.get_template(NAME) {
            Ok(template) => template.undeclared_variables(false).into_iter().collect(),
            Err(_) => BTreeSet::new(),
        }
    }

    /// A warning for every variable used but not declared.
    pub(crate) fn undeclared_diagnostics(&self) -> Vec<Diagnostic> {
        self.undeclared_variables()
            .into_iter()
            .map(|name| {
                Diagnostic::warning(
                    DiagnosticCode::UndeclaredVariable,
                    format!("template uses `{name}`, which its front matter does not declare"),
                )
                .in_file(&self.path)
                .suggest(Some(format!(
                    "declare it under `variables:`, as `{name}: {{ required: true }}` or with a `default`"
                )))
            })
            .collect()
    }

    /// Renders with `ctx` (the render context, serialised), the declared
    /// defaults and the locale.
    pub(crate) fn render(&self, ctx: &Value, locale: &Locale) -> Result<String, String> {
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
        let scope = Value::from_object(Scope {
            ctx: ctx.clone(),
            defaults: Arc::clone(&self.defaults),
            locale: Value::from(locale.as_str()),
        });
        let template = self
            .env
            .get_template(NAME)
            .map_err(|e| self.failure(&e, ctx))?;
        template.render(scope).map_err(|e| self.failure(&e, ctx))
    }

    fn failure(&self, e: &minijinja::Error, ctx: &Value) -> String {
        let at = match e.line() {
            Some(line) => format!("{}:{}", self.path.display(), line + self.line_offset),
            None => self.path.display().to_string(),
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
            .render(&ctx(serde_json::json!({ "brand": "Acme" })), &en())
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
            )
            .unwrap();
        assert_eq!(out, "{{ other }} <b>&");
    }

    #[test]
    fn an_undefined_variable_is_an_error_naming_it_and_the_file() {
        let t = compile("line one\n{{ brnd }}", vec![]);
        let err = t
            .render(&ctx(serde_json::json!({ "brand": "Acme" })), &en())
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
            },
            Variable {
                name: "tone".into(),
                required: false,
                default: Some("calm".into()),
            },
        ];
        let t = compile("{{ goal_id }} {{ tone }}", variables);
        let err = t.render(&ctx(serde_json::json!({})), &en()).unwrap_err();
        assert!(err.contains("`goal_id`"), "{err}");
        let out = t
            .render(&ctx(serde_json::json!({ "goal_id": 7 })), &en())
            .unwrap();
        assert_eq!(out, "7 calm");
        let out = t
            .render(
                &ctx(serde_json::json!({ "goal_id": 7, "tone": "warm" })),
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
        let err = t.render(&ctx(serde_json::json!({})), &en()).unwrap_err();
        assert!(err.contains("ran out of fuel"), "{err}");
    }

    #[test]
    fn recursion_is_bounded() {
        let t = compile(
            "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
            vec![],
        );
        assert!(t.render(&ctx(serde_json::json!({})), &en()).is_err());
    }

    #[test]
    fn other_files_cannot_be_loaded() {
        let t = compile("{% include '/etc/passwd' %}", vec![]);
        let err = t.render(&ctx(serde_json::json!({})), &en()).unwrap_err();
        assert!(
            err.contains("not found") || err.contains("template"),
            "{err}"
        );
    }

    #[test]
    fn a_syntax_error_names_the_file_line() {
        let err = Template::compile(Path::new("t.md"), "ok\n{% if %}", 3, vec![]).unwrap_err();
        assert_eq!(err.code, DiagnosticCode::TemplateSyntax);
        assert_eq!(err.position.unwrap().line, 5);
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
        }];
        let t = compile("{{ brand }} {{ persona }} {{ locale }}", variables);
        assert_eq!(
            t.undeclared_variables(),
            BTreeSet::from(["persona".to_owned()])
        );
    }
}
