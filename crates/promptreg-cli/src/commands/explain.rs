//! `promptreg explain ID`: the final text part by part, with where each
//! part came from and why, printed from the render's trace
//! ([`Rendered`]): nothing here works a rule out again.

use std::path::Path;

use promptreg::{LocaleStep, LookupStep, Origin, Part, PromptRegistry, Rendered, SourceKind};

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
    let show = |registry: &PromptRegistry| -> Result<Output, Failure> {
        let rendered = registry
            .render_traced_in(&args.id, &ctx, &locale)
            .map_err(|e| super::render_failure(&pack, &args.id, e))?;
        if session.args.json {
            let value = serde_json::to_value(&rendered).unwrap_or_default();
            return Ok(Output::json(&value));
        }
        let paint = Paint {
            color: session.color,
        };
        Ok(Output::text(text(&rendered, pack.root(), paint)))
    };
    if args.watch {
        return super::follow::follow(&registry, session.args.json, show);
    }
    show(&registry)
}

fn text(rendered: &Rendered, pack_root: &Path, paint: Paint) -> String {
    let lookup: Vec<String> = rendered.lookup.iter().map(step_key).collect();
    let mut out = paint.heading(&format!("{} [{}]", rendered.id, rendered.locale));
    out.push_str(&paint.dim(&format!(" lookup: {} → default\n", lookup.join(" → "))));
    if let Some(model) = &rendered.model {
        // Printable: the settings are the pack's text.
        let line = format!("model settings: {}", model.as_json());
        out.push_str(&paint.dim(&promptreg::printable(&line)));
        out.push('\n');
    }
    for part in &rendered.parts {
        // Printable: an origin names files and settings from the user's files.
        let what = describe(part, rendered, pack_root);
        let what = promptreg::printable(&what).into_owned();
        out.push_str(&paint.origin(&format!("── {what}\n")));
        out.push_str(rendered.part_text(part));
        out.push('\n');
    }
    if rendered.parts.is_empty() {
        out.push_str(&paint.dim("(every part rendered blank)\n"));
    }
    out
}

/// A lookup step as the heading shows it.
fn step_key(step: &LookupStep) -> String {
    match step.step {
        LocaleStep::SameScript => format!("same script ({})", step.key),
        _ => step.key.clone(),
    }
}

/// A one-line account of one part.
fn describe(part: &Part, rendered: &Rendered, pack_root: &Path) -> String {
    let file = file_of(part, pack_root);
    let why = |step: LocaleStep| why(step, rendered);
    match &part.origin {
        Origin::PinnedHead {
            index,
            translation: None,
        } => format!("pinned head block #{}{file}", index + 1),
        Origin::PinnedTail {
            index,
            translation: None,
        } => format!("pinned tail block #{}{file}", index + 1),
        Origin::PinnedHead {
            index,
            translation: Some(m),
        } => format!(
            "pinned head block #{}, translated by locale variant `{}`{file}: {}",
            index + 1,
            m.locale,
            why(m.step)
        ),
        Origin::PinnedTail {
            index,
            translation: Some(m),
        } => format!(
            "pinned tail block #{}, translated by locale variant `{}`{file}: {}",
            index + 1,
            m.locale,
            why(m.step)
        ),
        Origin::Default => {
            let tried: Vec<String> = rendered.lookup.iter().map(step_key).collect();
            format!("default{file}: no variant for {}", tried.join(", "))
        }
        Origin::Override { locale, step } => {
            format!("locale variant `{locale}`{file}: {}", why(*step))
        }
        Origin::User { .. } => describe_user(part),
        other => other.to_string(),
    }
}

/// Why locale matching chose a variant.
fn why(step: LocaleStep, rendered: &Rendered) -> String {
    let locale = &rendered.locale;
    match step {
        LocaleStep::Exact => format!("the render locale `{locale}`"),
        LocaleStep::Parent => format!("a CLDR parent of `{locale}`"),
        LocaleStep::SameScript => format!(
            "the same language and script as `{locale}` ({})",
            locale.language_script().unwrap_or_default()
        ),
        LocaleStep::Fallback => "the fallback locale".to_owned(),
        other => other.to_string(),
    }
}

/// ` (file)` for a part read from a pack file, relative to the pack.
fn file_of(part: &Part, pack_root: &Path) -> String {
    let Some(provenance) = part.provenance.as_deref() else {
        return String::new();
    };
    match (&provenance.file, provenance.source) {
        (Some(file), SourceKind::Pack) => {
            format!(
                " ({})",
                file.strip_prefix(pack_root).unwrap_or(file).display()
            )
        }
        (Some(file), _) => format!(" ({})", file.display()),
        (None, _) => String::new(),
    }
}

/// A block of the user's configuration: what, where, which mode, set by
/// which settings entry.
fn describe_user(part: &Part) -> String {
    let Some(user) = part.provenance.as_deref() else {
        return part.origin.to_string();
    };
    let mut what = format!("user {}", user.what);
    if let Some(file) = &user.file {
        what.push_str(&format!(" {}", file.display()));
    }
    if let Some(target) = &user.target {
        what.push_str(&format!(" → {}", target.display()));
    }
    if let Some(locale) = &user.locale {
        what.push_str(&format!(" for `{locale}`"));
    }
    if let Some(mode) = &user.mode {
        what.push_str(&format!(", mode {mode}"));
    }
    if let Some(setting) = &user.chosen_by {
        what.push_str(&format!(
            ", set at `{}` in {}:{}:{}",
            setting.key_path,
            setting.file.display(),
            setting.line,
            setting.column
        ));
    }
    what
}
