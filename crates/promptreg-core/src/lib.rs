//! The core of [promptreg](https://docs.rs/promptreg): the registry of an
//! application's prompts, its immutable snapshots, locale matching, the
//! composition of a render and its trace.
//!
//! This crate has no feature and does no I/O. What reads files (packs, the
//! user's configuration, templates, tests, translation files), what follows
//! a server and what signs a release are crates above it, which contribute
//! through the public modules below:
//!
//! - [`registry`]: the copy-change-publish update every source goes through
//!   ([`Shared`](registry::Shared): `update`, `try_update_with_sources`,
//!   what the sources keep, a split's candidate);
//! - [`snapshot`]: one immutable state, and its writers (defaults, variants,
//!   locales, the user's layer);
//! - [`renderer`]: renderer kinds, and [`Compute`](renderer::Compute), the
//!   extension point a computed kind (templates) plugs into;
//! - [`layer`]: the trait a per-render source (the user's configuration)
//!   implements;
//! - [`locale_match`]: the one locale matching every source uses
//!   ([`match_locale`](locale_match::match_locale));
//! - [`diagnostic`]: located problems, how many a file may report, and how
//!   they are collected.
//!
//! Applications use the facade crate `promptreg`, which re-exports all of
//! this under the same names.

#![deny(missing_docs)]
// Readers return a `Diagnostic` as their error: it is the cold path, and
// the diagnostic is what callers collect and report.
#![allow(clippy::result_large_err)]
#![warn(rustdoc::broken_intra_doc_links)]

pub mod chat;
pub mod compose;
pub mod contract;
pub mod diagnostic;
pub mod error;
pub mod id;
pub mod json_object;
pub mod layer;
pub mod locale;
pub mod locale_match;
pub mod prompt;
pub mod provenance;
pub mod provider;
pub mod registry;
pub mod renderer;
pub mod rendering;
pub mod snapshot;
pub mod split;
pub mod suggest;
pub mod trace_attributes;
pub mod trace_view;

/// The hash map of the render path: a fast, seeded hasher.
pub type Map<K, V> = foldhash::HashMap<K, V>;

pub use chat::{
    BUILT_IN_ROLES, Chat, Message, MessageSource, RenderedChat, RenderedMessage, Role,
    messages_as_text,
};
pub use compose::{Origin, Part, Rendered};
pub use contract::{Contract, ContractChange, OutputSchema, Tool};
pub use diagnostic::{
    Diagnostic, DiagnosticCode, Excerpt, LineIndex, MAX_DIAGNOSTICS_PER_FILE, Position, Severity,
    abbreviate, printable,
};
pub use error::{Error, ErrorKind};
pub use id::{MAX_ID_LEN, PromptId};
pub use json_object::JsonObject;
pub use locale::{IntoLocale, Locale};
pub use locale_match::{LocaleLookup, LocaleMatch, LocaleStep, LookupStep};
pub use prompt::{Pin, Prompt};
pub use provenance::{Provenance, Setting, SourceKind};
pub use provider::Provider;
pub use registry::PromptRegistry;
pub use renderer::{IntoRenderer, Renderer, markers};
pub use rendering::{Form, RenderOutput, RenderRequest, Rendering, Traced};
pub use snapshot::{RegistryProblem, Snapshot};
pub use trace_view::{ChatTraceView, MessageView, PartView, TraceView};
