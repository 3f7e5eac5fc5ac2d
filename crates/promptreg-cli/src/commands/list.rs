//! `promptreg list`: every prompt, its variants, and what configures it.

use std::collections::BTreeSet;

use promptreg::config::LoadedConfig;
use promptreg::config::SettingsBlock;
use promptreg::config::{Scope, UserFileInfo};
use promptreg::pack::Pack;
use promptreg::{PromptId, Snapshot};
use serde::Serialize;

use super::Output;
use crate::options::Session;
use crate::report::Failure;
use crate::style::Paint;

pub fn run(session: &Session) -> Result<Output, Failure> {
    let pack = session.pack()?;
    let snapshot = session.registry(&pack)?.snapshot();
    let ids: BTreeSet<PromptId> = pack
        .prompts()
        .map(|p| p.id().clone())
        .chain(pack.spec().keys().cloned())
        .collect();
    let rows: Vec<Row> = ids
        .iter()
        .map(|id| Row::new(&pack, &snapshot, id))
        .collect();
    if session.args.json {
        return Ok(Output::json(
            &serde_json::to_value(&rows).unwrap_or_default(),
        ));
    }
    Ok(Output::text(table(
        &rows,
        Paint {
            color: session.color,
        },
    )))
}

#[derive(Serialize)]
struct Row {
    id: String,
    /// `text` or `chat`, in the listed locale.
    kind: &'static str,
    description: String,
    /// The model settings for the listed locale, when declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<serde_json::Value>,
    locales: Vec<String>,
    /// Variants of no known language (`ja.md` misnamed `jp.md`): no
    /// render reaches them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    never_used: Vec<String>,
    /// Variants translated from an older text of the default.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stale: Vec<String>,
    layers: Vec<String>,
    user: UserColumns,
}

/// What the user's configuration says of one prompt.
#[derive(Serialize)]
struct UserColumns {
    settings: Option<SettingsBlock>,
    files: Vec<UserFileInfo>,
}

impl Row {
    fn new(pack: &Pack, snapshot: &Snapshot, id: &PromptId) -> Row {
        let prompt = pack.prompt(id);
        let variants: Vec<&promptreg::Locale> = prompt
            .map(|p| p.variants().map(|(l, _)| l).collect())
            .unwrap_or_default();
        let locales: Vec<String> = variants.iter().map(|l| l.to_string()).collect();
        let never_used: Vec<String> = variants
            .iter()
            .filter(|l| !l.names_known_language())
            .map(|l| l.to_string())
            .collect();
        let stale: Vec<String> = variants
            .iter()
            .filter(|l| {
                prompt
                    .and_then(|p| p.translation(l))
                    .is_some_and(|t| t.is_stale())
            })
            .map(|l| l.to_string())
            .collect();
        let chat = snapshot.is_chat(id, snapshot.locale()).unwrap_or(false);
        let mut layers = Vec::new();
        if chat {
            layers.push("chat".to_owned());
        }
        if prompt.is_some_and(|p| p.default_prompt().is_some()) {
            layers.push("default".to_owned());
        } else {
            // Worded as `check` and `render` word it.
            let path = pack.default_path(id);
            let file = path.strip_prefix(pack.root()).unwrap_or(&path);
            layers.push(format!("declared, but no default file {}", file.display()));
        }
        if !locales.is_empty() {
            let shown: Vec<String> = locales
                .iter()
                .map(|l| match (never_used.contains(l), stale.contains(l)) {
                    (true, _) => format!("{l} (never used: no known language)"),
                    (false, true) => format!("{l} (stale)"),
                    (false, false) => l.clone(),
                })
                .collect();
            layers.push(format!("variants: {}", shown.join(", ")));
        }
        let model = snapshot
            .model_settings(id, snapshot.locale())
            .ok()
            .flatten();
        if let Some(model) = &model {
            layers.extend(brief(model));
        }
        let loaded = LoadedConfig::of(snapshot);
        let settings = loaded.and_then(|c| c.settings().prompt(id));
        if let Some(block) = settings {
            let s = &block.settings;
            if let Some(mode) = s.mode {
                layers.push(format!("user mode {mode}"));
            }
            if s.inline.is_some() {
                layers.push("user inline".to_owned());
            }
            if let Some(file) = &s.file {
                layers.push(format!("user file setting {}", promptreg::printable(file)));
            }
        }
        let files = loaded.map(|c| c.files(id)).unwrap_or_default();
        layers.extend(files.iter().map(describe_file));
        Row {
            id: id.to_string(),
            kind: if chat { "chat" } else { "text" },
            description: prompt
                .and_then(|p| p.description())
                .unwrap_or_default()
                .to_owned(),
            model: model.map(|m| m.to_value()),
            metadata: snapshot
                .default_prompt(id)
                .and_then(|p| p.metadata())
                .map(|m| m.to_value()),
            user: UserColumns {
                settings: settings.cloned(),
                files,
            },
            locales,
            never_used,
            stale,
            layers,
        }
    }
}

/// The model settings in a few words: the model's name, its temperature
/// and token limit when set (`--json` gives them all).
fn brief(model: &promptreg::JsonObject) -> Option<String> {
    let mut out = format!("model {}", model.model_name()?);
    let details: Vec<String> = ["temperature", "max_tokens"]
        .into_iter()
        .filter_map(|key| Some(format!("{key} {}", model.get(key)?)))
        .collect();
    if !details.is_empty() {
        out.push_str(&format!(" ({})", details.join(", ")));
    }
    Some(promptreg::printable(&out).into_owned())
}

fn describe_file(file: &UserFileInfo) -> String {
    let scope = match file.scope {
        Some(Scope::Global) => "global",
        Some(Scope::Local) => "local",
        None => "named",
    };
    let kind = if file.legacy { "legacy file" } else { "file" };
    match &file.locale {
        Some(locale) => format!("user {scope} {kind} ({locale})"),
        None => format!("user {scope} {kind}"),
    }
}

fn table(rows: &[Row], paint: Paint) -> String {
    let width = rows.iter().map(|r| r.id.len()).max().unwrap_or(2).max(2);
    let mut out = String::new();
    for row in rows {
        let id = format!("{:width$}", row.id);
        out.push_str(&format!("{}  {}\n", paint.heading(&id), row.description));
        out.push_str(&format!(
            "{:width$}  {}\n",
            "",
            paint.dim(&row.layers.join("; "))
        ));
    }
    out
}
