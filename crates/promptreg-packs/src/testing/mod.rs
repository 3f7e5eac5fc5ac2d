//! Prompt tests: cases a pack keeps beside its prompts, run against a
//! registry (the pack, and the user's configuration when loaded), so that
//! an application's authors and its users can both check that a prompt
//! still says what it must.
//!
//! A test file is `tests/<name>.toml` in the pack (the convention: the
//! prompt's id), for one prompt, with any number of cases:
//!
//! ```toml
//! prompt = "goal-running"
//!
//! [[case]]
//! name = "english"
//! locale = "en"                       # default: the pack's default locale
//! context = { goal_id = "g-1", objective = "Ship the export" }
//! contains = ["[PI GOAL ACTIVE goalId=g-1]", "complete_goal"]
//! not_contains = "TODO"
//! matches = ['(?m)^Objective: \w+']   # regular expressions (the `regex` crate)
//!
//! [[case]]
//! name = "japanese"
//! locale = "ja-JP"
//! context_file = "goal-running.context.json"   # beside the test file
//! snapshot = true                     # tests/snapshots/goal-running.japanese.txt
//! ```
//!
//! `equals` compares the whole text. A chat prompt's text is its messages
//! as role-headed text (what `promptreg render` prints); `history` (a list
//! of `{ role, content }`) fills its history placeholder, and `roles` lists
//! the roles of its messages in order. Both are errors for a text prompt. Every
//! problem of a file (an unknown key, with "did you mean", a regex that
//! does not compile, a prompt the pack does not have) is a diagnostic with
//! its line and column, and a suite with any error is not loaded at all.
//!
//! ```
//! use promptreg_core::PromptRegistry;
//! use promptreg_packs::{pack::Pack, testing::PromptTests};
//!
//! # let dir = tempfile::tempdir()?;
//! # std::fs::create_dir_all(dir.path().join("defaults"))?;
//! # std::fs::create_dir_all(dir.path().join("tests"))?;
//! # std::fs::write(dir.path().join("promptreg.toml"), "name = \"demo\"\nkeys = [\"greeting\"]\n[user]\nprompts_dir = \".demo\"\n")?;
//! # std::fs::write(dir.path().join("defaults/greeting.md"), "---\ntemplate: true\nvariables:\n  name:\n---\nHello {{ name }}!\n")?;
//! std::fs::write(dir.path().join("tests/greeting.toml"), r#"
//! prompt = "greeting"
//! [[case]]
//! name = "ada"
//! context = { name = "Ada" }
//! equals = "Hello Ada!"
//! [[case]]
//! name = "polite"
//! context = { name = "Bob" }
//! contains = "Dear Bob"
//! "#)?;
//! let pack = Pack::load(dir.path())?;
//! let tests = PromptTests::load(&pack)?;
//! let registry = PromptRegistry::new();
//! pack.install(&registry)?;
//!
//! let results = tests.run(&registry);
//! assert!(results[0].passed());
//! assert!(!results[1].passed());
//! assert_eq!(results[1].failures[0].message, "the text does not contain \"Dear Bob\"");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod file;
mod schema;
mod source;
mod translations;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use similar::TextDiff;

use crate::chat::{Message, Role, messages_as_text};
use crate::diagnostic::{Diagnostic, Diagnostics, LineIndex};
use crate::error::Error;
use crate::id::PromptId;
use crate::json_schema;
use crate::locale::Locale;
use crate::pack::Pack;
use crate::registry::PromptRegistry;

pub use file::context_files;
pub use schema::test_file_schema;

/// The folder of test files inside a pack.
pub const TESTS_DIR: &str = "tests";

/// The folder of snapshots inside a pack:
/// `tests/snapshots/<prompt>.<case>.txt`.
pub const SNAPSHOTS_DIR: &str = "tests/snapshots";

/// A pack's prompt tests, read and checked: every case of every test file.
#[derive(Debug, Clone)]
pub struct PromptTests {
    /// The pack's folder, where snapshots are written.
    root: PathBuf,
    default_locale: Locale,
    cases: Vec<TestCase>,
    /// One result per prompt and locale of `[l10n] required`.
    translations: Vec<CaseResult>,
}

