//! The playground: render a version or label in a locale with a JSON
//! context (and chat history), with every part coloured by its origin.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::State;
use axum::response::Html;
use minijinja::context;
use promptreg::pack::Pack;
use promptreg::{Locale, Message, Origin, Part, PromptRegistry, Traced, Variable, VariableType};
use promptreg_store::VersionRef;
use serde::{Deserialize, Serialize};

use super::compare::{pack_with, version_ref};
use super::form::{MAX_FIELD, too_large};
use super::packs::require_read;
use super::page::Path;
use super::page::{PageError, render};
use crate::actions::explained;
use crate::body::RenderRequest;
use crate::cache::{Installed, Renderer};
use crate::extract::{PackName, PromptName, Query};
use crate::problem::{Problem, ProblemCode};
use crate::state::AppState;

/// The playground's fields.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Input {
    at: Option<String>,
    locale: Option<String>,
    /// Whom to render for: the arm of a split running on the label.
    subject: Option<String>,
    context: Option<String>,
    history: Option<String>,
}

/// A part of the result, with its origin.
#[derive(Debug, Serialize)]
struct Piece {
    /// The CSS class of its kind of origin.
    class: &'static str,
    origin: String,
    text: String,
}

/// A rendered message and its parts.
#[derive(Debug, Serialize)]
struct MessageView {
    role: String,
    content: String,
    pieces: Vec<Piece>,
}

/// `GET /packs/{pack}/prompts/{id}/playground?at=A&locale=L`.
pub(crate) async fn show(
    State(state): State<AppState>,
    Path((pack, id)): Path<(PackName, PromptName)>,
    Query(input): Query<Input>,
) -> Result<Html<String>, PageError> {
    let (pack, id) = (pack.as_str(), id.as_str());
    require_read(pack)?;
    let at = input
        .at
        .clone()
        .filter(|a| !a.trim().is_empty())
        .unwrap_or_else(|| "latest".to_owned());
    let history_text = input.history.clone().unwrap_or_else(|| "{}".to_owned());
    for (name, text) in [
        (
            "Context (JSON)",
            input.context.as_ref().unwrap_or(&String::new()),
        ),
        ("History (JSON)", &history_text),
    ] {
        if text.len() > MAX_FIELD {
            return Err(too_large(name, text.len()));
        }
    }
    let subject = input.subject.clone().unwrap_or_default();
    if subject.len() > MAX_FIELD {
        return Err(too_large("Subject", subject.len()));
    }
    let (renderer, arm) = renderer_at(&state, pack, id, &at, subject.trim()).await?;
    let pack_files = &renderer.pack;
    let context_text = match &input.context {
        Some(text) => text.clone(),
        None => starting_context(pack_files.prompt(id).map_or(&[][..], |p| p.variables())),
    };
    let locale_text = input
        .locale
        .clone()
        .filter(|l| !l.trim().is_empty())
        .unwrap_or_else(|| pack_files.default_locale().as_str().to_owned());
    let chat = pack_files
        .prompt(id)
        .and_then(|p| p.default_prompt())
        .is_some_and(|p| p.is_chat());
    // A render grows with the prompt: off the async workers, as the API's.
    let job = (
        renderer.clone(),
        id.to_owned(),
        locale_text.clone(),
        (context_text.clone(), history_text.clone()),
    );
    let outcome = state
        .heavy
        .run(move || {
            let (renderer, id, locale, (context, history)) = job;
            run(&renderer.registry, &id, &locale, &context, &history)
        })
        .await
        .and_then(|outcome| outcome);
    let (text, messages, error) = match outcome {
        Ok(Traced::Text(r)) => {
            let pieces = r
                .parts
                .iter()
                .map(|p| piece(p, r.part_text(p)))
                .collect::<Vec<_>>();
            (Some((r.text.clone(), pieces)), None, None)
        }
        Ok(Traced::Chat(c)) => {
            let messages: Vec<MessageView> = c
                .messages
                .iter()
                .map(|m| MessageView {
                    role: m.role.as_str().to_owned(),
                    content: m.content.clone(),
                    pieces: m.parts.iter().map(|p| piece(p, m.part_text(p))).collect(),
                })
                .collect();
            (None, Some(messages), None)
        }
        Err(e) => (
            None,
            None,
            Some(without_origin(&e.details().detail, pack_files)),
        ),
    };
    render(
        "playground.html",
        context! {
            pack, id, at, chat, error, subject, arm,
            text => super::page::data(&text),
            messages => super::page::data(&messages),
            locale => locale_text,
            context_text, history_text,
            legend => super::page::data(&LEGEND),
        },
    )
}

