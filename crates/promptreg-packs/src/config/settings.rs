//! Settings files: JSON with comments and trailing commas, validated
//! strictly, every problem reported with its file, line:column and key path.
//!
//! ```jsonc
//! {
//!   "prompts": {
//!     "goal-running": { "mode": "append", "inline": "Delegate implementation to a team." },
//!     "auditor": { "mode": "override", "file": "~/rules/auditor.md" },
//!   },
//!   "promptsDir": ".pi/pi-goal-xx/prompts/",
//! }
//! ```

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

use jsonc_parser::ast::{Object, ObjectProp, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};
use serde::Serialize;

use super::mode::Mode;
use super::spec::{ConfigSpec, PromptField};
use super::trust::{self, TRUSTED_PROJECTS};
use crate::diagnostic::{self, Diagnostic, DiagnosticCode, LineIndex, Position, quoted};
use crate::id::PromptId;
use crate::prompt_file::non_blank;
use crate::suggest;

/// The settings of one prompt key: the `prompts.<key>` block.
///
/// Blank `inline` and `file` values count as absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PromptSettings {
    /// How the user's block combines with the application's prompt
    /// (default `global-local`).
    pub mode: Option<Mode>,
    /// Text that wins over every file, in every mode.
    pub inline: Option<String>,
    /// A file to read the block from: `~/...`, absolute, or relative to cwd.
    pub file: Option<String>,
}

impl PromptSettings {
    fn set(&mut self, field: PromptField, value: Setting) {
        match (field, value) {
            (PromptField::Mode, Setting::Mode(mode)) => self.mode = mode,
            (PromptField::Inline, Setting::Text(text)) => self.inline = text,
            (PromptField::File, Setting::Text(text)) => self.file = text,
            _ => {}
        }
    }
}

/// Where a prompt's settings came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingsSource {
    /// The settings file.
    pub file: PathBuf,
    /// The key path of the block (`prompts.auditor`) or the legacy key
    /// (`auditorPrompt`).
    pub key_path: String,
    /// Where the block starts in the file.
    pub position: Position,
}

/// The prompt settings of one key and where they came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingsBlock {
    /// The settings.
    pub settings: PromptSettings,
    /// Where they came from.
    pub source: SettingsSource,
    /// Where the `file` setting's value is, for warnings about the file.
    #[serde(skip)]
    pub(crate) file_value: Option<ValueAt>,
}

/// Where a value is in its settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValueAt {
    span: Range<usize>,
    position: Position,
    key_path: String,
}

impl SettingsBlock {
    /// Places `d` at the `file` setting (at the block when its place is
    /// not known).
    pub(crate) fn at_file_setting(&self, mut d: Diagnostic) -> Diagnostic {
        d = d.in_file(&self.source.file);
        match &self.file_value {
            Some(at) => {
                d.span = Some(at.span.clone());
                d.position = Some(at.position);
                d.key_path(at.key_path.clone())
            }
            None => {
                d.position = Some(self.source.position);
                d.key_path(self.source.key_path.clone())
            }
        }
    }
}

/// The settings of every settings file read, merged: for each prompt key
/// the block of the last file that has one (global, then local, then the
/// file named by the environment variable); likewise `promptsDir`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    prompts: BTreeMap<PromptId, SettingsBlock>,
    prompts_dir: Option<String>,
    files: Vec<PathBuf>,
}

impl Settings {
    /// The block for `key`, if any file has one.
    pub fn prompt(&self, key: &str) -> Option<&SettingsBlock> {
        self.prompts.get(key)
    }

    /// Every configured key and its block.
    pub fn prompts(&self) -> impl Iterator<Item = (&PromptId, &SettingsBlock)> {
        self.prompts.iter()
    }

    /// `promptsDir`, when a file sets it.
    pub fn prompts_dir(&self) -> Option<&str> {
        self.prompts_dir.as_deref()
    }

    /// The settings files that were read, in precedence order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Lays `file` over these settings: its blocks replace the ones of the
    /// same keys; other keys keep theirs.
    pub(crate) fn layer(&mut self, file: ParsedSettings) {
        self.prompts.extend(file.prompts);
        if file.prompts_dir.is_some() {
            self.prompts_dir = file.prompts_dir;
        }
        self.files.push(file.path);
    }
}

/// One settings file, parsed as far as it is valid.
#[derive(Debug)]
pub(crate) struct ParsedSettings {
    path: PathBuf,
    prompts: BTreeMap<PromptId, SettingsBlock>,
    prompts_dir: Option<String>,
    trusted_projects: Option<TrustedList>,
}

