//! Gradual releases: a label serves a candidate state to a share of
//! subjects and its own state to the rest, until the candidate is
//! promoted (the label's next revision) or the split aborted.
//!
//! A split's candidate is a revision of a label (another, like `staging`,
//! or the label itself, for an earlier state), every entry's version fixed
//! when the split starts. One split at a time runs per label; each step
//! (start, a new share, promote, abort) is recorded with its actor and
//! reason and announced by an event. Which subjects get the candidate is
//! the clients' to decide, by a stable hash of the subject and the
//! split's id (`promptreg::split`): nothing of it is stored.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, ErrorKind};
use crate::model::{Actor, Label, Permission, RevisionRef, Timestamp};
use crate::store::Store;

/// The share of subjects a candidate serves, in basis points (0 to
/// 10,000: 0 to 100 %, to 0.01 %).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Share(u32);

impl Share {
    /// All subjects.
    pub const ALL: Share = Share(10_000);

    /// `basis_points` of 10,000, if within 0 to 10,000.
    pub fn from_basis_points(basis_points: u32) -> Option<Share> {
        (basis_points <= 10_000).then_some(Share(basis_points))
    }

    /// Its basis points.
    pub fn basis_points(self) -> u32 {
        self.0
    }
}

/// `10`, `2.5`, `10%`: a percentage from 0 to 100, to two decimals.
impl FromStr for Share {
    type Err = Error;

    fn from_str(text: &str) -> Result<Share, Error> {
        let number = text.trim().trim_end_matches('%').trim();
        let invalid = || {
            Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "the share `{text}` is not a percentage from 0 to 100 (to two decimals, like `10` or `2.5`)"
                ),
            )
        };
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty()
            || fraction.len() > 2
            || !(whole.bytes().chain(fraction.bytes())).all(|b| b.is_ascii_digit())
        {
            return Err(invalid());
        }
        let whole: u32 = whole.parse().map_err(|_| invalid())?;
        let fraction: u32 = format!("{fraction:0<2}").parse().map_err(|_| invalid())?;
        whole
            .checked_mul(100)
            .and_then(|w| w.checked_add(fraction))
            .and_then(Share::from_basis_points)
            .ok_or_else(invalid)
    }
}

/// `10%`, `2.5%`.
impl fmt::Display for Share {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, fraction) = (self.0 / 100, self.0 % 100);
        match fraction {
            0 => write!(f, "{whole}%"),
            f10 if f10 % 10 == 0 => write!(f, "{whole}.{}%", f10 / 10),
            _ => write!(f, "{whole}.{fraction:02}%"),
        }
    }
}

/// Where a split stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitState {
    /// The label serves the candidate to its share.
    Running,
    /// The candidate became the label's revision.
    Promoted,
    /// The split was dropped: the label serves its own state to all.
    Aborted,
}

impl SplitState {
    /// Its name: `running`, `promoted`, `aborted`.
    pub fn as_str(self) -> &'static str {
        match self {
            SplitState::Running => "running",
            SplitState::Promoted => "promoted",
            SplitState::Aborted => "aborted",
        }
    }

    pub(crate) fn named(name: &str) -> Option<SplitState> {
        [
            SplitState::Running,
            SplitState::Promoted,
            SplitState::Aborted,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }
}

/// One step of a split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitStep {
    /// It started, with its first share.
    Start,
    /// Its share changed.
    Share,
    /// The candidate became the label's revision.
    Promote,
    /// It was dropped.
    Abort,
}

impl SplitStep {
    /// Its name: `start`, `share`, `promote`, `abort`.
    pub fn as_str(self) -> &'static str {
        match self {
            SplitStep::Start => "start",
            SplitStep::Share => "share",
            SplitStep::Promote => "promote",
            SplitStep::Abort => "abort",
        }
    }

    pub(crate) fn named(name: &str) -> Option<SplitStep> {
        [
            SplitStep::Start,
            SplitStep::Share,
            SplitStep::Promote,
            SplitStep::Abort,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }
}

/// A step as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SplitChange {
    /// What it did.
    pub step: SplitStep,
    /// The share after it.
    pub share: Share,
    /// Who.
    pub actor: String,
    /// When.
    pub at: Timestamp,
    /// Why.
    pub reason: String,
}