/// The context the playground starts with: every declared variable, with
/// its default, else an empty value of its declared type (a string when
/// it declares none), so a first Render works and shows what to fill in.
fn starting_context(variables: &[Variable]) -> String {
    let context: serde_json::Map<String, serde_json::Value> = variables
        .iter()
        .map(|v| {
            let value = v.default.clone().unwrap_or_else(|| match v.kind {
                Some(VariableType::Number) => serde_json::json!(0),
                Some(VariableType::Boolean) => serde_json::json!(false),
                Some(VariableType::List) => serde_json::json!([]),
                Some(VariableType::Object) => serde_json::json!({}),
                _ => serde_json::json!(""),
            });
            (v.name.clone(), value)
        })
        .collect();
    serde_json::to_string_pretty(&context).unwrap_or_else(|_| "{}".to_owned())
}

/// An error as the page shows it: file paths relative to the pack, not
/// under the store's internal name for the pack at a label
/// (`promptreg.db#goal-agent@latest/defaults/x.md`).
fn without_origin(detail: &str, pack: &Pack) -> String {
    let root = pack.root().display().to_string();
    detail
        .replace(&format!("{root}/"), "")
        .replace(&root, "the pack")
}

/// The kinds of origin, with their CSS class, for the legend.
const LEGEND: &[(&str, &str)] = &[
    ("origin-pin", "pinned block"),
    ("origin-default", "default text"),
    ("origin-override", "locale variant"),
    ("origin-user", "user configuration"),
    ("origin-append", "appended rule"),
];

fn piece(part: &Part, text: &str) -> Piece {
    let class = match part.origin {
        Origin::PinnedHead { .. } | Origin::PinnedTail { .. } => "origin-pin",
        Origin::Default => "origin-default",
        Origin::Override { .. } => "origin-override",
        Origin::User { .. } => "origin-user",
        _ => "origin-append",
    };
    Piece {
        class,
        origin: part.origin.to_string(),
        text: text.to_owned(),
    }
}

/// Parses the fields and renders with the trace, as `POST …/explain` does.
fn run(
    registry: &PromptRegistry,
    id: &str,
    locale: &str,
    context: &str,
    history: &str,
) -> Result<Traced, Problem> {
    let context: serde_json::Value = serde_json::from_str(context).map_err(|e| {
        Problem::bad_request(
            ProblemCode::InvalidContext,
            format!("Context (JSON) is not valid JSON: {e}"),
        )
    })?;
    let history: BTreeMap<String, Vec<Message>> = serde_json::from_str(history).map_err(|e| {
        Problem::bad_request(
            ProblemCode::InvalidHistory,
            format!("History (JSON) must map each placeholder to a list of {{\"role\", \"content\"}} messages: {e}"),
        )
    })?;
    let locale = Locale::parse(locale)?;
    let request = RenderRequest {
        label: String::new(),
        locale: None,
        context,
        history,
        subject: None,
        format: None,
    };
    explained(registry, id, &request, &locale)
}

/// The pack installed at a label (from the cache, as the API renders; the
/// candidate of its split when `subject` gets it) or at one version of
/// this prompt (the pack at `latest` around it); with a split and a
/// subject, the arm, as `split 4: candidate`.
async fn renderer_at(
    state: &AppState,
    pack: &str,
    id: &str,
    at: &str,
    subject: &str,
) -> Result<(Renderer, Option<String>), PageError> {
    match version_ref(at)? {
        VersionRef::Label(label) => {
            let mut view = state.cache.label(pack, &label).await?;
            let mut arm = None;
            if let Some(split) = view.split.as_ref().filter(|_| !subject.is_empty()) {
                let picked = split.rule.arm(subject);
                arm = Some(format!("split {}: {}", split.rule.id, picked.as_str()));
                if picked == promptreg::split::Arm::Candidate {
                    view = state.cache.candidate(pack, &label).await?;
                }
            }
            Ok((view.renderer_in(&state.heavy).await?, arm))
        }
        number => {
            let (_, files) = state.store.files(pack, id, &number).await?;
            let built = pack_with(state, pack, id, &files).await?;
            Ok((Arc::new(Installed::new(built)?), None))
        }
    }
}
