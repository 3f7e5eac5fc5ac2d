//! Packs: an application's prompts and configuration rules declared in
//! files, which the Rust code, the `promptreg` tool and reviewers all read
//! the same way.
//!
//! A pack is a folder:
//!
//! ```text
//! promptreg.toml                   the manifest: name, keys, locales, user configuration
//! defaults/<id>.md                 the default of prompt <id>
//! defaults/<id>.<locale>.md        its variant for <locale> (a locale override)
//! snippets/<name>.md               a snippet templates include: {% include "name" %}
//! snippets/<name>.<locale>.md      its variant for <locale>
//! tests/<name>.toml                prompt tests (feature `testing`, `crate::testing`)
//! ```
//!
//! A prompt file may start with front matter, YAML between `---` lines:
//!
//! ```text
//! ---
//! description: Active-goal agent system prompt
//! template: true
//! variables:
//!   goal_id: { required: true, type: string }
//!   tasks: { default: [], type: list }
//! pin_head: "[PI GOAL ACTIVE goalId={{ goal_id }}]"
//! pin_tail: Verify every task before you complete the goal.
//! model:
//!   model: gpt-4o-mini
//!   temperature: 0.2
//! ---
//! Work on the goal until every task is done.
//! ```
//!
//! - `description`: one line, shown by listings (default files only);
//! - `template`: whether the file is a minijinja template. Files are literal
//!   text unless this is `true`, since prompts often contain `{{` for code;
//! - `variables`: what the template uses; each is required unless it has a
//!   `default` or says `required: false`, and may declare a `type`
//!   (`string`, `number`, `boolean`, `list`, `object`;
//!   [`VariableType`](crate::VariableType)); a bare `name:` declares a
//!   required variable of any type. A required variable missing from the
//!   context, or a value of another type than declared, is an error at
//!   render naming the variable (and both types); a `null` counts as absent
//!   for a variable that is not required. A default of another type than
//!   declared is an error at load. A variable used but not declared is
//!   reported by [`Pack::check`] with the line of its first use;
//! - `pin_head`, `pin_tail`: pinned blocks, one text or a list, templates
//!   too when `template` is `true`. In a default file they declare the
//!   blocks; in a locale variant they translate them, matched by position:
//!   a variant gives as many blocks as the default declares on that side,
//!   or leaves the key out to keep the default's text (a different count
//!   is an error with the file and line). A variant never removes a pin;
//! - `model`: model settings, a free-form object (model name,
//!   `temperature`, `max_tokens`, `response_format`, `tools`, ...) whose
//!   well-known keys are checked at load. A locale variant's `model` sets
//!   keys over its default's, per top-level key (a shallow merge); renders
//!   find a locale's settings by the same matching as the body
//!   ([`Rendered::model`](crate::Rendered::model),
//!   [`Snapshot::model_settings`](crate::Snapshot::model_settings));
//! - `metadata`: free data about the prompt, an object (default files
//!   only), in [`Rendered::metadata`](crate::Rendered::metadata);
//! - `kind`: `text` (the default) or `chat`. A chat file's body is
//!   messages: a line `# system`, `# user`, `# assistant`, `# tool` or
//!   `# <role>` (a role listed in `roles`) starts one, outside fenced code
//!   blocks; `## deeper` headings are content; `# history: NAME` is where
//!   the caller's history `NAME` goes. A locale variant has its default's
//!   kind, roles and `attach` ([`Chat`] gives the rules);
//! - `roles`: a chat file's custom roles, a list;
//! - `attach`: the message of a chat file pinned blocks and appenders
//!   attach to: a role (its first message), `last-<role>`, or a number
//!   from 1. Without it, the first `system` message.
//!
//! Templates see the render's context by field name (the context type
//! implements `serde::Serialize`), the declared defaults, and `locale`.
//! Undefined variables are errors, nothing is escaped, context values are
//! inserted as text and never run as template code, a render runs at most
//! [`TEMPLATE_FUEL`](crate::TEMPLATE_FUEL) instructions, and only the
//! pack's snippets can be included.
//!
//! A snippet is a template fragment shared by several prompts:
//! `{% include "name" %}` in any template file of the pack (body or pinned
//! block) includes `snippets/<name>.md`, or the variant that the render's
//! locale matches, as a body variant is matched, whichever file includes
//! it. Snippets are read at load and held in memory; an include of a
//! missing snippet, a name that is a path, and include cycles are load
//! errors with the chain of names. A user's prompt file includes nothing.
//!
//! ```
//! use promptreg::{pack::Pack, PromptRegistry};
//!
//! let pack = Pack::from_files("inline", [
//!     ("promptreg.toml", "name = \"demo\"\nkeys = [\"greeting\"]\n[user]\nprompts_dir = \".demo\"\n"),
//!     ("defaults/greeting.md", "---\ntemplate: true\n---\nHello!\n{% include \"sign-off\" %}\n"),
//!     ("snippets/sign-off.md", "The {{ locale }} team"),
//!     ("snippets/sign-off.ja.md", "チームより"),
//! ])?;
//! let registry = PromptRegistry::new();
//! pack.install(&registry)?;
//! assert_eq!(registry.render_in("greeting", &(), "en-GB")?, "Hello!\nThe en-GB team");
//! // No Japanese variant of the prompt, but one of the snippet.
//! assert_eq!(registry.render_in("greeting", &(), "ja-JP")?, "Hello!\nチームより");
//! # Ok::<(), promptreg::Error>(())
//! ```
//!
//! The manifest's format is described in `docs/packs.md` and on
//! [`Pack::from_files`].

