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
//! use promptreg_core::PromptRegistry;
//! use promptreg_packs::pack::Pack;
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
//! # Ok::<(), promptreg_core::Error>(())
//! ```
//!
//! The manifest's format is described in `docs/src/packs.md` and on
//! [`Pack::from_files`].

mod chat;
mod contract;
pub mod file_set;
mod install;
pub use install::StoreStamp;
mod load;
mod manifest;
mod prompt_files;
mod pseudo;
mod schema;
mod shared_contract;
mod snippets;
pub mod translation;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::snippet::SNIPPETS_DIR;
pub use contract::{declared_contract, declared_contract_with};
pub use file_set::{FileSet, Recovery, recover};
pub use manifest::{L10n, MANIFEST};
#[cfg(feature = "l10n")]
pub(crate) use pseudo::protected_spans;
pub use pseudo::{PSEUDO_LOCALE, pseudo_translate};
pub use schema::front_matter_schema;
pub use shared_contract::{SCHEMAS_DIR, TOOLS_DIR};
pub use translation::{SourceText, Translation, UnitName};

use crate::chat::Chat;
use crate::config::ConfigSpec;
use crate::diagnostic::Diagnostic;
use crate::error::Error;
use crate::id::PromptId;
use crate::json_object::JsonObject;
use crate::locale::Locale;
use crate::prompt::Prompt;
use crate::provenance::Provenance;
use crate::registry::PromptRegistry;
use crate::renderer::Renderer;
use crate::snippet::Snippets;
use crate::template::Variable;

/// The labels a manifest's `[release] gated` names, from its text alone
/// (sorted; none when the manifest does not parse, which loading the pack
/// reports): what a store checks before it moves a label.
///
/// ```
/// let manifest = "name = \"demo\"\n[user]\nprompts_dir = \".demo\"\n[release]\ngated = [\"production\"]\n";
/// assert_eq!(promptreg_packs::pack::gated_labels(manifest), ["production"]);
/// ```
pub fn gated_labels(manifest: &str) -> Vec<String> {
    manifest::parse(manifest, Path::new(MANIFEST)).map_or_else(|_| Vec::new(), |m| m.gated)
}

/// The labels a manifest's `[release] signed` names, from its text alone:
/// labels a store moves only with a signature by the releaser's key.
///
/// ```
/// let manifest = "name = \"demo\"\n[user]\nprompts_dir = \".demo\"\n[release]\nsigned = [\"production\"]\n";
/// assert_eq!(promptreg_packs::pack::signed_labels(manifest), ["production"]);
/// ```
pub fn signed_labels(manifest: &str) -> Vec<String> {
    manifest::parse(manifest, Path::new(MANIFEST)).map_or_else(|_| Vec::new(), |m| m.signed)
}

/// The labels a manifest's `[release] stable_contract` names, from its
/// text alone: labels a store keeps from a breaking change to a prompt's
/// contract (its tools and output schema) unless an admin forces it.
///
/// ```
/// let manifest = "name = \"demo\"\n[user]\nprompts_dir = \".demo\"\n[release]\nstable_contract = [\"production\"]\n";
/// assert_eq!(promptreg_packs::pack::stable_contract_labels(manifest), ["production"]);
/// ```
pub fn stable_contract_labels(manifest: &str) -> Vec<String> {
    manifest::parse(manifest, Path::new(MANIFEST))
        .map_or_else(|_| Vec::new(), |m| m.stable_contract)
}

/// The folder of default files inside a pack.
pub const DEFAULTS_DIR: &str = "defaults";

