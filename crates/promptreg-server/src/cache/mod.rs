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
//!
//! Only what the store confirmed stays: a cell whose read fails (an
//! unknown pack or label) is taken out again, so requests for names that
//! do not exist leave nothing behind. What stays is bounded: at most
//! [`MAX_PACKS`] packs and [`MAX_LABELS`] label views, the least recently
//! used going first.

mod slots;
mod views;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use promptreg::remote::wire::SplitHeader;
use promptreg::signing::Signature;
use promptreg::split::SplitRule;
use promptreg_store::{
    EntryVersion, LATEST, Label, PACK_ENTRY, Store, VersionRef, is_pack_level, state_digest,
};
use sha2::{Digest, Sha256};
use tokio::sync::OnceCell;

use crate::body::{Bundle, PackList, PromptList, PromptSummary, PromptVersion};
use crate::heavy::HeavyWork;
use crate::problem::Problem;

use slots::{Cell, LabelSlot, Slots};
use views::kind;
pub(crate) use views::{Cached, Installed, LabelView, Renderer};

/// The most packs whose listing and labels are kept.
pub(crate) const MAX_PACKS: usize = 1_000;

/// The most label views kept, over all packs. A view holds every file of
/// its pack and, once rendered, the pack installed: the bound on memory is
/// on these.
pub(crate) const MAX_LABELS: usize = 1_000;

/// Versions by number never change: kept until the cache holds this many.
const MAX_VERSIONS: usize = 10_000;

pub(crate) struct Cache {
    store: Store,
    heavy: Arc<HeavyWork>,
    slots: Mutex<Slots>,
    /// [`MAX_PACKS`] and [`MAX_LABELS`], smaller in tests.
    max: (usize, usize),
    pack_list: Mutex<Cell<Cached>>,
    versions: Mutex<HashMap<(String, String, u64), Arc<Cached>>>,
}

impl Cache {
    pub(crate) fn new(store: Store, heavy: Arc<HeavyWork>) -> Cache {
        Cache::bounded(store, heavy, MAX_PACKS, MAX_LABELS)
    }

    fn bounded(store: Store, heavy: Arc<HeavyWork>, packs: usize, labels: usize) -> Cache {
        Cache {
            store,
            heavy,
            slots: Mutex::default(),
            max: (packs.max(1), labels.max(1)),
            pack_list: Mutex::default(),
            versions: Mutex::default(),
        }
    }

    /// Forgets what it holds of `pack` (and the list of packs).
    pub(crate) fn invalidate(&self, pack: &str) {
        lock(&self.slots).packs.remove(pack);
        *lock(&self.pack_list) = Cell::default();
    }

    /// The packs and label views held (filled or being filled).
    #[cfg(test)]
    fn held(&self) -> (usize, usize) {
        let slots = lock(&self.slots);
        (slots.packs.len(), slots.label_count())
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
        let cell = self.label_cell(pack, label.as_str());
        self.filled(
            &cell,
            || self.read_label(pack, label),
            |slots| {
                slots.forget_label(pack, label.as_str(), &cell);
            },
        )
        .await
    }

    /// The value of `cell`, filled by `read` if empty; on a failed read,
    /// `forget` takes the cell out, and a new value makes room for itself.
    async fn filled<T, F>(
        &self,
        cell: &Cell<T>,
        read: impl FnOnce() -> F,
        forget: impl FnOnce(&mut Slots),
    ) -> Result<Arc<T>, Problem>
    where
        F: Future<Output = Result<Arc<T>, Problem>>,
    {
        let was_empty = !cell.initialized();
        match cell.get_or_try_init(read).await {
            Ok(value) => {
                if was_empty {
                    lock(&self.slots).settle(self.max);
                }
                Ok(value.clone())
            }
            Err(problem) => {
                forget(&mut lock(&self.slots));
                Err(problem)
            }
        }
    }

    /// The cell of `pack`'s `label`: the one held, or a new one that the
    /// first read fills while the others wait.
    fn label_cell(&self, pack: &str, label: &str) -> Cell<LabelView> {
        let mut slots = lock(&self.slots);
        let now = slots.tick();
        // A read finds its cell without allocating; only the first read
        // of a label makes one.
        if let Some(held) = slots.packs.get_mut(pack) {
            held.used = now;
            if let Some(held) = held.labels.get_mut(label) {
                held.used = now;
                return held.cell.clone();
            }
        }
        let cell = Cell::default();
        let slot = LabelSlot {
            cell: cell.clone(),
            used: now,
        };
        slots.pack(pack).labels.insert(label.to_owned(), slot);
        cell
    }

    /// The candidate of the split running on `pack`'s `label`, as a view
    /// of its own (its bundle carries the label's name): 404 when no split
    /// runs.
    pub(crate) async fn candidate(
        &self,
        pack: &str,
        label: &Label,
    ) -> Result<Arc<LabelView>, Problem> {
        // `#` is in no label, so the key is the candidate's alone.
        let key = format!("{label}#candidate");
        let cell = self.label_cell(pack, &key);
        self.filled(
            &cell,
            || self.read_candidate(pack, label),
            |slots| {
                slots.forget_label(pack, &key, &cell);
            },
        )
        .await
    }