mod chat;
mod manifest;
mod schema;
mod snippets;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::snippet::SNIPPETS_DIR;
pub use manifest::MANIFEST;
pub use schema::front_matter_schema;

use crate::chat::Chat;
use crate::config::{ConfigSpec, DEFAULT_MAX_FILE_SIZE};
use crate::diagnostic::{Diagnostic, DiagnosticCode, Diagnostics, LineIndex};
use crate::error::Error;
use crate::front_matter::{Document, PIN_HEAD, PIN_TAIL};
use crate::id::PromptId;
use crate::json_object::JsonObject;
use crate::locale::Locale;
use crate::prompt::{Pin, Prompt};
use crate::prompt_file::{self, FileKey, file_locale_warning, prompt_file_warnings};
use crate::provenance::{Provenance, SourceKind};
use crate::registry::PromptRegistry;
use crate::renderer::Renderer;
use crate::snapshot::Snapshot;
use crate::snippet::Snippets;
use crate::suggest;
use crate::template::Variable;

/// The folder of default files inside a pack.
pub const DEFAULTS_DIR: &str = "defaults";

/// A loaded pack: its declaration and its prompts.
///
/// ```
/// use promptreg::{pack::Pack, PromptRegistry};
///
/// let pack = Pack::from_files("inline", [
///     ("promptreg.toml", "name = \"demo\"\nkeys = [\"greeting\"]\n[user]\nprompts_dir = \".demo/prompts\"\n"),
///     ("defaults/greeting.md", "---\ntemplate: true\nvariables:\n  name:\n---\nHello {{ name }}!\n"),
///     ("defaults/greeting.ja.md", "---\ntemplate: true\n---\nこんにちは、{{ name }}さん！\n"),
/// ])?;
///
/// let registry = PromptRegistry::new();
/// pack.install(&registry)?;
/// let ctx = serde_json::json!({ "name": "Ada" });
/// assert_eq!(registry.render("greeting", &ctx)?, "Hello Ada!");
/// assert_eq!(registry.render_in("greeting", &ctx, "ja-JP")?, "こんにちは、Adaさん！");
/// # Ok::<(), promptreg::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Pack {
    root: PathBuf,
    name: String,
    description: Option<String>,
    default_locale: Locale,
    fallback_locale: Locale,
    spec: ConfigSpec,
    prompts: BTreeMap<PromptId, PackPrompt>,
    /// The snippets its prompts include, in memory.
    snippets: Arc<Snippets>,
    warnings: Vec<Diagnostic>,
    /// Declared keys without a default file, and the warning about each.
    missing_defaults: BTreeMap<PromptId, Diagnostic>,
    /// A hash of the manifest's text, and of every prompt's files, to tell
    /// which prompts a reload changed.
    digests: Digests,
    /// Read from a folder (not [`Pack::from_files`]): it can be reloaded.
    on_disk: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Digests {
    manifest: u64,
    prompts: BTreeMap<PromptId, u64>,
}

/// One prompt of a pack: its default file and locale variants.
#[derive(Debug, Clone)]
pub struct PackPrompt {
    id: PromptId,
    default: Option<(PathBuf, Prompt, Vec<Variable>)>,
    /// What a chat default declares for its variants to inherit; `None`
    /// for a text default.
    chat: Option<chat::ChatDecl>,
    variants: BTreeMap<String, LocaleVariant>,
}

/// A locale variant of a pack prompt: its body and its translations of
/// the default's pinned blocks (empty when it gives none for that side).
#[derive(Debug, Clone)]
struct LocaleVariant {
    locale: Locale,
    file: PathBuf,
    renderer: Renderer,
    /// The messages of a chat variant (the whole list).
    chat: Option<Arc<Chat>>,
    head: Vec<Renderer>,
    tail: Vec<Renderer>,
    /// The model settings keys it sets over its default's.
    model: Option<JsonObject>,
    provenance: Arc<Provenance>,
}

impl PackPrompt {
    /// The prompt id.
    pub fn id(&self) -> &PromptId {
        &self.id
    }

    /// The default, with its pins and description, if the pack has a
    /// default file for this id.
    pub fn default_prompt(&self) -> Option<&Prompt> {
        self.default.as_ref().map(|(_, prompt, _)| prompt)
    }

    /// The default file.
    pub fn default_file(&self) -> Option<&Path> {
        self.default.as_ref().map(|(path, ..)| path.as_path())
    }

    /// The variables the default file declares.
    pub fn variables(&self) -> &[Variable] {
        self.default.as_ref().map_or(&[], |(.., vars)| vars)
    }

    /// The one-line description.
    pub fn description(&self) -> Option<&str> {
        self.default_prompt()?.description()
    }

    /// The model settings of `variant`: its keys over its default's (a
    /// shallow merge, per top-level key), or `None` when it sets none.
    fn model_settings(&self, variant: &LocaleVariant) -> Option<JsonObject> {
        let over = variant.model.as_ref()?;
        let default = self.default_prompt().and_then(Prompt::model_settings);
        Some(default.map_or_else(|| over.clone(), |d| d.merged(over)))
    }

    /// The locales with a variant file, sorted, and their files.
    pub fn variants(&self) -> impl Iterator<Item = (&Locale, &Path)> {
        self.variants
            .values()
            .map(|v| (&v.locale, v.file.as_path()))
    }

    /// The variant file registered for `locale` (as matched by a render).
    pub fn variant_file(&self, locale: &Locale) -> Option<&Path> {
        self.variants.get(locale.key()).map(|v| v.file.as_path())
    }
}

