//! The user layer: every settings file and prompt file of a configuration,
//! read once and held in memory, so rendering reads no files.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::files::{self, non_empty};
use super::mode::Mode;
use super::resolve::{self, Blocks, Choice, Scope, Source};
use super::settings::{self, Settings, SettingsBlock, SettingsSource};
use super::spec::ConfigSpec;
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::error::{Error, ErrorKind};
use crate::front_matter::Document;
use crate::id::PromptId;
use crate::locale::Locale;
use crate::renderer::Renderer;
use crate::suggest;

/// Where a configuration is read from: home, cwd and the value of the
/// settings environment variable.
///
/// Everything is explicit so that tests and tools choose their own folders;
/// [`LoadOptions::from_process`] reads the real ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadOptions {
    home: PathBuf,
    cwd: PathBuf,
    settings_env: Option<String>,
}

impl LoadOptions {
    /// Reads global files under `home` and local files under `cwd`. An
    /// empty `cwd` means no local files.
    pub fn new(home: impl Into<PathBuf>, cwd: impl Into<PathBuf>) -> Self {
        LoadOptions {
            home: home.into(),
            cwd: cwd.into(),
            settings_env: None,
        }
    }

    /// The value of the settings environment variable: a settings file read
    /// after the global and local ones (`~/...`, absolute, or relative to
    /// cwd). A blank value counts as unset.
    pub fn settings_env_value(mut self, value: Option<String>) -> Self {
        self.settings_env = value.filter(|v| !v.trim().is_empty());
        self
    }

    /// The process's home directory (`HOME`, or `USERPROFILE` on Windows),
    /// current directory and the value of `spec`'s environment variable.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`] when there is no home directory or the current
    /// directory cannot be read.
    pub fn from_process(spec: &ConfigSpec) -> Result<Self, Error> {
        let home = std::env::var_os("HOME")
            .or_else(|| std::env::var_os("USERPROFILE"))
            .filter(|h| !h.is_empty())
            .ok_or_else(|| Error::new(ErrorKind::Config, "no home directory: HOME is not set"))?;
        let cwd = std::env::current_dir().map_err(|e| {
            Error::new(
                ErrorKind::Config,
                format!("cannot read the current directory: {e}"),
            )
            .with_source(e)
        })?;
        let env = spec.settings_env().and_then(|var| std::env::var(var).ok());
        Ok(LoadOptions::new(home, cwd).settings_env_value(env))
    }

    /// The home directory.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The project directory, `None` when empty.
    pub fn cwd(&self) -> Option<&Path> {
        non_empty(&self.cwd)
    }
}

/// What a successful [`load_config`](crate::PromptRegistry::load_config)
/// or [`reload`](crate::PromptRegistry::reload) did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadReport {
    /// The prompt keys whose user configuration changed (settings or
    /// files), sorted; every configured key on a first load.
    pub changed: Vec<PromptId>,
    /// Problems that did not stop the load.
    pub warnings: Vec<Diagnostic>,
}

/// A prompt file the user layer read.
#[derive(Debug)]
pub(crate) struct UserFile {
    path: PathBuf,
    scope: Option<Scope>,
    locale: Option<Locale>,
    renderer: Renderer,
    /// A hash of the file's text, to tell which prompts a reload changed.
    digest: u64,
}

/// The prompt files of one key in one directory.
#[derive(Debug, Default)]
struct KeyFiles {
    plain: Option<Arc<UserFile>>,
    by_locale: HashMap<Box<str>, Arc<UserFile>>,
}

/// A loaded configuration.
#[derive(Debug)]
pub(crate) struct UserLayer {
    spec: Arc<ConfigSpec>,
    options: LoadOptions,
    settings: Settings,
    inline: HashMap<PromptId, Renderer>,
    explicit: HashMap<PromptId, Arc<UserFile>>,
    dirs: [HashMap<PromptId, KeyFiles>; 2],
    legacy: HashMap<PromptId, Vec<(Scope, Arc<UserFile>)>>,
    watched: ConfigPaths,
}

/// Every path a loaded configuration reads, present or not: what to
/// follow to know when to [`reload`](crate::PromptRegistry::reload).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigPaths {
    /// Settings files, legacy files and files named by `file` settings.
    pub files: Vec<PathBuf>,
    /// Prompt directories (their `*.md` files are read).
    pub dirs: Vec<PathBuf>,
}

