//! `promptreg render ID`: the final text, as the application sends it.

use promptreg::PromptRegistry;
use serde_json::json;

use super::Output;
use crate::cli::RenderArgs;
use crate::report::Failure;
use crate::session::{Session, read_context};

pub fn run(session: &Session, args: &RenderArgs) -> Result<Output, Failure> {
    let pack = session.pack()?;
    let registry = session.registry(&pack)?;
    let locale = session.locale(&pack)?;
    let ctx = read_context(args.ctx.as_deref(), args.max_ctx_size)?;
    let show = |registry: &PromptRegistry| -> Result<Output, Failure> {
        let text = registry
            .render_in(&args.id, &ctx, &locale)
            .map_err(|e| super::render_failure(&pack, &args.id, e))?;
        if session.args.json {
            let mut out = json!({ "id": args.id, "locale": locale.as_str(), "text": text });
            // What the application sends beside the text, when declared.
            let snapshot = registry.snapshot();
            if let Ok(Some(model)) = snapshot.model_settings(&args.id, &locale) {
                out["model"] = model.to_value();
            }
            let metadata = snapshot.default_prompt(&args.id).and_then(|p| p.metadata());
            if let Some(metadata) = metadata {
                out["metadata"] = metadata.to_value();
            }
            return Ok(Output::json(&out));
        }
        Ok(Output::prompt(text))
    };
    if args.watch {
        return super::follow::follow(&registry, session.args.json, show);
    }
    show(&registry)
}
