//! What the server reads, kept in memory: each pack's listing and each
//! label's bundle, serialised once with their ETags. A change (an event
//! from the store, or this server's own write) drops the pack's entries;
//! the next request reads the store once and every other request after
//! it is served from memory.
//!
//! Each entry is a `OnceCell` that the first request fills while the
//! others wait on it. Dropping an entry replaces the cell, so a read that
//! began before a change can only fill the old cell, never publish stale
//! data under the new one.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use axum::body::Bytes;
use promptreg::PromptRegistry;
use promptreg::pack::Pack;
use promptreg_store::{EntryVersion, LATEST, Label, PACK_ENTRY, PackFiles, Store, VersionRef};
use sha2::{Digest, Sha256};
use tokio::sync::OnceCell;

use crate::body::{Bundle, PackList, PromptList, PromptSummary, PromptVersion};
use crate::problem::Problem;

/// A response body serialised once, with its strong ETag (quoted).
#[derive(Debug)]
pub(crate) struct Cached {
    pub(crate) body: Bytes,
    pub(crate) etag: String,
}

impl Cached {
    fn json(value: &impl serde::Serialize, tag: &str) -> Cached {
        Cached {
            body: Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
            etag: format!("\"{tag}\""),
        }
    }
}

/// One label of a pack, read in one consistent query.
pub(crate) struct LabelView {
    pub(crate) bundle: Cached,
    prompts: HashMap<String, Arc<Cached>>,
    entries: Vec<EntryVersion>,
    /// Built on the first render: the pack installed in a registry.
    renderer: OnceLock<Result<Arc<(Pack, PromptRegistry)>, Problem>>,
    origin: String,
}

impl LabelView {
    /// The prompt's version at this label, serialised, if it has one.
    pub(crate) fn prompt(&self, id: &str) -> Option<Arc<Cached>> {
        self.prompts.get(id).cloned()
    }

    /// The pack at this label installed in a registry, to render from.
    pub(crate) fn renderer(&self) -> Result<Arc<(Pack, PromptRegistry)>, Problem> {
        self.renderer
            .get_or_init(|| {
                let files: PackFiles = self
                    .entries
                    .iter()
                    .flat_map(|e| e.files.iter())
                    .map(|(p, b)| (p.to_owned(), b.to_vec()))
                    .collect();
                let pack = files.to_pack(PathBuf::from(&self.origin))?;
                let registry = PromptRegistry::new();
                pack.install(&registry).map_err(Problem::from)?;
                Ok(Arc::new((pack, registry)))
            })
            .clone()
    }

    fn kind(&self, id: &str) -> Option<String> {
        if id == PACK_ENTRY {
            return Some("pack".to_owned());
        }
        let renderer = self.renderer().ok()?;
        let prompt = renderer.0.prompt(id)?;
        let template = prompt
            .default_prompt()
            .is_some_and(|p| p.body().is_template());
        Some(if template { "template" } else { "text" }.to_owned())
    }
}

type Cell<T> = Arc<OnceCell<Arc<T>>>;

#[derive(Default)]
struct PackSlot {
    listing: Cell<Cached>,
    labels: HashMap<String, Cell<LabelView>>,
}

/// Versions by number never change: kept until the cache holds this many.
const MAX_VERSIONS: usize = 10_000;

pub(crate) struct Cache {
    store: Store,
    packs: Mutex<HashMap<String, PackSlot>>,
    pack_list: Mutex<Cell<Cached>>,
    versions: Mutex<HashMap<(String, String, u64), Arc<Cached>>>,
}

impl Cache {
    pub(crate) fn new(store: Store) -> Cache {
        Cache {
            store,
            packs: Mutex::default(),
            pack_list: Mutex::default(),
            versions: Mutex::default(),
        }
    }

    /// Forgets what it holds of `pack` (and the list of packs).
    pub(crate) fn invalidate(&self, pack: &str) {
        lock(&self.packs).remove(pack);
        *lock(&self.pack_list) = Cell::default();
    }

    pub(crate) async fn packs(&self) -> Result<Arc<Cached>, Problem> {
        let cell = lock(&self.pack_list).clone();
        let listed = cell
            .get_or_try_init(|| async {
                let packs = self.store.packs().await?;
                let tag = hex(&Sha256::digest(packs.join("\n")));
                Ok::<_, Problem>(Arc::new(Cached::json(&PackList { packs }, &tag)))
            })
            .await?;
        Ok(listed.clone())
    }

