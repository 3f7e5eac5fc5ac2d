//! `promptreg explain ID`: the final text part by part, with where each
//! part came from and why.

use promptreg::config::{Scope, UserOrigin};
use promptreg::pack::{Pack, PackPrompt};
use promptreg::{Locale, Origin, PromptRegistry, Rendered};
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
        return super::follow::follow(&registry, show);
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
    /// The keys a variant is looked up under, in order.
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
            Origin::PinnedHead { index } => {
                in_default(format!("pinned head block #{}", index + 1), String::new())
            }
            Origin::PinnedTail { index } => {
                in_default(format!("pinned tail block #{}", index + 1), String::new())
            }
            Origin::Default => in_default(
                "default".to_owned(),
                format!(": no variant for {}", self.chain().join(", ")),
            ),
            Origin::Override { locale } => self.variant(locale),
            Origin::User(user) => describe_user(user),
            Origin::Appender { index } => format!("appender #{}", index + 1),
            Origin::GlobalAppender { index } => format!("append_all rule #{}", index + 1),
            other => other.to_string(),
        }
    }

    fn variant(&self, matched: &Locale) -> String {
        let file = self
            .prompt
            .and_then(|p| p.variant_file(matched))
            .map(|p| format!(" ({})", self.relative(p)))
            .unwrap_or_default();
        let key = self.locale.chain().next().unwrap_or_default();
        let why = if self.locale.chain().any(|k| k == matched.as_str()) {
            if key == matched.as_str() {
                format!("the render locale `{}`", self.locale)
            } else {
                format!("a CLDR parent of `{}`", self.locale)
            }
        } else {
            format!("the fallback locale `{}`", self.fallback)
        };
        format!("locale variant `{matched}`{file}: {why}")
    }

    fn text(&self, id: &str, rendered: &Rendered, paint: Paint) -> String {
        let mut out = paint.heading(&format!("{id} [{}]", self.locale));
        out.push_str(&paint.dim(&format!(
            " lookup: {} → default\n",
            self.chain().join(" → ")
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
        Origin::PinnedHead { index } => json!({ "kind": "pinned-head", "index": index }),
        Origin::PinnedTail { index } => json!({ "kind": "pinned-tail", "index": index }),
        Origin::Default => json!({ "kind": "default" }),
        Origin::Override { locale } => {
            json!({ "kind": "locale-variant", "locale": locale.as_str() })
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
