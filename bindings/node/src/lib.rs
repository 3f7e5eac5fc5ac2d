//! promptreg for Node.js: the registry, chat prompts, packs, the user's
//! configuration, following a server and the stateless resolver, as an
//! N-API module built with napi-rs.
//!
//! The JavaScript API follows the web-agent SDK's `PromptRegistry`
//! (`registerDefault`, `override`, `append`, `render`, `reset`, `has`,
//! `list`, `setLocale`) and adds the Rust library's features under their
//! own names. `bindings/node/README.md` is the guide; the TypeScript
//! declarations are generated from this crate.
//!
//! JavaScript renderers run on the JavaScript thread only: a render is a
//! synchronous call from JavaScript, and the registry's render path takes
//! no lock, so a renderer may call back into the registry. A registry
//! belongs to the JavaScript thread (main thread or worker) that made it.

#![deny(missing_docs)]

// The modules form a DAG, leaves first (`tests/modules.rs` checks that no
// `crate::` import closes a circle): `js`; `diagnostic`; `errors`;
// `js_renderer`; `handle` (the class's data); `args`; `chat`, `config`,
// `trace`, `resolve`; `pack`, `watch`; `follow`; `render`; `registry` (the
// class's methods), which imports what it needs of each.
mod args;
mod chat;
mod config;
mod diagnostic;
mod errors;
mod follow;
mod handle;
mod js;
mod js_renderer;
mod pack;
mod registry;
mod render;
mod resolve;
mod trace;
mod watch;

// The JavaScript API, also reachable from Rust (the tests build this crate
// as a library, where napi-rs registers nothing).
pub use chat::{ChatItem, ChatMessage, ChatMessageDeclaration, ChatOptions, HistoryPlaceholder};
pub use config::{ConfigSpec, LoadOptions, check, check_settings};
pub use diagnostic::{Diagnostic, LoadReport};
pub use follow::{FirstSync, FollowChange, FollowOptions, FollowStatus, Follower};
pub use pack::Pack;
pub use registry::PromptRegistry;
pub use render::RenderOptions;
pub use resolve::{PromptBlock, PromptConfig, ResolvePromptOptions, resolve_prompt_block};
pub use trace::{
    ChatTrace, LocaleMatch, LookupStep, MessageSource, PartOrigin, PartProvenance, SettingRef,
    Trace, TraceMessage, TracePart,
};
pub use watch::{ReloadError, ReloadEvent, WatchOptions, Watcher};
