//! The `PromptRegistry` class's handle: the Rust registry and what keeps
//! its watches and followers open. Its methods are in `registry.rs`; what
//! needs a registry (a pack's `install`, `watch`, `follow`) takes it from
//! here, below them all.

use std::sync::{Arc, Mutex, PoisonError};

use napi_derive::napi;

/// The registry of every system prompt of an application: defaults under
/// ids, per-locale overrides, appended rules, pinned blocks, packs and the
/// user's configuration.
///
/// `new PromptRegistry()` is an independent registry (tests, several
/// tenants); `PromptRegistry.global()` (also exported as `promptRegistry`)
/// is the process-wide one.
#[napi]
pub struct PromptRegistry {
    pub(crate) shared: Arc<Shared>,
}

impl PromptRegistry {
    /// A handle on `shared`.
    pub(crate) fn wrap(shared: Arc<Shared>) -> Self {
        PromptRegistry { shared }
    }

    /// The Rust registry.
    pub(crate) fn inner(&self) -> &promptreg::PromptRegistry {
        &self.shared.registry
    }
}

/// Something a registry keeps running while it is open (a watch, a
/// follower), though JavaScript holds no reference to it, as `fs.watch`
/// does.
pub(crate) trait Kept: Send + Sync {
    /// Whether it is still open; a closed one is forgotten.
    fn is_open(&self) -> bool;
}

/// A registry and the watches and followers that keep it up to date.
#[derive(Default)]
pub(crate) struct Shared {
    pub(crate) registry: promptreg::PromptRegistry,
    /// Open watches and followers.
    kept: Mutex<Vec<Arc<dyn Kept>>>,
}

impl Shared {
    /// Keeps `open` while it is open, forgetting the closed ones.
    pub(crate) fn keep(&self, open: Arc<dyn Kept>) {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.retain(|k| k.is_open());
        kept.push(open);
    }
}