impl Pack {
    /// Loads the pack in folder `dir`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) with every
    /// diagnostic (errors first) when the manifest is missing or invalid, a
    /// default file is for an undeclared id, front matter does not parse, a
    /// template does not compile, or two files define the same prompt.
    pub fn load(dir: impl AsRef<Path>) -> Result<Pack, Error> {
        match Pack::load_with_diagnostics(dir) {
            (Some(pack), _) => Ok(pack),
            (None, diagnostics) => Err(Error::from_diagnostics(diagnostics)),
        }
    }

    /// Reads the pack in folder `dir` once: the pack when it loads (no
    /// diagnostic is an error), and every diagnostic, errors and warnings,
    /// as [`check`](Self::check) reports them. For a checker that wants
    /// both the problems and, when there are only warnings, the pack.
    ///
    /// ```
    /// use promptreg::{pack::Pack, DiagnosticCode};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::create_dir_all(dir.path().join("defaults"))?;
    /// std::fs::write(dir.path().join("promptreg.toml"),
    ///     "name = \"demo\"\nkeys = [\"greeting\", \"farewell\"]\n[user]\nprompts_dir = \".demo\"\n")?;
    /// std::fs::write(dir.path().join("defaults/greeting.md"), "Hello!")?;
    ///
    /// let (pack, diagnostics) = Pack::load_with_diagnostics(dir.path());
    /// assert_eq!(pack.unwrap().name(), "demo");
    /// assert_eq!(diagnostics[0].code, DiagnosticCode::MissingDefault);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load_with_diagnostics(dir: impl AsRef<Path>) -> (Option<Pack>, Vec<Diagnostic>) {
        let (mut pack, diagnostics) = Pack::read(dir.as_ref());
        if let Some(pack) = &mut pack {
            pack.on_disk = true;
        }
        (pack, diagnostics)
    }

    /// Every diagnostic of the pack in `dir`, errors and warnings, without
    /// installing it. The warnings: template variables used but not
    /// declared or declared but not used, `{{` in a file not marked as a
    /// template, a file-name locale that names no language, and declared
    /// keys without a default file.
    pub fn check(dir: impl AsRef<Path>) -> Vec<Diagnostic> {
        Pack::load_with_diagnostics(dir).1
    }

    /// Builds a pack from in-memory files, for a pack embedded in a binary
    /// (with `include_str!` or `include_dir`). Paths are relative to the
    /// pack's folder (`promptreg.toml`, `defaults/planner.system.md`);
    /// `root` names the pack in messages.
    ///
    /// # Errors
    ///
    /// As [`load`](Self::load).
    pub fn from_files<P, T>(
        root: impl Into<PathBuf>,
        files: impl IntoIterator<Item = (P, T)>,
    ) -> Result<Pack, Error>
    where
        P: AsRef<Path>,
        T: AsRef<str>,
    {
        let root = root.into();
        let manifest_path = root.join(MANIFEST);
        let mut manifest = None;
        let mut defaults = Vec::new();
        for (path, text) in files {
            let (path, text) = (root.join(path.as_ref()), text.as_ref().to_owned());
            if path == manifest_path {
                manifest.get_or_insert_with(|| ManifestRead::parse(text, &manifest_path));
            } else {
                defaults.push((path, text));
            }
        }
        let defaults = DefaultFiles {
            read: defaults,
            unreadable: Vec::new(),
        };
        let (pack, diagnostics) = build(&root, manifest, defaults, Diagnostics::default());
        pack.ok_or_else(|| Error::from_diagnostics(diagnostics))
    }

    /// Reads the manifest and default files of `dir`: the default files
    /// with the manifest's `max_file_size` (the manifest itself with the
    /// default limit, as nothing declares its own).
    fn read(dir: &Path) -> (Option<Pack>, Vec<Diagnostic>) {
        let mut diagnostics = Diagnostics::default();
        let manifest_path = dir.join(MANIFEST);
        let manifest = read_pack_file(&manifest_path, DEFAULT_MAX_FILE_SIZE, &mut diagnostics)
            .map(|text| ManifestRead::parse(text, &manifest_path));
        let limit = manifest
            .as_ref()
            .and_then(|m| m.parsed.as_ref().ok())
            .map_or(DEFAULT_MAX_FILE_SIZE, |m| m.spec.max_file_size());
        let mut files = read_defaults(&dir.join(DEFAULTS_DIR), limit, &mut diagnostics);
        files
            .read
            .extend(snippets::read(dir, limit, &mut diagnostics));
        build(dir, manifest, files, diagnostics)
    }

    /// The pack's folder (or the name given to [`from_files`](Self::from_files)).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The pack's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The pack's description.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The locale renders use when they name none.
    pub fn default_locale(&self) -> &Locale {
        &self.default_locale
    }

    /// The locale tried after a render locale's own chain.
    pub fn fallback_locale(&self) -> &Locale {
        &self.fallback_locale
    }

    /// The user configuration the pack declares.
    pub fn spec(&self) -> &ConfigSpec {
        &self.spec
    }

    /// The prompts, sorted by id.
    pub fn prompts(&self) -> impl Iterator<Item = &PackPrompt> {
        self.prompts.values()
    }

    /// One prompt.
    pub fn prompt(&self, id: &str) -> Option<&PackPrompt> {
        self.prompts.get(id)
    }

    /// The names of the pack's snippets (`snippets/<name>.md`), sorted.
    pub fn snippet_names(&self) -> impl Iterator<Item = &str> {
        self.snippets.names()
    }

    /// The warnings found while loading.
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// The file the default of `id` is read from: `defaults/<id>.md`,
    /// whether it exists or not.
    pub fn default_path(&self, id: &str) -> PathBuf {
        self.root.join(DEFAULTS_DIR).join(format!("{id}.md"))
    }

    /// When `id` is a key the manifest declares but the pack has no
    /// default file for, the warning [`check`](Self::check) reports about
    /// it: it names the manifest's line and the file that would hold the
    /// default. Commands that cannot render such a key say the same.
    ///
    /// ```
    /// use promptreg::{pack::Pack, DiagnosticCode};
    ///
    /// let pack = Pack::from_files("demo", [
    ///     ("promptreg.toml", "name = \"demo\"\nkeys = [\"greeting\", \"farewell\"]\n[user]\nprompts_dir = \".demo\"\n"),
    ///     ("defaults/greeting.md", "Hello!"),
    /// ])?;
    /// let missing = pack.missing_default("farewell").unwrap();
    /// assert_eq!(missing.code, DiagnosticCode::MissingDefault);
    /// assert_eq!(missing.position.unwrap().line, 2);
    /// assert!(pack.missing_default("greeting").is_none());
    /// # Ok::<(), promptreg::Error>(())
    /// ```
    pub fn missing_default(&self, id: &str) -> Option<&Diagnostic> {
        self.missing_defaults.get(id)
    }

    /// Registers every default (with its pins and description) and every
    /// locale variant (as a locale override) in `registry`, and sets its
    /// locale and fallback locale to the pack's, in one change: a render
    /// sees the whole pack or none of it.
    ///
    /// A pack loaded from a folder is remembered, so that
    /// `PromptRegistry::watch` (feature `watch`) follows its files and
    /// replaces it when they change.
    ///
    /// # Errors
    ///
    /// None in practice: ids and locales were validated at load.
    pub fn install(&self, registry: &PromptRegistry) -> Result<(), Error> {
        registry.shared().install_pack(self.clone());
        Ok(())
    }

    /// Stamps the provenance of each prompt's files (default and
    /// variants) with the prompt's version in `versions` (prompt id ->
    /// version), for a pack built from a server's bundle.
    #[cfg(feature = "remote")]
    pub(crate) fn stamp_versions(&mut self, versions: &BTreeMap<String, u64>) {
        let stamped = |provenance: &Arc<Provenance>, version: u64| {
            let mut provenance = Provenance::clone(provenance);
            provenance.version = Some(version);
            Arc::new(provenance)
        };
        for prompt in self.prompts.values_mut() {
            let Some(&version) = versions.get(prompt.id.as_str()) else {
                continue;
            };
            if let Some((_, default, _)) = &mut prompt.default
                && let Some(provenance) = &default.provenance
            {
                default.provenance = Some(stamped(provenance, version));
            }
            for variant in prompt.variants.values_mut() {
                variant.provenance = stamped(&variant.provenance, version);
            }
        }
    }

    /// Adds the pack's prompts and locales to `snapshot`.
    pub(crate) fn apply(&self, snapshot: &mut Snapshot) {
        for prompt in self.prompts.values() {
            if let Some((_, default, _)) = &prompt.default {
                snapshot.register(prompt.id.clone(), default.clone());
            }
            for variant in prompt.variants.values() {
                let (id, locale) = (prompt.id.clone(), variant.locale.clone());
                let provenance = Some(Arc::clone(&variant.provenance));
                match &variant.chat {
                    Some(chat) => {
                        snapshot.set_chat_override(id, locale, Arc::clone(chat), provenance)
                    }
                    None => snapshot.set_override(id, locale, variant.renderer.clone(), provenance),
                }
                if let Some(settings) = prompt.model_settings(variant) {
                    snapshot.set_model_settings(
                        prompt.id.clone(),
                        variant.locale.clone(),
                        settings,
                    );
                }
                let head = variant.head.iter().enumerate();
                let tail = variant.tail.iter().enumerate();
                let pins = head
                    .map(|(i, r)| (Pin::Head(i), r))
                    .chain(tail.map(|(i, r)| (Pin::Tail(i), r)));
                // Counts were checked against the default at load.
                for (pin, text) in pins {
                    snapshot.set_pin_translation(
                        prompt.id.clone(),
                        variant.locale.clone(),
                        pin,
                        text.clone(),
                        Some(Arc::clone(&variant.provenance)),
                    );
                }
            }
        }
    }

    /// Takes out of `snapshot` what [`apply`](Self::apply) added: the
    /// defaults, locale overrides and pin translations of the pack's
    /// prompts.
    pub(crate) fn retract(&self, snapshot: &mut Snapshot) {
        for prompt in self.prompts.values() {
            if prompt.default.is_some() {
                snapshot.unregister(&prompt.id);
            }
            for variant in prompt.variants.values() {
                snapshot.remove_override(&prompt.id, &variant.locale);
                snapshot.remove_pin_translations(&prompt.id, &variant.locale);
                snapshot.remove_model_settings(&prompt.id, &variant.locale);
            }
        }
    }

    /// Whether the pack was read from a folder, and so can be read again.
    pub(crate) fn is_on_disk(&self) -> bool {
        self.on_disk
    }

    /// The pack's manifest and its defaults folder: what to follow.
    #[cfg(feature = "watch")]
    pub(crate) fn paths(&self) -> crate::config::ConfigPaths {
        crate::config::ConfigPaths {
            files: vec![self.root.join(MANIFEST)],
            dirs: vec![self.root.join(DEFAULTS_DIR), self.root.join(SNIPPETS_DIR)],
        }
    }

    /// The prompts whose files differ between `before` and `self`; every
    /// prompt of both when the manifest changed.
    pub(crate) fn changed_since(&self, before: &Pack) -> Vec<PromptId> {
        let (new, old) = (&self.digests, &before.digests);
        let ids = new.prompts.keys().chain(old.prompts.keys());
        let mut changed: Vec<PromptId> = ids
            .filter(|id| {
                new.manifest != old.manifest || new.prompts.get(*id) != old.prompts.get(*id)
            })
            .cloned()
            .collect();
        changed.sort_unstable();
        changed.dedup();
        changed
    }
}

