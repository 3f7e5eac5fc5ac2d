//! `promptreg explain ID`: the final text part by part, with where each
//! part came from and why, printed from the render's trace
//! ([`Rendered`], or [`RenderedChat`] for a chat prompt: each message and
//! its parts): nothing here works a rule out again.

use std::path::Path;

use promptreg::{
    Contract, JsonObject, Locale, LocaleStep, LookupStep, MessageSource, Origin, Part,
    PromptRegistry, Provenance, Rendered, RenderedChat, SourceKind, Traced,
};

use super::Output;
use crate::cli::RenderArgs;
use crate::options::{Session, read_context, read_history};
use crate::report::Failure;
use crate::style::Paint;

/// What every part's account needs of the render: its locale and the
/// steps of locale matching.
#[derive(Clone, Copy)]
struct Trace<'a> {
    locale: &'a Locale,
    lookup: &'a [LookupStep],
}

pub fn run(session: &Session, args: &RenderArgs) -> Result<Output, Failure> {
    let pack = session.pack_for(&[&args.id])?;
    let registry = session.registry(&pack)?;
    let locale = session.locale(&pack)?;
    let ctx = read_context(args.ctx.as_deref(), args.max_ctx_size)?;
    let history = read_history(args.history.as_deref(), args.max_ctx_size)?;
    let history = super::history_slices(&history);
    let paint = Paint {
        color: session.color,
    };
    let show = |registry: &PromptRegistry| -> Result<Output, Failure> {
        let snapshot = registry.snapshot();
        let failed = |e| super::render_failure(&pack, &args.id, e);
        let traced = snapshot
            .render_any_traced_in(&args.id, &ctx, &locale, &history)
            .map_err(failed)?;
        if session.args.json {
            return Ok(Output::json(
                &serde_json::to_value(&traced).unwrap_or_default(),
            ));
        }
        Ok(Output::text(match &traced {
            Traced::Chat(rendered) => chat_text(rendered, pack.root(), paint),
            Traced::Text(rendered) => text(rendered, pack.root(), paint),
        }))
    };
    if args.watch {
        return super::follow::follow(&registry, session.args.json, show);
    }
    show(&registry)
}

fn text(rendered: &Rendered, pack_root: &Path, paint: Paint) -> String {
    let trace = Trace {
        locale: &rendered.locale,
        lookup: &rendered.lookup,
    };
    let matched = matched_variant(&rendered.parts);
    let mut out = heading(&rendered.id, trace, matched, rendered.model.as_ref(), paint);
    out.push_str(&contract_lines(
        rendered.contract.as_deref(),
        pack_root,
        paint,
    ));
    out.push_str(&parts(
        &rendered.parts,
        |p| rendered.part_text(p),
        trace,
        pack_root,
        paint,
    ));
    if rendered.parts.is_empty() {
        out.push_str(&paint.dim("(every part rendered blank)\n"));
    }
    out
}

/// A chat prompt: each message with its role, then its parts.
fn chat_text(rendered: &RenderedChat, pack_root: &Path, paint: Paint) -> String {
    let trace = Trace {
        locale: &rendered.locale,
        lookup: &rendered.lookup,
    };
    let matched = matched_variant(rendered.messages.iter().flat_map(|m| &m.parts));
    let mut out = heading(&rendered.id, trace, matched, rendered.model.as_ref(), paint);
    out.push_str(&contract_lines(
        rendered.contract.as_deref(),
        pack_root,
        paint,
    ));
    for (number, message) in (1..).zip(&rendered.messages) {
        let source = match &message.source {
            MessageSource::History { name, index } => {
                format!(" (history `{name}`, message {})", index + 1)
            }
            _ => String::new(),
        };
        let line = format!("━━ message {number}: {}{source}", message.role);
        out.push_str(&paint.heading(&promptreg::printable(&line)));
        out.push('\n');
        if message.parts.is_empty() {
            out.push_str(&message.content);
            out.push('\n');
        }
        out.push_str(&parts(
            &message.parts,
            |p| message.part_text(p),
            trace,
            pack_root,
            paint,
        ));
    }
    if rendered.messages.is_empty() {
        out.push_str(&paint.dim("(every message rendered blank)\n"));
    }
    out
}

/// The locale variant the body (or the messages) came from, and the step
/// of locale matching that found it; `None` for the default.
fn matched_variant<'a>(
    parts: impl IntoIterator<Item = &'a Part>,
) -> Option<(&'a Locale, LocaleStep)> {
    parts.into_iter().find_map(|part| match &part.origin {
        Origin::Override { locale, step } => Some((locale, *step)),
        _ => None,
    })
}

