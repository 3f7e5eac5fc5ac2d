//! Gradual releases: a label's split, and the requests that change it.

use std::collections::BTreeMap;

use promptreg_store::{Share, Split};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::revisions::RevisionName;
use crate::problem::{Problem, ProblemCode};

/// Starts a split: `from`'s revision serves `percent` of subjects.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartSplit {
    /// The label whose revision is the candidate (`staging`, or the split
    /// label itself for one of its earlier revisions).
    pub from: String,
    /// That revision, by number or digest; its newest when absent.
    #[serde(default)]
    pub revision: Option<RevisionName>,
    /// The share of subjects the candidate serves, 0 to 100, to two
    /// decimals.
    pub percent: f64,
    /// Why, recorded with the step.
    #[serde(default)]
    pub reason: String,
    /// Start although the candidate fails the tests of a gated label:
    /// needs an admin key and a reason.
    #[serde(default)]
    pub force: bool,
}

/// A new share for the split running.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SplitShare {
    /// The share of subjects the candidate serves, 0 to 100, to two
    /// decimals.
    pub percent: f64,
    /// Change it only if the split running is this one (412 otherwise).
    #[serde(default)]
    pub expect: Option<u64>,
    /// Why, recorded with the step.
    #[serde(default)]
    pub reason: String,
}

/// Promotes or aborts the split running; the body is optional.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EndSplit {
    /// End it only if the split running is this one (412 otherwise).
    #[serde(default)]
    pub expect: Option<u64>,
    /// Why, recorded with the step (and, for a promotion, in the history).
    #[serde(default)]
    pub reason: String,
    /// Promote although the candidate fails the tests of a gated label:
    /// needs an admin key and a reason.
    #[serde(default)]
    pub force: bool,
}

/// `percent` as a share, or 400 naming the valid range.
pub(crate) fn share_of(percent: f64) -> Result<Share, Problem> {
    let points = (percent * 100.0).round();
    let whole = (percent * 100.0 - points).abs() < 1e-6;
    match (percent.is_finite() && whole, points) {
        (true, p) if (0.0..=10_000.0).contains(&p) => {
            Share::from_basis_points(p as u32).ok_or_else(|| out_of_range(percent))
        }
        _ => Err(out_of_range(percent)),
    }
}

fn out_of_range(percent: f64) -> Problem {
    Problem::bad_request(
        ProblemCode::InvalidInput,
        format!(
            "`percent` is {percent}: give a share from 0 to 100, to two decimals (like 10 or 2.5)"
        ),
    )
}

/// A split of a label.
#[derive(Debug, Serialize, ToSchema)]
pub struct SplitBody {
    /// Its id: with a subject's key, what decides the subject's arm.
    pub split: u64,
    /// The label split.
    pub label: String,
    /// The label whose revision is the candidate.
    pub from: String,
    /// That revision.
    pub revision: u64,
    /// The candidate state's digest: its bundle's ETag.
    pub digest: String,
    /// The share of subjects it serves, 0 to 100.
    pub percent: f64,
    /// `running`, `promoted` or `aborted`.
    pub state: String,
    /// For a gated label, the results the candidate was admitted with.
    pub tests: Option<String>,
    /// Whether an admin started it past failing tests.
    pub forced: bool,
    /// The breaking contract changes an admin started it past, one line
    /// each.
    pub breaking: Vec<String>,
    /// The label's revision its promotion made.
    pub promoted_to: Option<u64>,
    /// Every entry of the candidate, with its version.
    pub entries: BTreeMap<String, u64>,
    /// Its steps, oldest first.
    pub steps: Vec<SplitStepBody>,
}

/// One step of a split.
#[derive(Debug, Serialize, ToSchema)]
pub struct SplitStepBody {
    /// `start`, `share`, `promote` or `abort`.
    pub step: String,
    /// The share after it, 0 to 100.
    pub percent: f64,
    /// Who.
    pub actor: String,
    /// When, RFC 3339.
    pub at: String,
    /// Why.
    pub reason: String,
}

fn percent(share: Share) -> f64 {
    f64::from(share.basis_points()) / 100.0
}

impl From<&Split> for SplitBody {
    fn from(split: &Split) -> Self {
        SplitBody {
            split: split.id,
            label: split.label.clone(),
            from: split.source_label.clone(),
            revision: split.source_revision,
            digest: split.digest.clone(),
            percent: percent(split.share),
            state: split.state.as_str().to_owned(),
            tests: split.tests.clone(),
            forced: split.forced,
            breaking: split.breaking.clone(),
            promoted_to: split.promoted_to,
            entries: split.entries.clone(),
            steps: split
                .steps
                .iter()
                .map(|s| SplitStepBody {
                    step: s.step.as_str().to_owned(),
                    percent: percent(s.share),
                    actor: s.actor.clone(),
                    at: s.at.to_string(),
                    reason: s.reason.clone(),
                })
                .collect(),
        }
    }
}