/// A file of the pack, read: its text, or `None` when it does not exist.
fn read_pack_file(path: &Path, limit: u64, diagnostics: &mut Diagnostics) -> Option<String> {
    diagnostics
        .ok(prompt_file::read_text(path, limit))
        .flatten()
}

/// Every `*.md` file of the `defaults/` folder, read; none when the folder
/// does not exist.
fn read_defaults(defaults: &Path, limit: u64, diagnostics: &mut Diagnostics) -> DefaultFiles {
    let names = match prompt_file::markdown_names(defaults) {
        Ok(names) => names.unwrap_or_default(),
        Err(e) => {
            diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::Io,
                    format!("cannot read the directory: {e}"),
                )
                .in_file(defaults),
            );
            Vec::new()
        }
    };
    let mut files = DefaultFiles::default();
    for path in names.into_iter().map(|name| defaults.join(name)) {
        match prompt_file::read_text(&path, limit) {
            Ok(Some(text)) => files.read.push((path, text)),
            // Gone since the folder was listed.
            Ok(None) => {}
            Err(d) => {
                diagnostics.push(d);
                files.unreadable.push(path);
            }
        }
    }
    files
}

/// The files of `defaults/`: those read, and those that could not be
/// (reported already).
#[derive(Default)]
struct DefaultFiles {
    read: Vec<(PathBuf, String)>,
    unreadable: Vec<PathBuf>,
}

