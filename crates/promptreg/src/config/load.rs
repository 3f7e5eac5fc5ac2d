//! Reading a configuration: settings files, prompt directories, files named
//! by settings, legacy files; every problem collected as a diagnostic.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::check;
use super::files;
use super::layer::{ConfigPaths, KeyConfig, KeyFiles, UserFile, UserLayer, digest};
use super::options::LoadOptions;
use super::resolve::Scope;
use super::settings::{self, Settings, SettingsBlock};
use super::spec::{ConfigSpec, FileKey};
use crate::Map;
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::error::Error;
use crate::front_matter::Document;
use crate::id::PromptId;
use crate::locale::Locale;
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
            .extend(global.iter().chain(local.iter()).cloned());
        let dirs = [
            loader.directory(global.as_deref(), Scope::Global),
            loader.directory(local.as_deref(), Scope::Local),
        ];
        let explicit = loader.explicit_files(&settings);
        let legacy = loader.legacy_files();
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

/// Gathers what was read into one entry per key.
fn by_key(
    settings: &Settings,
    explicit: HashMap<PromptId, Arc<UserFile>>,
    dirs: [HashMap<PromptId, KeyFiles>; 2],
    legacy: HashMap<PromptId, Vec<(Scope, Arc<UserFile>)>>,
) -> Map<PromptId, KeyConfig> {
    let mut keys: Map<PromptId, KeyConfig> = Map::default();
    for (key, block) in settings.prompts() {
        let inline = block
            .settings
            .inline
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        let config = keys.entry(key.clone()).or_default();
        config.inline = inline.map(Renderer::text);
        config.settings = Some(Box::new(block.clone()));
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
}

impl Loader<'_> {
    /// Global, then local, then the environment's settings file, merged.
    fn settings(&mut self) -> Settings {
        let home = self.options.home();
        let cwd = self.options.cwd();
        let mut paths: Vec<(PathBuf, bool)> = Vec::new();
        if let Some(name) = self.spec.global_settings_file() {
            paths.push((home.join(name), false));
        }
        if let (Some(name), Some(cwd)) = (self.spec.local_settings_file(), cwd) {
            paths.push((cwd.join(name), false));
        }
        if let Some(raw) = self.options.settings_env() {
            let path =
                files::expand(raw.trim(), home, cwd).unwrap_or_else(|| PathBuf::from(raw.trim()));
            paths.push((path, true));
        }
        let mut merged = Settings::default();
        self.watched
            .files
            .extend(paths.iter().map(|(path, _)| path.clone()));
        for (path, required) in paths {
            let text = match files::read_text(&path, self.spec.max_file_size()) {
                Ok(Some(text)) if !text.trim().is_empty() => text,
                Ok(None) if required => {
                    self.missing_env_file(&path);
                    continue;
                }
                Ok(_) => continue,
                Err(d) => {
                    self.diagnostics.push(d);
                    continue;
                }
            };
            let (parsed, diagnostics) = settings::parse(&text, &path, self.spec);
            self.diagnostics.extend(diagnostics);
            merged.layer(parsed);
        }
        merged
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

    /// Every `<key>.md` and `<key>.<locale>.md` in `dir`.
    fn directory(&mut self, dir: Option<&Path>, scope: Scope) -> HashMap<PromptId, KeyFiles> {
        let mut found: HashMap<PromptId, KeyFiles> = HashMap::new();
        let Some(dir) = dir else { return found };
        let mut names: Vec<String> = match fs::read_dir(dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|name| name.ends_with(".md"))
                .collect(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return found,
            Err(e) => {
                self.diagnostics.push(
                    Diagnostic::error(
                        DiagnosticCode::Io,
                        format!("cannot read the directory: {e}"),
                    )
                    .in_file(dir),
                );
                return found;
            }
        };
        names.sort_unstable();
        for name in names {
            let path = dir.join(&name);
            let Some((key, locale)) = self.classify(&name, &path) else {
                continue;
            };
            let Some(file) = self.prompt_file(&path, Some(scope), locale.clone()) else {
                continue;
            };
            let files = found.entry(key).or_default();
            match locale {
                Some(locale) => {
                    files.by_locale.push((locale.key().into(), file));
                }
                None => files.plain = Some(file),
            }
        }
        found
    }

    /// The key (and locale) a file name stands for, or a warning.
    fn classify(&mut self, name: &str, path: &Path) -> Option<(PromptId, Option<Locale>)> {
        let stem = name.strip_suffix(".md")?;
        let hint = match self.spec.file_key(stem) {
            FileKey::Key(key, locale) => {
                if let Some(locale) = &locale {
                    let warning = check::file_locale_warning(&key, locale, path);
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
    /// absent, with a warning.
    fn prompt_file(
        &mut self,
        path: &Path,
        scope: Option<Scope>,
        locale: Option<Locale>,
    ) -> Option<Arc<UserFile>> {
        match self.load_prompt(path, scope, locale) {
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
    fn load_prompt(&mut self, path: &Path, scope: Option<Scope>, locale: Option<Locale>) -> Loaded {
        let text = match files::read_text(path, self.spec.max_file_size()) {
            Ok(Some(text)) => text,
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
        if doc.body.trim().is_empty() {
            return Ok(None);
        }
        let renderer = doc.body_renderer(path)?;
        if let Some(template) = renderer.template() {
            self.diagnostics.extend(template.undeclared_diagnostics());
        }
        let warnings = check::prompt_file_warnings(&doc, text, path, &[&renderer]);
        self.diagnostics.extend(warnings);
        Ok(Some(renderer))
    }

    /// The files named by `file` settings; a missing or blank one is
    /// reported where the setting is, since the rule skips it silently.
    fn explicit_files(&mut self, settings: &Settings) -> HashMap<PromptId, Arc<UserFile>> {
        let mut found = HashMap::new();
        for (key, block) in settings.prompts() {
            let Some(raw) = block
                .settings
                .file
                .as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
            else {
                continue;
            };
            let Some(path) = files::expand(raw, self.options.home(), self.options.cwd()) else {
                let problem =
                    format!("`file` names the relative path {raw}, and there is no project folder");
                self.setting_file_warning(block, problem);
                continue;
            };
            self.watched.files.push(path.clone());
            match self.load_prompt(&path, None, None) {
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
                Loaded::Failed => {}
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
                if let Some(file) = self.prompt_file(&root.join(&legacy.path), Some(scope), None) {
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
