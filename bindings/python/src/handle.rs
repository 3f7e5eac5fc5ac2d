//! The `PromptRegistry` class's data: the Rust registry. Its methods are in
//! `registry.rs`; what takes a registry as an argument (a pack's
//! `install`) takes its type from here, below them all.

use pyo3::prelude::*;

/// The registry of every system prompt of an application: defaults under
/// ids, per-locale overrides, appended rules, pinned blocks, packs and the
/// user's configuration.
///
/// `PromptRegistry()` is an independent registry (tests, several tenants);
/// `promptreg.prompt_registry` is the process-wide one. Every method may be
/// called from any thread; renders release the GIL while the library
/// composes.
#[pyclass(frozen, module = "promptreg")]
pub struct PromptRegistry {
    pub(crate) inner: promptreg::PromptRegistry,
}