/// A prompt file of the user layer, as listed by
/// [`Snapshot::user_files`](crate::Snapshot::user_files).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UserFileInfo {
    /// The file.
    pub path: PathBuf,
    /// Under home or cwd; `None` for a file named by a `file` setting.
    pub scope: Option<Scope>,
    /// The locale of a `<key>.<locale>.md` file.
    pub locale: Option<Locale>,
    /// Whether it is a legacy file.
    pub legacy: bool,
}

/// One part the user layer contributes to a render.
#[derive(Clone, Copy)]
pub(crate) struct UserPart<'a> {
    pub(crate) source: Source,
    pub(crate) mode: Mode,
    pub(crate) settings: Option<&'a SettingsSource>,
    pub(crate) file: Option<&'a UserFile>,
    pub(crate) renderer: &'a Renderer,
}

/// Where a user block came from, in a render's trace.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UserOrigin {
    /// Inline, global, local or merged.
    pub source: Source,
    /// The mode in force.
    pub mode: Mode,
    /// The settings file and key that configured the prompt, if any.
    pub settings: Option<SettingsSource>,
    /// The prompt file, for blocks read from one.
    pub file: Option<PathBuf>,
    /// Whether that file is under home or cwd (`None` for a file named by
    /// the `file` setting).
    pub scope: Option<Scope>,
    /// The locale of the locale file matched (`<key>.<locale>.md`).
    pub locale: Option<Locale>,
}

impl std::fmt::Display for UserOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.file, &self.settings) {
            (Some(file), _) => write!(f, "user file {} (mode {})", file.display(), self.mode),
            (None, Some(settings)) => write!(
                f,
                "inline setting of `{}` in {}:{}",
                settings.key_path,
                settings.file.display(),
                settings.position.line
            ),
            (None, None) => write!(f, "user block (mode {})", self.mode),
        }
    }
}

impl UserPart<'_> {
    pub(crate) fn origin(&self) -> UserOrigin {
        UserOrigin {
            source: self.source,
            mode: self.mode,
            settings: self.settings.cloned(),
            file: self.file.map(|f| f.path.clone()),
            scope: self.file.and_then(|f| f.scope),
            locale: self.file.and_then(|f| f.locale.clone()),
        }
    }
}