/// The manifest's text and what parsing it gave.
struct ManifestRead {
    text: String,
    parsed: Result<manifest::Manifest, Vec<Diagnostic>>,
}

impl ManifestRead {
    fn parse(text: String, path: &Path) -> ManifestRead {
        let parsed = manifest::parse(&text, path);
        ManifestRead { text, parsed }
    }
}

/// One default or variant file, named after a declared id.
struct PromptFile<'a> {
    id: PromptId,
    locale: Option<Locale>,
    path: &'a Path,
    text: &'a str,
}

/// Builds a pack from the manifest and the default files read, collecting
/// every diagnostic: the pack when none is an error.
fn build(
    root: &Path,
    manifest: Option<ManifestRead>,
    files: DefaultFiles,
    mut diagnostics: Diagnostics,
) -> (Option<Pack>, Vec<Diagnostic>) {
    let Some((manifest, manifest_text)) = valid_manifest(root, manifest, &mut diagnostics) else {
        return (None, diagnostics.into_vec());
    };
    let snippets = snippets::build(root, &files.read, &mut diagnostics);
    let mut classified = classify_files(root, &manifest.spec, &files.read, &mut diagnostics);
    // A default file that fails to read or load is reported as it is, not
    // as missing.
    let with_default_file: BTreeSet<PromptId> = classified
        .iter()
        .filter(|file| file.locale.is_none())
        .map(|file| file.id.clone())
        .chain(unreadable_defaults(&manifest.spec, &files.unreadable))
        .collect();
    // Defaults first: their variants inherit their variable declarations.
    classified.sort_by_key(|f| (f.id.clone(), f.locale.is_some(), f.path.to_path_buf()));
    // A snippet can change any prompt: it counts as the manifest does.
    let snippet_texts: Vec<(&str, &str)> = snippets
        .files()
        .map(|(name, file)| (name, file.source.as_str()))
        .collect();
    let digests = Digests {
        manifest: crate::config::digest(&(&manifest_text, snippet_texts)),
        prompts: prompt_digests(&classified),
    };
    let read_with = PackWide {
        snippets: &snippets,
        extra_model_keys: &manifest.extra_model_keys,
    };
    let mut prompts: BTreeMap<PromptId, PackPrompt> = BTreeMap::new();
    // A variant is checked against its default: when the default fails,
    // those checks would only echo its errors, so they wait for it.
    let mut failed_defaults = BTreeSet::new();
    let mut skipped = Vec::new();
    for file in classified {
        if file.locale.is_some() && failed_defaults.contains(&file.id) {
            skipped.push(file.path);
            continue;
        }
        let (id, is_default) = (file.id.clone(), file.locale.is_none());
        add_file(&mut prompts, file, &read_with, &mut diagnostics);
        if is_default && prompts.get(&id).is_none_or(|p| p.default.is_none()) {
            failed_defaults.insert(id);
        }
    }
    diagnostics.extend(skipped_variants_note(&skipped));
    let missing_defaults = missing_defaults(root, &manifest, &manifest_text, &with_default_file);
    diagnostics.extend(missing_defaults.values().cloned());
    if diagnostics.has_errors() {
        return (None, diagnostics.into_vec());
    }
    let diagnostics = diagnostics.into_vec();
    let pack = Pack {
        root: root.to_path_buf(),
        name: manifest.name,
        description: manifest.description,
        default_locale: manifest.default_locale,
        fallback_locale: manifest.fallback_locale,
        spec: manifest.spec,
        prompts,
        snippets,
        warnings: diagnostics.clone(),
        digests,
        on_disk: false,
        missing_defaults,
    };
    (Some(pack), diagnostics)
}

