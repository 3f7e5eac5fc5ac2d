//! What instances report they serve, and the fleet view of a label.

use std::time::Duration;

use promptreg_store::{Fleet, Instance, InstanceReport, RevisionServed, Served};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// What an instance following a label reports it serves. Fields a server
/// does not know are ignored, so newer followers can report more.
#[derive(Debug, Deserialize, ToSchema)]
pub struct FleetReport {
    /// The instance's id: random per process unless its host sets one
    /// (1 to 64 of `A-Z a-z 0-9 . _ : -`).
    pub instance: String,
    /// A name its host gave it (at most 128 bytes).
    #[serde(default)]
    pub name: Option<String>,
    /// The library and its version, `promptreg-rust/0.1.0` (at most 64
    /// bytes).
    pub library: String,
    /// Where what it serves comes from.
    #[schema(inline)]
    pub source: Source,
    /// The label's revision it serves, when it knows it.
    #[serde(default)]
    pub revision: Option<u64>,
    /// The digest of the state it serves: its bundle's ETag, unquoted.
    #[serde(default)]
    pub digest: Option<String>,
    /// Its last failure, until a sync succeeds (at most 1,024 bytes).
    #[serde(default)]
    pub last_error: Option<String>,
    /// How often it reports, in milliseconds (100 to 3,600,000).
    pub interval_ms: u64,
    /// The split whose candidate it holds and serves to its share of
    /// subjects, if any.
    #[serde(default)]
    pub split: Option<u64>,
}

impl FleetReport {
    pub(crate) fn to_report(&self) -> InstanceReport {
        InstanceReport {
            instance: self.instance.clone(),
            name: self.name.clone(),
            library: self.library.clone(),
            source: self.source.into(),
            revision: self.revision,
            digest: self.digest.clone(),
            last_error: self.last_error.clone(),
            interval: Duration::from_millis(self.interval_ms),
            split: self.split,
        }
    }
}

/// Where what an instance serves comes from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Nothing was received: its host's own prompts.
    Local,
    /// Its disk cache, from an earlier run.
    Cache,
    /// The server, in this run.
    Server,
    /// A baked bundle file it started from.
    Bundle,
}

impl From<Source> for Served {
    fn from(source: Source) -> Served {
        match source {
            Source::Local => Served::Local,
            Source::Cache => Served::Cache,
            Source::Server => Served::Server,
            Source::Bundle => Served::Bundle,
        }
    }
}

impl From<Served> for Source {
    fn from(served: Served) -> Source {
        match served {
            Served::Local => Source::Local,
            Served::Cache => Source::Cache,
            Served::Server => Source::Server,
            Served::Bundle => Source::Bundle,
        }
    }
}

/// The fleet view of a label: what it points at, and what every instance
/// following it serves.
#[derive(Debug, Serialize, ToSchema)]
pub struct FleetBody {
    /// The pack.
    pub pack: String,
    /// The label.
    pub label: String,
    /// The label's newest revision.
    pub revision: Option<u64>,
    /// Its digest.
    pub digest: Option<String>,
    /// When the view was read, RFC 3339.
    pub at: String,
    /// The view in one line: `production: revision 12 live on 237 of 240
    /// instances; 2 on revision 11; 1 offline`.
    pub summary: String,
    /// Every instance kept: online, and offline for a day.
    pub instances_total: u64,
    /// Instances that reported within three of their intervals.
    pub online: u64,
    /// Instances that reported within one and a half intervals: what a
    /// wait counts.
    pub reporting: u64,
    /// Instances unseen for three intervals.
    pub offline: u64,
    /// Online instances per revision served, newest first.
    pub served: Vec<ServedBody>,
    /// With a split running: how many instances online hold its
    /// candidate (both bundles).
    pub holding_candidate: Option<u64>,
    /// With `until-revision`: whether the share asked of the instances
    /// reporting serve that revision or a later one.
    pub converged: Option<bool>,
    /// One page of the instances, by id; with `until-revision`, only those
    /// reporting that do not serve it yet.
    pub instances: Vec<InstanceBody>,
    /// The `after` of the next page.
    pub next: Option<String>,
    /// The split running on the label, if one is: its candidate serves
    /// its share of subjects.
    pub split: Option<super::SplitBody>,
}

impl FleetBody {
    /// The view as the API answers it; `converged` for a wait; the split
    /// running.
    pub fn of(
        fleet: &Fleet,
        converged: Option<bool>,
        split: Option<&promptreg_store::Split>,
    ) -> FleetBody {
        FleetBody {
            pack: fleet.pack.clone(),
            label: fleet.label.clone(),
            revision: fleet.revision,
            digest: fleet.digest.clone(),
            at: fleet.at.to_string(),
            summary: fleet.summary(),
            instances_total: fleet.instances_total,
            online: fleet.online,
            reporting: fleet.reporting,
            offline: fleet.offline,
            served: fleet.served.iter().map(ServedBody::from).collect(),
            holding_candidate: fleet.split.map(|(_, holding)| holding),
            converged,
            instances: fleet.instances.iter().map(InstanceBody::from).collect(),
            next: fleet.next.clone(),
            split: split.map(super::SplitBody::from),
        }
    }
}

/// How many instances serve one revision.
#[derive(Debug, Serialize, ToSchema)]
pub struct ServedBody {
    /// The revision; null for instances that do not know theirs.
    pub revision: Option<u64>,
    /// Instances online on it.
    pub online: u64,
    /// Of those, instances reporting.
    pub reporting: u64,
}

impl From<&RevisionServed> for ServedBody {
    fn from(served: &RevisionServed) -> ServedBody {
        ServedBody {
            revision: served.revision,
            online: served.online,
            reporting: served.reporting,
        }
    }
}

/// One instance in the fleet view.
#[derive(Debug, Serialize, ToSchema)]
pub struct InstanceBody {
    /// Its id.
    pub instance: String,
    /// The name its host gave it.
    pub name: Option<String>,
    /// The library and its version.
    pub library: String,
    /// Where what it serves comes from.
    #[schema(inline)]
    pub source: Source,
    /// The revision it serves.
    pub revision: Option<u64>,
    /// The digest of the state it serves.
    pub digest: Option<String>,
    /// Its last failure.
    pub last_error: Option<String>,
    /// How often it reports, in milliseconds.
    pub interval_ms: u64,
    /// The split whose candidate it holds.
    pub split: Option<u64>,
    /// Who reported it: an API key's name, or `local`.
    pub reporter: String,
    /// Its first report, RFC 3339.
    pub first_seen: String,
    /// Its last report, RFC 3339.
    pub last_seen: String,
    /// `online`, or `offline` once unseen for three intervals.
    #[schema(inline)]
    pub state: InstanceState,
}

/// Whether an instance is heard from.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum InstanceState {
    /// It reported within three of its intervals.
    Online,
    /// It did not: kept for a day, then dropped.
    Offline,
}

impl From<&Instance> for InstanceBody {
    fn from(instance: &Instance) -> InstanceBody {
        InstanceBody {
            instance: instance.instance.clone(),
            name: instance.name.clone(),
            library: instance.library.clone(),
            source: instance.source.into(),
            revision: instance.revision,
            digest: instance.digest.clone(),
            last_error: instance.last_error.clone(),
            interval_ms: instance.interval_ms,
            split: instance.split,
            reporter: instance.reporter.clone(),
            first_seen: instance.first_seen.to_string(),
            last_seen: instance.last_seen.to_string(),
            state: match instance.online {
                true => InstanceState::Online,
                false => InstanceState::Offline,
            },
        }
    }
}