/// One case: a prompt rendered in a locale with a context, and what the
/// text must satisfy.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TestCase {
    /// The prompt rendered.
    pub prompt: PromptId,
    /// The case's name, unique in its file.
    pub name: String,
    /// The test file.
    pub file: PathBuf,
    /// The locale to render in; the pack's default locale when `None`.
    pub locale: Option<Locale>,
    /// The render context.
    pub context: serde_json::Value,
    /// The conversation history a chat prompt is rendered with, and the
    /// name of the placeholder it fills (the prompt's only one).
    pub history: Option<(String, Vec<HistoryMessage>)>,
    /// What the rendered text must satisfy, in the file's order of keys.
    pub expectations: Vec<Expectation>,
}

/// A message of a conversation history, for chat prompts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryMessage {
    /// `user`, `assistant`, ...
    pub role: String,
    /// The message's text.
    pub content: String,
}

/// What a case expects of the rendered text.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Expectation {
    /// The text contains this.
    Contains(String),
    /// The text does not contain this.
    NotContains(String),
    /// The regular expression finds a match in the text.
    Matches(regex::Regex),
    /// The text is exactly this.
    Equals(String),
    /// A chat prompt's messages have these roles, in this order.
    Roles(Vec<String>),
    /// A sample model answer (JSON) validates against the prompt's output
    /// schema in the case's locale.
    Answer(serde_json::Value),
    /// A sample tool call validates: the prompt offers the tool, and its
    /// arguments (JSON) validate against the tool's parameters.
    ToolCall {
        /// The tool's name.
        name: String,
        /// Its arguments.
        arguments: serde_json::Value,
    },
    /// The text is exactly the snapshot file's (`None`: no snapshot yet).
    Snapshot {
        /// `tests/snapshots/<prompt>.<case>.txt`.
        path: PathBuf,
        /// Its text when the tests were loaded.
        expected: Option<String>,
    },
}

impl Expectation {
    /// How the expectation reads in a report: `contains "x"`.
    pub fn describe(&self) -> String {
        match self {
            Expectation::Contains(text) => format!("contains {text:?}"),
            Expectation::NotContains(text) => format!("not_contains {text:?}"),
            Expectation::Matches(regex) => format!("matches {:?}", regex.as_str()),
            Expectation::Equals(_) => "equals".to_owned(),
            Expectation::Roles(roles) => format!("roles {roles:?}"),
            Expectation::Answer(_) => "answer".to_owned(),
            Expectation::ToolCall { name, .. } => format!("tool_call {name}"),
            Expectation::Snapshot { path, .. } => format!("snapshot {}", file_name(path)),
        }
    }

    /// Why the render does not satisfy it, if it does not.
    fn check(&self, render: &CaseRender) -> Option<CaseFailure> {
        let (text, roles) = (render.text.as_str(), render.roles.as_deref());
        let (message, expected) = match self {
            Expectation::Answer(answer) => (contract_check(render, |contract| {
                let Some(output) = contract.output() else {
                    return vec!["the prompt declares no output schema here".to_owned()];
                };
                let schema = output.schema().to_value();
                json_schema::violations(&schema, answer)
            })?, None),
            Expectation::ToolCall { name, arguments } => (contract_check(render, |contract| {
                let Some(tool) = contract.tool(name) else {
                    let names: Vec<&str> = contract.tools().iter().map(|t| t.name()).collect();
                    return vec![format!("the prompt offers no tool `{name}` here; it offers: {}", names.join(", "))];
                };
                let schema = tool.parameters().to_value();
                json_schema::violations(&schema, arguments)
            })?, None),
            Expectation::Roles(expected) if roles != Some(expected.as_slice()) => (
                format!(
                    "the roles are {:?}, not {expected:?}",
                    roles.unwrap_or_default()
                ),
                None,
            ),
            Expectation::Contains(s) if !text.contains(s.as_str()) => {
                (format!("the text does not contain {s:?}"), None)
            }
            Expectation::NotContains(s) if text.contains(s.as_str()) => {
                (format!("the text contains {s:?}"), None)
            }
            Expectation::Matches(regex) if !regex.is_match(text) => (
                format!("no match for the pattern {:?}", regex.as_str()),
                None,
            ),
            Expectation::Equals(expected) if expected != text => {
                (differs("the text differs", expected, text), Some(expected.as_str()))
            }
            Expectation::Snapshot { expected, .. } => match expected {
                None => (
                    "no snapshot yet: the file does not exist (write it with `promptreg test --update`, or `PromptTests::run_updating`)"
                        .to_owned(),
                    None,
                ),
                Some(expected) if expected != text => (
                    differs("the text differs from the snapshot", expected, text),
                    Some(expected.as_str()),
                ),
                Some(_) => return None,
            },
            _ => return None,
        };
        Some(CaseFailure {
            expectation: self.describe(),
            message,
            diff: expected.map(|expected| diff(expected, text)),
        })
    }
}

