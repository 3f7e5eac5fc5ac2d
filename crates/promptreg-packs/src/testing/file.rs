//! Reading one test file, `tests/<name>.toml`: its prompt and cases, each
//! problem a diagnostic at its line and column.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::{Expectation, HistoryMessage, SNAPSHOTS_DIR, TestCase};
use crate::chat::Chat;
use crate::diagnostic::{Diagnostic, DiagnosticCode, Diagnostics, LineIndex};
use crate::id::PromptId;
use crate::locale::Locale;
use crate::pack::Pack;
use crate::suggest;

/// The keys of a case, in the order the documentation gives them.
pub(super) const CASE_KEYS: &[&str] = &[
    "name",
    "locale",
    "context",
    "context_file",
    "history",
    "contains",
    "not_contains",
    "matches",
    "equals",
    "snapshot",
    "roles",
    "answer",
    "tool_call",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    prompt: Spanned<String>,
    #[serde(default, rename = "case")]
    cases: Vec<Spanned<RawCase>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    name: Spanned<String>,
    locale: Option<Spanned<String>>,
    context: Option<toml::Table>,
    context_file: Option<Spanned<String>>,
    history: Option<Spanned<Vec<HistoryMessage>>>,
    contains: Option<Spanned<Texts>>,
    not_contains: Option<Spanned<Texts>>,
    matches: Option<Spanned<Texts>>,
    equals: Option<String>,
    snapshot: Option<bool>,
    roles: Option<Spanned<Vec<String>>>,
    answer: Option<Spanned<toml::Value>>,
    tool_call: Option<Spanned<RawToolCall>>,
}

/// A sample tool call: the tool's name and its arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToolCall {
    name: Spanned<String>,
    #[serde(default)]
    arguments: Option<toml::Value>,
}

/// One text or a list of them.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Texts {
    One(String),
    Many(Vec<String>),
}

impl Texts {
    fn into_vec(self) -> Vec<String> {
        match self {
            Texts::One(text) => vec![text],
            Texts::Many(texts) => texts,
        }
    }
}

/// The test file at `path`, whose text is `text`, read against `pack`.
pub(super) struct Reader<'a> {
    pub(super) pack: &'a Pack,
    pub(super) source: &'a super::source::Source<'a>,
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
    pub(super) limit: u64,
    pub(super) lines: LineIndex<'a>,
}

