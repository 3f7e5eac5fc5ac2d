//! Reading a configuration: settings files, prompt directories, files named
//! by settings, legacy files; every problem collected as a diagnostic.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::files;
use super::layer::{ConfigPaths, KeyConfig, KeyFiles, UserFile, UserLayer, digest};
use super::options::LoadOptions;
use super::resolve::Scope;
use super::settings::{self, ParsedSettings, Settings, SettingsBlock};
use super::spec::ConfigSpec;
use super::trust::{Boundary, TRUSTED_PROJECTS};
use crate::Map;
use crate::diagnostic::{Diagnostic, DiagnosticCode, LineIndex};
use crate::error::Error;
use crate::front_matter::Document;
use crate::id::PromptId;
use crate::locale::Locale;
use crate::prompt_file::{self, FileKey, non_blank};
use crate::provenance::{Provenance, Setting, SourceKind};
use crate::renderer::Renderer;
use crate::suggest;

impl UserLayer {
    /// Reads every settings and prompt file. Returns the layer when no
    /// diagnostic is an error, and every diagnostic in any case.
    pub(crate) fn load(
        spec: Arc<ConfigSpec>,
        options: LoadOptions,
    ) -> (Option<UserLayer>, Vec<Diagnostic>) {
        let mut loader = Loader {
            spec: &spec,
            options: &options,
            diagnostics: Vec::new(),
            watched: ConfigPaths::default(),
            boundary: None,
            project_keys: HashSet::new(),
            project_prompts_dir: false,
        };
        let settings = loader.settings();
        let prompts_dir = settings
            .prompts_dir()
            .unwrap_or(spec.prompts_dir())
            .to_owned();
        let (global, local) = files::prompt_dirs(&prompts_dir, options.home(), options.cwd());
        loader
            .watched
            .dirs
            .extend(std::iter::once(&global).chain(local.iter()).cloned());
        // The global folder is the user's own unless the project chose it.
        let dirs = [
            loader.directory(Some(&global), Scope::Global, loader.project_prompts_dir),
            loader.directory(local.as_deref(), Scope::Local, true),
        ];
        let explicit = loader.explicit_files(&settings);
        let legacy = loader.legacy_files();
        loader
            .diagnostics
            .extend(shadowed_legacy_files(&legacy, &dirs));
        let (diagnostics, paths) = (loader.diagnostics, loader.watched);
        if diagnostics.iter().any(Diagnostic::is_error) {
            return (None, diagnostics);
        }
        let keys = by_key(&settings, explicit, dirs, legacy);
        let layer = UserLayer {
            spec,
            options,
            settings,
            keys,
            paths,
        };
        (Some(layer), diagnostics)
    }

    /// [`load`](Self::load) that fails on errors, returning the warnings.
    pub(crate) fn try_load(
        spec: Arc<ConfigSpec>,
        options: LoadOptions,
    ) -> Result<(UserLayer, Vec<Diagnostic>), Error> {
        match UserLayer::load(spec, options) {
            (Some(layer), warnings) => Ok((layer, warnings)),
            (None, diagnostics) => Err(Error::from_diagnostics(diagnostics)),
        }
    }
}

/// A warning for each legacy file that a file under the prompts folder
/// makes unused: a legacy file is read only when nothing else is found,
/// so keeping both is most often a migration left half done.
fn shadowed_legacy_files(
    legacy: &HashMap<PromptId, Vec<(Scope, Arc<UserFile>)>>,
    dirs: &[HashMap<PromptId, KeyFiles>; 2],
) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for (key, files) in legacy {
        // The unified file of the same scope first, else the other one.
        let unified = |scope: Scope| {
            let at = |i: usize| dirs[i].get(key).and_then(|f| f.plain.as_ref());
            match scope {
                Scope::Global => at(0).or(at(1)),
                Scope::Local => at(1).or(at(0)),
            }
        };
        for (scope, file) in files {
            let Some(winner) = unified(*scope) else {
                continue;
            };
            found.push(
                Diagnostic::warning(
                    DiagnosticCode::LegacyShadowed,
                    format!(
                        "legacy file {} is not read: {} configures `{key}`",
                        file.path.display(),
                        winner.path.display()
                    ),
                )
                .in_file(&file.path)
                .suggest(Some(format!(
                    "keep what you want in {} and delete {}",
                    winner.path.display(),
                    file.path.display()
                ))),
            );
        }
    }
    found.sort_by(|a, b| a.file.cmp(&b.file));
    found
}

