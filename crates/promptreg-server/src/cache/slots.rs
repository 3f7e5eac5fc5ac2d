//! The cache's bookkeeping: a cell per pack listing and label view, when
//! each was last used, and the bound that drops the least recently used.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::OnceCell;

use super::{Cached, LabelView};

pub(super) type Cell<T> = Arc<OnceCell<Arc<T>>>;

/// A pack's cells, and when it was last used.
#[derive(Default)]
pub(super) struct PackSlot {
    pub(super) listing: Cell<Cached>,
    pub(super) labels: HashMap<String, LabelSlot>,
    pub(super) used: u64,
}

impl PackSlot {
    /// Holds something the store confirmed.
    pub(super) fn is_filled(&self) -> bool {
        self.listing.initialized() || self.labels.values().any(|l| l.cell.initialized())
    }

    /// Holds nothing the store confirmed, and no read is filling it.
    pub(super) fn is_unused(&self) -> bool {
        self.labels.is_empty()
            && Arc::strong_count(&self.listing) == 1
            && !self.listing.initialized()
    }
}

pub(super) struct LabelSlot {
    pub(super) cell: Cell<LabelView>,
    pub(super) used: u64,
}

/// The packs held, with a clock for "least recently used".
#[derive(Default)]
pub(super) struct Slots {
    pub(super) packs: HashMap<String, PackSlot>,
    pub(super) clock: u64,
}

impl Slots {
    pub(super) fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// The slot of `pack`, made if needed, marked as used now.
    pub(super) fn pack(&mut self, pack: &str) -> &mut PackSlot {
        let now = self.tick();
        let slot = self.packs.entry(pack.to_owned()).or_default();
        slot.used = now;
        slot
    }

    /// Makes room after the store filled a cell: the least recently used
    /// filled label views and packs go until `max` (packs, labels) hold.
    /// Only filled cells count, so requests for names that do not exist
    /// never push out what does.
    pub(super) fn settle(&mut self, (max_packs, max_labels): (usize, usize)) {
        while self.filled_labels().count() > max_labels {
            let oldest = self
                .filled_labels()
                .min()
                .map(|(_, p, l)| (p.clone(), l.clone()));
            let Some((pack, label)) = oldest else { break };
            if let Some(slot) = self.packs.get_mut(&pack) {
                slot.labels.remove(&label);
            }
            self.forget_pack_if_unused(&pack);
        }
        while self.packs.values().filter(|s| s.is_filled()).count() > max_packs {
            let filled = self.packs.iter().filter(|(_, s)| s.is_filled());
            let oldest = filled
                .min_by_key(|(_, s)| s.used)
                .map(|(name, _)| name.clone());
            let Some(pack) = oldest else { break };
            self.packs.remove(&pack);
        }
    }

    /// Every label view the store filled: when it was used, its pack and
    /// label.
    pub(super) fn filled_labels(&self) -> impl Iterator<Item = (u64, &String, &String)> {
        self.packs.iter().flat_map(|(pack, slot)| {
            slot.labels
                .iter()
                .filter(|(_, l)| l.cell.initialized())
                .map(move |(label, l)| (l.used, pack, label))
        })
    }

    #[cfg(test)]
    pub(super) fn label_count(&self) -> usize {
        self.packs.values().map(|slot| slot.labels.len()).sum()
    }

    /// Takes out `cell` of `pack`'s `label` after a failed read, unless
    /// something replaced it meanwhile; and the pack's slot when it holds
    /// nothing else.
    pub(super) fn forget_label(&mut self, pack: &str, label: &str, cell: &Cell<LabelView>) {
        let Some(slot) = self.packs.get_mut(pack) else {
            return;
        };
        if slot
            .labels
            .get(label)
            .is_some_and(|l| Arc::ptr_eq(&l.cell, cell) && !cell.initialized())
        {
            slot.labels.remove(label);
        }
        self.forget_pack_if_unused(pack);
    }

    pub(super) fn forget_pack_if_unused(&mut self, pack: &str) {
        if self.packs.get(pack).is_some_and(PackSlot::is_unused) {
            self.packs.remove(pack);
        }
    }
}
