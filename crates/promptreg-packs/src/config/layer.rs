//! The user layer: every settings file and prompt file of a configuration,
//! read once and held in memory, so rendering reads no files.

use std::any::Any;
use std::collections::BTreeMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::locale_files;
use super::options::LoadOptions;
use super::resolve::{self, BlockSource, Choice, Scope};
use super::settings::{PromptSettings, Settings, SettingsBlock};
use super::spec::ConfigSpec;
use crate::Map;
use crate::diagnostic::Diagnostic;
use crate::id::PromptId;
use crate::layer::{Layer, LayerChoice, LayerPart};
use crate::locale::Locale;
use crate::provenance::Provenance;
use crate::renderer::Renderer;
use crate::snapshot::Snapshot;

/// What a successful [`load_config`](crate::sources::LoadConfig::load_config)
/// or [`reload`](crate::sources::LoadConfig::reload) did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct LoadReport {
    /// The prompt keys whose user configuration changed (settings or
    /// files), sorted; every configured key on a first load.
    pub changed: Vec<PromptId>,
    /// Problems that did not stop the load.
    pub warnings: Vec<Diagnostic>,
}

/// A prompt file the user layer read.
#[derive(Debug, Clone)]
pub(crate) struct UserFile {
    pub(crate) path: Box<Path>,
    /// The file read, when `path` leads elsewhere (a symbolic link).
    pub(crate) target: Option<Box<Path>>,
    pub(crate) scope: Option<Scope>,
    pub(crate) locale: Option<Locale>,
    pub(crate) renderer: Renderer,
    /// A hash of the file's text, to tell which prompts a reload changed.
    pub(crate) digest: u64,
}

/// The prompt files of one key in one directory.
#[derive(Debug, Default)]
pub(crate) struct KeyFiles {
    pub(crate) plain: Option<Arc<UserFile>>,
    /// `<key>.<locale>.md` files: few per key, so a list, searched in order.
    pub(crate) by_locale: Vec<(Locale, Arc<UserFile>)>,
}

impl KeyFiles {
    fn all(&self) -> impl Iterator<Item = &Arc<UserFile>> {
        self.plain
            .iter()
            .chain(self.by_locale.iter().map(|(_, f)| f))
    }
}

/// Everything the user configured for one key, found with one lookup.
#[derive(Debug, Default)]
pub(crate) struct KeyConfig {
    /// Boxed: most keys a directory holds have no settings block.
    pub(crate) settings: Option<Box<SettingsBlock>>,
    pub(crate) inline: Option<(Renderer, Arc<Provenance>)>,
    /// The file named by the `file` setting.
    pub(crate) explicit: Option<Arc<UserFile>>,
    /// Files in the global and the local prompts directory.
    pub(crate) dirs: [KeyFiles; 2],
    /// Legacy files, local before global.
    pub(crate) legacy: Vec<(Scope, Arc<UserFile>)>,
}

/// A loaded configuration.
#[derive(Debug)]
pub(crate) struct UserLayer {
    pub(crate) spec: Arc<ConfigSpec>,
    pub(crate) options: LoadOptions,
    pub(crate) settings: Settings,
    pub(crate) keys: Map<PromptId, KeyConfig>,
    pub(crate) paths: ConfigPaths,
}

/// Every path a loaded configuration reads, present or not: what to
/// follow to know when to [`reload`](crate::sources::LoadConfig::reload).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigPaths {
    /// Settings files, legacy files and files named by `file` settings.
    pub files: Vec<PathBuf>,
    /// Prompt directories (their `*.md` files are read).
    pub dirs: Vec<PathBuf>,
}

/// A prompt file of the user layer, as listed by
/// [`LoadedConfig::files`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct UserFileInfo {
    /// The file, where it was found.
    pub path: PathBuf,
    /// The file actually read, symbolic links and `..` resolved, when it
    /// is not `path` itself.
    pub target: Option<PathBuf>,
    /// Under home or cwd; `None` for a file named by a `file` setting.
    pub scope: Option<Scope>,
    /// The locale of a `<key>.<locale>.md` file.
    pub locale: Option<Locale>,
    /// Whether it is a legacy file.
    pub legacy: bool,
}

impl UserLayer {
    pub(crate) fn spec(&self) -> &Arc<ConfigSpec> {
        &self.spec
    }

    pub(crate) fn options(&self) -> &LoadOptions {
        &self.options
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
        self.keys
            .iter()
            .map(|(key, config)| {
                let settings = config
                    .settings
                    .as_ref()
                    .map(|b| format!("{:?}", b.settings));
                let mut files: Vec<(&Path, u64)> =
                    config.files().map(|(f, _)| (&*f.path, f.digest)).collect();
                files.sort_unstable();
                (key.clone(), digest(&(settings, files)))
            })
            .collect()
    }

    /// Every prompt file loaded for `key`.
    pub(crate) fn files(&self, key: &str) -> Vec<UserFileInfo> {
        let Some(config) = self.keys.get(key) else {
            return Vec::new();
        };
        let mut files: Vec<UserFileInfo> = config
            .files()
            .map(|(f, legacy)| UserFileInfo {
                path: f.path.to_path_buf(),
                target: f.target.as_deref().map(Path::to_path_buf),
                scope: f.scope,
                locale: f.locale.clone(),
                legacy,
            })
            .collect();
        files.sort_by(|a, b| (a.legacy, &a.path).cmp(&(b.legacy, &b.path)));
        files
    }
}

impl UserLayer {
    /// The user configuration loaded in `snapshot`, if any.
    pub(crate) fn of(snapshot: &Snapshot) -> Option<&UserLayer> {
        let layer: &dyn Any = &**snapshot.layer()?;
        layer.downcast_ref()
    }
}