/// A loaded pack: its declaration and its prompts.
///
/// ```
/// use promptreg_core::PromptRegistry;
/// use promptreg_packs::pack::Pack;
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
/// # Ok::<(), promptreg_core::Error>(())
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
    /// The labels `[release] gated` names.
    gated: Vec<String>,
    /// The labels `[release] signed` names.
    signed: Vec<String>,
    /// The labels `[release] stable_contract` names.
    stable_contract: Vec<String>,
    /// What `[l10n]` says.
    l10n: L10n,
    /// The prompts left out for errors in their files: only a pack from
    /// [`Pack::try_load`] has any.
    failed: std::collections::BTreeSet<PromptId>,
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
    /// The default's translatable text, which variants record.
    source: Option<SourceText>,
    /// Whether the default file is a template.
    template: bool,
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
    /// Its contract: the default's, descriptions translated.
    contract: Option<Arc<crate::contract::Contract>>,
    provenance: Arc<Provenance>,
    /// Its own translatable text (without the pins it leaves out).
    text: SourceText,
    /// Whether it translates its default's current text.
    translation: Translation,
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

    /// Whether the default file is a template (`template: true`): its
    /// `{{ }}`, `{% %}` and `{# #}` tags are syntax, not text.
    pub fn is_template(&self) -> bool {
        self.template
    }

    /// Whether the default file is a chat prompt (`kind: chat`): its body
    /// is messages under `# role` headings.
    pub fn is_chat(&self) -> bool {
        self.chat.is_some()
    }

    /// The default's translatable text: its body and pinned blocks, as
    /// written. `None` without a default file.
    pub fn source_text(&self) -> Option<&SourceText> {
        self.source.as_ref()
    }

    /// The translatable text of the variant for exactly `locale`, as
    /// written (pinned blocks it leaves to the default are absent).
    pub fn variant_text(&self, locale: &Locale) -> Option<&SourceText> {
        self.variants.get(locale.key()).map(|v| &v.text)
    }

    /// The locale of the variant a render in `locale` takes along its
    /// chain (`zh-Hant-TW`, then `zh-TW`, then `zh`), if any: the variant
    /// that translates the prompt for `locale`.
    pub fn variant_locale_for(&self, locale: &Locale) -> Option<&Locale> {
        locale
            .chain()
            .find_map(|key| self.variants.get(key))
            .map(|v| &v.locale)
    }

    /// Whether the variant for exactly `locale` translates its default's
    /// current text.
    ///
    /// ```
    /// use promptreg_packs::pack::{Pack, Translation};
    /// use promptreg_core::Locale;
    ///
    /// let pack = Pack::from_files("demo", [
    ///     ("promptreg.toml", "name = \"demo\"\nkeys = [\"greeting\"]\n[user]\nprompts_dir = \".demo\"\n"),
    ///     ("defaults/greeting.md", "Hello!"),
    ///     ("defaults/greeting.ja.md", "---\ntranslated_from:\n  digest: \"0000000000000000\"\n  body: Hi!\n---\nこんにちは！"),
    /// ])?;
    /// let prompt = pack.prompt("greeting").unwrap();
    /// let ja = prompt.translation(&Locale::parse("ja")?).unwrap();
    /// assert!(ja.is_stale());
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    pub fn translation(&self, locale: &Locale) -> Option<&Translation> {
        self.variants.get(locale.key()).map(|v| &v.translation)
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
    /// use promptreg_core::DiagnosticCode;
    /// use promptreg_packs::pack::Pack;
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
        Pack::read(dir.as_ref(), load::Errors::Fail)
    }

    /// Loads the pack in folder `dir` best-effort, for a tool that shows
    /// one prompt: the pack when nothing is wrong; otherwise every
    /// diagnostic (as [`load`](Self::load) gives them), with the pack of
    /// the prompts that loaded when every error is in a prompt's own files
    /// (its default or a variant). An error in the manifest or in a
    /// snippet may concern any prompt: then there is no pack.
    /// [`failed_prompts`](Self::failed_prompts) names the prompts left out.
    ///
    /// Loads that publish stay strict: [`load`](Self::load), and the
    /// reloads of a pack installed from a folder, which read it with
    /// `load`. Install a partial pack only in a registry of your own.
    ///
    /// ```
    /// use promptreg_packs::pack::Pack;
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::create_dir_all(dir.path().join("defaults"))?;
    /// std::fs::write(dir.path().join("promptreg.toml"),
    ///     "name = \"demo\"\nkeys = [\"greeting\", \"farewell\"]\n[user]\nprompts_dir = \".demo\"\n")?;
    /// std::fs::write(dir.path().join("defaults/greeting.md"), "Hello!")?;
    /// std::fs::write(dir.path().join("defaults/farewell.md"), "---\nunknown: 1\n---\nBye!")?;
    ///
    /// assert!(Pack::load(dir.path()).is_err());
    /// let Err((Some(pack), diagnostics)) = Pack::try_load(dir.path()) else { panic!() };
    /// assert!(pack.prompt("greeting").is_some());
    /// assert!(pack.prompt("farewell").is_none());
    /// assert_eq!(pack.failed_prompts().map(|id| id.as_str()).collect::<Vec<_>>(), ["farewell"]);
    /// assert!(diagnostics.iter().any(|d| d.is_error()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn try_load(dir: impl AsRef<Path>) -> Result<Pack, (Option<Pack>, Vec<Diagnostic>)> {
        match Pack::read(dir.as_ref(), load::Errors::SparePrompts) {
            (Some(pack), diagnostics) if pack.failed.is_empty() => {
                match diagnostics.iter().any(Diagnostic::is_error) {
                    true => Err((Some(pack), diagnostics)),
                    false => Ok(pack),
                }
            }
            (pack, diagnostics) => Err((pack, diagnostics)),
        }
    }

    fn read(dir: &Path, errors: load::Errors) -> (Option<Pack>, Vec<Diagnostic>) {
        let (mut pack, diagnostics) = load::read(dir, errors);
        if let Some(pack) = &mut pack {
            pack.on_disk = true;
        }
        (pack, diagnostics)
    }

    /// The prompts [`try_load`](Self::try_load) left out for errors in
    /// their files, sorted; none for a pack that loaded whole.
    pub fn failed_prompts(&self) -> impl Iterator<Item = &PromptId> {
        self.failed.iter()
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
        let files = files
            .into_iter()
            .map(|(path, text)| (root.join(path.as_ref()), text.as_ref().to_owned()));
        let (pack, diagnostics) = load::from_memory(&root, files);
        pack.ok_or_else(|| Error::from_diagnostics(diagnostics))
    }
    /// The labels the manifest gates (`[release] gated = ["production"]`),
    /// sorted: a store moves them only to a state that passes the pack's
    /// tests.
    pub fn gated_labels(&self) -> &[String] {
        &self.gated
    }

    /// The labels that move only with a signature
    /// (`[release] signed = ["production"]`), sorted.
    pub fn signed_labels(&self) -> &[String] {
        &self.signed
    }

    /// The labels that refuse a breaking contract change
    /// (`[release] stable_contract = ["production"]`), sorted.
    pub fn stable_contract_labels(&self) -> &[String] {
        &self.stable_contract
    }

    /// What the manifest's `[l10n]` says: the locales the pack is
    /// translated into, those whose translations must be current, and
    /// whether `en-XA` is pseudo-translated.
    pub fn l10n(&self) -> &L10n {
        &self.l10n
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

    /// The warnings found while loading (the notes, such as variants that
    /// record no source, only [`check`](Self::check) reports).
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// The file the default of `id` is read from: `defaults/<id>.md`,
    /// whether it exists or not.
    pub fn default_path(&self, id: &str) -> PathBuf {
        self.root.join(DEFAULTS_DIR).join(format!("{id}.md"))
    }

    /// The file the `locale` variant of `id` is read from:
    /// `defaults/<id>.<locale>.md`, whether it exists or not.
    pub fn variant_path(&self, id: &str, locale: &Locale) -> PathBuf {
        self.root
            .join(DEFAULTS_DIR)
            .join(format!("{id}.{locale}.md"))
    }

    /// When `id` is a key the manifest declares but the pack has no
    /// default file for, the warning [`check`](Self::check) reports about
    /// it: it names the manifest's line and the file that would hold the
    /// default. Commands that cannot render such a key say the same.
    ///
    /// ```
    /// use promptreg_core::DiagnosticCode;
    /// use promptreg_packs::pack::Pack;
    ///
    /// let pack = Pack::from_files("demo", [
    ///     ("promptreg.toml", "name = \"demo\"\nkeys = [\"greeting\", \"farewell\"]\n[user]\nprompts_dir = \".demo\"\n"),
    ///     ("defaults/greeting.md", "Hello!"),
    /// ])?;
    /// let missing = pack.missing_default("farewell").unwrap();
    /// assert_eq!(missing.code, DiagnosticCode::MissingDefault);
    /// assert_eq!(missing.position.unwrap().line, 2);
    /// assert!(pack.missing_default("greeting").is_none());
    /// # Ok::<(), promptreg_core::Error>(())
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
        crate::sources::install_pack(registry.shared(), self.clone());
        Ok(())
    }
}
