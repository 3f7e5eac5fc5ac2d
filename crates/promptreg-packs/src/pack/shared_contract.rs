//! Tools and schemas a pack's prompts share, each in a file of its own:
//! `tools/<name>.yaml` (or `.yml`, `.json`) holds a tool's `description`
//! and `parameters`, `schemas/<name>.yaml` a JSON Schema. A prompt names
//! them in its front matter (see `contract.rs`): `- open_page` in its
//! `tools`, `output: audit_verdict`, or a schema's name where a schema
//! goes. Each file is read and checked once, at load, as a schema in front
//! matter is; a prompt that names one gets it as the file says.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::diagnostic::{Diagnostic, DiagnosticCode, Diagnostics, Position};
use crate::json_schema;
use crate::model_check::kind;
use crate::suggest;

use super::snippets::PackFolder;

/// The folder of shared tools inside a pack.
pub const TOOLS_DIR: &str = "tools";

/// The folder of shared schemas inside a pack.
pub const SCHEMAS_DIR: &str = "schemas";

/// The endings of the files read in those folders.
const ENDINGS: [&str; 3] = [".yaml", ".yml", ".json"];

/// The keys of a shared tool's file.
const TOOL_KEYS: [&str; 2] = ["description", "parameters"];

/// A shared tool, as its file declares it.
#[derive(Debug, Clone)]
pub(crate) struct SharedTool {
    /// Its file, by path in the pack: `tools/open_page.yaml`.
    pub(crate) file: String,
    pub(crate) description: String,
    /// A JSON Schema of an object; without one, the tool takes nothing.
    pub(crate) parameters: Value,
}

/// A shared schema, as its file declares it.
#[derive(Debug, Clone)]
pub(crate) struct SharedSchema {
    /// Its file, by path in the pack: `schemas/audit_verdict.yaml`.
    pub(crate) file: String,
    pub(crate) schema: Value,
}

/// The tools and schemas of a pack's `tools/` and `schemas/`, by name.
#[derive(Debug, Clone, Default)]
pub(crate) struct SharedContract {
    tools: BTreeMap<String, SharedTool>,
    schemas: BTreeMap<String, SharedSchema>,
}

impl SharedContract {
    /// The shared tool `name`, or why there is none (a suggestion).
    pub(crate) fn tool(&self, name: &str) -> Result<&SharedTool, String> {
        self.tools
            .get(name)
            .ok_or_else(|| missing(name, TOOLS_DIR, self.tools.keys()))
    }

    /// The shared schema `name`, or why there is none (a suggestion).
    pub(crate) fn schema(&self, name: &str) -> Result<&SharedSchema, String> {
        self.schemas
            .get(name)
            .ok_or_else(|| missing(name, SCHEMAS_DIR, self.schemas.keys()))
    }

    /// Each file's path in the pack and text, for the pack's digest: a
    /// shared file may change any prompt, as the manifest may.
    pub(crate) fn digest_input(&self) -> Vec<(&str, String)> {
        let tools = self.tools.values().map(|t| {
            let text = format!("{}\n{}", t.description, t.parameters);
            (t.file.as_str(), text)
        });
        let schemas = self
            .schemas
            .values()
            .map(|s| (s.file.as_str(), s.schema.to_string()));
        tools.chain(schemas).collect()
    }
}

/// How to fix a name that is not there: the nearest, or the file to write.
fn missing<'a>(name: &str, dir: &str, known: impl Iterator<Item = &'a String>) -> String {
    suggest::did_you_mean(name, known.map(String::as_str))
        .unwrap_or_else(|| format!("create {dir}/{name}.yaml, or declare it here in full"))
}

/// Every shared file of the pack at `root` (`tools/*.yaml`,
/// `schemas/*.json`...), read; none when the folders do not exist. A file
/// whose path leads outside the pack (a symbolic link) is refused.
pub(super) fn read(
    root: &Path,
    limit: u64,
    diagnostics: &mut Diagnostics,
) -> Vec<(PathBuf, String)> {
    [(TOOLS_DIR, "shared tool"), (SCHEMAS_DIR, "shared schema")]
        .into_iter()
        .flat_map(|(name, noun)| {
            let folder = PackFolder {
                name,
                endings: &ENDINGS,
                code: DiagnosticCode::Contract,
                noun,
            };
            folder.read(root, limit, diagnostics)
        })
        .collect()
}

/// The shared tools and schemas among `files` (those directly in
/// `tools/` and `schemas/` of `root`), each checked; every problem goes
/// to `diagnostics`, and a file with an error is left out.
pub(super) fn build(
    root: &Path,
    files: &[(PathBuf, String)],
    diagnostics: &mut Diagnostics,
) -> SharedContract {
    let mut shared = SharedContract::default();
    let mut seen: BTreeMap<(String, String), String> = BTreeMap::new();
    for (path, text) in files {
        let Some(dir) = [TOOLS_DIR, SCHEMAS_DIR]
            .into_iter()
            .find(|d| path.parent() == Some(root.join(d).as_path()))
        else {
            continue;
        };
        let Some((name, file)) = name_and_file(root, path) else {
            continue;
        };
        if let Some(first) = seen.insert((dir.to_owned(), name.clone()), file.clone()) {
            diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::Contract,
                    format!("`{name}` is declared twice, here and in {first}"),
                )
                .in_file(path)
                .suggest(Some("keep one file per name".to_owned())),
            );
            // Neither file is the tool (or schema) of that name.
            match dir {
                TOOLS_DIR => shared.tools.remove(&name).map(drop),
                _ => shared.schemas.remove(&name).map(drop),
            };
            continue;
        }
        let Some(value) = parse(path, text, diagnostics) else {
            continue;
        };
        let mut problems = FileProblems {
            path,
            diagnostics,
            failed: false,
        };
        if dir == TOOLS_DIR {
            if let Some(tool) = problems.tool(&name, file, value) {
                shared.tools.insert(name, tool);
            }
        } else if problems.schema(&value, &[]) {
            shared.schemas.insert(
                name,
                SharedSchema {
                    file,
                    schema: value,
                },
            );
        }
    }
    shared
}