impl Reader<'_> {
    /// The cases of the file; every problem goes to `diagnostics`.
    pub(super) fn cases(&self, diagnostics: &mut Diagnostics) -> Vec<TestCase> {
        let Some(raw) = diagnostics.ok(self.parse()) else {
            return Vec::new();
        };
        // A prompt a best-effort load left out has its errors reported
        // already; its cases are not read.
        if self
            .pack
            .failed_prompts()
            .any(|id| id.as_str() == raw.prompt.get_ref())
        {
            return Vec::new();
        }
        let Some(prompt) = diagnostics.ok(self.prompt(&raw.prompt)) else {
            return Vec::new();
        };
        let mut names = std::collections::BTreeSet::new();
        let mut cases = Vec::new();
        for case in raw.cases {
            let span = case.span();
            let case = case.into_inner();
            if !names.insert(case.name.get_ref().clone()) {
                let message = format!("two cases of this file are named `{}`", case.name.get_ref());
                diagnostics.push(self.error(
                    message,
                    case.name.span(),
                    "give each case its own name",
                ));
                continue;
            }
            if let Some(case) = self.case(&prompt, case, span, diagnostics) {
                cases.push(case);
            }
        }
        cases
    }

    fn parse(&self) -> Result<RawFile, Diagnostic> {
        toml::from_str(self.text).map_err(|e| {
            let message = e.message().trim().to_owned();
            let hint = unknown_key_hint(&message);
            let d = Diagnostic::error(
                DiagnosticCode::PromptTest,
                format!("invalid test file: {message}"),
            )
            .in_file(self.path)
            .suggest(hint);
            match e.span() {
                Some(span) => d.at(&self.lines, span),
                None => d,
            }
        })
    }

    fn error(&self, message: String, span: Range<usize>, hint: &str) -> Diagnostic {
        Diagnostic::error(DiagnosticCode::PromptTest, message)
            .in_file(self.path)
            .at(&self.lines, span)
            .suggest(Some(hint.to_owned()))
    }

    /// The prompt the file tests: one the pack has.
    fn prompt(&self, prompt: &Spanned<String>) -> Result<PromptId, Diagnostic> {
        let id = prompt.get_ref();
        if let Some(known) = self.pack.prompt(id) {
            return Ok(known.id().clone());
        }
        let ids = self.pack.prompts().map(|p| p.id().as_str());
        let hint = suggest::did_you_mean(id, ids)
            .unwrap_or_else(|| "name a prompt of the pack: `promptreg list` shows them".to_owned());
        Err(self.error(
            format!("the pack has no prompt `{id}` to test"),
            prompt.span(),
            &hint,
        ))
    }

    /// One case, checked; `None` when something is wrong with it.
    fn case(
        &self,
        prompt: &PromptId,
        raw: RawCase,
        span: Range<usize>,
        diagnostics: &mut Diagnostics,
    ) -> Option<TestCase> {
        let mut problems = Diagnostics::default();
        let name = raw.name.get_ref().clone();
        if let Some(why) = case_name_problem(&name) {
            problems.push(self.error(
                format!("case name `{name}`: {why}"),
                raw.name.span(),
                "use letters, digits, `-` and `_`: the name is part of the snapshot's file name",
            ));
        }
        let locale = raw.locale.as_ref().and_then(|tag| {
            let parsed = Locale::parse(tag.get_ref()).map_err(|e| {
                self.error(
                    e.detail().to_owned(),
                    tag.span(),
                    "a BCP-47 tag: `en`, `ja-JP`",
                )
            });
            problems.ok(parsed)
        });
        let context = self.context(&raw, span.clone(), &mut problems);
        let chat = self
            .pack
            .prompt(prompt.as_str())
            .and_then(|p| p.default_prompt())
            .and_then(|p| p.as_chat());
        let history = self.history(prompt, chat, &raw, &mut problems);
        let expectations = self.expectations(prompt, chat, &name, raw, span, &mut problems);
        let failed = problems.has_errors();
        diagnostics.extend(problems.into_vec());
        if failed {
            return None;
        }
        Some(TestCase {
            prompt: prompt.clone(),
            name,
            file: self.path.to_path_buf(),
            locale,
            context: context?,
            history,
            expectations,
        })
    }

    /// The case's history and the placeholder it goes to: the chat
    /// prompt's only one.
    fn history(
        &self,
        prompt: &PromptId,
        chat: Option<&Chat>,
        raw: &RawCase,
        problems: &mut Diagnostics,
    ) -> Option<(String, Vec<HistoryMessage>)> {
        let history = raw.history.as_ref()?;
        let Some(chat) = chat else {
            problems.push(self.error(
                format!("`history` applies to chat prompts; `{prompt}` is a text prompt"),
                history.span(),
                "remove `history`: a text prompt has no conversation",
            ));
            return None;
        };
        let unknown = history
            .get_ref()
            .iter()
            .enumerate()
            .find(|(_, m)| !chat.known_roles().any(|known| known == m.role));
        if let Some((index, message)) = unknown {
            let role = &message.role;
            let hint = suggest::did_you_mean(role, chat.known_roles()).unwrap_or_else(|| {
                let listed: Vec<String> = chat.known_roles().map(|r| format!("`{r}`")).collect();
                format!("the roles of `{prompt}` are {}", listed.join(", "))
            });
            problems.push(self.error(
                format!(
                    "message {} of `history` has unknown role `{role}`",
                    index + 1
                ),
                history.span(),
                &hint,
            ));
            return None;
        }
        let placeholders: Vec<&str> = chat.placeholders().collect();
        match placeholders[..] {
            [name] => Some((name.to_owned(), history.get_ref().clone())),
            [] => {
                problems.push(self.error(
                    format!("`{prompt}` has no history placeholder for `history` to fill"),
                    history.span(),
                    "add a `# history: NAME` heading to the prompt, or remove `history`",
                ));
                None
            }
            _ => {
                problems.push(self.error(
                    format!(
                        "`{prompt}` has several history placeholders ({}): a case's `history` fills only a prompt with one",
                        placeholders.join(", ")
                    ),
                    history.span(),
                    "test this prompt without `history`",
                ));
                None
            }
        }
    }

    /// The context: an inline table, a JSON file beside the test file, or
    /// none (`{}`).
    fn context(
        &self,
        raw: &RawCase,
        span: Range<usize>,
        problems: &mut Diagnostics,
    ) -> Option<serde_json::Value> {
        match (&raw.context, &raw.context_file) {
            (Some(_), Some(file)) => {
                problems.push(self.error(
                    "a case gives `context` and `context_file`: one of them only".to_owned(),
                    file.span(),
                    "keep the inline `context` table or the file, not both",
                ));
                None
            }
            (Some(table), None) => problems.ok(serde_json::to_value(table).map_err(|e| {
                self.error(
                    format!("the context cannot be JSON: {e}"),
                    span,
                    "use plain values",
                )
            })),
            (None, Some(file)) => problems.ok(self.context_file(file)),
            (None, None) => Some(serde_json::Value::Object(Default::default())),
        }
    }

    /// A JSON context file, relative to the test file's folder and inside
    /// the pack.
    fn context_file(&self, name: &Spanned<String>) -> Result<serde_json::Value, Diagnostic> {
        let path = self
            .path
            .parent()
            .unwrap_or(Path::new(""))
            .join(name.get_ref());
        let missing = || {
            self.error(
                format!("the context file `{}` does not exist", name.get_ref()),
                name.span(),
                "create it, or give the context inline as `context = { ... }`",
            )
        };
        let target = self
            .source
            .resolve(&path)
            .map_err(|e| {
                self.error(
                    format!("cannot read the context file: {e}"),
                    name.span(),
                    "check the path",
                )
            })?
            .ok_or_else(missing)?;
        let pack = self.source.resolve_root(self.pack.root());
        if Path::new(name.get_ref()).is_absolute() || !pack.is_some_and(|p| target.starts_with(p)) {
            return Err(self.error(
                format!("the context file `{}` is outside the pack", name.get_ref()),
                name.span(),
                "keep the context with the pack: a path relative to the test file, inside the pack's folder",
            ));
        }
        let text = self.source.read(&path, self.limit)?.ok_or_else(missing)?;
        serde_json::from_str(&text).map_err(|e| {
            let mut d = Diagnostic::error(
                DiagnosticCode::PromptTest,
                format!("the context is not valid JSON: {e}"),
            )
            .in_file(&path);
            d.position = Some(crate::diagnostic::Position {
                line: e.line().max(1),
                column: e.column().max(1),
            });
            d.with_excerpt(&LineIndex::new(&text), 0)
        })
    }

    /// What the case expects, in the order of the keys.
    fn expectations(
        &self,
        prompt: &PromptId,
        chat: Option<&Chat>,
        name: &str,
        raw: RawCase,
        span: Range<usize>,
        problems: &mut Diagnostics,
    ) -> Vec<Expectation> {
        let expects_something = raw.contains.is_some()
            || raw.not_contains.is_some()
            || raw.matches.is_some()
            || raw.equals.is_some()
            || raw.snapshot == Some(true)
            || raw.roles.is_some()
            || raw.answer.is_some()
            || raw.tool_call.is_some();
        let mut out = Vec::new();
        let texts =
            |t: Option<Spanned<Texts>>| t.map(|t| t.into_inner().into_vec()).unwrap_or_default();
        match (&raw.roles, chat) {
            (Some(roles), Some(_)) => out.push(Expectation::Roles(roles.get_ref().clone())),
            (Some(roles), None) => problems.push(self.error(
                format!("`roles` applies to chat prompts; `{prompt}` is a text prompt"),
                roles.span(),
                "check the text with `contains`, `matches`, `equals` or `snapshot`",
            )),
            (None, _) => {}
        }
        out.extend(texts(raw.contains).into_iter().map(Expectation::Contains));
        out.extend(
            texts(raw.not_contains)
                .into_iter()
                .map(Expectation::NotContains),
        );
        if let Some(matches) = raw.matches {
            let span = matches.span();
            for pattern in matches.into_inner().into_vec() {
                match regex::Regex::new(&pattern) {
                    Ok(regex) => out.push(Expectation::Matches(regex)),
                    Err(e) => problems.push(self.error(
                        format!("`matches` pattern does not compile: {}", one_line(&e.to_string())),
                        self.span_of(&pattern, span.clone()),
                        "write a regular expression of the `regex` crate's syntax; escape `.`, `(`, `[` with a backslash to match the characters themselves",
                    )),
                }
            }
        }
        if let Some(text) = raw.equals {
            out.push(Expectation::Equals(text));
        }
        self.contract_expectations(prompt, &raw.answer, &raw.tool_call, &mut out, problems);
        if raw.snapshot == Some(true) {
            let path = self
                .pack
                .root()
                .join(SNAPSHOTS_DIR)
                .join(format!("{prompt}.{name}.txt"));
            match self.source.read(&path, self.limit) {
                Ok(expected) => out.push(Expectation::Snapshot { path, expected }),
                Err(d) => problems.push(d),
            }
        }
        if !expects_something {
            problems.push(self.error(
                format!("case `{name}` expects nothing"),
                span,
                "add `contains`, `not_contains`, `matches`, `equals`, `snapshot = true`, `answer` or `tool_call`",
            ));
        }
        out
    }

    /// A case's `answer` and `tool_call`, checked against the contract the
    /// prompt's default file declares (a locale variant only translates
    /// it): the output schema an answer needs, the tool a call names.
    fn contract_expectations(
        &self,
        prompt: &PromptId,
        answer: &Option<Spanned<toml::Value>>,
        tool_call: &Option<Spanned<RawToolCall>>,
        out: &mut Vec<Expectation>,
        problems: &mut Diagnostics,
    ) {
        let contract = self
            .pack
            .prompt(prompt.as_str())
            .and_then(|p| p.default_prompt())
            .and_then(|p| p.contract());
        if let Some(answer) = answer {
            match (
                contract.and_then(|c| c.output()),
                self.json(answer.get_ref(), answer.span(), problems),
            ) {
                (Some(_), Some(value)) => out.push(Expectation::Answer(value)),
                (None, _) => problems.push(self.error(
                    format!(
                        "`answer` is checked against an output schema, and `{prompt}` declares none"
                    ),
                    answer.span(),
                    "declare `output` in the prompt's front matter, or remove `answer`",
                )),
                (Some(_), None) => {}
            }
        }
        if let Some(call) = tool_call {
            let call = call.get_ref();
            let name = call.name.get_ref();
            let tools = contract.map(|c| c.tools()).unwrap_or_default();
            if !tools.iter().any(|t| t.name() == name) {
                let names = tools.iter().map(|t| t.name());
                let hint = suggest::did_you_mean(name, names)
                    .unwrap_or_else(|| "name a tool the prompt's `tools` declares".to_owned());
                problems.push(self.error(
                    format!("`tool_call` names `{name}`, a tool `{prompt}` does not offer"),
                    call.name.span(),
                    &hint,
                ));
                return;
            }
            let arguments = match &call.arguments {
                Some(value) => self.json(value, call.name.span(), problems),
                None => Some(serde_json::Value::Object(Default::default())),
            };
            if let Some(arguments) = arguments {
                out.push(Expectation::ToolCall {
                    name: name.clone(),
                    arguments,
                });
            }
        }
    }

    /// A sample value as JSON: a TOML value, or a string of JSON text (a
    /// model's answer as it came).
    fn json(
        &self,
        value: &toml::Value,
        span: Range<usize>,
        problems: &mut Diagnostics,
    ) -> Option<serde_json::Value> {
        let parsed = match value {
            toml::Value::String(text) => {
                serde_json::from_str(text).map_err(|e| format!("the text is not JSON: {e}"))
            }
            other => serde_json::to_value(other).map_err(|e| format!("it cannot be JSON: {e}")),
        };
        problems.ok(parsed.map_err(|why| {
            self.error(
                why,
                span,
                "give the value inline (`{ verdict = \"PASS\" }`), or as a string of JSON text",
            )
        }))
    }

    /// The span of `needle` inside `within`, or `within`.
    fn span_of(&self, needle: &str, within: Range<usize>) -> Range<usize> {
        self.text
            .get(within.clone())
            .and_then(|text| text.find(needle))
            .map_or(within.clone(), |at| {
                within.start + at..within.start + at + needle.len()
            })
    }
}