/// The user configuration loaded in a [`Snapshot`], for tools that show it
/// (`promptreg list`): its settings, declaration, options, paths and files.
///
/// ```
/// # use promptreg_core::{Prompt, PromptRegistry};
/// # use promptreg_packs::prelude::*;
/// # use promptreg_packs::config::{ConfigSpec, LoadOptions, LoadedConfig};
/// # let home = tempfile::tempdir()?;
/// let registry = PromptRegistry::new();
/// let spec = ConfigSpec::builder("app").key("auditor").prompts_dir(".app/prompts").build()?;
/// registry.load_config(spec, LoadOptions::new(home.path(), ""))?;
/// let snapshot = registry.snapshot();
/// let loaded = LoadedConfig::of(&snapshot).expect("a configuration is loaded");
/// assert!(loaded.files("auditor").is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct LoadedConfig<'a>(&'a UserLayer);

impl<'a> LoadedConfig<'a> {
    /// The configuration loaded in `snapshot`; `None` when none is.
    pub fn of(snapshot: &'a Snapshot) -> Option<Self> {
        UserLayer::of(snapshot).map(LoadedConfig)
    }

    /// The settings read, merged.
    pub fn settings(self) -> &'a Settings {
        &self.0.settings
    }

    /// The application's declaration it was loaded with.
    pub fn spec(self) -> &'a ConfigSpec {
        &self.0.spec
    }

    /// The options it was loaded with.
    pub fn options(self) -> &'a LoadOptions {
        &self.0.options
    }

    /// Every path it reads, present or not: what to watch to know when to
    /// reload.
    pub fn paths(self) -> &'a ConfigPaths {
        &self.0.paths
    }

    /// The user's prompt files loaded for `id`.
    pub fn files(self, id: &str) -> Vec<UserFileInfo> {
        self.0.files(id)
    }
}

impl Layer for UserLayer {
    /// The user's blocks for `key` in `locale`, by the resolution rule.
    fn choose<'a>(
        &'a self,
        key: &PromptId,
        locale: &Locale,
        fallback: &Locale,
    ) -> Option<LayerChoice<'a>> {
        const UNSET: PromptSettings = PromptSettings {
            mode: None,
            inline: None,
            file: None,
        };
        // One lookup decides for the many keys a user does not configure.
        let config = self.keys.get(key)?;
        let cfg = config.settings.as_ref().map_or(&UNSET, |b| &b.settings);
        let mut blocks = LayerBlocks {
            config,
            locale,
            fallback,
        };
        // In memory there are no read errors: every file was read at load.
        let choice = resolve::choose(cfg, &mut blocks).ok()??;
        let replaces_body = resolve::choice_replaces(cfg.mode.unwrap_or_default(), choice.source());
        // A file's provenance is made here, when a render or a trace asks,
        // rather than kept for every file of a large configuration.
        let block = config.settings.as_deref();
        let file = |f: &'a UserFile, what: &str| LayerPart {
            renderer: &f.renderer,
            provenance: Arc::new(f.provenance(what, block)),
        };
        let parts = match choice {
            Choice::Inline(_) => [
                config
                    .inline
                    .as_ref()
                    .map(|(renderer, provenance)| LayerPart {
                        renderer,
                        provenance: Arc::clone(provenance),
                    }),
                None,
            ],
            Choice::File(f) => [Some(file(f, "file named by the `file` setting")), None],
            Choice::Dir(scope, f) => [Some(file(f, &format!("{} file", scope.name()))), None],
            Choice::Legacy(scope, f) => {
                let what = format!("{} legacy file", scope.name());
                [Some(file(f, &what)), None]
            }
            Choice::Merged(g, l) => [Some(file(g, "global file")), Some(file(l, "local file"))],
        };
        Some(LayerChoice {
            replaces_body,
            parts,
        })
    }
}

impl UserFile {
    /// Where a render's trace says the file's block came from: `what` the
    /// file is, and the mode and settings entry of its key (`block`).
    fn provenance(&self, what: &str, block: Option<&SettingsBlock>) -> Provenance {
        let mut provenance = super::load::user_provenance(what, block);
        provenance.file = Some(self.path.to_path_buf());
        provenance.target = self.target.as_deref().map(Path::to_path_buf);
        provenance.locale = self.locale.clone();
        provenance
    }
}

impl KeyConfig {
    /// Every file of the key, with whether it is a legacy file.
    fn files(&self) -> impl Iterator<Item = (&UserFile, bool)> {
        let current = self
            .explicit
            .iter()
            .chain(self.dirs.iter().flat_map(KeyFiles::all));
        current
            .map(|f| (&**f, false))
            .chain(self.legacy.iter().map(|(_, f)| (&**f, true)))
    }
}

pub(crate) fn digest(value: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// The rule's files, looked up in a key's loaded configuration.
struct LayerBlocks<'a, 'l> {
    config: &'a KeyConfig,
    locale: &'l Locale,
    fallback: &'l Locale,
}

impl<'a> BlockSource for LayerBlocks<'a, '_> {
    type Block = &'a UserFile;

    fn file(&mut self, _raw: &str) -> Result<Option<&'a UserFile>, Diagnostic> {
        Ok(self.config.explicit.as_deref())
    }

    fn dir(&mut self, scope: Scope) -> Result<Option<&'a UserFile>, Diagnostic> {
        let files = &self.config.dirs[scope as usize];
        let by_locale = locale_files::pick(self.locale, self.fallback, &files.by_locale);
        Ok(by_locale.or(files.plain.as_ref()).map(|f| &**f))
    }

    fn legacy(&mut self) -> Result<Option<(Scope, &'a UserFile)>, Diagnostic> {
        let found = self.config.legacy.first();
        Ok(found.map(|(scope, f)| (*scope, &**f)))
    }
}
