//! The file sources of [promptreg](https://docs.rs/promptreg): packs with
//! templates, snippets and tests, the end user's configuration, translation
//! files and live reload.
//!
//! Everything here reads files and contributes to a registry through the
//! public modules of `promptreg-core` (the copy-change-publish update, the
//! snapshot's writers, the renderer extension point, the layer trait,
//! locale matching); nothing here reaches into the core's internals.
//! Applications use the facade crate `promptreg`, which re-exports these
//! modules under the same names and turns them on by the same features.

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
// Readers return a `Diagnostic` as their error: it is the cold path, and
// the diagnostic is what callers collect and report.
#![allow(clippy::result_large_err)]
#![warn(rustdoc::broken_intra_doc_links)]

// The core's modules and names, as this crate's own paths use them.
#[allow(unused_imports)]
use promptreg_core::*;

#[cfg(feature = "config")]
#[cfg_attr(docsrs, doc(cfg(feature = "config")))]
pub mod config;
#[cfg(feature = "config")]
mod front_matter;
#[cfg(feature = "config")]
mod json_schema;
#[cfg(feature = "l10n")]
#[cfg_attr(docsrs, doc(cfg(feature = "l10n")))]
pub mod l10n;
#[cfg(feature = "config")]
mod model_check;
#[cfg(feature = "packs")]
#[cfg_attr(docsrs, doc(cfg(feature = "packs")))]
pub mod pack;
#[cfg(feature = "config")]
mod pin_place;
#[cfg(feature = "config")]
mod prompt_file;
#[cfg(feature = "templates")]
mod snippet;
#[cfg(feature = "config")]
#[cfg_attr(docsrs, doc(cfg(feature = "config")))]
pub mod sources;
#[cfg(feature = "templates")]
mod template;
#[cfg(feature = "templates")]
mod template_tags;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
#[cfg(feature = "watch")]
#[cfg_attr(docsrs, doc(cfg(feature = "watch")))]
pub mod watch;

#[cfg(feature = "templates")]
pub use template::{
    CompileTemplate, LOCALE_VARIABLE, TEMPLATE_FUEL, Variable, VariableSchema, VariableType,
};
#[cfg(feature = "watch")]
pub use watch::{DEFAULT_DEBOUNCE, ReloadEvent, WatchHandle};

/// What this crate adds to the core's types, as traits: `use
/// promptreg_packs::prelude::*;` (or the facade's `promptreg::prelude`)
/// brings them into scope.
pub mod prelude {
    #[cfg(feature = "config")]
    pub use crate::sources::LoadConfig;
    #[cfg(feature = "templates")]
    pub use crate::template::CompileTemplate;
    #[cfg(feature = "watch")]
    pub use crate::watch::Watch;
}