/// Gathers what was read into one entry per key, each block with its
/// provenance.
fn by_key(
    settings: &Settings,
    explicit: HashMap<PromptId, Arc<UserFile>>,
    dirs: [HashMap<PromptId, KeyFiles>; 2],
    legacy: HashMap<PromptId, Vec<(Scope, Arc<UserFile>)>>,
) -> Map<PromptId, KeyConfig> {
    let mut keys: Map<PromptId, KeyConfig> = Map::default();
    for (key, block) in settings.prompts() {
        let config = keys.entry(key.clone()).or_default();
        config.settings = Some(Box::new(block.clone()));
        if let Some(inline) = block.settings.inline.as_deref().and_then(non_blank) {
            let provenance = user_provenance("inline setting", Some(block));
            config.inline = Some((Renderer::text(inline), Arc::new(provenance)));
        }
    }
    for (key, file) in explicit {
        keys.entry(key).or_default().explicit = Some(file);
    }
    for (scope, dir) in dirs.into_iter().enumerate() {
        for (key, files) in dir {
            keys.entry(key).or_default().dirs[scope] = files;
        }
    }
    for (key, files) in legacy {
        keys.entry(key).or_default().legacy = files;
    }
    keys
}

/// A user block's provenance: `what` it is, and the mode and settings
/// entry of its key.
pub(super) fn user_provenance(what: &str, block: Option<&SettingsBlock>) -> Provenance {
    let mut provenance = Provenance::new(SourceKind::User, what);
    let mode = block.and_then(|b| b.settings.mode).unwrap_or_default();
    provenance.mode = Some(mode.as_str().to_owned());
    provenance.chosen_by = block.map(|b| {
        Setting::new(
            b.source.file.clone(),
            b.source.key_path.clone(),
            b.source.position.line,
            b.source.position.column,
        )
    });
    provenance
}

/// What reading one prompt file gave.
enum Loaded {
    File(Arc<UserFile>),
    Missing,
    Blank,
    /// Reported already.
    Failed,
}

/// Reads a configuration's files, collecting diagnostics.
struct Loader<'a> {
    spec: &'a ConfigSpec,
    options: &'a LoadOptions,
    diagnostics: Vec<Diagnostic>,
    watched: ConfigPaths,
    /// Where the project's configuration may read; `None` when it may read
    /// anywhere (no project, or a trusted one). Known once the global
    /// settings are read.
    boundary: Option<Boundary>,
    /// The keys whose settings block comes from the project's settings.
    project_keys: HashSet<PromptId>,
    /// Whether the `promptsDir` in force comes from the project's settings.
    project_prompts_dir: bool,
}

/// Which settings file: the order they are read in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SettingsFile {
    Global,
    /// The project's: confined to the project unless trusted.
    Local,
    /// Named by the environment variable: the user's choice, trusted.
    Env,
}