/// A split of a label: its candidate, share, state and steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Split {
    /// Its id, unique in the store: with a subject, what decides its arm.
    pub id: u64,
    /// The label split.
    pub label: String,
    /// The label whose revision is the candidate.
    pub source_label: String,
    /// That revision.
    pub source_revision: u64,
    /// The candidate state's digest: its bundle's ETag.
    pub digest: String,
    /// Every entry of the candidate, with its version.
    pub entries: BTreeMap<String, u64>,
    /// The share of subjects it serves now.
    pub share: Share,
    /// Where it stands.
    pub state: SplitState,
    /// For a gated label, the results the candidate was admitted with.
    pub tests: Option<String>,
    /// Whether an admin started it past failing tests.
    pub forced: bool,
    /// For a label that keeps its contracts stable, the breaking contract
    /// changes an admin started it past, one line each.
    pub breaking: Vec<String>,
    /// Its steps, oldest first.
    pub steps: Vec<SplitChange>,
    /// The label's revision a promotion made.
    pub promoted_to: Option<u64>,
}

impl Split {
    /// `production: 10% on staging r13 (split 4)`.
    pub fn summary(&self) -> String {
        format!(
            "{}: {} on {} r{} (split {}, {})",
            self.label,
            self.share,
            self.source_label,
            self.source_revision,
            self.id,
            self.state.as_str()
        )
    }
}

impl Store {
    /// Starts a split of `label` in `pack`: the `candidate` serves
    /// `share` of subjects. For a
    /// gated label the candidate's tests run first (an admin may force
    /// past failures, giving a reason). One split at a time runs per
    /// label.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownVersion`] naming the revisions there are;
    /// [`ErrorKind::Conflict`] naming the split running;
    /// [`ErrorKind::TestsFailed`]; [`ErrorKind::Forbidden`] for a protected
    /// label without admin; [`ErrorKind::InvalidLabel`] for `latest`.
    pub async fn start_split(
        &self,
        pack: &str,
        label: &Label,
        candidate: &Candidate,
        share: Share,
        actor: &Actor,
        reason: &str,
    ) -> Result<Split, Error> {
        let (source, revision) = (&candidate.label, &candidate.revision);
        refuse_latest(label)?;
        crate::text::check_message("the reason", reason)?;
        actor.require_forcing_allowed(reason)?;
        let pack_id = self.pack_id(pack).await?;
        let wanted = revision.as_ref();
        actor.require(Permission::Write, &format!("split label `{label}`"))?;
        let step = Step {
            step: SplitStep::Start,
            share,
            actor,
            reason,
        };
        let done = self
            .through_gates(pack, |tested| async move {
                raw!(
                    self,
                    start_split(pack_id, label, source, wanted, step, &tested)
                )
            })
            .await
            .map_err(|e| self.error(e))?;
        let id = self.published(done);
        self.split_by_id(pack_id, id).await
    }

    /// Sets the share of the split running on `label` (with `expect`,
    /// only if it is that split).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownVersion`] when no split runs;
    /// [`ErrorKind::Conflict`] when another runs than `expect`.
    pub async fn set_split_share(
        &self,
        pack: &str,
        label: &Label,
        share: Share,
        expect: Option<u64>,
        actor: &Actor,
        reason: &str,
    ) -> Result<Split, Error> {
        self.step_split(pack, label, SplitStep::Share, share, expect, actor, reason)
            .await
            .map(|(split, _)| split)
    }

    /// Makes the candidate of the split running on `label` the label's
    /// next revision, in one transaction, and ends the split; the
    /// revision's number (none when the label held that state already).
    ///
    /// # Errors
    ///
    /// As [`set_split_share`](Self::set_split_share); a split another
    /// change ended first is a [`ErrorKind::Conflict`] naming who ended it.
    pub async fn promote_split(
        &self,
        pack: &str,
        label: &Label,
        expect: Option<u64>,
        actor: &Actor,
        reason: &str,
    ) -> Result<(Split, Option<u64>), Error> {
        self.step_split(
            pack,
            label,
            SplitStep::Promote,
            Share::ALL,
            expect,
            actor,
            reason,
        )
        .await
    }

    /// Drops the split running on `label`: the label serves its own state
    /// to every subject.
    ///
    /// # Errors
    ///
    /// As [`promote_split`](Self::promote_split).
    pub async fn abort_split(
        &self,
        pack: &str,
        label: &Label,
        expect: Option<u64>,
        actor: &Actor,
        reason: &str,
    ) -> Result<Split, Error> {
        let none = Share::from_basis_points(0).unwrap_or(Share::ALL);
        self.step_split(pack, label, SplitStep::Abort, none, expect, actor, reason)
            .await
            .map(|(split, _)| split)
    }