/// What a case rendered: the text (for a chat prompt: role-headed, with
/// its `roles`), and the contract it renders with.
struct CaseRender {
    text: String,
    roles: Option<Vec<String>>,
    contract: Option<std::sync::Arc<crate::contract::Contract>>,
}

/// The problems `check` finds with the render's contract, as one message;
/// `None` when there are none.
fn contract_check(
    render: &CaseRender,
    check: impl FnOnce(&crate::contract::Contract) -> Vec<String>,
) -> Option<String> {
    let problems = match &render.contract {
        Some(contract) => check(contract),
        None => vec!["the prompt declares no tools and no output schema here".to_owned()],
    };
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// The result of one case.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct CaseResult {
    /// The prompt.
    pub prompt: PromptId,
    /// The case's name.
    pub case: String,
    /// The test file.
    pub file: PathBuf,
    /// The locale rendered in.
    pub locale: Locale,
    /// The rendered text; `None` when the render failed.
    pub text: Option<String>,
    /// What failed; empty when the case passed.
    pub failures: Vec<CaseFailure>,
    /// Snapshots this run wrote (with [`PromptTests::run_updating`]).
    pub updated: Vec<PathBuf>,
}

impl CaseResult {
    /// Whether every expectation held.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// One expectation that did not hold, or a render that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CaseFailure {
    /// The expectation, as [`Expectation::describe`] gives it (`render` for
    /// a render that failed).
    pub expectation: String,
    /// What went wrong.
    pub message: String,
    /// For `equals` and `snapshot`: a unified diff, expected to actual.
    pub diff: Option<String>,
}

impl PromptTests {
    /// Reads every test file of `pack` (`tests/*.toml` in its folder).
    /// A pack without a `tests/` folder has no cases.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) with every
    /// diagnostic when a file does not parse, names a prompt the pack does
    /// not have, has an unknown key, a regex that does not compile, a
    /// context file that cannot be read, or a `roles` expectation for a
    /// text prompt.
    pub fn load(pack: &Pack) -> Result<PromptTests, Error> {
        match PromptTests::load_with_diagnostics(pack) {
            (Some(tests), _) => Ok(tests),
            (None, diagnostics) => Err(Error::from_diagnostics(diagnostics)),
        }
    }

    /// [`load`](Self::load), with every diagnostic: the tests when none is
    /// an error.
    pub fn load_with_diagnostics(pack: &Pack) -> (Option<PromptTests>, Vec<Diagnostic>) {
        PromptTests::read(pack, &source::Source::Folder)
    }