/// The `trustedProjects` list of a settings file; only the global file's
/// counts.
#[derive(Debug)]
pub(crate) struct TrustedList {
    /// The entries as written: `~`, `~/...` or absolute.
    pub(crate) entries: Vec<String>,
    /// Where the key is, to report a list in the wrong file.
    pub(crate) span: Range<usize>,
}

impl ParsedSettings {
    /// The keys this file has a block for.
    pub(crate) fn prompt_keys(&self) -> impl Iterator<Item = &PromptId> {
        self.prompts.keys()
    }

    /// Whether this file sets `promptsDir`.
    pub(crate) fn sets_prompts_dir(&self) -> bool {
        self.prompts_dir.is_some()
    }

    /// The file's `trustedProjects`, when it has one.
    pub(crate) fn trusted_projects(&self) -> Option<&TrustedList> {
        self.trusted_projects.as_ref()
    }

    /// The entries of the file's `trustedProjects`, taken out.
    pub(crate) fn take_trusted_projects(&mut self) -> Vec<String> {
        self.trusted_projects
            .take()
            .map(|list| list.entries)
            .unwrap_or_default()
    }
}

/// A validated scalar value.
enum Setting {
    Text(Option<String>),
    Mode(Option<Mode>),
}

const SCHEMA_KEY: &str = "$schema";
/// The top-level keys of every settings file, legacy aliases aside.
const TOP_LEVEL: [&str; 4] = ["prompts", "promptsDir", TRUSTED_PROJECTS, SCHEMA_KEY];
const PROMPT_FIELDS: [&str; 3] = ["mode", "inline", "file"];

/// Parses and validates one settings file, reporting every problem. What is
/// valid is kept, so a checker can go on; a loader refuses the file when any
/// diagnostic is an error.
pub(crate) fn parse(
    text: &str,
    path: &Path,
    spec: &ConfigSpec,
) -> (ParsedSettings, Vec<Diagnostic>) {
    let mut v = Validator {
        text,
        lines: LineIndex::new(text),
        path,
        spec,
        diagnostics: Vec::new(),
        block_spans: BTreeMap::new(),
    };
    let mut parsed = ParsedSettings {
        path: path.to_path_buf(),
        prompts: BTreeMap::new(),
        prompts_dir: None,
        trusted_projects: None,
    };
    if let Some(root) = v.parse_root() {
        v.root(&root, &mut parsed);
    }
    v.diagnostics
        .sort_by_key(|d| d.span.as_ref().map(|s| s.start));
    diagnostic::cap_per_file(&mut v.diagnostics, path);
    // Only the diagnostics kept are located: a file with thousands of
    // problems pays for the positions and excerpts of the first hundred.
    for d in &mut v.diagnostics {
        d.locate(&v.lines);
    }
    (parsed, v.diagnostics)
}

struct Validator<'a> {
    text: &'a str,
    lines: LineIndex<'a>,
    path: &'a Path,
    spec: &'a ConfigSpec,
    diagnostics: Vec<Diagnostic>,
    /// Where each `prompts.<key>` name is, for warnings about its block.
    block_spans: BTreeMap<PromptId, Range<usize>>,
}

impl<'a> Validator<'a> {
    fn report(&mut self, d: Diagnostic, range: &impl Ranged, key_path: &str) {
        let range = range.range();
        let mut d = d.in_file(self.path);
        // Located once the diagnostics are sorted and capped.
        d.span = Some(range.start..range.end);
        if !key_path.is_empty() {
            d = d.key_path(key_path);
        }
        self.diagnostics.push(d);
    }

    fn error(
        &mut self,
        code: DiagnosticCode,
        message: String,
        range: &impl Ranged,
        key_path: &str,
    ) {
        self.report(Diagnostic::error(code, message), range, key_path);
    }

    fn position(&self, range: &impl Ranged) -> Position {
        self.lines.position(range.start())
    }