/// "did you mean" for serde's "unknown field `x`, expected one of ..."
/// message, from the names it lists.
fn unknown_key_hint(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (field, expected) = rest.split_once('`')?;
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    suggest::did_you_mean(field, known.iter().copied())
        .or_else(|| Some(format!("the keys of a case: {}", CASE_KEYS.join(", "))))
}

fn case_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    let valid = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
    (!valid).then_some("letters, digits, `-` and `_` only")
}

/// A regex error on one line: the `regex` crate draws a caret diagram.
fn one_line(message: &str) -> String {
    let last = message.lines().rev().find(|l| !l.trim().is_empty());
    last.unwrap_or(message)
        .trim()
        .trim_start_matches("error: ")
        .to_owned()
}

/// The context files a test file's cases name (`context_file`), as
/// written (relative to the test file's folder), in order; none when the
/// file does not parse, which loading it reports. A pack's tests read
/// these beside their own files: the store keeps them with the tests.
///
/// ```
/// let text = "prompt = \"greeting\"\n[[case]]\nname = \"a\"\ncontext_file = \"../context.json\"\n";
/// assert_eq!(promptreg_packs::testing::context_files(text), ["../context.json"]);
/// ```
pub fn context_files(text: &str) -> Vec<String> {
    let Ok(file) = toml::from_str::<RawFile>(text) else {
        return Vec::new();
    };
    file.cases
        .into_iter()
        .filter_map(|case| case.into_inner().context_file)
        .map(Spanned::into_inner)
        .collect()
}

/// The test files of `dir`, sorted: every `*.toml` directly in it.
pub(super) fn test_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "toml") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}