/// The first lines: the id, locale and lookup, and the model settings.
/// The lookup stops at the step where a variant matched (`ja-JP → ja`),
/// naming the variant a same-script step found (`zh-HK → zh-Hant → same
/// script: zh-TW`); without one, it ends at the default.
fn heading(
    id: &str,
    trace: Trace<'_>,
    matched: Option<(&Locale, LocaleStep)>,
    model: Option<&JsonObject>,
    paint: Paint,
) -> String {
    let mut lookup: Vec<String> = Vec::new();
    let mut found = false;
    for step in trace.lookup {
        match matched {
            Some((locale, LocaleStep::SameScript)) if step.step == LocaleStep::SameScript => {
                lookup.push(format!("same script: {locale}"));
                found = true;
            }
            Some((locale, _))
                if step.step != LocaleStep::SameScript && step.key == locale.as_str() =>
            {
                lookup.push(step.key.clone());
                found = true;
            }
            _ => lookup.push(step_key(step)),
        }
        if found {
            break;
        }
    }
    if !found {
        lookup.push("default".to_owned());
    }
    let mut out = paint.heading(&format!("{id} [{}]", trace.locale));
    out.push_str(&paint.dim(&format!(" lookup: {}\n", lookup.join(" → "))));
    if let Some(model) = model {
        // Printable: the settings are the pack's text.
        let line = format!("model settings: {}", model.as_json());
        out.push_str(&paint.dim(&promptreg::printable(&line)));
        out.push('\n');
    }
    out
}

/// The tools and output schema, and the file they came from (a locale
/// variant's when it translated them).
fn contract_lines(contract: Option<&Contract>, pack_root: &Path, paint: Paint) -> String {
    let Some(contract) = contract else {
        return String::new();
    };
    let from = contract
        .provenance()
        .map(|p| provenance_file(p, pack_root))
        .unwrap_or_default();
    let mut out = String::new();
    if !contract.tools().is_empty() {
        let names: Vec<String> = contract
            .tools()
            .iter()
            .map(|tool| match tool.origin() {
                Some(origin) => format!("{} ({origin})", tool.name()),
                None => tool.name().to_owned(),
            })
            .collect();
        let line = format!("tools{from}: {}", names.join(", "));
        out.push_str(&paint.dim(&promptreg::printable(&line)));
        out.push('\n');
    }
    if let Some(output) = contract.output() {
        let line = match output.origin() {
            Some(origin) => format!(
                "output schema `{}`{from}, its schema in {origin}",
                output.name()
            ),
            None => format!("output schema `{}`{from}", output.name()),
        };
        out.push_str(&paint.dim(&promptreg::printable(&line)));
        out.push('\n');
    }
    out
}

/// Each part: a line saying where it came from, then its text.
fn parts<'a>(
    parts: &'a [Part],
    text_of: impl Fn(&'a Part) -> &'a str,
    trace: Trace<'_>,
    pack_root: &Path,
    paint: Paint,
) -> String {
    let mut out = String::new();
    for part in parts {
        // Printable: an origin names files and settings from the user's files.
        let mut what = describe(part, trace, pack_root);
        if part.provenance.as_deref().is_some_and(|p| p.stale) {
            what.push_str(" [stale: its default changed since it was translated; `promptreg check` shows the change]");
        }
        let what = promptreg::printable(&what).into_owned();
        out.push_str(&paint.origin(&format!("── {what}\n")));
        out.push_str(text_of(part));
        out.push('\n');
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
fn describe(part: &Part, trace: Trace<'_>, pack_root: &Path) -> String {
    let file = file_of(part, pack_root);
    let why = |step: LocaleStep| why(step, trace.locale);
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
            let tried: Vec<String> = trace.lookup.iter().map(step_key).collect();
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
fn why(step: LocaleStep, locale: &Locale) -> String {
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

/// ` (file)` for a part read from a pack file, relative to the pack; for
/// one read from a server, its whole address (server, pack, label, file)
/// and its prompt's version there.
fn file_of(part: &Part, pack_root: &Path) -> String {
    let in_pack = |file: &'_ Path| {
        file.strip_prefix(pack_root)
            .unwrap_or(file)
            .display()
            .to_string()
    };
    let mut shown: Vec<String> = Vec::new();
    if let Some(provenance) = part.provenance.as_deref() {
        shown.extend(file_named(provenance, pack_root));
    }
    // A block written as `{% include "x" %}` came from the snippet's file.
    if !part.snippets.is_empty() {
        let files: Vec<String> = part.snippets.iter().map(|f| in_pack(f)).collect();
        shown.push(format!("from snippet {}", files.join(", ")));
    }
    match shown.is_empty() {
        true => String::new(),
        false => format!(" ({})", shown.join(", ")),
    }
}

/// ` (file)` for what `provenance` names, as [`file_of`] shows it.
fn provenance_file(provenance: &Provenance, pack_root: &Path) -> String {
    file_named(provenance, pack_root)
        .map(|file| format!(" ({file})"))
        .unwrap_or_default()
}

/// The file `provenance` names: relative to the pack for a pack's file,
/// with its version for one read from a store.
fn file_named(provenance: &Provenance, pack_root: &Path) -> Option<String> {
    let file = provenance.file.as_deref()?;
    Some(match (provenance.version, provenance.source) {
        (Some(version), _) => format!("{}, version {version}", file.display()),
        (None, SourceKind::Pack) => file
            .strip_prefix(pack_root)
            .unwrap_or(file)
            .display()
            .to_string(),
        (None, _) => file.display().to_string(),
    })
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
