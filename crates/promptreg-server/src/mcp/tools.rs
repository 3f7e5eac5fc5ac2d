//! The tools `serve --mcp-tools` offers MCP sessions, for agents that
//! improve prompts: read a pack's labels, a label's revisions and a diff
//! of two versions; run the pack's tests on a proposed change; propose a
//! change, which becomes a new version on `latest`. No tool moves a
//! label: a change reaches a gated, protected or signed label only
//! through a person's release.
//!
//! Each call is logged with the key that made it (`mcp tool call`); a
//! proposed version is recorded in the store as the key's.

use std::collections::BTreeMap;
use std::sync::Arc;

use promptreg::Locale;
use promptreg_mcp::rmcp::ErrorData;
use promptreg_mcp::rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use promptreg_store::{Label, Scope, VersionRef};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::actions::{prompt_file_path, save_version};
use crate::auth::Caller;
use crate::body::{DiffResponse, Revisions};
use crate::problem::Problem;
use crate::state::AppState;
use crate::web::TestResults;

/// The tools, with their arguments' schemas.
pub(crate) fn tools() -> Vec<Tool> {
    let text = |description: &str| json!({ "type": "string", "description": description });
    let pack = text("The pack's name");
    let prompt = text("The prompt id");
    let files = json!({
        "type": "object",
        "description": "The prompt's files by path in the pack (`defaults/<id>.md`, `defaults/<id>.<locale>.md`) and their new text",
        "additionalProperties": { "type": "string" },
        "minProperties": 1,
    });
    let tool =
        |name: &'static str, description: &'static str, properties: Value, read_only: bool| {
            let required: Vec<&String> = properties
                .as_object()
                .map(|p| p.keys().collect())
                .unwrap_or_default();
            let schema = json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            });
            let schema: JsonObject = schema.as_object().cloned().unwrap_or_default();
            let annotations = ToolAnnotations::from_raw(
                None,
                Some(read_only),
                Some(false),
                Some(read_only),
                Some(false),
            );
            Tool::new(name, description, Arc::new(schema)).annotate(annotations)
        };
    vec![
        tool(
            "list_labels",
            "The prompts of a pack, each with its versions and the labels that point at them.",
            json!({ "pack": pack }),
            true,
        ),
        tool(
            "list_revisions",
            "The revisions of a label of a pack, newest first, with what each changed.",
            json!({ "pack": pack, "label": text("The label, like `production`") }),
            true,
        ),
        tool(
            "diff_versions",
            "A unified diff of two versions of a prompt, file by file.",
            json!({
                "pack": pack, "prompt": prompt,
                "from": text("A version (`3`, `v3`) or a label"),
                "to": text("A version (`4`, `v4`) or a label"),
            }),
            true,
        ),
        tool(
            "test_change",
            "Runs the pack's prompt tests on `latest` with a proposed change to one prompt's files; nothing is saved.",
            json!({ "pack": pack, "prompt": prompt, "files": files }),
            true,
        ),
        tool(
            "propose_change",
            "Saves a proposed change to one prompt's files as a new version on `latest` (never a label move): a person releases it. Needs a key that may write.",
            json!({ "pack": pack, "prompt": prompt, "files": files, "message": text("Why, recorded with the version") }),
            false,
        ),
    ]
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PackArgs {
    pack: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LabelArgs {
    pack: String,
    label: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DiffArgs {
    pack: String,
    prompt: String,
    from: String,
    to: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangeArgs {
    pack: String,
    prompt: String,
    files: BTreeMap<String, String>,
    #[serde(default)]
    message: Option<String>,
}

/// `arguments` as tool `name` takes them.
fn parsed<T: DeserializeOwned>(name: &str, arguments: JsonObject) -> Result<T, ErrorData> {
    serde_json::from_value(Value::Object(arguments)).map_err(|e| {
        ErrorData::invalid_params(
            format!("the arguments of `{name}` do not fit its schema: {e}"),
            Some(json!({ "tool": name })),
        )
    })
}

/// Calls tool `name` for `caller`.
pub(crate) async fn call(
    state: &AppState,
    caller: &Caller,
    name: &str,
    arguments: JsonObject,
) -> Result<CallToolResult, ErrorData> {
    let pack = arguments
        .get("pack")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    tracing::info!(key = caller.name(), tool = name, pack, "mcp tool call");
    let answered = match name {
        "list_labels" => {
            let args: PackArgs = parsed(name, arguments)?;
            list_labels(state, caller, &args.pack).await
        }
        "list_revisions" => {
            let args: LabelArgs = parsed(name, arguments)?;
            list_revisions(state, caller, &args).await
        }
        "diff_versions" => {
            let args: DiffArgs = parsed(name, arguments)?;
            diff_versions(state, caller, &args).await
        }
        "test_change" => {
            let args: ChangeArgs = parsed(name, arguments)?;
            test_change(state, caller, &args).await
        }
        "propose_change" => {
            let args: ChangeArgs = parsed(name, arguments)?;
            let message = args
                .message
                .clone()
                .unwrap_or_else(|| "proposed over MCP".to_owned());
            save_version(
                state,
                caller,
                &args.pack,
                &args.prompt,
                args.files,
                &message,
            )
            .await
            .map(|created| serde_json::to_value(created).unwrap_or_default())
        }
        other => {
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool named `{}`: `tools/list` lists the tools",
                    crate::extract::shown(other, 100)
                ),
                None,
            ));
        }
    };
    Ok(match answered {
        Ok(value) => CallToolResult::success(vec![ContentBlock::text(
            serde_json::to_string_pretty(&value).unwrap_or_default(),
        )]),
        Err(problem) => {
            CallToolResult::error(vec![ContentBlock::text(problem.details().detail.clone())])
        }
    })
}

async fn list_labels(state: &AppState, caller: &Caller, pack: &str) -> Result<Value, Problem> {
    caller.require(pack, Scope::Read)?;
    let listing = state.cache.listing(pack).await?;
    Ok(serde_json::from_slice(&listing.body).unwrap_or_default())
}

async fn list_revisions(
    state: &AppState,
    caller: &Caller,
    args: &LabelArgs,
) -> Result<Value, Problem> {
    caller.require(&args.pack, Scope::Read)?;
    let label = crate::extract::label(&args.label)?;
    let revisions = state.store.revisions(&args.pack, &label).await?;
    let body = Revisions::of(&args.pack, label.as_str(), &revisions);
    Ok(serde_json::to_value(body).unwrap_or_default())
}

async fn diff_versions(
    state: &AppState,
    caller: &Caller,
    args: &DiffArgs,
) -> Result<Value, Problem> {
    caller.require(&args.pack, Scope::Read)?;
    let version = |text: &str| -> Result<VersionRef, Problem> {
        let number = text
            .strip_prefix('v')
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        Ok(number.unwrap_or(text).parse()?)
    };
    let (from, to) = (version(&args.from)?, version(&args.to)?);
    let diff = state
        .store
        .diff(&args.pack, &args.prompt, &from, &to, None::<&Locale>)
        .await?;
    Ok(serde_json::to_value(DiffResponse::from(diff)).unwrap_or_default())
}

async fn test_change(
    state: &AppState,
    caller: &Caller,
    args: &ChangeArgs,
) -> Result<Value, Problem> {
    caller.require(&args.pack, Scope::Read)?;
    let mut files = state.store.checkout(&args.pack, &Label::latest()).await?;
    for (path, text) in &args.files {
        files.insert(prompt_file_path(&args.prompt, path)?, text.clone());
    }
    let results = TestResults::of(&state.heavy, Ok(files)).await;
    Ok(serde_json::to_value(results).unwrap_or_default())
}
