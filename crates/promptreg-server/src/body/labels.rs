//! Label moves: a move, a release, a rollback, and the history of moves.

use promptreg_store::LabelMove;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A label move.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveLabel {
    /// The version to point the label at.
    pub version: u64,
    /// Why, recorded in the history.
    #[serde(default)]
    pub reason: String,
    /// Move a gated label even though the tests of the state it would
    /// serve fail, or a label that keeps its contracts stable past a
    /// breaking change: needs an admin key and a reason; the revision is
    /// marked as forced.
    #[serde(default)]
    pub force: bool,
}

/// A release: point label `to` where `from` points, on every prompt.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Release {
    /// The label to copy (`staging`).
    pub from: String,
    /// The label to move (`production`).
    pub to: String,
    /// Why, recorded in the history after `release FROM`.
    #[serde(default)]
    pub reason: String,
    /// Release only if `to`'s newest revision is this one (0: it has none
    /// yet); otherwise 412 with `current`, the revision that won.
    #[serde(default)]
    pub expect_revision: Option<u64>,
    /// Move a gated label even though the tests of the state it would
    /// serve fail, or a label that keeps its contracts stable past a
    /// breaking change: needs an admin key and a reason; the revision is
    /// marked as forced.
    #[serde(default)]
    pub force: bool,
}

/// A rollback; the body is optional.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Rollback {
    /// Why, recorded in the history after `rollback from N`.
    #[serde(default)]
    pub reason: String,
    /// Move a gated label even though the tests of the state it would
    /// serve fail, or a label that keeps its contracts stable past a
    /// breaking change: needs an admin key and a reason; the revision is
    /// marked as forced.
    #[serde(default)]
    pub force: bool,
}

impl Rollback {
    /// The reason and `force` of an optional body (none: no reason, not
    /// forced).
    pub(crate) fn parts(body: Option<Rollback>) -> (String, bool) {
        body.map_or_else(Default::default, |r| (r.reason, r.force))
    }
}

/// Label moves, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct Moves {
    /// The moves.
    pub moves: Vec<Move>,
}

/// One label move of the history.
#[derive(Debug, Serialize, ToSchema)]
pub struct Move {
    /// The prompt id, or `@pack`.
    pub id: String,
    /// The label.
    pub label: String,
    /// Where it pointed before (null: nowhere).
    pub from: Option<u64>,
    /// Where it points after (null: removed).
    pub to: Option<u64>,
    /// Who moved it: a user or an API key's name.
    pub actor: String,
    /// When, RFC 3339.
    pub at: String,
    /// Why.
    pub reason: String,
}

impl From<&LabelMove> for Move {
    fn from(m: &LabelMove) -> Self {
        Move {
            id: m.prompt.clone(),
            label: m.label.clone(),
            from: m.from,
            to: m.to,
            actor: m.actor.clone(),
            at: m.at.to_string(),
            reason: m.reason.clone(),
        }
    }
}

impl Moves {
    pub(crate) fn of(moves: &[LabelMove]) -> Moves {
        Moves {
            moves: moves.iter().map(Move::from).collect(),
        }
    }
}
