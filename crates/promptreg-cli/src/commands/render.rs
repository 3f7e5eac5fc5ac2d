//! `promptreg render ID`: the final text, as the application sends it; a
//! chat prompt's messages as role-headed text, or as JSON.

use promptreg::{Locale, Message, PromptRegistry};
use serde_json::json;

use super::Output;
use crate::cli::RenderArgs;
use crate::report::Failure;
use crate::session::{Session, read_context, read_history};

pub fn run(session: &Session, args: &RenderArgs) -> Result<Output, Failure> {
    let pack = session.pack()?;
    let registry = session.registry(&pack)?;
    let locale = session.locale(&pack)?;
    let ctx = read_context(args.ctx.as_deref(), args.max_ctx_size)?;
    let history = read_history(args.history.as_deref(), args.max_ctx_size)?;
    let history = super::history_slices(&history);
    let show = |registry: &PromptRegistry| -> Result<Output, Failure> {
        let snapshot = registry.snapshot();
        let failed = |e| super::render_failure(&pack, &args.id, e);
        let chat = snapshot.is_chat(&args.id, &locale).map_err(failed)?;
        if !chat && history.is_empty() {
            let text = snapshot
                .render_in(&args.id, &ctx, &locale)
                .map_err(failed)?;
            return Ok(match session.args.json {
                true => Output::json(&settings(
                    registry,
                    &args.id,
                    &locale,
                    ("text", json!(text)),
                )),
                false => Output::prompt(text),
            });
        }
        let messages = snapshot
            .render_messages_in(&args.id, &ctx, &locale, &history)
            .map_err(failed)?;
        if session.args.json {
            let messages = ("messages", json!(messages));
            return Ok(Output::json(&settings(
                registry, &args.id, &locale, messages,
            )));
        }
        Ok(Output::prompt(as_text(&messages)))
    };
    if args.watch {
        return super::follow::follow(&registry, session.args.json, show);
    }
    show(&registry)
}

fn as_text(messages: &[Message]) -> String {
    promptreg::messages_as_text(messages.iter().map(|m| (&m.role, m.content.as_str())))
}

/// The id, the locale, the rendered prompt (`"text"` or `"messages"`),
/// and what the application sends beside it when declared: its model
/// settings and metadata.
fn settings(
    registry: &PromptRegistry,
    id: &str,
    locale: &Locale,
    (key, rendered): (&str, serde_json::Value),
) -> serde_json::Value {
    let mut out = json!({ "id": id, "locale": locale.as_str() });
    out[key] = rendered;
    let snapshot = registry.snapshot();
    if let Ok(Some(model)) = snapshot.model_settings(id, locale) {
        out["model"] = model.to_value();
    }
    let metadata = snapshot.default_prompt(id).and_then(|p| p.metadata());
    if let Some(metadata) = metadata {
        out["metadata"] = metadata.to_value();
    }
    out
}
