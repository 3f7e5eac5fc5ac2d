//! `promptreg explain ID`: the final text part by part, with where each
//! part came from and why.

use promptreg::config::{Scope, UserOrigin};
use promptreg::pack::{Pack, PackPrompt};
use promptreg::{Locale, LocaleMatch, LocaleStep, Origin, PromptRegistry, Rendered};
use serde_json::{Value, json};

use super::Output;
use crate::cli::RenderArgs;
use crate::report::Failure;
use crate::session::{Session, read_context};
use crate::style::Paint;

pub fn run(session: &Session, args: &RenderArgs) -> Result<Output, Failure> {
    let pack = session.pack()?;
    let registry = session.registry(&pack)?;
    let locale = session.locale(&pack)?;
    let ctx = read_context(args.ctx.as_deref(), args.max_ctx_size)?;
    let explainer = Explainer {
        prompt: pack.prompt(&args.id),
        pack: &pack,
        locale: &locale,
        fallback: registry.fallback_locale(),
    };
    let show = |registry: &PromptRegistry| -> Result<Output, Failure> {
        let rendered = registry
            .render_traced_in(&args.id, &ctx, &locale)
            .map_err(|e| super::render_failure(&pack, &args.id, e))?;
        if session.args.json {
            return Ok(Output::json(&explainer.json(&args.id, &rendered)));
        }
        let paint = Paint {
            color: session.color,
        };
        Ok(Output::text(explainer.text(&args.id, &rendered, paint)))
    };
    if args.watch {
        return super::follow::follow(&registry, session.args.json, show);
    }
    show(&registry)
}

struct Explainer<'a> {
    prompt: Option<&'a PackPrompt>,
    pack: &'a Pack,
    locale: &'a Locale,
    fallback: Locale,
}

impl Explainer<'_> {
    /// The steps of locale matching, in order, for the lookup line.
    fn lookup(&self) -> Vec<String> {
        let own: Vec<&str> = self.locale.chain().collect();
        let mut steps: Vec<String> = own.iter().map(|k| k.to_string()).collect();
        if let Some(script) = self.locale.language_script() {
            steps.push(format!("same script ({script})"));
        }
        steps.extend(
            self.fallback
                .chain()
                .filter(|key| !own.contains(key))
                .map(str::to_owned),
        );
        steps
    }

    /// The keys a variant is looked up under, in order (the same-script
    /// step aside).
    fn chain(&self) -> Vec<String> {
        let mut chain: Vec<String> = self.locale.chain().map(str::to_owned).collect();
        for key in self.fallback.chain() {
            if !chain.iter().any(|k| k == key) {
                chain.push(key.to_owned());
            }
        }
        chain
    }

    fn default_file(&self) -> Option<String> {
        self.prompt?.default_file().map(|p| self.relative(p))
    }

    fn relative(&self, path: &std::path::Path) -> String {
        path.strip_prefix(self.pack.root())
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// A one-line account of one part.
    fn describe(&self, origin: &Origin) -> String {
        let in_default = |what: String, why: String| match self.default_file() {
            Some(file) => format!("{what} ({file}){why}"),
            None => format!("{what}{why}"),
        };
        match origin {
            Origin::PinnedHead {
                index,
                translation: None,
            } => in_default(format!("pinned head block #{}", index + 1), String::new()),
            Origin::PinnedTail {
                index,
                translation: None,
            } => in_default(format!("pinned tail block #{}", index + 1), String::new()),
            Origin::PinnedHead {
                index,
                translation: Some(matched),
            } => format!(
                "pinned head block #{}, translated by {}",
                index + 1,
                self.variant(matched)
            ),
            Origin::PinnedTail {
                index,
                translation: Some(matched),
            } => format!(
                "pinned tail block #{}, translated by {}",
                index + 1,
                self.variant(matched)
            ),
            Origin::Default => in_default(
                "default".to_owned(),
                format!(": no variant for {}", self.lookup().join(", ")),
            ),
            Origin::Override { locale, step } => self.variant(&LocaleMatch {
                locale: locale.clone(),
                step: *step,
            }),
            Origin::User(user) => describe_user(user),
            Origin::Appender { index } => format!("appender #{}", index + 1),
            Origin::GlobalAppender { index } => format!("append_all rule #{}", index + 1),
            other => other.to_string(),
        }
    }

    /// The locale variant that matched, its file and the matching step
    /// that found it, as the render's trace records it.
    fn variant(&self, matched: &LocaleMatch) -> String {
        let file = self
            .prompt
            .and_then(|p| p.variant_file(&matched.locale))
            .map(|p| format!(" ({})", self.relative(p)))
            .unwrap_or_default();
        let why = match matched.step {
            LocaleStep::Exact => format!("the render locale `{}`", self.locale),
            LocaleStep::Parent => format!("a CLDR parent of `{}`", self.locale),
            LocaleStep::SameScript => format!(
                "the same language and script as `{}` ({})",
                self.locale,
                self.locale.language_script().unwrap_or_default()
            ),
            LocaleStep::Fallback => format!("the fallback locale `{}`", self.fallback),
            other => other.to_string(),
        };
        format!("locale variant `{}`{file}: {why}", matched.locale)
    }

    fn text(&self, id: &str, rendered: &Rendered, paint: Paint) -> String {
        let mut out = paint.heading(&format!("{id} [{}]", self.locale));
        out.push_str(&paint.dim(&format!(
            " lookup: {} → default\n",
            self.lookup().join(" → ")
        )));
        for part in &rendered.parts {
            // Printable: an origin names files and settings from the user's files.
            let origin = promptreg::printable(&self.describe(&part.origin)).into_owned();
            out.push_str(&paint.origin(&format!("── {origin}\n")));
            out.push_str(rendered.part_text(part));
            out.push('\n');
        }
        if rendered.parts.is_empty() {
            out.push_str(&paint.dim("(every part rendered blank)\n"));
        }
        out
    }

    fn json(&self, id: &str, rendered: &Rendered) -> Value {
        let parts: Vec<Value> = rendered
            .parts
            .iter()
            .map(|part| {
                json!({
                    "origin": origin_json(&part.origin),
                    "description": self.describe(&part.origin),
                    "text": rendered.part_text(part),
                    "start": part.range.start,
                    "end": part.range.end,
                })
            })
            .collect();
        json!({
            "id": id,
            "locale": self.locale.as_str(),
            "chain": self.chain(),
            "same_script": self.locale.language_script(),
            "default_file": self.default_file(),
            "text": rendered.text,
            "parts": parts,
        })
    }
}

