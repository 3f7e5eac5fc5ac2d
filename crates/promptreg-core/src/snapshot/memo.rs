//! What a published snapshot decides once for each locale and id it
//! renders, and keeps for every later render of them: the parts of the
//! composition in order and the output's size
//! ([`Prepared`](crate::compose::Prepared)). A render then runs the
//! computed parts and copies the others, with no locale matching and no
//! lookup in the user's configuration.
//!
//! Decisions are made as renders ask, not when the snapshot is published:
//! a change to one prompt of thousands costs no work for the others, and a
//! locale nobody renders costs nothing. A published snapshot never
//! changes, so what was decided for it stays true; the copy a change
//! starts from begins with no decisions.

use std::sync::{Arc, OnceLock};

use crate::chat::Chat;
use crate::compose::{JoinBudget, Prepared};
use crate::locale::Locale;

/// How many locales a snapshot keeps decisions for; a render in a locale
/// beyond these takes the full path.
const LOCALES: usize = 16;

/// The decisions of one snapshot, by locale and entry slot.
#[derive(Default)]
pub(super) struct Memo {
    /// Set when the snapshot is published; a snapshot being changed
    /// decides nothing.
    sealed: bool,
    /// Filled in order, each by the first render in its locale.
    locales: [OnceLock<LocaleTable>; LOCALES],
    /// What the decisions may still hold of joined static text.
    joined: JoinBudget,
}

/// The decisions for one locale, by entry slot.
struct LocaleTable {
    locale: Locale,
    decisions: Box<[OnceLock<Decision>]>,
}

/// What renders of one id in one locale do.
pub(super) enum Decision {
    /// A text prompt: its parts, prepared.
    Text(Prepared),
    /// A chat prompt: its messages, and the parts of each, prepared, by
    /// position in the list (`None` for a history placeholder).
    Chat(Arc<Chat>, Box<[Option<Prepared>]>),
    /// The full path, which says why there is no body for this locale.
    Full,
}

/// A copy is a snapshot about to change: it starts with no decisions.
impl Clone for Memo {
    fn clone(&self) -> Self {
        Memo::default()
    }
}

impl Memo {
    /// A memo for a snapshot that is published and will not change.
    pub(super) fn sealed() -> Self {
        Memo {
            sealed: true,
            ..Memo::default()
        }
    }

    /// The decision for the entry in `slot` (of `slots`) in `locale`,
    /// made by `decide` the first time it is asked for, with what joined
    /// text the snapshot may still hold; `None` when the snapshot is not
    /// sealed or holds decisions for as many locales as it can.
    #[inline]
    pub(super) fn decision(
        &self,
        locale: &Locale,
        slot: u32,
        slots: u32,
        decide: impl FnOnce(&JoinBudget) -> Decision,
    ) -> Option<&Decision> {
        if !self.sealed {
            return None;
        }
        let table = self.locales.iter().find_map(|cell| {
            let table = cell.get_or_init(|| LocaleTable {
                locale: locale.clone(),
                decisions: (0..slots).map(|_| OnceLock::new()).collect(),
            });
            (table.locale == *locale).then_some(table)
        })?;
        let decision = table.decisions.get(slot as usize)?;
        Some(decision.get_or_init(|| decide(&self.joined)))
    }
}

/// The places of entries in a snapshot's memo: each entry gets one when it
/// is created, and a removed entry's place goes to the next one created, so
/// the places stay as few as the entries.
#[derive(Clone, Default)]
pub(super) struct Slots {
    next: u32,
    free: Vec<u32>,
}

impl Slots {
    /// A place for a new entry. Past `u32::MAX` entries, every new one
    /// gets `u32::MAX`, a place no table has: those render by the full
    /// path.
    pub(super) fn take(&mut self) -> u32 {
        self.free.pop().unwrap_or_else(|| {
            let slot = self.next;
            self.next = self.next.saturating_add(1);
            slot
        })
    }

    /// Gives back the place of a removed entry.
    pub(super) fn give_back(&mut self, slot: u32) {
        if slot < self.next {
            self.free.push(slot);
        }
    }

    /// How many places there are, taken or free.
    pub(super) fn len(&self) -> u32 {
        self.next
    }
}
