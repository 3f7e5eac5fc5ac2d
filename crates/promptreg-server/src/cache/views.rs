//! What a cache entry holds: a body serialised once with its ETag, a
//! label's bundle, and the pack installed for renders.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Bytes;
use promptreg::PromptRegistry;
use promptreg::pack::{Pack, StoreStamp};
use promptreg::remote::wire::{BundleHeaders, SplitHeader};
use promptreg_store::{EntryVersion, PACK_ENTRY, PackFiles, TESTS_ENTRY};
use tokio::sync::OnceCell;

use crate::heavy::HeavyWork;
use crate::problem::Problem;

/// A response body serialised once, with its strong ETag (quoted).
#[derive(Debug)]
pub(crate) struct Cached {
    pub(crate) body: Bytes,
    pub(crate) etag: String,
}

impl Cached {
    pub(super) fn json(value: &impl serde::Serialize, tag: &str) -> Cached {
        Cached {
            body: Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
            etag: format!("\"{tag}\""),
        }
    }
}

/// A pack installed in a registry of its own, to render from.
pub(crate) struct Installed {
    /// The pack, as loaded from the label's files.
    pub(crate) pack: Pack,
    /// A registry holding only that pack.
    pub(crate) registry: PromptRegistry,
}

impl Installed {
    /// `pack`, installed in a new registry.
    pub(crate) fn new(pack: Pack) -> Result<Installed, promptreg::Error> {
        let registry = PromptRegistry::new();
        pack.install(&registry)?;
        Ok(Installed { pack, registry })
    }
}

/// A label's pack installed, shared by the requests that render from it.
pub(crate) type Renderer = Arc<Installed>;

/// One label of a pack, read in one consistent query.
pub(crate) struct LabelView {
    pub(crate) bundle: Cached,
    /// The label's revision this state is, when the store's newest
    /// revision holds it (read apart from the entries: a move in between
    /// leaves it unknown until the event that follows refreshes the view).
    pub(crate) revision: Option<u64>,
    /// The signatures of that revision, one line each
    /// ([`Signature::to_header`](promptreg::signing::Signature::to_header)).
    pub(crate) signatures: Vec<String>,
    /// The split running on the label when the view was read.
    pub(crate) split: Option<SplitHeader>,
    pub(super) prompts: HashMap<String, Arc<Cached>>,
    pub(super) entries: Vec<EntryVersion>,
    /// Built on the first render: the pack installed in a registry, or
    /// why it cannot be.
    pub(super) renderer: OnceCell<Result<Renderer, Problem>>,
    pub(super) origin: String,
    /// The label it is a view of.
    pub(super) label: String,
}

impl LabelView {
    /// What the bundle's headers say about it (the follow protocol's
    /// `Promptreg-*` headers).
    pub(crate) fn wire_headers(&self) -> BundleHeaders {
        BundleHeaders {
            revision: self.revision,
            signatures: self.signatures.clone(),
            split: self.split.clone(),
        }
    }

    /// The prompt's version at this label, serialised, if it has one.
    pub(crate) fn prompt(&self, id: &str) -> Option<Arc<Cached>> {
        self.prompts.get(id).cloned()
    }

    /// The pack at this label installed in a registry, to render from:
    /// built once, by `heavy`, off the async workers, while other requests
    /// for it wait.
    pub(crate) async fn renderer_in(
        self: &Arc<Self>,
        heavy: &HeavyWork,
    ) -> Result<Renderer, Problem> {
        self.built(heavy).await?.clone()
    }

    /// What building the renderer gave; the outer error is `heavy`'s
    /// (busy, shutting down), which is not kept: a later request builds.
    pub(super) async fn built(
        self: &Arc<Self>,
        heavy: &HeavyWork,
    ) -> Result<&Result<Renderer, Problem>, Problem> {
        let view = Arc::clone(self);
        self.renderer
            .get_or_try_init(|| heavy.run(move || view.build()))
            .await
    }

    /// The pack of this label's files, installed in a new registry.
    fn build(&self) -> Result<Renderer, Problem> {
        let files: PackFiles = self
            .entries
            .iter()
            .flat_map(|e| e.files.iter())
            .map(|(p, b)| (p.to_owned(), b.to_vec()))
            .collect();
        let mut pack = files.to_pack(PathBuf::from(&self.origin))?;
        // Where each prompt stands in the store, on every part rendered
        // from it (explain, MCP's `_meta`).
        let versions = self
            .entries
            .iter()
            .map(|e| (e.prompt.clone(), (e.number, e.digest.clone())))
            .collect();
        pack.stamp_origin(&StoreStamp {
            versions: &versions,
            label: &self.label,
            revision: self.revision,
        });
        Ok(Arc::new(Installed::new(pack)?))
    }
}

/// Whether `id` of `renderer`'s pack is the manifest, a template or text.
pub(super) fn kind(renderer: Option<&Renderer>, id: &str) -> Option<String> {
    match id {
        PACK_ENTRY => return Some("pack".to_owned()),
        TESTS_ENTRY => return Some("tests".to_owned()),
        _ => {}
    }
    let prompt = renderer?.pack.prompt(id)?;
    let template = prompt
        .default_prompt()
        .is_some_and(|p| p.body().is_template());
    Some(if template { "template" } else { "text" }.to_owned())
}