fn describe_user(user: &UserOrigin) -> String {
    let mut what = match (&user.file, user.scope) {
        (Some(file), Some(scope)) => format!("user {} file {}", scope_name(scope), file.display()),
        (Some(file), None) => format!("user file {} (named by the `file` setting)", file.display()),
        (None, _) => "user inline setting".to_owned(),
    };
    if let Some(target) = &user.target {
        what.push_str(&format!(" → {}", target.display()));
    }
    if let Some(locale) = &user.locale {
        what.push_str(&format!(" for `{locale}`"));
    }
    what.push_str(&format!(", mode {}", user.mode));
    if let Some(settings) = &user.settings {
        what.push_str(&format!(
            ", set at `{}` in {}:{}:{}",
            settings.key_path,
            settings.file.display(),
            settings.position.line,
            settings.position.column
        ));
    }
    what
}

fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::Global => "global",
        Scope::Local => "local",
    }
}

fn origin_json(origin: &Origin) -> Value {
    match origin {
        Origin::PinnedHead { index, translation } => json!({
            "kind": "pinned-head",
            "index": index,
            "translation": translation.as_ref().map(|m| json!({
                "locale": m.locale.as_str(),
                "step": step_name(m.step),
            })),
        }),
        Origin::PinnedTail { index, translation } => json!({
            "kind": "pinned-tail",
            "index": index,
            "translation": translation.as_ref().map(|m| json!({
                "locale": m.locale.as_str(),
                "step": step_name(m.step),
            })),
        }),
        Origin::Default => json!({ "kind": "default" }),
        Origin::Override { locale, step } => {
            json!({ "kind": "locale-variant", "locale": locale.as_str(), "step": step_name(*step) })
        }
        Origin::User(user) => json!({
            "kind": "user",
            "source": user.source,
            "mode": user.mode.as_str(),
            "file": user.file.as_ref().map(|f| f.display().to_string()),
            "target": user.target.as_ref().map(|t| t.display().to_string()),
            "scope": user.scope,
            "locale": user.locale.as_ref().map(|l| l.as_str()),
            "settings": user.settings.as_ref().map(|s| json!({
                "file": s.file.display().to_string(),
                "key_path": s.key_path,
                "line": s.position.line,
                "column": s.position.column,
            })),
        }),
        Origin::Appender { index } => json!({ "kind": "appender", "index": index }),
        Origin::GlobalAppender { index } => json!({ "kind": "append-all", "index": index }),
        other => json!({ "kind": other.to_string() }),
    }
}

/// The step of locale matching, as JSON names it.
fn step_name(step: LocaleStep) -> &'static str {
    match step {
        LocaleStep::Exact => "exact",
        LocaleStep::Parent => "cldr-parent",
        LocaleStep::SameScript => "same-script",
        LocaleStep::Fallback => "fallback-locale",
        _ => "other",
    }
}
