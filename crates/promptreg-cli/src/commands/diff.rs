//! `promptreg diff ID`: what the user's configuration does to a prompt.

use serde_json::json;
use similar::TextDiff;

use super::Output;
use crate::cli::DiffArgs;
use crate::options::{Session, read_context};
use crate::report::Failure;
use crate::style::Paint;

pub fn run(session: &Session, args: &DiffArgs) -> Result<Output, Failure> {
    let pack = session.pack()?;
    let locale = session.locale(&pack)?;
    let ctx = read_context(args.ctx.as_deref(), args.max_ctx_size)?;
    // A chat prompt is compared as role-headed text.
    let host = session
        .host_registry(&pack)?
        .render_chat_as_text(&args.id, &ctx, &locale, &[])?;
    let user = session
        .registry(&pack)?
        .render_chat_as_text(&args.id, &ctx, &locale, &[])?;
    let (old, new) = (with_newline(&host), with_newline(&user));
    let diff = TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("{} (host default)", args.id),
            &format!("{} (with user configuration)", args.id),
        )
        .to_string();
    // As diff(1): 0 when the texts are the same, 1 when they differ.
    let code = exit_code(host != user);
    let mut output = if session.args.json {
        Output::json(&json!({
            "id": args.id,
            "locale": locale.as_str(),
            "changed": host != user,
            "default": host,
            "final": user,
            "diff": diff,
        }))
    } else if host == user {
        Output::text(format!(
            "{}: the user's configuration changes nothing\n",
            args.id
        ))
    } else {
        let paint = Paint {
            color: session.color,
        };
        Output::text(paint.diff(&diff))
    };
    output.code = code;
    Ok(output)
}

/// The exit code of a comparison, as diff(1)'s: 0 when the texts are the
/// same, 1 when they differ (2, an error, is any failure's).
pub(crate) fn exit_code(differ: bool) -> u8 {
    u8::from(differ)
}

/// Compares whole lines, the last one included.
fn with_newline(text: &str) -> String {
    format!("{text}\n")
}
