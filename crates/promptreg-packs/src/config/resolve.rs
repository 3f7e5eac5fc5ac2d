//! The resolution rule for one prompt key, written once and used twice: by
//! the stateless [`resolve_prompt`] (which reads files at each call) and by
//! the loaded user layer (which looks them up in memory).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::files::{self, non_empty};
use super::locale_files;
use super::mode::Mode;
use super::read_cache;
use super::settings::PromptSettings;
use crate::diagnostic::Diagnostic;
use crate::error::Error;
use crate::id;
use crate::locale::Locale;
use crate::prompt_file::{self, non_blank};

/// Which of the user's files a block was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Under home.
    Global,
    /// Under cwd.
    Local,
}

impl Scope {
    /// `global` or `local`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Local => "local",
        }
    }
}

/// Where the user's block of a resolution came from; serialised as its
/// [`as_str`](Source::as_str) name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// The `inline` setting.
    Inline,
    /// The global file.
    Global,
    /// The local file, or the file named by the `file` setting.
    Local,
    /// The global and the local file, merged.
    Merged,
    /// Nothing: the default alone.
    None,
}

impl Source {
    /// Its name, as serialised: `inline`, `global`, `local`, `merged` or
    /// `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Inline => "inline",
            Source::Global => "global",
            Source::Local => "local",
            Source::Merged => "merged",
            Source::None => "none",
        }
    }
}

impl Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// What [`resolve_prompt`] returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolved {
    /// The text to send: the default, the block, or both.
    #[serde(rename = "final")]
    pub final_text: String,
    /// The user's block, when there is one.
    pub injected: Option<String>,
    /// Where the block came from.
    pub source: Source,
}

/// The user's block of one key, without the default: what
/// [`resolve_block`] returns and [`resolve_prompt`] puts with the default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserBlock {
    /// The block, trimmed and non-blank.
    pub text: String,
    /// Where it came from (never [`Source::None`]).
    pub source: Source,
    /// Whether it takes the default's place (mode `override`, or inline
    /// text) instead of following it after a blank line.
    pub replaces_default: bool,
}

impl UserBlock {
    /// The text to send with `default`: the block alone, or
    /// `default + "\n\n" + block`.
    pub fn apply_to(&self, default: &str) -> String {
        if self.replaces_default {
            self.text.clone()
        } else {
            joined(default, &self.text)
        }
    }
}

/// `first + "\n\n" + second`, allocated once at its size (`format!`
/// would grow its buffer as it writes a default of kilobytes).
fn joined(first: &str, second: &str) -> String {
    let mut text = String::with_capacity(first.len() + 2 + second.len());
    text.push_str(first);
    text.push_str("\n\n");
    text.push_str(second);
    text
}

/// The options of [`resolve_prompt`].
#[derive(Debug, Clone)]
pub struct ResolveOptions {
    /// The prompts directory: relative (joined to home and to cwd), `~/...`
    /// or absolute.
    pub prompts_dir: String,
    /// The home directory.
    pub home: PathBuf,
    /// When set, a `<key>.<locale>.md` file is looked for before
    /// `<key>.md`, in each directory, chosen as a loaded configuration
    /// chooses one (the locale's chain, a file of the same language and
    /// script, then [`fallback_locale`](Self::fallback_locale)'s chain).
    pub locale: Option<Locale>,
    /// The locale whose chain is tried last, as a registry's fallback
    /// locale: `en` unless set.
    pub fallback_locale: Locale,
    /// The largest file read, in bytes.
    pub max_file_size: u64,
}

impl ResolveOptions {
    /// Options for `prompts_dir` under `home`, without locale files, with
    /// the default file size limit.
    pub fn new(prompts_dir: impl Into<String>, home: impl Into<PathBuf>) -> Self {
        ResolveOptions {
            prompts_dir: prompts_dir.into(),
            home: home.into(),
            locale: None,
            fallback_locale: Locale::default_fallback(),
            max_file_size: super::spec::DEFAULT_MAX_FILE_SIZE,
        }
    }
}

