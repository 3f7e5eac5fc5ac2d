//! `promptreg render ID`: the final text, as the application sends it; a
//! chat prompt's messages as role-headed text, or as JSON.

use std::path::Path;
use std::sync::Arc;

use promptreg::pack::Pack;
use promptreg::{
    ErrorKind, Locale, Message, PromptRegistry, Provider, RenderRequest, Rendering, Snapshot,
};
use serde_json::json;

use super::Output;
use crate::cli::RenderCommandArgs;
use crate::options::{Session, read_context, read_history};
use crate::report::Failure;

pub fn run(session: &Session, command: &RenderCommandArgs) -> Result<Output, Failure> {
    let args = &command.render;
    let pack = session.pack_for(&[&args.id])?;
    let registry = session.registry(&pack)?;
    let request = Request::read(
        session,
        &pack,
        &args.id,
        (args.ctx.as_deref(), args.history.as_deref()),
        args.max_ctx_size,
    )?
    .in_format(command.format);
    let show = |registry: &PromptRegistry| show(session, &pack, registry, &request);
    if args.watch {
        return super::follow::follow(&registry, session.args.json, show);
    }
    show(&registry)
}

/// What to render: the prompt, its context and histories, the locale.
pub struct Request<'a> {
    pub id: &'a str,
    ctx: serde_json::Value,
    /// Whether `--ctx` was given: a template missing variables says to.
    ctx_given: bool,
    history: Vec<(String, Vec<Message>)>,
    locale: Locale,
    /// Whose arm of a split to render (`follow --subject`); `None`: the
    /// label's own state.
    subject: Option<&'a str>,
    /// The provider whose request body to print (`render --format`).
    format: Option<Provider>,
}

impl<'a> Request<'a> {
    /// Reads the context and history files (`ctx`, `history`), at most
    /// `max_bytes` each, and picks the locale for `pack`.
    pub fn read(
        session: &Session,
        pack: &Pack,
        id: &'a str,
        (ctx, history): (Option<&Path>, Option<&Path>),
        max_bytes: u64,
    ) -> Result<Self, Failure> {
        Ok(Request {
            id,
            ctx: read_context(ctx, max_bytes)?,
            ctx_given: ctx.is_some(),
            history: read_history(history, max_bytes)?,
            locale: session.locale(pack)?,
            subject: None,
            format: None,
        })
    }

    /// Prints the request body of `format`, when given.
    pub fn in_format(self, format: Option<Provider>) -> Self {
        Request { format, ..self }
    }

    /// Renders what `subject` is served: a split's candidate when its
    /// share picks the subject.
    pub fn for_subject(self, subject: Option<&'a str>) -> Self {
        Request { subject, ..self }
    }

    /// The state this request renders from.
    fn snapshot(&self, registry: &PromptRegistry) -> Arc<Snapshot> {
        match self.subject {
            Some(subject) => registry.snapshot_for(subject),
            None => registry.snapshot(),
        }
    }
}

/// The prompt as the application sends it: its text, or a chat prompt's
/// messages, plain or as JSON.
pub fn show(
    session: &Session,
    pack: &Pack,
    registry: &PromptRegistry,
    request: &Request<'_>,
) -> Result<Output, Failure> {
    let (id, ctx, locale) = (request.id, &request.ctx, &request.locale);
    let history = super::history_slices(&request.history);
    let snapshot = request.snapshot(registry);
    let failed = |e: promptreg::Error| {
        let e = match e.kind() {
            ErrorKind::Template if !request.ctx_given => {
                e.with_suggestion("pass the variables with `--ctx FILE`, a JSON object")
            }
            _ => e,
        };
        super::render_failure(pack, id, e)
    };
    if let Some(provider) = request.format {
        let render = RenderRequest::new(id, ctx)
            .locale(locale)
            .histories(&history);
        let body = snapshot
            .provider_request(&render, provider)
            .map_err(failed)?;
        return Ok(Output::json(&body));
    }
    let messages = match snapshot
        .render_any_in(id, ctx, locale, &history)
        .map_err(failed)?
    {
        Rendering::Text(text) => {
            return Ok(match session.args.json {
                true => Output::json(&settings(&snapshot, id, locale, ("text", json!(text)))),
                false => Output::prompt(text),
            });
        }
        Rendering::Messages(messages) => messages,
    };
    if session.args.json {
        let messages = ("messages", json!(messages));
        return Ok(Output::json(&settings(&snapshot, id, locale, messages)));
    }
    Ok(Output::prompt(as_text(&messages)))
}

fn as_text(messages: &[Message]) -> String {
    promptreg::messages_as_text(messages.iter().map(|m| (&m.role, m.content.as_str())))
}

/// The id, the locale, the rendered prompt (`"text"` or `"messages"`),
/// and what the application sends beside it when declared: its model
/// settings and metadata.
fn settings(
    snapshot: &Snapshot,
    id: &str,
    locale: &Locale,
    (key, rendered): (&str, serde_json::Value),
) -> serde_json::Value {
    let mut out = json!({ "id": id, "locale": locale.as_str() });
    out[key] = rendered;
    if let Ok(Some(model)) = snapshot.model_settings(id, locale) {
        out["model"] = model.to_value();
    }
    let metadata = snapshot.default_prompt(id).and_then(|p| p.metadata());
    if let Some(metadata) = metadata {
        out["metadata"] = metadata.to_value();
    }
    out
}