    fn parse_root(&mut self) -> Option<Value<'a>> {
        let options = parse_options();
        match jsonc_parser::parse_to_ast(self.text, &CollectOptions::default(), &options) {
            Ok(result) => result.value,
            Err(e) => {
                let message = format!("invalid JSON: {}", lowercase_first(&e.kind().to_string()));
                self.error(DiagnosticCode::Syntax, message, &e.range(), "");
                None
            }
        }
    }

    fn root(&mut self, root: &Value<'a>, out: &mut ParsedSettings) {
        let Some(object) = self.object(root, "") else {
            return;
        };
        let mut aliases: Vec<(&ObjectProp<'a>, usize)> = Vec::new();
        for prop in self.unique_props(object, "") {
            let name = prop.name.as_str();
            match name {
                "prompts" => self.prompts(&prop.value, out),
                "promptsDir" => {
                    if let Some(Setting::Text(dir)) = self.text_value(&prop.value, "promptsDir") {
                        out.prompts_dir = dir;
                    }
                }
                SCHEMA_KEY => {
                    self.text_value(&prop.value, SCHEMA_KEY);
                }
                TRUSTED_PROJECTS => {
                    out.trusted_projects = self.trusted_projects(prop);
                }
                _ => match self
                    .spec
                    .legacy_aliases()
                    .iter()
                    .position(|a| a.name == name)
                {
                    Some(index) => aliases.push((prop, index)),
                    None => self.unknown_top_level(prop),
                },
            }
        }
        self.legacy_aliases(&aliases, out);
    }

    fn unknown_top_level(&mut self, prop: &ObjectProp<'a>) {
        let name = prop.name.as_str();
        let known = TOP_LEVEL
            .into_iter()
            .chain(self.spec.legacy_aliases().iter().map(|a| a.name.as_str()));
        let hint = suggest::did_you_mean(name, known);
        let d = Diagnostic::error(
            DiagnosticCode::UnknownKey,
            format!("unknown settings key `{}`", quoted(name)),
        )
        .suggest(hint.or_else(|| Some("the settings keys are `prompts` and `promptsDir`".into())));
        self.report(d, &prop.name, &quoted(name));
    }

    fn prompts(&mut self, value: &Value<'a>, out: &mut ParsedSettings) {
        let Some(object) = self.object(value, "prompts") else {
            return;
        };
        for prop in self.unique_props(object, "prompts") {
            let key = prop.name.as_str();
            // Cut and escaped: a key may be long or hold control characters.
            let key_path = format!("prompts.{}", quoted(key));
            let id = match PromptId::new(key) {
                Ok(id) => id,
                Err(e) => {
                    let message = e.detail().to_owned();
                    self.error(
                        DiagnosticCode::InvalidPromptKey,
                        message,
                        &prop.name,
                        &key_path,
                    );
                    continue;
                }
            };
            if !self.spec.is_known_key(key) {
                let d = Diagnostic::error(
                    DiagnosticCode::UnknownPromptKey,
                    format!("unknown prompt key `{}`", quoted(key)),
                )
                .suggest(
                    self.spec
                        .suggest_key(key)
                        .or_else(|| Some(self.known_keys_hint())),
                );
                self.report(d, &prop.name, &key_path);
                // Its block is still checked, so one run shows every problem.
                self.prompt_block(&prop.value, &key_path);
                continue;
            }
            if let Some((settings, file_value)) = self.prompt_block(&prop.value, &key_path) {
                let range = prop.name.range();
                self.block_spans.insert(id.clone(), range.start..range.end);
                let block = SettingsBlock {
                    settings,
                    source: self.source(&key_path, &prop.name),
                    file_value,
                };
                out.prompts.insert(id, block);
            }
        }
    }

    /// A list of `~`, `~/...` or absolute paths (`null`: none).
    fn trusted_projects(&mut self, prop: &ObjectProp<'a>) -> Option<TrustedList> {
        let span = prop.name.range().start..prop.name.range().end;
        let elements = match &prop.value {
            Value::Array(array) => &array.elements,
            Value::NullKeyword(_) => return None,
            other => {
                let message = format!("expected a list of folders, found {}", describe(other));
                self.error(DiagnosticCode::WrongType, message, other, TRUSTED_PROJECTS);
                return None;
            }
        };
        let mut entries = Vec::new();
        for (index, element) in elements.iter().enumerate() {
            let key_path = format!("{TRUSTED_PROJECTS}[{index}]");
            let Value::StringLit(s) = element else {
                let message = format!("expected a folder path, found {}", describe(element));
                self.error(DiagnosticCode::WrongType, message, element, &key_path);
                continue;
            };
            if trust::is_rooted(s.value.trim()) {
                entries.push(s.value.trim().to_owned());
                continue;
            }
            let d = Diagnostic::error(
                DiagnosticCode::TrustedProjects,
                format!(
                    "trusted project `{}` is not an absolute path",
                    s.value.escape_debug()
                ),
            )
            .suggest(Some(
                "write it as `~/...` or from `/`; `promptreg trust DIR` writes it for you"
                    .to_owned(),
            ));
            self.report(d, element, &key_path);
        }
        Some(TrustedList { entries, span })
    }

    fn known_keys_hint(&self) -> String {
        let mut names: Vec<String> = self.spec.keys().map(|k| format!("`{k}`")).collect();
        names.extend(self.spec.patterns().iter().map(|p| format!("`{p}`")));
        format!("the known keys are {}", names.join(", "))
    }

    fn source(&self, key_path: &str, range: &impl Ranged) -> SettingsSource {
        SettingsSource {
            file: self.path.to_path_buf(),
            key_path: key_path.to_owned(),
            position: self.position(range),
        }
    }

    /// The settings of a `prompts.<key>` block, and where its `file` value
    /// is.
    fn prompt_block(
        &mut self,
        value: &Value<'a>,
        key_path: &str,
    ) -> Option<(PromptSettings, Option<ValueAt>)> {
        let object = self.object(value, key_path)?;
        let mut settings = PromptSettings::default();
        let mut mode_value = None;
        let mut file_value = None;
        for prop in self.unique_props(object, key_path) {
            let field = prop.name.as_str();
            let field_path = format!("{key_path}.{}", quoted(field));
            let setting = match field {
                "mode" => {
                    mode_value = Some(&prop.value);
                    self.mode_value(&prop.value, &field_path)
                }
                "inline" => self.text_value(&prop.value, &field_path),
                "file" => {
                    file_value = Some(self.value_at(&prop.value, &field_path));
                    self.text_value(&prop.value, &field_path)
                }
                _ => {
                    let d = Diagnostic::error(
                        DiagnosticCode::UnknownKey,
                        format!("unknown prompt setting `{}`", quoted(field)),
                    )
                    .suggest(
                        suggest::did_you_mean(field, PROMPT_FIELDS).or_else(|| {
                            Some("a prompt block has `mode`, `inline` and `file`".into())
                        }),
                    );
                    self.report(d, &prop.name, &field_path);
                    continue;
                }
            };
            if let (Some(setting), Some(field)) = (setting, PromptField::parse(field)) {
                settings.set(field, setting);
            }
        }
        if let Some(mode_value) = mode_value {
            self.inline_with_mode(&settings, mode_value, &format!("{key_path}.mode"));
        }
        Some((settings, file_value))
    }

    fn value_at(&self, value: &Value<'a>, key_path: &str) -> ValueAt {
        let range = value.range();
        ValueAt {
            span: range.start..range.end,
            position: self.position(value),
            key_path: key_path.to_owned(),
        }
    }

    /// Warns when `settings` has `inline` text and a mode other than
    /// `override` (at `mode_value`, the value setting that mode): inline
    /// text replaces the body in every mode, so the mode changes nothing.
    fn inline_with_mode(
        &mut self,
        settings: &PromptSettings,
        mode_value: &Value<'a>,
        key_path: &str,
    ) {
        let (Some(mode), Some(_)) = (settings.mode, &settings.inline) else {
            return;
        };
        let suggestion = match mode {
            Mode::Override => return,
            Mode::Off => "remove `inline` to send nothing of the user's, or remove `mode`",
            _ => {
                "to add text after the body, put it in a prompt file instead of `inline`; otherwise remove `mode`"
            }
        };
        let d = Diagnostic::warning(
            DiagnosticCode::InlineIgnoresMode,
            format!("mode `{mode}` has no effect: `inline` text replaces the body in every mode"),
        )
        .suggest(Some(suggestion.to_owned()));
        self.report(d, mode_value, key_path);
    }

    fn legacy_aliases(&mut self, found: &[(&ObjectProp<'a>, usize)], out: &mut ParsedSettings) {
        let spec = self.spec;
        let explicit: HashSet<PromptId> = out.prompts.keys().cloned().collect();
        // The mode each alias-built block got, and the legacy key that set it.
        let mut modes: BTreeMap<PromptId, (&Value<'a>, &str)> = BTreeMap::new();
        for &(prop, index) in found {
            let alias = &spec.legacy_aliases()[index];
            let setting = match alias.field {
                PromptField::Mode => self.mode_value(&prop.value, &alias.name),
                PromptField::Inline | PromptField::File => {
                    self.text_value(&prop.value, &alias.name)
                }
            };
            if explicit.contains(&alias.key)
                && let Some(block) = out.prompts.get(&alias.key)
            {
                let d = self.shadowed(prop, index, block);
                self.diagnostics.push(d);
                continue;
            }
            let Some(setting) = setting else { continue };
            let source = self.source(&alias.name, &prop.name);
            let block = out
                .prompts
                .entry(alias.key.clone())
                .or_insert_with(|| SettingsBlock {
                    settings: PromptSettings::default(),
                    source,
                    file_value: None,
                });
            block.settings.set(alias.field, setting);
            match alias.field {
                PromptField::Mode => {
                    modes.insert(alias.key.clone(), (&prop.value, &alias.name));
                }
                PromptField::File => {
                    block.file_value = Some(self.value_at(&prop.value, &alias.name))
                }
                PromptField::Inline => {}
            }
        }
        for (key, (mode_value, name)) in modes {
            if let Some(block) = out.prompts.get(&key) {
                self.inline_with_mode(&block.settings, mode_value, name);
            }
        }
    }

    /// The warning for legacy key `prop` (alias `index`), ignored because
    /// `block` configures the same key: placed at the block, which is what
    /// is in force, and naming the line of the legacy key.
    fn shadowed(&self, prop: &ObjectProp<'a>, index: usize, block: &SettingsBlock) -> Diagnostic {
        let alias = &self.spec.legacy_aliases()[index];
        let alias_line = self.position(&prop.name).line;
        let mut d = Diagnostic::warning(
            DiagnosticCode::LegacyShadowed,
            format!(
                "legacy key `{}` on line {alias_line} is ignored because this block configures `{}`",
                alias.name, alias.key
            ),
        )
        .in_file(self.path)
        .key_path(block.source.key_path.clone())
        .suggest(Some(format!(
            "move its value to `{}` and remove `{}`",
            alias.target(),
            alias.name
        )));
        d.position = Some(block.source.position);
        d.span = self.block_spans.get(&alias.key).cloned();
        d
    }

    /// The properties of `object`, reporting and skipping repeated names.
    fn unique_props<'o>(
        &mut self,
        object: &'o Object<'a>,
        key_path: &str,
    ) -> Vec<&'o ObjectProp<'a>> {
        let mut seen = HashSet::new();
        let mut props = Vec::new();
        for prop in &object.properties {
            let name = prop.name.as_str();
            if seen.insert(name) {
                props.push(prop);
            } else {
                let path = join_path(key_path, &quoted(name));
                let d = Diagnostic::error(
                    DiagnosticCode::DuplicateKey,
                    format!("duplicate key `{}`", quoted(name)),
                )
                .suggest(Some(
                    "remove one of them; JSON keys must be unique".to_owned(),
                ));
                self.report(d, &prop.name, &path);
            }
        }
        props
    }

    fn object<'v>(&mut self, value: &'v Value<'a>, key_path: &str) -> Option<&'v Object<'a>> {
        match value {
            Value::Object(object) => Some(object),
            other => {
                let message = if key_path.is_empty() {
                    format!(
                        "the settings must be a JSON object, found {}",
                        describe(other)
                    )
                } else {
                    format!("expected an object, found {}", describe(other))
                };
                self.error(DiagnosticCode::WrongType, message, other, key_path);
                None
            }
        }
    }

    /// A string (blank and `null` count as absent).
    fn text_value(&mut self, value: &Value<'a>, key_path: &str) -> Option<Setting> {
        match value {
            // Kept as written: a blank text is absent, any other is used whole.
            Value::StringLit(s) => Some(Setting::Text(
                non_blank(&s.value).map(|_| s.value.to_string()),
            )),
            Value::NullKeyword(_) => Some(Setting::Text(None)),
            other => {
                let message = format!("expected a string, found {}", describe(other));
                self.error(DiagnosticCode::WrongType, message, other, key_path);
                None
            }
        }
    }

    fn mode_value(&mut self, value: &Value<'a>, key_path: &str) -> Option<Setting> {
        let Value::StringLit(s) = value else {
            return self
                .text_value(value, key_path)
                .map(|_| Setting::Mode(None));
        };
        match s.value.trim().parse::<Mode>() {
            Ok(mode) => Some(Setting::Mode(Some(mode))),
            Err(_) if non_blank(&s.value).is_none() => Some(Setting::Mode(None)),
            Err(e) => {
                let names = Mode::ALL.map(Mode::as_str);
                let d = Diagnostic::error(DiagnosticCode::InvalidMode, e.to_string())
                    .suggest(suggest::did_you_mean(&s.value, names));
                self.report(d, value, key_path);
                None
            }
        }
    }
}

/// JSON with comments and trailing commas, nothing looser.
pub(crate) fn parse_options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

fn describe(value: &Value<'_>) -> &'static str {
    match value {
        Value::StringLit(_) => "a string",
        Value::NumberLit(_) => "a number",
        Value::BooleanLit(_) => "a boolean",
        Value::Object(_) => "an object",
        Value::Array(_) => "an array",
        Value::NullKeyword(_) => "null",
    }
}

fn join_path(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
    }
}

fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}