    pub(crate) async fn label(&self, pack: &str, label: &Label) -> Result<Arc<LabelView>, Problem> {
        let cell = {
            let mut packs = lock(&self.packs);
            // A read finds its cell without allocating; only the first
            // read of a label makes one.
            let held = packs
                .get(pack)
                .and_then(|slot| slot.labels.get(label.as_str()))
                .cloned();
            held.unwrap_or_else(|| {
                let slot = packs.entry(pack.to_owned()).or_default();
                slot.labels
                    .entry(label.as_str().to_owned())
                    .or_default()
                    .clone()
            })
        };
        let view = cell
            .get_or_try_init(|| self.read_label(pack, label))
            .await?;
        Ok(view.clone())
    }

    async fn read_label(&self, pack: &str, label: &Label) -> Result<Arc<LabelView>, Problem> {
        let mut entries = self.store.entries_at(pack, label).await?;
        if !entries.iter().any(|e| e.prompt == PACK_ENTRY) {
            // The store says why: no manifest at that label.
            self.store.checkout(pack, label).await?;
        }
        // The manifest first, then the prompts by id.
        entries.sort_by(|a, b| {
            (a.prompt != PACK_ENTRY, &a.prompt).cmp(&(b.prompt != PACK_ENTRY, &b.prompt))
        });
        let versions: Vec<PromptVersion> = entries
            .iter()
            .map(|e| PromptVersion::new(pack, e))
            .collect();
        let mut hasher = Sha256::new();
        for e in &entries {
            hasher.update(format!("{}\0{}\n", e.prompt, e.digest));
        }
        let prompts = versions
            .iter()
            .map(|v| (v.id.clone(), Arc::new(Cached::json(v, &v.digest))))
            .collect();
        let bundle = Bundle {
            pack: pack.to_owned(),
            label: label.as_str().to_owned(),
            entries: versions,
        };
        Ok(Arc::new(LabelView {
            bundle: Cached::json(&bundle, &hex(&hasher.finalize())),
            prompts,
            entries,
            renderer: OnceLock::new(),
            origin: format!("{}#{pack}@{label}", self.store.location()),
        }))
    }

    pub(crate) async fn listing(&self, pack: &str) -> Result<Arc<Cached>, Problem> {
        let cell = lock(&self.packs)
            .entry(pack.to_owned())
            .or_default()
            .listing
            .clone();
        let listed = cell.get_or_try_init(|| self.read_listing(pack)).await?;
        Ok(listed.clone())
    }

    async fn read_listing(&self, pack: &str) -> Result<Arc<Cached>, Problem> {
        let labels = self.store.prompts(pack).await?;
        let protected = self.store.protected_labels(pack).await?;
        let latest = self.label(pack, &Label::latest()).await.ok();
        let mut prompts = Vec::with_capacity(labels.len());
        for (id, labels) in labels {
            let versions = self.store.log(pack, &id).await?.len() as u64;
            let at_latest = labels
                .contains_key(LATEST)
                .then_some(latest.as_ref())
                .flatten();
            let locales = at_latest
                .and_then(|view| view.prompt(&id))
                .and_then(|c| serde_json::from_slice::<serde_json::Value>(&c.body).ok())
                .and_then(|v| serde_json::from_value(v["locales"].clone()).ok())
                .unwrap_or_default();
            prompts.push(PromptSummary {
                kind: at_latest.and_then(|view| view.kind(&id)),
                id,
                labels,
                versions,
                locales,
            });
        }
        let list = PromptList {
            pack: pack.to_owned(),
            protected: protected.into_iter().collect(),
            prompts,
        };
        let body = serde_json::to_vec(&list).unwrap_or_default();
        let tag = hex(&Sha256::digest(&body));
        Ok(Arc::new(Cached {
            body: body.into(),
            etag: format!("\"{tag}\""),
        }))
    }

    /// A version by number or label (a label through the label's view).
    pub(crate) async fn version(
        &self,
        pack: &str,
        id: &str,
        version: &VersionRef,
    ) -> Result<Arc<Cached>, Problem> {
        let number = match version {
            VersionRef::Label(label) => {
                let view = self.label(pack, label).await?;
                if let Some(found) = view.prompt(id) {
                    return Ok(found);
                }
                // The store names what is missing: the prompt or the label.
                self.store.resolve(pack, id, version).await?;
                return Err(Problem::not_found(format!(
                    "`{id}` in pack `{pack}` has no version at label `{label}`"
                )));
            }
            VersionRef::Number(n) => *n,
        };
        let key = (pack.to_owned(), id.to_owned(), number);
        if let Some(found) = lock(&self.versions).get(&key) {
            return Ok(found.clone());
        }
        let entry = self.store.entry_version(pack, id, version).await?;
        let doc = PromptVersion::new(pack, &entry);
        let cached = Arc::new(Cached::json(&doc, &doc.digest));
        let mut versions = lock(&self.versions);
        if versions.len() >= MAX_VERSIONS {
            versions.clear();
        }
        versions.insert(key, cached.clone());
        Ok(cached)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain maps behind: still usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
