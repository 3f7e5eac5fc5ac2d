//! One registry for every system prompt an LLM application sends.
//!
//! An application has many prompts: an agent's narrator, a planner, tool
//! descriptions, translation, clean-up. promptreg gives all of them one
//! surface. Subsystems register built-in defaults under stable ids; the host
//! overrides them per locale, appends site-level rules, pins the markers
//! that must survive any override, lists them and renders them, from any
//! thread, without locks on the render path.
//!
//! # Registering and rendering
//!
//! A prompt is a default body under a [`PromptId`]. Bodies are
//! [renderers](Renderer): static text, or closures of the render's locale
//! and, when they need one, a typed context.
//!
//! ```
//! use promptreg::{Locale, PromptRegistry};
//! use serde::Serialize;
//!
//! #[derive(Serialize)]
//! struct Narration { brand: String }
//!
//! let registry = PromptRegistry::new();
//! registry.register_default("translate.system", "Translate the page faithfully.")?;
//! registry.register_default("webagent-narrator.system", |ctx: &Narration, _: &Locale| {
//!     format!("You are the guide of {}'s website.", ctx.brand)
//! })?;
//!
//! let ctx = Narration { brand: "Acme".into() };
//! assert_eq!(
//!     registry.render("webagent-narrator.system", &ctx)?,
//!     "You are the guide of Acme's website."
//! );
//! // A renderer that needs no context renders with `&()`.
//! assert_eq!(registry.render("translate.system", &())?, "Translate the page faithfully.");
//! # Ok::<(), promptreg::Error>(())
//! ```
//!
//! Rendering with a context of the wrong type is an error naming both types,
//! and an unknown id suggests the nearest registered one:
//!
//! ```
//! # use promptreg::{ErrorKind, PromptRegistry};
//! # let registry = PromptRegistry::new();
//! # registry.register_default("planner.system", "Plan.")?;
//! let err = registry.render("planer.system", &()).unwrap_err();
//! assert_eq!(err.kind(), ErrorKind::UnknownId);
//! assert_eq!(err.to_string(), "unknown prompt id `planer.system` (did you mean `planner.system`?)");
//! # Ok::<(), promptreg::Error>(())
//! ```
//!
//! # Locales
//!
//! [`set_override`](PromptRegistry::set_override) replaces a body for one
//! locale. A render looks for an override in four steps and uses the
//! default when none matches:
//!
//! 1. the render locale itself (`ja-JP`);
//! 2. its CLDR fallback chain ([`Locale::chain`]: `zh-TW -> zh-Hant`,
//!    `es-MX -> es-419 -> es`);
//! 3. a variant of the same language and script, from CLDR's likely
//!    subtags ([`Locale::language_script`]): `zh-HK` is `zh-Hant` and takes
//!    a `zh-TW` variant, `pt-PT` takes `pt-BR` rather than English, and
//!    `zh-CN` (`zh-Hans`) never takes `zh-TW`. When several match, the one
//!    in the script's likeliest region comes first (`zh-TW` for `zh-Hant`,
//!    `pt-BR` for Portuguese), then the others by tag;
//! 4. the fallback locale's chain (`en` unless
//!    [set](PromptRegistry::set_fallback_locale)).
//!
//! So you can localise one prompt into Japanese and leave every other
//! locale on the default. The trace of a render records which step matched
//! ([`LocaleStep`]), and `promptreg explain` prints it.
//!
//! ```
//! # use promptreg::PromptRegistry;
//! let registry = PromptRegistry::new();
//! registry.register_default("inline-edit.system", "You are an inline editing assistant.")?;
//! registry.set_override("inline-edit.system", "ja", "あなたはインライン編集アシスタントです。")?;
//!
//! assert_eq!(registry.render_in("inline-edit.system", &(), "ja-JP")?, "あなたはインライン編集アシスタントです。");
//! assert_eq!(registry.render_in("inline-edit.system", &(), "fr")?, "You are an inline editing assistant.");
//!
//! // Same language and script: Hong Kong takes the Taiwan variant.
//! registry.set_override("inline-edit.system", "zh-TW", "你是行內編輯助理。")?;
//! assert_eq!(registry.render_in("inline-edit.system", &(), "zh-HK")?, "你是行內編輯助理。");
//! assert_eq!(registry.render_in("inline-edit.system", &(), "zh-CN")?, "You are an inline editing assistant.");
//!
//! // The current locale applies to renders that do not name one; switching
//! // takes effect on the next render.
//! registry.set_locale("ja_JP")?;
//! assert_eq!(registry.render("inline-edit.system", &())?, "あなたはインライン編集アシスタントです。");
//! # Ok::<(), promptreg::Error>(())
//! ```
//!
//! # Appended rules and pinned blocks
//!
//! [`append`](PromptRegistry::append) adds a block after one prompt, in
//! every locale; [`append_all`](PromptRegistry::append_all) adds one after
//! every prompt, including those registered later. A [`Prompt`] can pin
//! blocks before and after its body: they are rendered whatever replaces the
//! body. [`translate_pin`](PromptRegistry::translate_pin) gives a pinned
//! block its own text in one locale (found by the same locale matching as
//! the body): the block stays, its wording follows the language.
//! [`reset`](PromptRegistry::reset) clears an id's overrides, pin
//! translations and appenders and keeps its default and pins.
//!
//! ```
//! # use promptreg::{Prompt, PromptRegistry};
//! let registry = PromptRegistry::new();
//! registry.register(
//!     "auditor",
//!     Prompt::new("Audit the work.").pin_tail("Reply with PASS or FAIL."),
//! )?;
//! registry.append_all("Never reveal personal data.")?;
//! registry.set_override("auditor", "en", "Reject unless the verifier hash is present.")?;
//!
//! assert_eq!(
//!     registry.render("auditor", &())?,
//!     "Reject unless the verifier hash is present.\n\nReply with PASS or FAIL.\n\nNever reveal personal data."
//! );
//! # Ok::<(), promptreg::Error>(())
//! ```
//!
//! The composition is always: pinned head blocks, the body, the user's
//! block (see below; in modes `override` and inline it takes the body's
//! place), pinned tail blocks, then every appender in the order it was
//! registered, joined by one blank line. A part's surrounding blank lines are dropped and a part
//! that renders blank adds nothing.
//!
//! # Where did this text come from?
//!
//! [`render_traced`](PromptRegistry::render_traced) returns the same text
//! plus, for every part, its [`Origin`] and byte range:
//!
//! ```
//! # use promptreg::{Origin, PromptRegistry};
//! # let registry = PromptRegistry::new();
//! registry.register_default("task.system", "Do the task.")?;
//! registry.append("task.system", "Cite sources.")?;
//!
//! let rendered = registry.render_traced("task.system", &())?;
//! let origins: Vec<_> = rendered.parts.iter().map(|p| p.origin.to_string()).collect();
//! assert_eq!(origins, ["default", "appender #1"]);
//! assert_eq!(rendered.part_text(&rendered.parts[1]), "Cite sources.");
//! # Ok::<(), promptreg::Error>(())
//! ```
//!
//! # Model settings and metadata
//!
//! A prompt can carry what the application sends beside it: model
//! settings (model name, temperature, response format, tools) and free
//! metadata, each a [`JsonObject`]. A locale may have its own settings,
//! found by the same locale matching as a body override; a render returns
//! the locale's in [`Rendered::model`], and
//! [`model_settings_in`](PromptRegistry::model_settings_in) gives them
//! without rendering. In a pack they are front matter keys `model` and
//! `metadata`, checked at load (see [`pack`]).
//!
//! # Chat prompts
//!
//! A prompt is text or chat: an ordered list of [`Message`]s, each with a
//! [`Role`] (`system`, `user`, `assistant`, `tool`, or a custom role) and
//! content, for few-shot examples and conversations. A [`Chat`] declares
//! them, with placeholders where the caller's history goes;
//! [`render_messages`](PromptRegistry::render_messages) renders them into
//! a `Vec<Message>` that serialises to OpenAI's `[{"role", "content"}]`.
//! The rules apply per message: a locale override replaces the whole list,
//! pinned blocks and appenders attach to the system message (or the one
//! the chat names with [`Chat::attach`]), the user's configuration goes to
//! the system message (mode `override` replaces its content, `append`
//! modes add to it), and templates render per message with the same
//! context.
//!
//! ```
//! use promptreg::{Chat, Message, Prompt, PromptRegistry, Role};
//!
//! let registry = PromptRegistry::new();
//! registry.register(
//!     "support",
//!     Prompt::chat(
//!         Chat::new()
//!             .system("You answer questions about returns.")
//!             .user("Can I return a tent?")
//!             .assistant("Yes, within 30 days.")
//!             .history("conversation"),
//!     ),
//! )?;
//! registry.set_chat_override("support", "ja", Chat::new().system("返品についての質問に答えます。").history("conversation"))?;
//! registry.append_all("Never reveal personal data.")?;
//!
//! let turns = [Message::new(Role::User, "And a backpack?")];
//! let messages = registry.render_messages("support", &(), &[("conversation", &turns[..])])?;
//! assert_eq!(messages.len(), 4);
//! assert_eq!(messages[0].content, "You answer questions about returns.\n\nNever reveal personal data.");
//! let ja = registry.render_messages_in("support", &(), "ja-JP", &[])?;
//! assert_eq!(ja, [Message::new(Role::System, "返品についての質問に答えます。\n\nNever reveal personal data.")]);
//!
//! // `render` is for text: a chat prompt is an error there, unless asked
//! // for as role-headed text.
//! assert!(registry.render("support", &()).is_err());
//! let text = registry.render_chat_as_text("support", &(), "en", &[])?;
//! assert!(text.starts_with("# system\nYou answer questions about returns."));
//! # Ok::<(), promptreg::Error>(())
//! ```
//!
//! [`render_messages_traced_in`](PromptRegistry::render_messages_traced_in)
//! gives each message's parts with their origins ([`RenderedChat`]). In a
//! pack, a file with `kind: chat` in its front matter writes the messages
//! under `# system`, `# user`, ... headings and a history placeholder as
//! `# history: NAME` (see [`pack`]).
//!
//! # User configuration
//!
//! End users change prompts without touching code: prompt files under their
//! home (global) and their project (local), and settings files with a
//! [`Mode`](config::Mode) per key (`override`, `append`, `global-local`,
//! `local`, `global-local-merge`, `off`), inline text, or a file to read.
//! The application declares what users may configure in a
//! [`ConfigSpec`](config::ConfigSpec) and loads it into the registry; the
//! [`config`] module documents the rules.
//!
//! ```
//! use promptreg::prelude::*;
//! use promptreg::{Prompt, PromptRegistry};
//! use promptreg::config::{ConfigSpec, LoadOptions};
//! # let home = tempfile::tempdir()?;
//! # let project = tempfile::tempdir()?;
//! # let write = |path: std::path::PathBuf, text: &str| -> std::io::Result<()> {
//! #     std::fs::create_dir_all(path.parent().unwrap())?;
//! #     std::fs::write(path, text)
//! # };
//! write(project.path().join(".app/prompts/auditor.md"), "Reject work without tests.")?;
//! write(project.path().join(".app/settings.json"), r#"{
//!     // JSON with comments.
//!     "prompts": { "auditor": { "mode": "override" } },
//! }"#)?;
//!
//! let registry = PromptRegistry::new();
//! registry.register("auditor", Prompt::new("Audit the work.").pin_tail("Answer PASS or FAIL."))?;
//!
//! let spec = ConfigSpec::builder("app")
//!     .key("auditor")
//!     .prompts_dir(".app/prompts")
//!     .settings_file(".app/settings.json")
//!     .build()?;
//! let report = registry.load_config(spec, LoadOptions::new(home.path(), project.path()))?;
//! assert!(report.warnings.is_empty());
//! assert_eq!(report.changed, ["auditor"]);
//!
//! // The user's file replaced the body; the pinned block stayed.
//! assert_eq!(registry.render("auditor", &())?, "Reject work without tests.\n\nAnswer PASS or FAIL.");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A project's configuration reads only files inside the project, symbolic
//! links resolved, unless the user trusts the project in the global
//! settings ([`config::trust_project`]); the [`config`] module describes
//! this trust boundary.
//!
//! Files are read by [`load_config`](prelude::LoadConfig::load_config) and
//! [`reload`](prelude::LoadConfig::reload), never by a render. With the `watch`
//! feature, `PromptRegistry::watch` follows the files and reloads when they
//! change (debounced; editors' save-by-rename, files created later and
//! deleted files included), reporting each reload to a callback. A reload that
//! fails keeps the previous configuration in force. Every problem (a typo in
//! a key, an invalid mode, a file that is not UTF-8) is a
//! [`Diagnostic`] with its file, line:column and key path.
//!
//! Diagnostics are safe to show whatever the file holds: each carries an
//! [`Excerpt`], a window of at most a few hundred characters around the
//! problem cut when it was found (so showing it never reads the file
//! again), names and values quoted in messages are cut to 160 characters,
//! control characters are escaped ([`printable`]), and one file reports at
//! most [`MAX_DIAGNOSTICS_PER_FILE`] problems, then one that counts the
//! rest. Positions come from a [`LineIndex`] built once per file, so a file
//! with thousands of problems is checked in linear time.
//!
//! # Packs and templates
//!
//! An application can declare its prompts and its user configuration in
//! files instead of code: a [`pack::Pack`] is a folder with a
//! `promptreg.toml` manifest and `defaults/<id>.md` files (plus
//! `<id>.<locale>.md` variants, which may translate the pinned blocks),
//! each with optional front matter for a description, pinned blocks,
//! template variables, optionally typed ([`VariableType`]), model settings
//! and metadata. Files are
//! literal text unless marked as minijinja templates; templates see the
//! render context by field name, fail on undefined variables and on values
//! of the wrong declared type, and stop after [`TEMPLATE_FUEL`]
//! instructions. Prompts share text through snippets
//! (`snippets/<name>.md`, with locale variants), included by name. The
//! [`pack`] module documents the format; `promptreg check` validates it.
//! With the `testing` feature, `promptreg::testing` runs the prompt tests a
//! pack keeps in `tests/*.toml` (what a render must contain, match, equal,
//! or a snapshot) against a registry; `promptreg test` runs them.
//!
//! # Optional features
//!
//! The core (registering, overriding per locale, appending, pinning,
//! rendering with a trace) needs none of them; each adds a source or a
//! tool, and only adds: nothing compiles without a feature that stops
//! compiling with it.
//!
//! | feature | default | what it adds | dependencies |
//! |---|---|---|---|
//! | `templates` | via `config` | minijinja templates: [`Renderer::compile_template`](prelude::CompileTemplate::compile_template), template prompt files | `minijinja`, `serde_json` |
//! | `config` | via `packs` | the end user's configuration ([`config`]): settings files, prompt files with front matter | `jsonc-parser`, `serde-saphyr`; `templates` |
//! | `packs` | **on** | prompts declared in files ([`pack`]), with the user configuration a pack declares; which translations are stale; tools and output schemas | `toml`, `sha2`, `similar`, `jsonschema` (tools and output schemas checked at load); `config` |
//! | `schema` | off | [`config::settings_schema`], the JSON Schema of the settings file | `schemars`; `config` |
//! | `watch` | off | `PromptRegistry::watch`: follow the user's files and the packs installed from folders | `notify`; `config` |
//! | `testing` | off | `promptreg::testing`: run a pack's prompt tests against a registry | `regex`, `similar`; `packs` |
//! | `remote` | off | `PromptRegistry::follow`: follow a label of a pack on a `promptreg serve` server, offline first, on a thread of its own | `ureq`, `sha2`, `serde_json`; `packs` |
//! | `l10n` | off | `promptreg::l10n`: coverage per locale, a pack's text exported to and imported from XLIFF 2.0 and gettext PO | `quick-xml`; `packs` |
//!
//! The default is what most hosts use: a pack and its users'
//! configuration. A host that declares every prompt in code builds with
//! `default-features = false` and gets the core alone (`arc-swap`,
//! `icu_locale`, `serde`, `foldhash`, `strsim`). CI builds the core and
//! each feature alone, and checks with `cargo tree` that no feature pulls
//! in another's dependencies. The `promptreg` tool has them all. The
//! published documentation marks every item with the feature it needs.
//!
//! A render context implements `serde::Serialize` whatever the features:
//! templates need it, and a bound that only some features added would make
//! turning a feature on break code that compiled without it. Serialising
//! happens only when a template renders.
//!
//! # One registry per process
//!
//! [`PromptRegistry::global`] is a process-level registry that subsystems
//! and the host reach without passing it around. Independent registries
//! (tests, several tenants) come from [`PromptRegistry::new`]. For several
//! renders that must see the same state, take a [`Snapshot`].
//!
//! # What the registry does not do
//!
//! It does not call a model, cache rendered strings (every render runs the
//! renderers; it is cheap enough for every turn) or store credentials.

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
// Internal readers return a `Diagnostic` as their error: it is the cold
// path, and the diagnostic is what callers collect and report.
#![allow(clippy::result_large_err)]
#![warn(rustdoc::broken_intra_doc_links)]