/// Resolves one prompt key from its settings and the user's files, looking
/// at the files at each call.
///
/// Each call sees the files as they are: a file unchanged since an
/// earlier call (same inode, size, modification and change times, last
/// changed more than two seconds before) is taken from memory after one
/// `stat`, any other is read.
///
/// The rule:
///
/// 1. `inline`, trimmed, when non-blank, wins in every mode, `off` included:
///    source `inline`.
/// 2. Else in mode `off` nothing is injected.
/// 3. Else `file`, trimmed, when set (`~/...` under home, relative against
///    `cwd`): when it exists and is non-blank it is the block, source
///    `local`; a missing or blank file falls through.
/// 4. The mode's files: global `home/prompts_dir/<key>.md`, local
///    `cwd/prompts_dir/<key>.md` (none when `cwd` is empty); contents are
///    trimmed and a blank file counts as absent. `local` reads the local
///    file only; `global-local-merge` gives `global + "\n\n" + local` when
///    both are present (source `merged`); `global-local` (the default),
///    `append` and `override` take the local file over the global one.
/// 5. No block: `final_text` is `default` and source `none`. In mode
///    `override` or with an inline block, `final_text` is the block; in the
///    other modes `default + "\n\n" + block`.
///
/// # No trust boundary
///
/// This function applies the rule exactly as written and nothing more: it
/// reads the `file` and the prompts directories wherever they lead,
/// symbolic links followed, whatever the project. It cannot know where
/// `cfg` came from; its caller does, and decides what to trust before
/// passing it (a `file` from a cloned repository's settings could name
/// `~/.ssh/id_rsa`). [`PromptRegistry::load_config`](crate::sources::LoadConfig::load_config)
/// reads the settings files itself and applies the trust boundary the
/// [module docs](crate::config#trust-boundary) describe.
///
/// ```
/// use promptreg_packs::config::{resolve_prompt, Mode, PromptSettings, ResolveOptions, Source};
/// # let home = tempfile::tempdir()?;
/// # let cwd = tempfile::tempdir()?;
/// std::fs::create_dir_all(cwd.path().join(".app/prompts"))?;
/// std::fs::write(cwd.path().join(".app/prompts/auditor.md"), "Reject without tests.\n")?;
///
/// let options = ResolveOptions::new(".app/prompts", home.path());
/// let settings = PromptSettings { mode: Some(Mode::Append), ..Default::default() };
/// let resolved = resolve_prompt("auditor", &settings, cwd.path(), "Audit the work.", &options)?;
///
/// assert_eq!(resolved.final_text, "Audit the work.\n\nReject without tests.");
/// assert_eq!(resolved.injected.as_deref(), Some("Reject without tests."));
/// assert_eq!(resolved.source, Source::Local);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`ErrorKind::InvalidId`](crate::ErrorKind::InvalidId) for a key that is
/// not a valid id (it would become a path); [`ErrorKind::Config`](crate::ErrorKind::Config)
/// for a file that exists but cannot be read, is not UTF-8 or is too large.
pub fn resolve_prompt(
    key: &str,
    cfg: &PromptSettings,
    cwd: &Path,
    default: &str,
    options: &ResolveOptions,
) -> Result<Resolved, Error> {
    Ok(match resolve_block(key, cfg, cwd, options)? {
        Some(block) => Resolved {
            final_text: block.apply_to(default),
            source: block.source,
            injected: Some(block.text),
        },
        None => Resolved {
            final_text: default.to_owned(),
            injected: None,
            source: Source::None,
        },
    })
}

/// The user's block of one key by the rule of [`resolve_prompt`], without
/// the default: `None` when nothing is injected. For a caller that keeps
/// the default itself and puts the two together with
/// [`UserBlock::apply_to`] (the Node.js package does, so that the default
/// never crosses into native code).
///
/// # Errors
///
/// As [`resolve_prompt`].
pub fn resolve_block(
    key: &str,
    cfg: &PromptSettings,
    cwd: &Path,
    options: &ResolveOptions,
) -> Result<Option<UserBlock>, Error> {
    id::validate(key)?;
    let mut disk = Disk {
        key,
        home: &options.home,
        cwd: non_empty(cwd),
        options,
    };
    let choice = choose(cfg, &mut disk).map_err(|d| Error::from_diagnostics(vec![d]))?;
    let mode = cfg.mode.unwrap_or_default();
    Ok(choice.map(|choice| {
        let source = choice.source();
        let text = match choice {
            Choice::Inline(text) => text.to_owned(),
            Choice::File(b) | Choice::Dir(_, b) | Choice::Legacy(_, b) => b,
            Choice::Merged(global, local) => joined(&global, &local),
        };
        UserBlock {
            text,
            source,
            replaces_default: choice_replaces(mode, source),
        }
    }))
}

/// Whether the block replaces the default instead of following it.
pub(crate) fn choice_replaces(mode: Mode, source: Source) -> bool {
    mode == Mode::Override || source == Source::Inline
}

/// Where the blocks of one key are found: on disk, or in a loaded layer.
pub(crate) trait BlockSource {
    /// A non-blank block and whatever the caller needs to know about it.
    type Block;
    /// The file named by the `file` setting (`raw` as written), if it
    /// exists and is non-blank.
    fn file(&mut self, raw: &str) -> Result<Option<Self::Block>, Diagnostic>;
    /// The key's file in the global or local prompts directory (locale
    /// variants first), if present and non-blank.
    fn dir(&mut self, scope: Scope) -> Result<Option<Self::Block>, Diagnostic>;
    /// A legacy file for the key, when nothing else was found.
    fn legacy(&mut self) -> Result<Option<(Scope, Self::Block)>, Diagnostic> {
        Ok(None)
    }
}