    /// The tests of `pack` from its files in memory, by path in the pack
    /// (`tests/greeting.toml`, `tests/snapshots/greeting.full.txt`, the
    /// context files the tests name), as [`Pack::from_files`] takes them:
    /// the same cases and diagnostics [`load`](Self::load) gives for a
    /// folder holding those files, with nothing written.
    ///
    /// # Errors
    ///
    /// As [`load`](Self::load).
    pub fn from_files<P, T>(
        pack: &Pack,
        files: impl IntoIterator<Item = (P, T)>,
    ) -> Result<PromptTests, Error>
    where
        P: AsRef<Path>,
        T: AsRef<str>,
    {
        let files = files
            .into_iter()
            .map(|(path, text)| {
                let path = source::normal(&pack.root().join(path.as_ref()));
                (path, text.as_ref().to_owned())
            })
            .collect();
        let source = source::Source::Memory {
            root: pack.root(),
            files: &files,
        };
        match PromptTests::read(pack, &source) {
            (Some(tests), _) => Ok(tests),
            (None, diagnostics) => Err(Error::from_diagnostics(diagnostics)),
        }
    }

    fn read(pack: &Pack, source: &source::Source<'_>) -> (Option<PromptTests>, Vec<Diagnostic>) {
        let mut diagnostics = Diagnostics::default();
        let dir = pack.root().join(TESTS_DIR);
        let files = match source.test_files(&dir) {
            Ok(files) => files,
            Err(e) => {
                diagnostics.push(crate::prompt_file::unreadable_dir(&dir, &e));
                return (None, diagnostics.into_vec());
            }
        };
        let limit = pack.spec().max_file_size();
        let mut cases = Vec::new();
        for path in files {
            let Some(text) = diagnostics.ok(source.read(&path, limit)).flatten() else {
                continue;
            };
            let reader = file::Reader {
                pack,
                source,
                path: &path,
                text: &text,
                limit,
                lines: LineIndex::new(&text),
            };
            cases.extend(reader.cases(&mut diagnostics));
        }
        if diagnostics.has_errors() {
            return (None, diagnostics.into_vec());
        }
        let tests = PromptTests {
            root: pack.root().to_path_buf(),
            default_locale: pack.default_locale().clone(),
            cases,
            translations: translations::results(pack),
        };
        (Some(tests), diagnostics.into_vec())
    }

    /// Every case, by file, in each file's order.
    pub fn cases(&self) -> &[TestCase] {
        &self.cases
    }

    /// Keeps the cases of the prompts in `ids` only (all when empty).
    pub fn only(mut self, ids: &[impl AsRef<str>]) -> PromptTests {
        if !ids.is_empty() {
            let wanted = |id: &PromptId| ids.iter().any(|i| i.as_ref() == id.as_str());
            self.cases.retain(|case| wanted(&case.prompt));
            self.translations.retain(|result| wanted(&result.prompt));
        }
        self
    }

    /// Runs every case against `registry`: one result each, in order,
    /// then one per prompt and locale the manifest's `[l10n] required`
    /// names, which fails when that translation is missing, stale or
    /// records no source. Nothing is written.
    pub fn run(&self, registry: &PromptRegistry) -> Vec<CaseResult> {
        self.run_while(registry, || true)
            .expect("a run that never stops gives every result")
    }

    /// [`run`](Self::run), asking `go_on` before each case: the first
    /// time it answers `false` the run stops and gives `None`. A host
    /// bounds a run this way (a deadline, a CPU budget, a request that
    /// ended) without a thread left running after it gave up.
    pub fn run_while(
        &self,
        registry: &PromptRegistry,
        mut go_on: impl FnMut() -> bool,
    ) -> Option<Vec<CaseResult>> {
        let mut results = Vec::with_capacity(self.cases.len() + self.translations.len());
        for case in &self.cases {
            if !go_on() {
                return None;
            }
            results.push(self.run_case(registry, case));
        }
        results.extend(self.translations.iter().cloned());
        Some(results)
    }