impl Loader<'_> {
    /// Global, then local, then the environment's settings file, merged.
    fn settings(&mut self) -> Settings {
        let home = self.options.home();
        let cwd = self.options.cwd();
        let mut paths: Vec<(PathBuf, SettingsFile)> = Vec::new();
        if let Some(name) = self.spec.global_settings_file() {
            paths.push((home.join(name), SettingsFile::Global));
        }
        if let (Some(name), Some(cwd)) = (self.spec.local_settings_file(), cwd) {
            paths.push((cwd.join(name), SettingsFile::Local));
        }
        if let Some(raw) = self.options.settings_env() {
            let path =
                files::expand(raw.trim(), home, cwd).unwrap_or_else(|| PathBuf::from(raw.trim()));
            paths.push((path, SettingsFile::Env));
        }
        self.watched
            .files
            .extend(paths.iter().map(|(path, _)| path.clone()));
        let mut merged = Settings::default();
        let mut trusted = Vec::new();
        // The global file first: it says which projects are trusted.
        let (global, others): (Vec<_>, Vec<_>) = paths
            .into_iter()
            .partition(|(_, which)| *which == SettingsFile::Global);
        for (path, which) in global {
            if let Some(mut parsed) = self.settings_file(&path, which) {
                trusted = parsed.take_trusted_projects();
                self.note_origin(&parsed, which);
                merged.layer(parsed);
            }
        }
        self.set_boundary(&trusted);
        for (path, which) in others {
            if let Some(parsed) = self.settings_file(&path, which) {
                self.note_origin(&parsed, which);
                merged.layer(parsed);
            }
        }
        merged
    }

    /// The project's boundary, given the global settings' trusted projects.
    fn set_boundary(&mut self, trusted: &[String]) {
        let home = self.options.home();
        let global = self.spec.global_settings_file().map(|name| home.join(name));
        self.boundary = Boundary::of_project(self.options.cwd(), home, trusted, global);
    }

    /// One settings file, parsed; `None` when absent, blank or unreadable.
    fn settings_file(&mut self, path: &Path, which: SettingsFile) -> Option<ParsedSettings> {
        let boundary = self
            .boundary
            .as_ref()
            .filter(|_| which == SettingsFile::Local);
        let within = boundary.map(|b| (b, "settings file of the project"));
        let text = match files::read_file(path, self.spec.max_file_size(), within) {
            Ok(Some(file)) if non_blank(&file.text).is_some() => file.text,
            Ok(None) if which == SettingsFile::Env => {
                self.missing_env_file(path);
                return None;
            }
            Ok(_) => return None,
            Err(d) => {
                self.diagnostics.push(d);
                return None;
            }
        };
        let (parsed, diagnostics) = settings::parse(&text, path, self.spec);
        self.diagnostics.extend(diagnostics);
        if which != SettingsFile::Global
            && let Some(list) = parsed.trusted_projects()
        {
            self.misplaced_trust(path, &text, list.span.clone());
        }
        Some(parsed)
    }

    /// Records which keys (and whether `promptsDir`) the project's
    /// settings decide: a later file's block replaces an earlier one.
    fn note_origin(&mut self, parsed: &ParsedSettings, which: SettingsFile) {
        let project = which == SettingsFile::Local;
        for key in parsed.prompt_keys() {
            if project {
                self.project_keys.insert(key.clone());
            } else {
                self.project_keys.remove(key);
            }
        }
        if parsed.sets_prompts_dir() {
            self.project_prompts_dir = project;
        }
    }

    /// A project cannot trust itself: its list is ignored, with a warning.
    fn misplaced_trust(&mut self, path: &Path, text: &str, span: std::ops::Range<usize>) {
        let global = self
            .spec
            .global_settings_file()
            .map(|name| self.options.home().join(name));
        let hint = match global {
            Some(global) => format!(
                "move it to the global settings file {}, or run `promptreg trust DIR`",
                global.display()
            ),
            None => "remove it".to_owned(),
        };
        self.diagnostics.push(
            Diagnostic::warning(
                DiagnosticCode::TrustedProjects,
                format!(
                    "`{TRUSTED_PROJECTS}` is read only from the global settings file and is ignored here"
                ),
            )
            .in_file(path)
            .at(&LineIndex::new(text), span)
            .key_path(TRUSTED_PROJECTS)
            .suggest(Some(hint)),
        );
    }

    fn missing_env_file(&mut self, path: &Path) {
        let var = self.spec.settings_env().unwrap_or("the settings variable");
        self.diagnostics.push(
            Diagnostic::error(
                DiagnosticCode::Io,
                format!("{var} names a settings file that does not exist"),
            )
            .in_file(path)
            .suggest(Some(format!("create it, or unset {var}"))),
        );
    }

    /// Every `<key>.md` and `<key>.<locale>.md` in `dir`; `confined` when
    /// the project's configuration chose the folder.
    fn directory(
        &mut self,
        dir: Option<&Path>,
        scope: Scope,
        confined: bool,
    ) -> HashMap<PromptId, KeyFiles> {
        let mut found: HashMap<PromptId, KeyFiles> = HashMap::new();
        let Some(dir) = dir else { return found };
        let boundary = self.boundary.as_ref().filter(|_| confined);
        let resolved = match files::resolve_dir(dir, boundary.map(|b| (b, "prompts folder"))) {
            Ok(Some(resolved)) => resolved,
            Ok(None) => return found,
            Err(d) => {
                self.diagnostics.push(d);
                return found;
            }
        };
        // List the folder that was checked, not whatever `dir` names now.
        let names = match prompt_file::markdown_names(&resolved) {
            Ok(Some(names)) => names,
            Ok(None) => return found,
            Err(e) => {
                self.diagnostics.push(prompt_file::unreadable_dir(dir, &e));
                return found;
            }
        };
        for name in names {
            let path = dir.join(&name);
            let Some((key, locale)) = self.classify(&name, &path) else {
                continue;
            };
            let confined = confined.then_some("prompt file");
            let Some(file) = self.prompt_file(&path, Some(scope), locale.clone(), confined) else {
                continue;
            };
            let files = found.entry(key).or_default();
            match locale {
                Some(locale) => {
                    files.by_locale.push((locale, file));
                }
                None => files.plain = Some(file),
            }
        }
        found
    }

    /// The key (and locale) a file name stands for, or a warning.
    fn classify(&mut self, name: &str, path: &Path) -> Option<(PromptId, Option<Locale>)> {
        let stem = name.strip_suffix(".md")?;
        let hint = match prompt_file::file_key(self.spec, stem) {
            FileKey::Key(key, locale) => {
                if let Some(locale) = &locale {
                    let warning = prompt_file::file_locale_warning(&key, locale, path);
                    self.diagnostics.extend(warning);
                }
                return Some((key, locale));
            }
            FileKey::Invalid(_) => None,
            // `auditr.ja.md`: suggest for the key part and keep the locale.
            FileKey::Unknown { key, locale_suffix } => {
                suggest::nearest(key, self.spec.keys().map(PromptId::as_str))
                    .map(|k| format!("did you mean `{k}{locale_suffix}.md`?"))
            }
        };
        self.diagnostics.push(
            Diagnostic::warning(
                DiagnosticCode::UnknownPromptFile,
                "the file name matches no prompt key, so the file is never read",
            )
            .in_file(path)
            .suggest(hint.or_else(|| Some("name it `<key>.md` or `<key>.<locale>.md`".into()))),
        );
        None
    }

    /// Reads one prompt file, with its front matter; blank files are
    /// absent, with a warning. `confined`: what it is, when the project's
    /// configuration chose it.
    fn prompt_file(
        &mut self,
        path: &Path,
        scope: Option<Scope>,
        locale: Option<Locale>,
        confined: Option<&str>,
    ) -> Option<Arc<UserFile>> {
        match self.load_prompt(path, scope, locale, confined) {
            Loaded::File(file) => Some(file),
            Loaded::Blank => {
                self.diagnostics.push(
                    Diagnostic::warning(
                        DiagnosticCode::EmptyPromptFile,
                        "the prompt file is empty and counts as absent",
                    )
                    .in_file(path),
                );
                None
            }
            Loaded::Missing | Loaded::Failed => None,
        }
    }

    /// Reads one prompt file, with its front matter, reporting what is
    /// wrong in it; the caller decides what a missing or blank file means.
    fn load_prompt(
        &mut self,
        path: &Path,
        scope: Option<Scope>,
        locale: Option<Locale>,
        confined: Option<&str>,
    ) -> Loaded {
        let boundary = self.boundary.as_ref();
        let within = confined.and_then(|what| Some((boundary?, what)));
        let prompt_file::FileText { text, target } =
            match files::read_file(path, self.spec.max_file_size(), within) {
                Ok(Some(file)) => file,
                Ok(None) => return Loaded::Missing,
                Err(d) => {
                    self.diagnostics.push(d);
                    return Loaded::Failed;
                }
            };
        let renderer = match self.user_renderer(&text, path) {
            Ok(Some(renderer)) => renderer,
            Ok(None) => return Loaded::Blank,
            Err(d) => {
                self.diagnostics.push(d);
                return Loaded::Failed;
            }
        };
        Loaded::File(Arc::new(UserFile {
            path: path.into(),
            target: target.map(PathBuf::into_boxed_path),
            scope,
            locale,
            renderer,
            digest: digest(&text),
        }))
    }

    /// The renderer of a user's prompt file: `None` when blank.
    fn user_renderer(&mut self, text: &str, path: &Path) -> Result<Option<Renderer>, Diagnostic> {
        let doc = Document::parse(text, path)?;
        if doc.has_pins() {
            return Err(Diagnostic::error(
                DiagnosticCode::FrontMatter,
                "pinned blocks are declared by the application, not in a user's prompt file",
            )
            .in_file(path)
            .suggest(Some("remove `pin_head` and `pin_tail`".to_owned())));
        }
        if doc.has_settings() {
            return Err(Diagnostic::error(
                DiagnosticCode::FrontMatter,
                "model settings and metadata are declared by the application, not in a user's prompt file",
            )
            .in_file(path)
            .suggest(Some("remove `model` and `metadata`".to_owned())));
        }
        if doc.has_chat_keys() {
            let d = Diagnostic::error(
                DiagnosticCode::FrontMatter,
                "a user's prompt file is text: it goes into a chat prompt's system message, and chat messages are declared by the application",
            )
            .in_file(path)
            .suggest(Some("remove `kind`, `roles` and `attach`".to_owned()));
            let key = ["kind", "roles", "attach"]
                .into_iter()
                .find_map(|key| doc.key_span(key));
            return Err(match key {
                Some(span) => d.at(&LineIndex::new(text), span),
                None => d,
            });
        }
        if non_blank(doc.body).is_none() {
            return Ok(None);
        }
        let renderer = doc.body_renderer(path)?;
        if let Some(template) = renderer.computed::<crate::template::Template>() {
            self.diagnostics.extend(template.undeclared_diagnostics());
        }
        let warnings = prompt_file::prompt_file_warnings(&doc, text, path, &[&renderer]);
        self.diagnostics.extend(warnings);
        Ok(Some(renderer))
    }

    /// The files named by `file` settings; a missing or blank one is
    /// reported where the setting is, since the rule skips it silently.
    fn explicit_files(&mut self, settings: &Settings) -> HashMap<PromptId, Arc<UserFile>> {
        let mut found = HashMap::new();
        for (key, block) in settings.prompts() {
            let Some(raw) = block.settings.file.as_deref().and_then(non_blank) else {
                continue;
            };
            let Some(path) = files::expand(raw, self.options.home(), self.options.cwd()) else {
                let problem =
                    format!("`file` names the relative path {raw}, and there is no project folder");
                self.setting_file_warning(block, problem);
                continue;
            };
            self.watched.files.push(path.clone());
            let what = format!("file `{}`", crate::diagnostic::printable(raw));
            let confined = self.project_keys.contains(key).then_some(what.as_str());
            let before = self.diagnostics.len();
            match self.load_prompt(&path, None, None, confined) {
                Loaded::File(file) => {
                    found.insert(key.clone(), file);
                }
                Loaded::Missing => self.setting_file_warning(
                    block,
                    format!("`file` names {}, which does not exist", path.display()),
                ),
                Loaded::Blank => self.setting_file_warning(
                    block,
                    format!("`file` names {}, which is empty", path.display()),
                ),
                Loaded::Failed => {
                    // A refusal to read outside the project is the
                    // setting's: it is where the user fixes it (or trusts
                    // the project), with its file, line and key path.
                    for d in &mut self.diagnostics[before..] {
                        if d.code == DiagnosticCode::OutsideProject {
                            *d = block.at_file_setting(d.clone());
                        }
                    }
                }
            }
        }
        found
    }

    /// A warning at the `file` setting of `block`.
    fn setting_file_warning(&mut self, block: &SettingsBlock, problem: String) {
        let d = Diagnostic::warning(
            DiagnosticCode::MissingSettingFile,
            format!("{problem}: the setting is skipped and the prompt directories are used"),
        )
        .suggest(Some(
            "fix the path or remove `file`; `~/...` is under home, a relative path under the project".to_owned(),
        ));
        self.diagnostics.push(block.at_file_setting(d));
    }

    /// The declared legacy files, local before global.
    fn legacy_files(&mut self) -> HashMap<PromptId, Vec<(Scope, Arc<UserFile>)>> {
        let mut found: HashMap<PromptId, Vec<(Scope, Arc<UserFile>)>> = HashMap::new();
        let roots = [
            (self.options.cwd(), Scope::Local),
            (Some(self.options.home()), Scope::Global),
        ];
        for legacy in self.spec.legacy_files() {
            for (root, scope) in roots {
                let Some(root) = root else { continue };
                self.watched.files.push(root.join(&legacy.path));
                let confined = (scope == Scope::Local).then_some("legacy prompt file");
                let path = root.join(&legacy.path);
                if let Some(file) = self.prompt_file(&path, Some(scope), None, confined) {
                    found
                        .entry(legacy.key.clone())
                        .or_default()
                        .push((scope, file));
                }
            }
        }
        found
    }
}