/// What the user layer does to one render: the blocks it adds, and whether
/// they replace the application's body.
pub(crate) struct UserChoice<'a> {
    pub(crate) replaces_body: bool,
    pub(crate) parts: [Option<UserPart<'a>>; 2],
}

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
        let inline = inline_blocks(&settings);
        let explicit = loader.explicit_files(&settings);
        let legacy = loader.legacy_files();
        let (diagnostics, watched) = (loader.diagnostics, loader.watched);
        if diagnostics.iter().any(Diagnostic::is_error) {
            return (None, diagnostics);
        }
        let layer = UserLayer {
            spec,
            options,
            settings,
            inline,
            explicit,
            dirs,
            legacy,
            watched,
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

    pub(crate) fn spec(&self) -> &Arc<ConfigSpec> {
        &self.spec
    }

    pub(crate) fn options(&self) -> &LoadOptions {
        &self.options
    }

    pub(crate) fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Every path this configuration reads.
    pub(crate) fn paths(&self) -> &ConfigPaths {
        &self.watched
    }

    /// The keys whose configuration differs between `before` and `self`.
    pub(crate) fn changed_since(&self, before: Option<&UserLayer>) -> Vec<PromptId> {
        let new = self.fingerprints();
        let old = before.map(UserLayer::fingerprints).unwrap_or_default();
        let mut changed: Vec<PromptId> = new
            .iter()
            .filter(|(key, hash)| old.get(*key) != Some(*hash))
            .map(|(key, _)| key.clone())
            .chain(old.keys().filter(|key| !new.contains_key(*key)).cloned())
            .collect();
        changed.sort_unstable();
        changed
    }

    /// For every key the layer configures, a hash of its settings and
    /// files: two layers differ for a key exactly when its hashes differ.
    fn fingerprints(&self) -> BTreeMap<PromptId, u64> {
        let mut parts: BTreeMap<PromptId, Vec<u64>> = BTreeMap::new();
        for (key, block) in self.settings.prompts() {
            parts
                .entry(key.clone())
                .or_default()
                .push(digest(&format!("{:?}", block.settings)));
        }
        let mut add = |key: &PromptId, file: &UserFile| {
            parts
                .entry(key.clone())
                .or_default()
                .push(digest(&(&file.path, file.digest)));
        };
        for (key, file) in &self.explicit {
            add(key, file);
        }
        for dir in &self.dirs {
            for (key, files) in dir {
                files
                    .plain
                    .iter()
                    .chain(files.by_locale.values())
                    .for_each(|f| add(key, f));
            }
        }
        for (key, files) in &self.legacy {
            files.iter().for_each(|(_, f)| add(key, f));
        }
        parts
            .into_iter()
            .map(|(key, mut hashes)| {
                hashes.sort_unstable();
                (key, digest(&hashes))
            })
            .collect()
    }

    /// Every prompt file loaded for `key`.
    pub(crate) fn files(&self, key: &str) -> Vec<UserFileInfo> {
        let info = |f: &UserFile, legacy| UserFileInfo {
            path: f.path.clone(),
            scope: f.scope,
            locale: f.locale.clone(),
            legacy,
        };
        let mut out: Vec<UserFileInfo> = self
            .explicit
            .get(key)
            .map(|f| info(f, false))
            .into_iter()
            .collect();
        for dir in &self.dirs {
            if let Some(files) = dir.get(key) {
                out.extend(files.plain.iter().map(|f| info(f, false)));
                let mut by_locale: Vec<_> =
                    files.by_locale.values().map(|f| info(f, false)).collect();
                by_locale.sort_by(|a, b| a.path.cmp(&b.path));
                out.extend(by_locale);
            }
        }
        if let Some(files) = self.legacy.get(key) {
            out.extend(files.iter().map(|(_, f)| info(f, true)));
        }
        out
    }

    /// The user's blocks for `key` in `locale`, by the resolution rule.
    pub(crate) fn choose<'a>(
        &'a self,
        key: &'a PromptId,
        locale: &'a Locale,
        fallback: &'a Locale,
    ) -> Option<UserChoice<'a>> {
        let block = self.settings.prompt(key);
        let cfg = block.map(|b| &b.settings);
        let default_cfg = super::settings::PromptSettings::default();
        let mut blocks = LayerBlocks {
            layer: self,
            key,
            locale,
            fallback,
        };
        // In memory there are no read errors: every file was read at load.
        let choice = resolve::choose(cfg.unwrap_or(&default_cfg), &mut blocks).ok()??;
        let mode = cfg.and_then(|c| c.mode).unwrap_or_default();
        let source = choice.source();
        let part = |file: Option<&'a UserFile>, renderer: &'a Renderer| UserPart {
            source,
            mode,
            settings: block.map(|b: &SettingsBlock| &b.source),
            file,
            renderer,
        };
        let parts = match choice {
            Choice::Inline(_) => [self.inline.get(key).map(|r| part(None, r)), None],
            Choice::File(f) | Choice::Dir(_, f) | Choice::Legacy(_, f) => {
                [Some(part(Some(f), &f.renderer)), None]
            }
            Choice::Merged(g, l) => [
                Some(part(Some(g), &g.renderer)),
                Some(part(Some(l), &l.renderer)),
            ],
        };
        Some(UserChoice {
            replaces_body: resolve::choice_replaces(mode, source),
            parts,
        })
    }
}

fn digest(value: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn inline_blocks(settings: &Settings) -> HashMap<PromptId, Renderer> {
    settings
        .prompts()
        .filter_map(|(key, block)| {
            let inline = block.settings.inline.as_deref()?.trim();
            (!inline.is_empty()).then(|| (key.clone(), Renderer::text(inline)))
        })
        .collect()
}

/// The rule's files, looked up in a loaded layer.
struct LayerBlocks<'a> {
    layer: &'a UserLayer,
    key: &'a PromptId,
    locale: &'a Locale,
    fallback: &'a Locale,
}

impl<'a> Blocks for LayerBlocks<'a> {
    type Block = &'a UserFile;