    /// [`run`](Self::run), writing the snapshot of every case whose text
    /// differs from its snapshot (or has none yet): those expectations
    /// pass, and each result lists the files written. The snapshots are
    /// written as one [`FileSet`](crate::pack::FileSet): all or none.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) with an
    /// [`Io`](crate::DiagnosticCode::Io) diagnostic when a snapshot cannot
    /// be written; then none is.
    pub fn run_updating(&self, registry: &PromptRegistry) -> Result<Vec<CaseResult>, Error> {
        let mut results = self.run(registry);
        let mut snapshots = crate::pack::FileSet::new(&self.root);
        for (result, case) in results.iter_mut().zip(&self.cases) {
            let Some(text) = result.text.clone() else {
                continue;
            };
            for expectation in &case.expectations {
                let Expectation::Snapshot { path, expected } = expectation else {
                    continue;
                };
                if expected.as_deref() == Some(text.as_str()) {
                    continue;
                }
                snapshots.write(path, text.as_bytes());
                result.updated.push(path.clone());
                let described = expectation.describe();
                result.failures.retain(|f| f.expectation != described);
            }
        }
        snapshots.commit()?;
        Ok(results)
    }

    fn run_case(&self, registry: &PromptRegistry, case: &TestCase) -> CaseResult {
        let locale = case
            .locale
            .clone()
            .unwrap_or_else(|| self.default_locale.clone());
        let rendered = render(registry, case, &locale).and_then(|(text, roles)| {
            let contract = registry
                .snapshot()
                .contract(case.prompt.as_str(), &locale)?;
            Ok(CaseRender {
                text,
                roles,
                contract,
            })
        });
        let (text, failures) = match rendered {
            Ok(render) => {
                let failures = case
                    .expectations
                    .iter()
                    .filter_map(|e| e.check(&render))
                    .collect();
                (Some(render.text), failures)
            }
            Err(e) => {
                let failure = CaseFailure {
                    expectation: "render".to_owned(),
                    message: e.to_string(),
                    diff: None,
                };
                (None, vec![failure])
            }
        };
        CaseResult {
            prompt: case.prompt.clone(),
            case: case.name.clone(),
            file: case.file.clone(),
            locale,
            text,
            failures,
            updated: Vec::new(),
        }
    }
}

/// The text of `case`'s prompt, and for a chat prompt the roles of its
/// messages (the text is then role-headed, as `promptreg render` prints it).
fn render(
    registry: &PromptRegistry,
    case: &TestCase,
    locale: &Locale,
) -> Result<(String, Option<Vec<String>>), Error> {
    let id = case.prompt.as_str();
    if !registry.snapshot().is_chat(id, locale)? {
        return Ok((registry.render_in(id, &case.context, locale)?, None));
    }
    let history: Vec<Message> = case
        .history
        .iter()
        .flat_map(|(_, messages)| messages)
        .map(|m| Message::new(Role::named(&m.role), m.content.as_str()))
        .collect();
    let histories: Vec<(&str, &[Message])> = case
        .history
        .iter()
        .map(|(name, _)| (name.as_str(), history.as_slice()))
        .collect();
    let messages = registry.render_messages_in(id, &case.context, locale, &histories)?;
    let roles = messages
        .iter()
        .map(|m| m.role.as_str().to_owned())
        .collect();
    let text = messages_as_text(messages.iter().map(|m| (&m.role, m.content.as_str())));
    Ok((text, Some(roles)))
}

/// `what`, or why a difference invisible in a diff is one: a final newline
/// on one side only.
fn differs(what: &str, expected: &str, text: &str) -> String {
    let side = match (expected.strip_suffix('\n'), text.strip_suffix('\n')) {
        (Some(trimmed), None) if trimmed == text => {
            "the expected text ends with one, the rendered text does not"
        }
        (None, Some(trimmed)) if trimmed == expected => {
            "the rendered text ends with one, the expected text does not"
        }
        _ => return what.to_owned(),
    };
    format!("{what} only in a final newline: {side}")
}

/// A unified diff from `expected` to `actual`, whole lines.
fn diff(expected: &str, actual: &str) -> String {
    let (expected, actual) = (format!("{expected}\n"), format!("{actual}\n"));
    TextDiff::from_lines(&expected, &actual)
        .unified_diff()
        .context_radius(3)
        .header("expected", "actual")
        .to_string()
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