/// A shared file's name (its stem, which must be a portable name) and its
/// path in the pack; `None` for a name nothing can refer to.
fn name_and_file(root: &Path, path: &Path) -> Option<(String, String)> {
    let file_name = path.file_name()?.to_str()?;
    let stem = ENDINGS.iter().find_map(|end| file_name.strip_suffix(end))?;
    let relative = path.strip_prefix(root).ok()?;
    let file = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    Some((stem.to_owned(), file))
}

/// The file's value: JSON for `.json`, YAML otherwise; a parse error is
/// a diagnostic at its line and column.
fn parse(path: &Path, text: &str, diagnostics: &mut Diagnostics) -> Option<Value> {
    let json = path.extension().is_some_and(|e| e == "json");
    let parsed = if json {
        serde_json::from_str::<Value>(text).map_err(|e| {
            let at = Position {
                line: e.line(),
                column: e.column(),
            };
            (format!("invalid JSON: {e}"), Some(at))
        })
    } else {
        serde_saphyr::from_str::<Value>(text).map_err(|e| {
            let at = e.location().map(|l| Position {
                line: l.line() as usize,
                column: l.column() as usize,
            });
            let summary = crate::front_matter::yaml_error_summary(&e);
            (format!("invalid YAML: {summary}"), at)
        })
    };
    match parsed {
        Ok(value) => Some(value),
        Err((message, at)) => {
            let mut d = Diagnostic::error(DiagnosticCode::Contract, message).in_file(path);
            d.position = at;
            diagnostics.push(d);
            None
        }
    }
}

/// The problems of one shared file, each at its key path.
struct FileProblems<'a> {
    path: &'a Path,
    diagnostics: &'a mut Diagnostics,
    failed: bool,
}

impl FileProblems<'_> {
    fn push(&mut self, error: bool, keys: &[String], message: String, suggestion: Option<String>) {
        let d = match error {
            true => Diagnostic::error(DiagnosticCode::Contract, message),
            false => Diagnostic::warning(DiagnosticCode::UnknownSchemaKeyword, message),
        };
        let d = d.in_file(self.path).suggest(suggestion);
        let d = match keys.is_empty() {
            true => d,
            false => d.key_path(keys.join(".")),
        };
        self.diagnostics.push(d);
        self.failed |= error;
    }

    /// Checks `schema` (at `at` in the file); whether it has no error.
    fn schema(&mut self, schema: &Value, at: &[&str]) -> bool {
        for problem in json_schema::check(schema) {
            let mut keys: Vec<String> = at.iter().map(|k| (*k).to_owned()).collect();
            keys.extend(problem.path);
            self.push(problem.is_error, &keys, problem.message, problem.suggestion);
        }
        !self.failed
    }

    /// A tool's file: a mapping of `description` and `parameters`.
    fn tool(&mut self, name: &str, file: String, value: Value) -> Option<SharedTool> {
        let Value::Object(mut map) = value else {
            let message = format!(
                "a tool's file is a mapping of `description` and `parameters`, not {}",
                kind(&value)
            );
            self.push(true, &[], message, None);
            return None;
        };
        for key in map.keys().filter(|k| !TOOL_KEYS.contains(&k.as_str())) {
            let hint = suggest::nearest(key, TOOL_KEYS).map_or_else(
                || {
                    "a tool's file takes `description` and `parameters`; its name is the file's"
                        .to_owned()
                },
                |k| format!("did you mean `{k}`?"),
            );
            let message = format!("a tool has no key `{key}`");
            self.failed = true;
            let d = Diagnostic::error(DiagnosticCode::Contract, message)
                .in_file(self.path)
                .key_path(key.clone())
                .suggest(Some(hint));
            self.diagnostics.push(d);
        }
        let description = match map.remove("description") {
            Some(Value::String(text)) if !text.trim().is_empty() => Some(text),
            _ => {
                let message = format!("the tool `{name}` has no `description`");
                self.push(
                    true,
                    &["description".to_owned()],
                    message,
                    Some("say what the tool does, for the model".to_owned()),
                );
                None
            }
        };
        let parameters = map
            .remove("parameters")
            .unwrap_or_else(|| serde_json::json!({ "type": "object", "properties": {} }));
        let checked = self.schema(&parameters, &["parameters"]);
        if self.failed || !checked {
            return None;
        }
        Some(SharedTool {
            file,
            description: description?,
            parameters,
        })
    }
}
