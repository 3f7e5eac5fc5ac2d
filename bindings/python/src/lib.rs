//! promptreg for Python: the registry, chat prompts, packs, the user's
//! configuration, following a server and the stateless resolver, as a
//! native extension module built with PyO3 against CPython's stable ABI
//! (one wheel for CPython 3.9 and newer).
//!
//! The Python API follows the web-agent SDK's `PromptRegistry`
//! (`register_default`, `override`, `append`, `render`, `reset`, `has`,
//! `list`, `set_locale`) in Python's conventions and adds the Rust
//! library's features under their own names. `bindings/python/README.md`
//! is the guide; `python/promptreg/_promptreg.pyi` types this module.
//!
//! Threads: every class may be used from any thread. A render releases the
//! GIL while the library composes, and a Python renderer attaches again to
//! run; callbacks (`watch`, `follow`'s `on_change`) run on the library's
//! own threads, attached to the interpreter.

#![deny(missing_docs)]

// The modules form a DAG, leaves first (`tests/modules.rs` checks that no
// `crate::` path closes a circle): `record`, `running`; `diagnostic`;
// `errors`; `py_data`, `py_renderer`, `keys`, `handle` (the class's data);
// `config`, `chat`, `trace`, `resolve`, `watch`; `pack`; `follow`;
// `registry` (the class's methods), which imports what it needs of each.
mod chat;
mod config;
mod diagnostic;
mod errors;
mod follow;
mod handle;
mod keys;
mod pack;
mod py_data;
mod py_renderer;
mod record;
mod registry;
mod resolve;
mod running;
mod trace;
mod watch;

use pyo3::prelude::*;

/// The extension module, `promptreg._promptreg`; the package `promptreg`
/// re-exports it.
#[pymodule]
fn _promptreg(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add_class::<registry::PromptRegistry>()?;
    m.add_class::<chat::ChatRequest>()?;
    m.add_class::<pack::Pack>()?;
    m.add_class::<config::ConfigSpec>()?;
    m.add_class::<diagnostic::Diagnostic>()?;
    m.add_class::<diagnostic::LoadReport>()?;
    m.add_class::<trace::Trace>()?;
    m.add_class::<trace::TracePart>()?;
    m.add_class::<trace::PartOrigin>()?;
    m.add_class::<trace::LocaleMatch>()?;
    m.add_class::<trace::PartProvenance>()?;
    m.add_class::<trace::SettingRef>()?;
    m.add_class::<trace::LookupStep>()?;
    m.add_class::<trace::ChatTrace>()?;
    m.add_class::<trace::TraceMessage>()?;
    m.add_class::<trace::MessageSource>()?;
    m.add_class::<watch::Watcher>()?;
    m.add_class::<watch::ReloadEvent>()?;
    m.add_class::<follow::Follower>()?;
    m.add_class::<follow::FollowStatus>()?;
    m.add_class::<follow::FollowChange>()?;
    m.add_class::<resolve::ResolvedPrompt>()?;
    m.add_function(wrap_pyfunction!(config::check, m)?)?;
    m.add_function(wrap_pyfunction!(config::check_settings, m)?)?;
    m.add_function(wrap_pyfunction!(resolve::resolve_prompt, m)?)?;
    m.add_function(wrap_pyfunction!(running::close_all, m)?)?;
    Ok(())
}