    async fn read_label(&self, pack: &str, label: &Label) -> Result<Arc<LabelView>, Problem> {
        let entries = self.store.entries_at(pack, label).await?;
        if !entries.iter().any(|e| e.prompt == PACK_ENTRY) {
            // The store says why: no manifest at that label.
            self.store.checkout(pack, label).await?;
        }
        let split = self.store.running_split(pack, label).await?;
        let mut view = self.view_of(pack, label, entries, String::new());
        // Its revision, when the store's newest revision holds its state.
        view.revision = match self.store.newest_revision(pack, label).await? {
            Some((number, held)) if held == view.bundle.etag.trim_matches('"') => Some(number),
            _ => None,
        };
        if let Some(number) = view.revision {
            let signatures = self.store.revision_signatures(pack, label, number).await?;
            let armored: Vec<String> = signatures.into_iter().map(|s| s.signature).collect();
            view.signatures = header_forms(&armored);
        }
        view.split = split.map(|s| SplitHeader {
            rule: SplitRule {
                id: s.id,
                basis_points: s.share.basis_points(),
            },
            digest: s.digest,
        });
        Ok(Arc::new(view))
    }

    async fn read_candidate(&self, pack: &str, label: &Label) -> Result<Arc<LabelView>, Problem> {
        let Some(split) = self.store.running_split(pack, label).await? else {
            return Err(Problem::not_found(format!(
                "label `{label}` of pack `{pack}` runs no split: it has no candidate"
            )));
        };
        let entries = self.store.split_entries(pack, split.id).await?;
        let origin = format!("#split{}", split.id);
        let mut view = self.view_of(pack, label, entries, origin);
        view.revision = Some(split.source_revision);
        view.signatures = header_forms(&self.store.split_signatures(split.id).await?);
        Ok(Arc::new(view))
    }

    /// The view of `entries`, a state of `label` (`suffix` names a
    /// candidate in renders' provenance).
    fn view_of(
        &self,
        pack: &str,
        label: &Label,
        mut entries: Vec<EntryVersion>,
        suffix: String,
    ) -> LabelView {
        // The manifest first, then the tests, then the prompts by id.
        let order = |e: &EntryVersion| (!is_pack_level(&e.prompt), e.prompt != PACK_ENTRY);
        entries.sort_by(|a, b| (order(a), &a.prompt).cmp(&(order(b), &b.prompt)));
        let versions: Vec<PromptVersion> = entries
            .iter()
            .map(|e| PromptVersion::new(pack, e))
            .collect();
        // The label's state digest: its newest revision carries the same.
        let digest = state_digest(
            entries
                .iter()
                .map(|e| (e.prompt.as_str(), e.digest.as_str())),
        );
        let prompts = versions
            .iter()
            .map(|v| (v.id.clone(), Arc::new(Cached::json(v, &v.digest))))
            .collect();
        let bundle = Bundle {
            pack: pack.to_owned(),
            label: label.as_str().to_owned(),
            entries: versions,
        };
        LabelView {
            bundle: Cached::json(&bundle, &digest),
            revision: None,
            signatures: Vec::new(),
            split: None,
            prompts,
            entries,
            renderer: OnceCell::new(),
            origin: format!("{}#{pack}@{label}{suffix}", self.store.location()),
            label: label.as_str().to_owned(),
        }
    }

    pub(crate) async fn listing(&self, pack: &str) -> Result<Arc<Cached>, Problem> {
        let cell = lock(&self.slots).pack(pack).listing.clone();
        let listed = self.filled(&cell, || self.read_listing(pack), |_| {}).await;
        if listed.is_err() {
            drop(cell);
            lock(&self.slots).forget_pack_if_unused(pack);
        }
        listed
    }

    async fn read_listing(&self, pack: &str) -> Result<Arc<Cached>, Problem> {
        let labels = self.store.prompts(pack).await?;
        let protected = self.store.protected_labels(pack).await?;
        let latest = self.label(pack, &Label::latest()).await.ok();
        // A pack that cannot be built lists no kinds; a busy server says so
        // rather than keep a listing without them.
        let renderer = match &latest {
            Some(view) => view.built(&self.heavy).await?.as_ref().ok().cloned(),
            None => None,
        };
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
                kind: at_latest.and_then(|_| kind(renderer.as_ref(), &id)),
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
                // The pack's view at the label holds the prompt when the
                // manifest carries the label too; a label on the prompt
                // alone is read by the number it points at. The store
                // names what is missing: the prompt or the label.
                if let Ok(view) = self.label(pack, label).await
                    && let Some(found) = view.prompt(id)
                {
                    return Ok(found);
                }
                self.store.resolve(pack, id, version).await?
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

/// Signatures as OpenSSH writes them, one line each, as the bundle's
/// `Promptreg-Signature` headers carry them. One that does not parse is
/// left out: a follower that needs it then says the release is not signed.
fn header_forms(armored: &[String]) -> Vec<String> {
    armored
        .iter()
        .filter_map(|s| Signature::from_armored(s).ok())
        .map(|s| s.to_header())
        .collect()
}

#[cfg(test)]
mod tests;
