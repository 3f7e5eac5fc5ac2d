//! What a loaded pack does to a registry: its prompts installed into a
//! snapshot, retracted from it, and which prompts a reload changed.

use std::sync::Arc;

use crate::contract::Contract;
use crate::id::PromptId;
use crate::prompt::Pin;
use crate::provenance::Provenance;
use crate::snapshot::Snapshot;

use super::Pack;

/// What [`Pack::stamp_origin`] stamps: where a pack followed from a store
/// stands in it.
pub struct StoreStamp<'a> {
    /// Prompt id -> its version and digest.
    pub versions: &'a std::collections::BTreeMap<String, (u64, String)>,
    /// The label followed.
    pub label: &'a str,
    /// The label's revision, when the server said.
    pub revision: Option<u64>,
}

impl Pack {
    /// Stamps the provenance of each prompt's files (default and
    /// variants) with where they stand in the store they were followed
    /// from: the prompt's version and digest, the label and its revision.
    pub fn stamp_origin(&mut self, stamp: &StoreStamp<'_>) {
        self.stamp(|id, provenance| {
            let (version, digest) = stamp.versions.get(id.as_str())?;
            let mut provenance = Provenance::clone(provenance);
            provenance.version = Some(*version);
            provenance.digest = Some(digest.clone()).filter(|d| !d.is_empty());
            provenance.label = Some(stamp.label.to_owned());
            provenance.revision = stamp.revision;
            Some(Arc::new(provenance))
        });
    }

    /// Stamps the provenance of each prompt's files as the candidate of
    /// split `split`.
    pub fn stamp_split(&mut self, split: u64) {
        self.stamp(|_, provenance| {
            let mut provenance = Provenance::clone(provenance);
            provenance.split = Some(split);
            Some(Arc::new(provenance))
        });
    }

    /// Replaces the provenance of every file's parts and contract by what
    /// `stamp` makes of it (`None`: left as it is).
    fn stamp(&mut self, stamp: impl Fn(&PromptId, &Arc<Provenance>) -> Option<Arc<Provenance>>) {
        let stamp_contract = |id: &PromptId, contract: &Contract| -> Option<Contract> {
            let stamped = stamp(id, contract.provenance()?)?;
            Some(contract.clone().with_provenance(stamped))
        };
        for prompt in self.prompts.values_mut() {
            let id = prompt.id.clone();
            if let Some((_, default, _)) = &mut prompt.default {
                if let Some(stamped) = default.provenance().and_then(|p| stamp(&id, p)) {
                    *default = default.clone().with_provenance(stamped);
                }
                if let Some(contract) = default.contract().and_then(|c| stamp_contract(&id, c)) {
                    *default = default.clone().with_contract(contract);
                }
            }
            for variant in prompt.variants.values_mut() {
                if let Some(stamped) = stamp(&id, &variant.provenance) {
                    variant.provenance = stamped;
                }
                if let Some(contract) = variant
                    .contract
                    .as_deref()
                    .and_then(|c| stamp_contract(&id, c))
                {
                    variant.contract = Some(Arc::new(contract));
                }
            }
        }
    }

    /// Adds the pack's prompts and locales to `snapshot`.
    pub(crate) fn apply(&self, snapshot: &mut Snapshot) {
        for prompt in self.prompts.values() {
            if let Some((_, default, _)) = &prompt.default {
                snapshot.register(prompt.id.clone(), default.clone());
            }
            for variant in prompt.variants.values() {
                let (id, locale) = (prompt.id.clone(), variant.locale.clone());
                let provenance = Some(Arc::clone(&variant.provenance));
                match &variant.chat {
                    Some(chat) => {
                        snapshot.set_chat_override(id, locale, Arc::clone(chat), provenance)
                    }
                    None => snapshot.set_override(id, locale, variant.renderer.clone(), provenance),
                }
                if let Some(contract) = &variant.contract {
                    snapshot.set_contract(
                        prompt.id.clone(),
                        variant.locale.clone(),
                        Arc::clone(contract),
                    );
                }
                if let Some(settings) = prompt.model_settings(variant) {
                    snapshot.set_model_settings(
                        prompt.id.clone(),
                        variant.locale.clone(),
                        settings,
                    );
                }
                let head = variant.head.iter().enumerate();
                let tail = variant.tail.iter().enumerate();
                let pins = head
                    .map(|(i, r)| (Pin::Head(i), r))
                    .chain(tail.map(|(i, r)| (Pin::Tail(i), r)));
                // Counts were checked against the default at load.
                for (pin, text) in pins {
                    snapshot.set_pin_translation(
                        prompt.id.clone(),
                        variant.locale.clone(),
                        pin,
                        text.clone(),
                        Some(Arc::clone(&variant.provenance)),
                    );
                }
            }
        }
    }

    /// Takes out of `snapshot` what [`apply`](Self::apply) added: the
    /// defaults, locale overrides and pin translations of the pack's
    /// prompts.
    pub(crate) fn retract(&self, snapshot: &mut Snapshot) {
        for prompt in self.prompts.values() {
            if prompt.default.is_some() {
                snapshot.unregister(&prompt.id);
            }
            for variant in prompt.variants.values() {
                snapshot.remove_override(&prompt.id, &variant.locale);
                snapshot.remove_pin_translations(&prompt.id, &variant.locale);
                snapshot.remove_model_settings(&prompt.id, &variant.locale);
            }
        }
    }

    /// Whether the pack was read from a folder, and so can be read again.
    pub(crate) fn is_on_disk(&self) -> bool {
        self.on_disk
    }

    /// The pack's manifest and its folders of files prompts are made of:
    /// what to follow.
    #[cfg(feature = "watch")]
    pub(crate) fn paths(&self) -> crate::config::ConfigPaths {
        use super::{DEFAULTS_DIR, MANIFEST, SCHEMAS_DIR, SNIPPETS_DIR, TOOLS_DIR};
        crate::config::ConfigPaths {
            files: vec![self.root.join(MANIFEST)],
            dirs: [DEFAULTS_DIR, SNIPPETS_DIR, TOOLS_DIR, SCHEMAS_DIR]
                .map(|dir| self.root.join(dir))
                .into(),
        }
    }

    /// The prompts whose files differ between `before` and `self`; every
    /// prompt of both when the manifest changed.
    pub(crate) fn changed_since(&self, before: &Pack) -> Vec<PromptId> {
        let (new, old) = (&self.digests, &before.digests);
        let ids = new.prompts.keys().chain(old.prompts.keys());
        let mut changed: Vec<PromptId> = ids
            .filter(|id| {
                new.manifest != old.manifest || new.prompts.get(*id) != old.prompts.get(*id)
            })
            .cloned()
            .collect();
        changed.sort_unstable();
        changed.dedup();
        changed
    }
}