/// One note naming the variant files not checked because their default
/// file failed, if any.
fn skipped_variants_note(skipped: &[&Path]) -> Option<Diagnostic> {
    let (first, rest) = skipped.split_first()?;
    let message = match rest.len() {
        0 => format!(
            "1 locale variant not checked ({}): its default file has errors",
            first.display()
        ),
        n => format!(
            "{} locale variants not checked ({} and {n} more): their default files have errors",
            n + 1,
            first.display()
        ),
    };
    Some(
        Diagnostic::note(DiagnosticCode::SkippedChecks, message)
            .suggest(Some("fix the errors above and check again".to_owned())),
    )
}

/// The manifest and its text, when it exists and is valid.
fn valid_manifest(
    root: &Path,
    manifest: Option<ManifestRead>,
    diagnostics: &mut Diagnostics,
) -> Option<(manifest::Manifest, String)> {
    let Some(ManifestRead { text, parsed }) = manifest else {
        diagnostics.push(
            Diagnostic::error(DiagnosticCode::Manifest, "no pack manifest")
                .in_file(root.join(MANIFEST))
                .suggest(Some(format!(
                    "a pack is a folder with a {MANIFEST} and a {DEFAULTS_DIR}/ folder"
                ))),
        );
        return None;
    };
    match parsed {
        Ok(mut manifest) => {
            diagnostics.extend(std::mem::take(&mut manifest.warnings));
            Some((manifest, text))
        }
        Err(problems) => {
            diagnostics.extend(problems);
            None
        }
    }
}

/// The files directly in `defaults/`, each named after a declared id,
/// with a warning for a file-name locale that names no language.
fn classify_files<'a>(
    root: &Path,
    spec: &ConfigSpec,
    files: &'a [(PathBuf, String)],
    diagnostics: &mut Diagnostics,
) -> Vec<PromptFile<'a>> {
    let defaults = root.join(DEFAULTS_DIR);
    let in_defaults = files
        .iter()
        .filter(|(path, _)| path.parent() == Some(defaults.as_path()));
    let mut classified = Vec::new();
    for (path, text) in in_defaults {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let Some((id, locale)) = diagnostics.ok(classify(spec, name, path)) else {
            continue;
        };
        if let Some(locale) = &locale {
            diagnostics.extend(file_locale_warning(&id, locale, path));
        }
        classified.push(PromptFile {
            id,
            locale,
            path,
            text,
        });
    }
    classified
}

/// The ids whose default file (`<id>.md`, not a variant) could not be read.
fn unreadable_defaults<'a>(
    spec: &'a ConfigSpec,
    paths: &'a [PathBuf],
) -> impl Iterator<Item = PromptId> + 'a {
    paths.iter().filter_map(|path| {
        let stem = path.file_name()?.to_str()?.strip_suffix(".md")?;
        match prompt_file::file_key(spec, stem) {
            FileKey::Key(id, None) => Some(id),
            _ => None,
        }
    })
}

/// A hash of each prompt's files, in load order.
fn prompt_digests(files: &[PromptFile<'_>]) -> BTreeMap<PromptId, u64> {
    let mut texts: BTreeMap<&PromptId, Vec<(&Path, &str)>> = BTreeMap::new();
    for file in files {
        texts
            .entry(&file.id)
            .or_default()
            .push((file.path, file.text));
    }
    texts
        .into_iter()
        .map(|(id, texts)| (id.clone(), crate::config::digest(&texts)))
        .collect()
}

/// A warning for every declared key without a default file, at the key in
/// the manifest.
///
/// A warning, not an error: a pack's `keys` also declare what users may
/// configure, and an application may register some defaults in code
/// (`register_default`) rather than in files. Most often, though, the file
/// was forgotten or misnamed, and `render` cannot show the prompt; `check
/// --deny-warnings` makes it fail.
fn missing_defaults(
    root: &Path,
    manifest: &manifest::Manifest,
    manifest_text: &str,
    with_default_file: &BTreeSet<PromptId>,
) -> BTreeMap<PromptId, Diagnostic> {
    let manifest_path = root.join(MANIFEST);
    let lines = LineIndex::new(manifest_text);
    manifest
        .spec
        .keys()
        .filter(|id| !with_default_file.contains(*id))
        .map(|id| {
            let file = format!("{DEFAULTS_DIR}/{id}.md");
            let mut d = Diagnostic::warning(
                DiagnosticCode::MissingDefault,
                format!("key `{id}` is declared but has no default file {file}"),
            )
            .in_file(&manifest_path)
            .key_path("keys")
            .suggest(Some(format!(
                "create {file}, or remove `{id}` from `keys` unless the application registers its default in code"
            )));
            if let Some(span) = manifest.key_spans.get(id) {
                d = d.at(&lines, span.clone());
            }
            (id.clone(), d)
        })
        .collect()
}

/// Adds one default or variant file to `prompts`; what is wrong with it
/// goes to `diagnostics`.
fn add_file(
    prompts: &mut BTreeMap<PromptId, PackPrompt>,
    file: PromptFile<'_>,
    read_with: &PackWide<'_>,
    diagnostics: &mut Diagnostics,
) {
    let default = prompts.get(&file.id).filter(|p| p.default.is_some());
    let inherited = Inherited {
        variables: default.map_or(&[][..], PackPrompt::variables),
        chat: default.map(|p| p.chat.as_ref()),
    };
    let Some(parsed) = parse_file(file, &inherited, read_with, diagnostics) else {
        return;
    };
    let id = &parsed.file.id;
    let entry = prompts.entry(id.clone()).or_insert_with(|| PackPrompt {
        id: id.clone(),
        default: None,
        chat: None,
        variants: BTreeMap::new(),
    });
    match parsed.file.locale.clone() {
        None => add_default(entry, parsed, diagnostics),
        Some(locale) => {
            if let Some(variant) = variant(entry, parsed, locale, diagnostics) {
                diagnostics.ok(insert_variant(entry, variant));
            }
        }
    }
}

/// What every prompt file of the pack is read with.
struct PackWide<'a> {
    /// The snippets templates may include.
    snippets: &'a Arc<Snippets>,
    /// The manifest's `extra_model_keys`: model settings not warned about.
    extra_model_keys: &'a [String],
}