// The core, always here: `promptreg-core` has no feature and no I/O.
// ARCHITECTURE.md draws the crates as layers.
pub use promptreg_core::{
    BUILT_IN_ROLES, Chat, ChatTraceView, Contract, ContractChange, Diagnostic, DiagnosticCode,
    Error, ErrorKind, Excerpt, Form, IntoLocale, IntoRenderer, JsonObject, LineIndex, Locale,
    LocaleLookup, LocaleMatch, LocaleStep, LookupStep, MAX_DIAGNOSTICS_PER_FILE, MAX_ID_LEN,
    Message, MessageSource, Origin, OutputSchema, Part, Pin, Position, Prompt, PromptId,
    PromptRegistry, Provenance, Provider, RegistryProblem, RenderOutput, RenderRequest, Rendered,
    RenderedChat, RenderedMessage, Renderer, Rendering, Role, Setting, Severity, Snapshot,
    SourceKind, Tool, TraceView, Traced, abbreviate, contract, markers, messages_as_text,
    printable, provider, split, trace_attributes, trace_view,
};

// Sources and tools above the core, each from its crate, behind its feature.
#[cfg(feature = "config")]
#[cfg_attr(docsrs, doc(cfg(feature = "config")))]
pub use promptreg_packs::config;
#[cfg(feature = "l10n")]
#[cfg_attr(docsrs, doc(cfg(feature = "l10n")))]
pub use promptreg_packs::l10n;
#[cfg(feature = "packs")]
#[cfg_attr(docsrs, doc(cfg(feature = "packs")))]
pub use promptreg_packs::pack;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub use promptreg_packs::testing;
#[cfg(feature = "watch")]
#[cfg_attr(docsrs, doc(cfg(feature = "watch")))]
pub use promptreg_packs::{DEFAULT_DEBOUNCE, ReloadEvent, WatchHandle};
#[cfg(feature = "templates")]
#[cfg_attr(docsrs, doc(cfg(feature = "templates")))]
pub use promptreg_packs::{LOCALE_VARIABLE, TEMPLATE_FUEL, Variable, VariableType};
#[cfg(feature = "remote")]
#[cfg_attr(docsrs, doc(cfg(feature = "remote")))]
pub use promptreg_remote as remote;
#[cfg(feature = "signing")]
#[cfg_attr(docsrs, doc(cfg(feature = "signing")))]
pub use promptreg_signing as signing;

/// What sources add to [`PromptRegistry`] and [`Renderer`], as traits:
/// `use promptreg::prelude::*;` brings them into scope.
///
/// | trait | adds | feature |
/// |---|---|---|
/// | `CompileTemplate` | `Renderer::compile_template` | `templates` |
/// | `LoadConfig` | `load_config`, `reload`, `unload_config` | `config` |
/// | `Watch` | `watch`, `watch_with` | `watch` |
/// | `Follow` | `follow` | `remote` |
/// | `FromBundle` | `PromptRegistry::from_bundle` | `remote` |
pub mod prelude {
    #[cfg(feature = "templates")]
    pub use promptreg_packs::CompileTemplate;
    #[cfg(feature = "config")]
    pub use promptreg_packs::sources::LoadConfig;
    #[cfg(feature = "watch")]
    pub use promptreg_packs::watch::Watch;
    #[cfg(feature = "remote")]
    pub use promptreg_remote::{Follow, FromBundle};
}

/// The book's page on the library from Rust, whose examples are compiled
/// and run as doctests (they follow a server, so they need `remote`).
#[cfg(all(doctest, feature = "remote"))]
#[doc = include_str!("../../../docs/src/library/rust.md")]
pub struct BookLibraryPage;
