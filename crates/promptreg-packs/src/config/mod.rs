//! User configuration: the files and settings end users layer over an
//! application's prompts.
//!
//! An application declares, in a [`ConfigSpec`], which prompt keys users may
//! configure, where their prompt files live and which settings files to
//! read. Users then write:
//!
//! - **prompt files**: `<prompts_dir>/<key>.md` under home (global) and under
//!   the project (local), and `<key>.<locale>.md` beside them for one
//!   locale, which a render picks as it picks the application's locale
//!   variants: along the render locale's chain, then a file of the same
//!   language and script (`auditor.zh-TW.md` for `zh-HK`), then along the
//!   fallback locale's chain (the stateless [`resolve_prompt`] follows the
//!   chain of [`ResolveOptions::locale`] only);
//! - **settings** (JSON with comments and trailing commas): per key a
//!   [`Mode`], an `inline` text or a `file` to read, and `promptsDir`.
//!
//! [`resolve_prompt`] applies the resolution rule to one key, reading the
//! files as it goes. [`PromptRegistry::load_config`](crate::sources::LoadConfig::load_config)
//! reads everything once into the registry's snapshot, where renders use
//! it without reading files; [`check`] reports every problem without
//! loading anything, and [`check_settings`] does the same for settings text
//! not yet saved; `settings_schema` (feature `schema`) describes the settings file for
//! editors.
//!
//! # Modes
//!
//! | mode | files consulted | where the user's block goes |
//! |---|---|---|
//! | `global-local` (default) | the local file, else the global one | after the application's body |
//! | `append` | the local file, else the global one | after the application's body |
//! | `override` | the local file, else the global one | in place of the body (pinned blocks stay) |
//! | `local` | the local file only; the global one is never read | after the body |
//! | `global-local-merge` | both, global first, joined by a blank line | after the body |
//! | `off` | none | nothing is added |
//!
//! **Inline text** (`prompts.<key>.inline`) is not a file: it wins over
//! every file and takes the body's place in every mode, `off` included,
//! so `"mode": "append"` beside an `inline` has no effect (`check` warns
//! about it). To add a sentence after the application's text, put it in a
//! prompt file, or use a `file` setting, with mode `append`.
//!
//! **Why both `append` and `global-local`.** They behave the same. The
//! default is named for where the block is read from (local over global);
//! `append` is named for what happens to the text, so a settings file that
//! means "add to the prompt" says so, and stays right if the default ever
//! changes. Both come from the settings format this one continues, where
//! `append` was an explicit alias of `global-local`.
//!
//! # Settings files and precedence
//!
//! The global settings file (under home), the local one (under the project)
//! and the file named by the application's environment variable are read in
//! that order. For each prompt key, the `prompts.<key>` block of the last
//! file that has one is used whole: a local block replaces the global block
//! of that key only, and other keys keep their global settings. The last
//! `promptsDir` set wins likewise.
//!
//! Validation is strict: an unknown key at any level, an unknown prompt key,
//! a mode that does not exist, a value of the wrong type or a repeated key
//! is an error naming the file, line:column and key path, with a suggestion
//! where there is one; every problem of every file is reported at once. A
//! blank `inline` or `file` counts as absent, and so does `null`.
//!
//! # Legacy names
//!
//! An application can keep old flat settings keys working
//! ([`ConfigSpecBuilder::legacy_alias`]): `auditorPrompt` standing for
//! `prompts.auditor.inline`, say. An alias applies only when its file has no
//! `prompts.<key>` block for the key; when both are present the block wins
//! and a warning says so. Legacy files ([`ConfigSpecBuilder::legacy_file`])
//! are read, local before global, only when the unified lookup for their key
//! finds nothing, and never in mode `off`.
//!
//! # Trust boundary
//!
//! Configuration under home is the user's own and is trusted: the global
//! settings file, the global prompts folder, legacy files under home, the
//! settings file named by the environment variable, and every file those
//! settings name may be anywhere. A project's configuration comes with a
//! repository someone may have cloned, and what it reads goes into prompts
//! sent to a model provider, so it may only read files inside the project
//! (`cwd`), after resolving symbolic links and `..`:
//!
//! - the local settings file;
//! - the project's prompts folder and each file in it;
//! - the local legacy files;
//! - a `file` set by the local settings (`~/...` and absolute paths
//!   included);
//! - the global prompts folder too when the local settings set `promptsDir`,
//!   since the project then chose it.
//!
//! Links that stay inside the project are fine. A file or folder that
//! resolves outside is not read at all: an error diagnostic
//! ([`DiagnosticCode::OutsideProject`](crate::DiagnosticCode::OutsideProject))
//! names it, where it leads, and the command that trusts the project, and
//! the load fails, so the previous configuration stays in force. An error
//! rather than a warning because skipping the file would silently send a
//! different prompt than the project's configuration describes, as an
//! unreadable file would; the fix is one command.
//!
//! The check and the read use the same resolved path, so a link changed in
//! between is not followed (on Linux the opened file is checked again).
//!
//! A user trusts a project by listing its root under `trustedProjects` in
//! the **global** settings file (as `direnv allow` or `mise trust` do);
//! [`trust_project`] and `promptreg trust DIR` add it. Entries are `~/...`
//! or absolute, resolved like the project, and a folder trusts every folder
//! below it. A trusted project's configuration reads like the user's own.
//! A `trustedProjects` list in any other settings file is ignored, with a
//! warning: a project cannot trust itself. When the project is home itself,
//! its configuration is the user's own.
//!
//! ```
//! use promptreg_packs::config::{check, trust_project, ConfigSpec, LoadOptions};
//! use promptreg_core::DiagnosticCode;
//! # let home = tempfile::tempdir()?;
//! # let project = tempfile::tempdir()?;
//! std::fs::create_dir_all(project.path().join(".app"))?;
//! std::fs::write(home.path().join("notes.md"), "Private notes.")?;
//! std::fs::write(
//!     project.path().join(".app/settings.json"),
//!     r#"{ "prompts": { "auditor": { "file": "~/notes.md" } } }"#,
//! )?;
//! let spec = ConfigSpec::builder("app").key("auditor").prompts_dir(".app/prompts")
//!     .settings_file(".app/settings.json").build()?;
//! let options = LoadOptions::new(home.path(), project.path());
//!
//! let refused = check(&spec, &options);
//! assert_eq!(refused[0].code, DiagnosticCode::OutsideProject);
//!
//! trust_project(&spec, home.path(), project.path())?;
//! assert!(check(&spec, &options).is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`resolve_prompt`] has no boundary: it is given the settings, and its
//! caller decides what to trust.

mod check;
mod files;
mod layer;
mod load;
mod locale_files;
mod mode;
mod options;
mod read_cache;
mod resolve;
#[cfg(feature = "schema")]
mod schema;
mod settings;
mod spec;
mod trust;

pub use check::{check, check_settings};
pub use files::prompt_dirs;
pub use layer::{ConfigPaths, LoadReport, LoadedConfig, UserFileInfo};
pub use mode::{Mode, UnknownMode};
pub use options::LoadOptions;
pub use resolve::{
    ResolveOptions, Resolved, Scope, Source, UserBlock, resolve_block, resolve_prompt,
};
#[cfg(feature = "schema")]
#[cfg_attr(docsrs, doc(cfg(feature = "schema")))]
pub use schema::settings_schema;
pub use settings::{PromptSettings, Settings, SettingsBlock, SettingsSource};
pub use spec::{
    ConfigSpec, ConfigSpecBuilder, DEFAULT_MAX_FILE_SIZE, KeyPattern, LegacyAlias, LegacyFile,
    PromptField,
};
pub use trust::{TrustedProject, trust_project};

pub(crate) use layer::UserLayer;
#[cfg(feature = "packs")]
pub(crate) use layer::digest;