    fn file(&mut self, _raw: &str) -> Result<Option<&'a UserFile>, Diagnostic> {
        Ok(self.layer.explicit.get(self.key).map(|f| &**f))
    }

    fn dir(&mut self, scope: Scope) -> Result<Option<&'a UserFile>, Diagnostic> {
        let Some(files) = self.layer.dirs[scope as usize].get(self.key) else {
            return Ok(None);
        };
        let mut chain = self.locale.chain().chain(self.fallback.chain());
        let by_locale = chain.find_map(|key| files.by_locale.get(key));
        Ok(by_locale.or(files.plain.as_ref()).map(|f| &**f))
    }

    fn legacy(&mut self) -> Result<Option<(Scope, &'a UserFile)>, Diagnostic> {
        let found = self
            .layer
            .legacy
            .get(self.key)
            .and_then(|files| files.first());
        Ok(found.map(|(scope, f)| (*scope, &**f)))
    }
}

/// Reads a configuration's files, collecting diagnostics.
struct Loader<'a> {
    spec: &'a ConfigSpec,
    options: &'a LoadOptions,
    diagnostics: Vec<Diagnostic>,
    watched: ConfigPaths,
}

impl Loader<'_> {
    fn read(&mut self, path: &Path) -> Option<String> {
        match files::read_text(path, self.spec.max_file_size()) {
            Ok(text) => text,
            Err(d) => {
                self.diagnostics.push(d);
                None
            }
        }
    }

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
        if let Some(raw) = &self.options.settings_env {
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
                format!(
                    "settings file {} named by {var} does not exist",
                    path.display()
                ),
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
                        format!("cannot read directory {}: {e}", dir.display()),
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
                    files.by_locale.insert(locale.key().into(), file);
                }
                None => files.plain = Some(file),
            }
        }
        found
    }

    /// The key (and locale) a file name stands for, or a warning.
    fn classify(&mut self, name: &str, path: &Path) -> Option<(PromptId, Option<Locale>)> {
        let stem = name.strip_suffix(".md")?;
        if self.spec.is_known_key(stem) {
            return PromptId::new(stem).ok().map(|key| (key, None));
        }
        if let Some((key, tag)) = stem.rsplit_once('.')
            && self.spec.is_known_key(key)
            && let (Ok(key), Ok(locale)) = (PromptId::new(key), Locale::parse(tag))
        {
            return Some((key, Some(locale)));
        }
        // `auditr.ja.md`: suggest for the key part and keep the locale.
        let (key_part, tag) = match stem.rsplit_once('.') {
            Some((key, tag)) if Locale::parse(tag).is_ok() => (key, &stem[key.len()..]),
            _ => (stem, ""),
        };
        let hint = suggest::nearest(key_part, self.spec.keys().map(PromptId::as_str))
            .map(|k| format!("did you mean `{k}{tag}.md`?"));
        self.diagnostics.push(
            Diagnostic::warning(
                DiagnosticCode::UnknownPromptFile,
                format!("prompt file `{name}` matches no prompt key and is never read"),
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
        let text = self.read(path)?;
        let renderer = match self.user_renderer(&text, path) {
            Ok(renderer) => renderer?,
            Err(d) => {
                self.diagnostics.push(d);
                return None;
            }
        };
        Some(Arc::new(UserFile {
            path: path.to_path_buf(),
            scope,
            locale,
            renderer,
            digest: digest(&text),
        }))
    }

    /// The renderer of a user's prompt file: `None` (with a warning) when
    /// blank.
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
            self.diagnostics.push(
                Diagnostic::warning(
                    DiagnosticCode::EmptyPromptFile,
                    format!(
                        "prompt file `{}` is empty and counts as absent",
                        file_name(path)
                    ),
                )
                .in_file(path),
            );
            return Ok(None);
        }
        let renderer = doc.body_renderer(path)?;
        if let Some(template) = renderer.template() {
            self.diagnostics.extend(template.undeclared_diagnostics());
        }
        Ok(Some(renderer))
    }

    /// The files named by `file` settings.
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
                continue;
            };
            self.watched.files.push(path.clone());
            if let Some(file) = self.prompt_file(&path, None, None) {
                found.insert(key.clone(), file);
            }
        }
        found
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