/// What a locale variant takes from its default file.
struct Inherited<'a> {
    variables: &'a [Variable],
    /// `None` for a default file (or a variant without one); `Some(None)`
    /// when the default is text.
    chat: Option<Option<&'a chat::ChatDecl>>,
}

/// A prompt file with its front matter read and its body compiled.
struct ParsedFile<'a> {
    file: PromptFile<'a>,
    doc: Document<'a>,
    body: Renderer,
    /// A chat file's messages (`body` is then empty) and declaration.
    chat: Option<(Arc<Chat>, chat::ChatDecl)>,
}

impl ParsedFile<'_> {
    /// Warnings about the file, its pinned blocks compiled.
    fn warnings(&self, head: &[Renderer], tail: &[Renderer]) -> Vec<Diagnostic> {
        let messages = self.chat.iter().flat_map(|(c, _)| chat::contents(c));
        let parts: Vec<&Renderer> = head
            .iter()
            .chain([&self.body])
            .chain(messages)
            .chain(tail)
            .collect();
        prompt_file_warnings(&self.doc, self.file.text, self.file.path, &parts)
    }
}

/// Reads the front matter and compiles the body, or a chat file's messages
/// (with the default's variables, for a variant that declares none).
fn parse_file<'a>(
    file: PromptFile<'a>,
    inherited: &Inherited<'_>,
    read_with: &PackWide<'_>,
    diagnostics: &mut Diagnostics,
) -> Option<ParsedFile<'a>> {
    let doc = diagnostics
        .ok(Document::parse(file.text, file.path))?
        .with_snippets(read_with.snippets);
    let settings_problems = doc.settings_problems(file.path);
    if !settings_problems.is_empty() {
        diagnostics.extend(settings_problems);
        return None;
    }
    diagnostics.extend(doc.settings_warnings(file.path, read_with.extra_model_keys));
    if diagnostics.ok(chat::is_chat(&doc, file.path, inherited.chat))? {
        let chat = parse_chat(&doc, file.path, inherited, diagnostics)?;
        let body = Renderer::text("");
        return Some(ParsedFile {
            file,
            doc,
            body,
            chat: Some(chat),
        });
    }
    diagnostics.ok(chat::chat_keys_in_text(&doc, file.path))?;
    let body = diagnostics.ok(doc.body_renderer_with(file.path, inherited.variables))?;
    if let Some(template) = body.template() {
        diagnostics.extend(template.undeclared_diagnostics());
    }
    Some(ParsedFile {
        file,
        doc,
        body,
        chat: None,
    })
}

/// The messages of a chat file, and its declaration (its own keys over
/// its default's).
fn parse_chat(
    doc: &Document<'_>,
    path: &Path,
    inherited: &Inherited<'_>,
    diagnostics: &mut Diagnostics,
) -> Option<(Arc<Chat>, chat::ChatDecl)> {
    let decl = chat::ChatDecl::of(doc, inherited.chat.flatten());
    let variables = match doc.declares_variables() {
        true => doc.variables(),
        false => inherited.variables.to_vec(),
    };
    let chat = match chat::parse(doc, path, &variables, &decl) {
        Ok(chat) => chat,
        Err(problems) => {
            diagnostics.extend(problems);
            return None;
        }
    };
    for content in chat::contents(&chat) {
        if let Some(template) = content.template() {
            diagnostics.extend(template.undeclared_diagnostics());
        }
    }
    Some((Arc::new(chat), decl))
}

/// The default of a prompt, with its pinned blocks and description.
fn add_default(entry: &mut PackPrompt, parsed: ParsedFile<'_>, diagnostics: &mut Diagnostics) {
    let Some((head, tail)) = diagnostics.ok(parsed.doc.pin_renderers(parsed.file.path)) else {
        return;
    };
    diagnostics.extend(parsed.warnings(&head, &tail));
    let ParsedFile {
        file,
        doc,
        body,
        chat,
    } = parsed;
    let mut prompt = Prompt::new(body);
    if let Some((messages, decl)) = chat {
        prompt.chat = Some(messages);
        entry.chat = Some(decl);
    }
    prompt.head = head;
    prompt.tail = tail;
    prompt.description = doc.meta.description.as_deref().map(Into::into);
    prompt.model = doc.model_settings();
    prompt.metadata = doc.metadata();
    prompt.provenance = Some(file_provenance("default file", file.path, None));
    entry.default = Some((file.path.to_path_buf(), prompt, doc.variables()));
}

