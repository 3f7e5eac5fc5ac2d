//! `promptreg serve`: an HTTP API over a promptreg
//! [`Store`](promptreg_store::Store), with
//! conditional requests, a live stream of changes and API keys.
//!
//! ```no_run
//! use promptreg_server::{Config, Server};
//! use promptreg_store::Store;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let store = Store::open("promptreg.db").await?;
//! let server = Server::bind(store, Config::default()).await?;
//! println!("listening on http://{}", server.local_addr());
//! server.run(promptreg_server::shutdown_signal()).await?;
//! # Ok(()) }
//! ```
//!
//! Every route is under `/v1` and described by the OpenAPI 3.1 document
//! at `/v1/openapi.json`; errors are RFC 9457 problem details
//! (`application/problem+json`) with a stable `code`. Reads are served
//! from memory, kept fresh by the store's events; `GET /v1/events` streams
//! them to clients (server-sent events, resumable with `Last-Event-ID`).
//!
//! Beside the API, the same server serves a web page at `/` for the people
//! who own prompts: browse, compare, preview per locale, edit and publish,
//! signed in with an API key.

#![deny(missing_docs)]

mod actions;
mod api;
mod app;
mod auth;
mod body;
mod cache;
mod config;
mod connection;
mod events;
mod extract;
mod fallback;
mod fleet_writer;
mod guard;
mod heavy;
mod listener;
mod mcp;
mod metrics;
mod observe;
mod openapi;
mod problem;
mod rate;
mod responses;
mod serve;
mod state;
mod web;

pub use body::{
    Bundle, Created, DiffResponse, EndSplit, ExplainResponse, FileDiff, FleetBody, FleetReport,
    Health, InstanceBody, InstanceState, Move, MoveLabel, Moves, NewVersion, PackList, PromptList,
    PromptSummary, PromptVersion, Release, RenderRequest, RenderResponse, RestoreRevision,
    Restored, RevisionBody, RevisionCause, RevisionChange, Revisions, ServedBody, SignatureBody,
    Source, SplitBody, SplitShare, SplitStepBody, StartSplit, VersionList, VersionSummary,
};
pub use config::Config;
pub use openapi::openapi;
pub use problem::{PROBLEM_JSON, Problem, ProblemCode, ProblemDetails};
pub use serve::{ServeError, Server, shutdown_signal};
