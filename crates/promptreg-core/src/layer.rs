//! [`Layer`]: a source that chooses, at each render, blocks to add to a
//! prompt or to put in place of its body (the user's configuration). The
//! core asks it through this trait and knows nothing else of it.

use std::any::Any;
use std::sync::Arc;

use crate::id::PromptId;
use crate::locale::Locale;
use crate::provenance::Provenance;
use crate::renderer::Renderer;

/// A layer over a registry's prompts, held by a snapshot and asked at
/// every render. Its answer must come from memory: a render does no I/O.
pub trait Layer: Any + Send + Sync {
    /// The blocks this layer gives `id` rendered in `locale` (`fallback`
    /// is the registry's fallback locale), or `None`.
    fn choose<'a>(
        &'a self,
        id: &PromptId,
        locale: &Locale,
        fallback: &Locale,
    ) -> Option<LayerChoice<'a>>;
}

/// What a layer does to one render: the blocks it adds, and whether they
/// take the body's place.
pub struct LayerChoice<'a> {
    /// Whether the blocks take the body's place (mode `override`, an
    /// inline setting) rather than follow it.
    pub replaces_body: bool,
    /// The blocks, in order: at most two (a global and a local one).
    pub parts: [Option<LayerPart<'a>>; 2],
}

/// One block of a layer, with where it came from. A layer may make the
/// provenance when it is asked for the block rather than keep one per
/// block: renders ask once per snapshot, id and locale (the snapshot keeps
/// what they decide), and traces and errors are not the hot path.
#[derive(Clone)]
pub struct LayerPart<'a> {
    /// What renders the block.
    pub renderer: &'a Renderer,
    /// Where the block came from.
    pub provenance: Arc<Provenance>,
}