/// A locale variant: its body and its translations of the default's pins,
/// which it gives all or none of per side.
fn variant(
    entry: &PackPrompt,
    parsed: ParsedFile<'_>,
    locale: Locale,
    diagnostics: &mut Diagnostics,
) -> Option<LocaleVariant> {
    let (doc, id, path) = (&parsed.doc, &parsed.file.id, parsed.file.path);
    diagnostics.ok(default_only(doc, "description", id, path))?;
    diagnostics.ok(default_only(doc, "metadata", id, path))?;
    let default = entry.default_prompt();
    for (key, declared) in [
        (PIN_HEAD, default.map_or(0, |d| d.head().len())),
        (PIN_TAIL, default.map_or(0, |d| d.tail().len())),
    ] {
        diagnostics.ok(check_pin_count(doc, key, declared, id, path))?;
    }
    let (head, tail) = diagnostics.ok(doc.pin_renderers_with(path, entry.variables()))?;
    diagnostics.extend(parsed.warnings(&head, &tail));
    Some(LocaleVariant {
        provenance: file_provenance("locale variant", path, Some(&locale)),
        locale,
        file: path.to_path_buf(),
        chat: parsed.chat.map(|(messages, _)| messages),
        renderer: parsed.body,
        head,
        tail,
        model: doc.model_settings(),
    })
}

/// A description and metadata belong to the default: listings show one per
/// prompt.
fn default_only(
    doc: &Document<'_>,
    key: &str,
    id: &PromptId,
    path: &Path,
) -> Result<(), Diagnostic> {
    let given = match key {
        "description" => doc.meta.description.is_some(),
        _ => doc.meta.metadata.is_some(),
    };
    if !given {
        return Ok(());
    }
    Err(Diagnostic::error(
        DiagnosticCode::FrontMatter,
        format!("a locale variant cannot set `{key}`"),
    )
    .in_file(path)
    .at_key(doc, key)
    .suggest(Some(format!("set it in {DEFAULTS_DIR}/{id}.md"))))
}

/// Adds `variant` to its prompt; two files for one locale are an error.
fn insert_variant(entry: &mut PackPrompt, variant: LocaleVariant) -> Result<(), Diagnostic> {
    let key = variant.locale.key().to_owned();
    if let Some(existing) = entry.variants.get(&key) {
        return Err(Diagnostic::error(
            DiagnosticCode::DuplicateId,
            format!(
                "the `{}` variant of `{}` (also in {}) is defined twice",
                variant.locale,
                entry.id,
                existing.file.display()
            ),
        )
        .in_file(&variant.file)
        .suggest(Some("keep one of the files".to_owned())));
    }
    entry.variants.insert(key, variant);
    Ok(())
}

/// The provenance of a pack file: `what` it is, where, for which locale.
fn file_provenance(what: &str, path: &Path, locale: Option<&Locale>) -> Arc<Provenance> {
    let mut provenance = Provenance::new(SourceKind::Pack, what).file(path);
    provenance.locale = locale.cloned();
    Arc::new(provenance)
}

/// A variant translates the pinned blocks of one side all or not at all:
/// `declared` blocks in the default, matched by position.
fn check_pin_count(
    doc: &Document<'_>,
    key: &str,
    declared: usize,
    id: &PromptId,
    path: &Path,
) -> Result<(), Diagnostic> {
    let given = doc.pin_count(key);
    if given == 0 || given == declared {
        return Ok(());
    }
    let blocks = |n: usize| match n {
        1 => "1 block".to_owned(),
        n => format!("{n} blocks"),
    };
    let hint = match declared {
        0 => format!("remove `{key}`, or declare the pinned blocks in {DEFAULTS_DIR}/{id}.md"),
        _ => format!(
            "give one translation per block of {DEFAULTS_DIR}/{id}.md, in the same order, or leave `{key}` out to keep the default's text"
        ),
    };
    Err(Diagnostic::error(
        DiagnosticCode::FrontMatter,
        format!(
            "`{key}` gives {} but the default of `{id}` pins {}: a variant translates the pinned blocks by position",
            blocks(given),
            blocks(declared)
        ),
    )
    .in_file(path)
    .at_key(doc, key)
    .suggest(Some(hint)))
}

/// Points a diagnostic at a front matter key of the file, when present.
trait AtKey {
    fn at_key(self, doc: &Document<'_>, key: &str) -> Self;
}

impl AtKey for Diagnostic {
    fn at_key(self, doc: &Document<'_>, key: &str) -> Self {
        match doc.key_span(key) {
            Some(span) => self.at(&LineIndex::new(doc.text()), span),
            None => self,
        }
    }
}

/// `<id>.md` or `<id>.<locale>.md`, for a declared id.
fn classify(
    spec: &ConfigSpec,
    name: &str,
    path: &Path,
) -> Result<(PromptId, Option<Locale>), Diagnostic> {
    let stem = name.strip_suffix(".md").unwrap_or(name);
    let key = match prompt_file::file_key(spec, stem) {
        FileKey::Key(id, locale) => return Ok((id, locale)),
        FileKey::Invalid(e) => return Err(invalid(path, e)),
        FileKey::Unknown { key, .. } => key,
    };
    let hint = suggest::nearest(key, spec.keys().map(PromptId::as_str))
        .map(|k| format!("did you mean `{k}`?"))
        .unwrap_or_else(|| format!("add `{key}` to `keys` in {MANIFEST}"));
    Err(Diagnostic::error(
        DiagnosticCode::UndeclaredId,
        format!("this default file is for `{key}`, which {MANIFEST} does not declare"),
    )
    .in_file(path)
    .suggest(Some(hint)))
}

fn invalid(path: &Path, e: Error) -> Diagnostic {
    Diagnostic::error(DiagnosticCode::InvalidPromptKey, e.detail().to_owned()).in_file(path)
}
