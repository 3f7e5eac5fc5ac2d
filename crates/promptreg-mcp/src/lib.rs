//! A promptreg label's prompts over the [Model Context Protocol]: any MCP
//! client lists them with their arguments typed, renders them in the
//! session's locale, completes argument values, and is told when what it
//! sees changes.
//!
//! One implementation serves both transports. A host provides a
//! [`Catalog`] (what a caller may read now, and a signal when that may
//! have changed); [`PromptServer`] answers a session's requests from it:
//!
//! - `promptreg mcp` serves a pack folder, a baked bundle or a followed
//!   label over standard input and output ([`serve_stdio`], feature
//!   `stdio`);
//! - `promptreg serve` answers `/mcp` over Streamable HTTP
//!   ([`streamable_http`], feature `http`), each request authenticated by
//!   its API key.
//!
//! What MCP has no field for travels in `_meta` under `promptreg/` keys:
//! each argument's type, allowed values, default and schema in a
//! listing; the version, revision, digest and locale of every part in a
//! render.
//!
//! MCP prompt messages are `user` or `assistant`. A text prompt is one
//! `user` message. A chat prompt's `user` and `assistant` messages keep
//! their role; its `system` messages (and any other role) become `user`
//! messages whose content's `_meta` says the role they were written for
//! (`promptreg/role`).
//!
//! [Model Context Protocol]: https://modelcontextprotocol.io

#![cfg_attr(docsrs, feature(doc_cfg))]

mod answer;
mod arguments;
mod catalog;
mod changes;
mod completion;
mod handler;
#[cfg(feature = "http")]
mod http;
mod listing;
#[cfg(feature = "stdio")]
mod stdio;

pub use arguments::MAX_ARGUMENT_BYTES;
pub use catalog::{Catalog, Served, ServedPack, SessionScope};
pub use handler::{Options, PromptServer, SCOPE_KEY};
#[cfg(feature = "http")]
pub use http::{HttpLimits, StreamableHttp, refused_body, streamable_http};
pub use listing::DEFAULT_PAGE_SIZE;
/// The MCP SDK this crate is built on, for hosts that name its types.
pub use rmcp;
#[cfg(feature = "stdio")]
pub use stdio::serve_stdio;