    /// The split running on `label` of `pack`, if one is.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownPack`].
    pub async fn running_split(&self, pack: &str, label: &Label) -> Result<Option<Split>, Error> {
        let pack_id = self.pack_id(pack).await?;
        match on_backend!(self, running_split_id(pack_id, label.as_str()))? {
            Some(id) => self.split_by_id(pack_id, id).await.map(Some),
            None => Ok(None),
        }
    }

    /// The splits of `label` of `pack`, newest first.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownPack`].
    pub async fn splits(&self, pack: &str, label: &Label) -> Result<Vec<Split>, Error> {
        let pack_id = self.pack_id(pack).await?;
        let ids = on_backend!(self, split_ids(pack_id, label.as_str()))?;
        let mut splits = Vec::with_capacity(ids.len());
        for id in ids {
            splits.push(self.split_by_id(pack_id, id).await?);
        }
        Ok(splits)
    }

    /// Every entry of split `id`'s candidate in `pack`, with its files:
    /// what a follower of the split's label renders for the subjects the
    /// candidate serves.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownPack`].
    pub async fn split_entries(
        &self,
        pack: &str,
        id: u64,
    ) -> Result<Vec<crate::model::EntryVersion>, Error> {
        let pack_id = self.pack_id(pack).await?;
        on_backend!(self, split_entry_versions(pack_id, id))
    }

    #[allow(clippy::too_many_arguments)]
    async fn step_split(
        &self,
        pack: &str,
        label: &Label,
        step: SplitStep,
        share: Share,
        expect: Option<u64>,
        actor: &Actor,
        reason: &str,
    ) -> Result<(Split, Option<u64>), Error> {
        crate::text::check_message("the reason", reason)?;
        actor.require(
            Permission::Write,
            &format!("change the split of label `{label}`"),
        )?;
        let pack_id = self.pack_id(pack).await?;
        let step = Step {
            step,
            share,
            actor,
            reason,
        };
        let done = self
            .through_gates(pack, |tested| async move {
                raw!(self, step_split(pack_id, label, step, expect, &tested))
            })
            .await
            .map_err(|e| self.error(e))?;
        let (id, revision) = self.published(done);
        Ok((self.split_by_id(pack_id, id).await?, revision))
    }

    async fn split_by_id(&self, pack_id: i64, id: u64) -> Result<Split, Error> {
        on_backend!(self, split_by_id(pack_id, id))
    }
}

/// Which state a split's candidate is: a revision of a label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The label, like `staging`, or the split label itself for one of
    /// its earlier revisions.
    pub label: Label,
    /// Its revision; `None`: its newest.
    pub revision: Option<RevisionRef>,
}

impl Candidate {
    /// The newest revision of `label`.
    pub fn newest_of(label: Label) -> Candidate {
        Candidate {
            label,
            revision: None,
        }
    }
}

/// One step asked of a split: what, to which share, by whom, why.
#[derive(Clone, Copy)]
pub(crate) struct Step<'a> {
    pub(crate) step: SplitStep,
    pub(crate) share: Share,
    pub(crate) actor: &'a Actor,
    pub(crate) reason: &'a str,
}

fn refuse_latest(label: &Label) -> Result<(), Error> {
    if label.is_latest() {
        return Err(Error::new(
            ErrorKind::InvalidLabel,
            "label `latest` follows pushes and cannot be split: split another label, like `production`",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_is_a_percentage_from_0_to_100_to_two_decimals() {
        for (text, bp, shown) in [
            ("10", 1000, "10%"),
            ("2.5", 250, "2.5%"),
            ("0.05%", 5, "0.05%"),
            ("100", 10_000, "100%"),
            ("0", 0, "0%"),
        ] {
            let share: Share = text.parse().unwrap();
            assert_eq!(
                (share.basis_points(), share.to_string().as_str()),
                (bp, shown),
                "{text}"
            );
        }
        for bad in ["101", "-1", "1.234", "ten", "", ".5", "1e2", "4294967296"] {
            let error = bad.parse::<Share>().unwrap_err();
            assert_eq!(error.kind(), ErrorKind::InvalidInput, "{bad}");
            assert!(error.to_string().contains("from 0 to 100"), "{error}");
        }
    }
}
