//! The user layer: every settings file and prompt file of a configuration,
//! read once and held in memory, so rendering reads no files.

use std::collections::BTreeMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::mode::Mode;
use super::options::LoadOptions;
use super::resolve::{self, Blocks, Choice, Scope, Source};
use super::settings::{PromptSettings, Settings, SettingsBlock, SettingsSource};
use super::spec::ConfigSpec;
use crate::Map;
use crate::diagnostic::Diagnostic;
use crate::id::PromptId;
use crate::locale::Locale;
use crate::renderer::Renderer;

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
    pub(crate) by_locale: Vec<(Box<str>, Arc<UserFile>)>,
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
    pub(crate) inline: Option<Renderer>,
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
    /// The prompt file, for blocks read from one, where it was found.
    pub file: Option<PathBuf>,
    /// The file actually read, symbolic links and `..` resolved, when it
    /// is not `file` itself.
    pub target: Option<PathBuf>,
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
            file: self.file.map(|f| f.path.to_path_buf()),
            target: self
                .file
                .and_then(|f| f.target.as_deref().map(Path::to_path_buf)),
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
        &self.paths
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

    /// The user's blocks for `key` in `locale`, by the resolution rule.
    pub(crate) fn choose<'a>(
        &'a self,
        key: &'a PromptId,
        locale: &'a Locale,
        fallback: &'a Locale,
    ) -> Option<UserChoice<'a>> {
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
        let mode = cfg.mode.unwrap_or_default();
        let source = choice.source();
        let part = |file: Option<&'a UserFile>, renderer: &'a Renderer| UserPart {
            source,
            mode,
            settings: config.settings.as_ref().map(|b| &b.source),
            file,
            renderer,
        };
        let parts = match choice {
            Choice::Inline(_) => [config.inline.as_ref().map(|r| part(None, r)), None],
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
struct LayerBlocks<'a> {
    config: &'a KeyConfig,
    locale: &'a Locale,
    fallback: &'a Locale,
}

impl<'a> LayerBlocks<'a> {
    /// The locale file of `files` a render in this locale uses, matched as
    /// a render matches locale variants: the locale's chain, a file of the
    /// same language and script (the likeliest region first, then by tag),
    /// then the fallback locale's chain.
    fn by_locale(&self, files: &'a KeyFiles) -> Option<&'a Arc<UserFile>> {
        let keyed = |key: &str| {
            files
                .by_locale
                .iter()
                .find(|(k, _)| **k == *key)
                .map(|(_, f)| f)
        };
        let same_script = || {
            let script = self.locale.language_script()?;
            files
                .by_locale
                .iter()
                .filter_map(|(key, f)| Some((key, f, f.locale.as_ref()?)))
                .filter(|(_, _, l)| l.language_script() == Some(script))
                .min_by_key(|(key, _, l)| (!l.has_likely_region(), *key))
                .map(|(_, f, _)| f)
        };
        self.locale
            .chain()
            .find_map(keyed)
            .or_else(same_script)
            .or_else(|| self.fallback.chain().find_map(keyed))
    }
}

impl<'a> Blocks for LayerBlocks<'a> {
    type Block = &'a UserFile;

    fn file(&mut self, _raw: &str) -> Result<Option<&'a UserFile>, Diagnostic> {
        Ok(self.config.explicit.as_deref())
    }

    fn dir(&mut self, scope: Scope) -> Result<Option<&'a UserFile>, Diagnostic> {
        let files = &self.config.dirs[scope as usize];
        let by_locale = match files.by_locale.is_empty() {
            true => None,
            false => self.by_locale(files),
        };
        Ok(by_locale.or(files.plain.as_ref()).map(|f| &**f))
    }

    fn legacy(&mut self) -> Result<Option<(Scope, &'a UserFile)>, Diagnostic> {
        let found = self.config.legacy.first();
        Ok(found.map(|(scope, f)| (*scope, &**f)))
    }
}