/// The block(s) the rule chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Choice<'s, B> {
    Inline(&'s str),
    File(B),
    Dir(Scope, B),
    Merged(B, B),
    Legacy(Scope, B),
}

impl<B> Choice<'_, B> {
    pub(crate) fn source(&self) -> Source {
        match self {
            Choice::Inline(_) => Source::Inline,
            Choice::File(_) => Source::Local,
            Choice::Dir(scope, _) | Choice::Legacy(scope, _) => match scope {
                Scope::Global => Source::Global,
                Scope::Local => Source::Local,
            },
            Choice::Merged(..) => Source::Merged,
        }
    }
}

/// Steps 1 to 4 of the rule, then the legacy files.
pub(crate) fn choose<'s, S: BlockSource>(
    cfg: &'s PromptSettings,
    source: &mut S,
) -> Result<Option<Choice<'s, S::Block>>, Diagnostic> {
    if let Some(inline) = cfg.inline.as_deref().and_then(non_blank) {
        return Ok(Some(Choice::Inline(inline)));
    }
    let mode = cfg.mode.unwrap_or_default();
    if mode == Mode::Off {
        return Ok(None);
    }
    if let Some(raw) = cfg.file.as_deref().and_then(non_blank)
        && let Some(block) = source.file(raw)?
    {
        return Ok(Some(Choice::File(block)));
    }
    let chosen = match mode {
        Mode::Local => source
            .dir(Scope::Local)?
            .map(|b| Choice::Dir(Scope::Local, b)),
        Mode::GlobalLocalMerge => match (source.dir(Scope::Global)?, source.dir(Scope::Local)?) {
            (Some(global), Some(local)) => Some(Choice::Merged(global, local)),
            (Some(global), None) => Some(Choice::Dir(Scope::Global, global)),
            (None, local) => local.map(|b| Choice::Dir(Scope::Local, b)),
        },
        _ => match source.dir(Scope::Local)? {
            Some(local) => Some(Choice::Dir(Scope::Local, local)),
            None => source
                .dir(Scope::Global)?
                .map(|b| Choice::Dir(Scope::Global, b)),
        },
    };
    match chosen {
        Some(choice) => Ok(Some(choice)),
        None => Ok(source.legacy()?.map(|(scope, b)| Choice::Legacy(scope, b))),
    }
}

/// The `<key>.<locale>.md` files in `dir`, with their locales; none when
/// the folder cannot be listed (then no file of it can be read either).
fn locale_files_of(key: &str, dir: &Path) -> Vec<(Locale, PathBuf)> {
    let Ok(Some(names)) = prompt_file::markdown_names(dir) else {
        return Vec::new();
    };
    names
        .into_iter()
        .filter_map(|name| {
            let stem = name.strip_suffix(".md")?;
            let (file_key, tag) = stem.rsplit_once('.')?;
            let locale = Locale::parse(tag).ok().filter(|_| file_key == key)?;
            Some((locale, dir.join(&name)))
        })
        .collect()
}

/// The rule's files, read from disk at each call.
struct Disk<'a> {
    key: &'a str,
    home: &'a Path,
    cwd: Option<&'a Path>,
    options: &'a ResolveOptions,
}

impl Disk<'_> {
    fn read_block(&self, path: &Path) -> Result<Option<String>, Diagnostic> {
        read_cache::read_block(path, self.options.max_file_size)
    }
}

impl BlockSource for Disk<'_> {
    type Block = String;

    fn file(&mut self, raw: &str) -> Result<Option<String>, Diagnostic> {
        match files::expand(raw, self.home, self.cwd) {
            Some(path) => self.read_block(&path),
            None => Ok(None),
        }
    }

    fn dir(&mut self, scope: Scope) -> Result<Option<String>, Diagnostic> {
        let (global, local) = files::prompt_dirs(&self.options.prompts_dir, self.home, self.cwd);
        let Some(dir) = (match scope {
            Scope::Global => Some(global),
            Scope::Local => local,
        }) else {
            return Ok(None);
        };
        if let Some(locale) = &self.options.locale {
            let mut by_locale = Vec::new();
            for (tag, path) in locale_files_of(self.key, &dir) {
                if let Some(block) = self.read_block(&path)? {
                    by_locale.push((tag, block));
                }
            }
            let fallback = &self.options.fallback_locale;
            if let Some(block) = locale_files::pick(locale, fallback, &by_locale) {
                return Ok(Some(block.clone()));
            }
        }
        self.read_block(&dir.join(format!("{}.md", self.key)))
    }
}
