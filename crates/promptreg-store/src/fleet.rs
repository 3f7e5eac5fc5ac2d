//! What running instances serve: each follower of a label reports which
//! revision it serves, the store keeps one row per instance and label,
//! and [`Store::fleet`] reads the view back: the label's revision, how
//! many instances serve each revision, and the instances, paged.
//!
//! The view lives in the database, so every server on one PostgreSQL
//! shares it and a restart loses nothing. Nothing of it is held in a
//! server's memory. It stays bounded: an instance unseen for a day is
//! dropped ([`KEPT_FOR`]), and a label, a pack and a reporter each hold at
//! most so many instances ([`FleetLimits`]).
//!
//! A report is believed only as far as the store can check it: its label
//! must have a revision, the revision it names must be one of them, and
//! an instance id is the reporter's that first reported it, until it has
//! been unseen for a day.
//!
//! An instance is `online` while it reported within three of its
//! intervals; it is *reporting* while it reported within one and a half
//! (one interval, and half of one for a report on its way): a wait for a
//! release ([`Fleet::converged`]) counts the instances reporting.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, ErrorKind};
use crate::model::{Label, Timestamp};
use crate::store::Store;

/// How long an instance unseen is kept in the view (shown `offline`).
pub const KEPT_FOR: Duration = Duration::from_secs(24 * 60 * 60);

/// The most instances a label takes by default
/// ([`FleetLimits::per_label`]).
pub const DEFAULT_FLEET_CAPACITY: usize = 100_000;

/// The most instances a fleet view keeps: per label, per pack (all its
/// labels) and per key (every instance it reported, in every pack). A
/// report of a new instance past any of them is refused and records
/// nothing; instances already known go on reporting, and a place frees
/// when an instance has been unseen for a day ([`KEPT_FOR`]).
///
/// Each row is a few hundred bytes, and every reader of the view counts
/// the rows of its label: the bounds keep what reports can make the
/// database hold, and one key's share of it, known in advance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FleetLimits {
    /// The most instances of one label (100,000): the largest fleet the
    /// server is sized for (BENCHMARKS.md, section 5.5).
    pub per_label: usize,
    /// The most instances of one pack, all its labels together (200,000):
    /// a full label and as many again on the others (`staging`, a
    /// canary), so that no number of labels multiplies the total.
    pub per_pack: usize,
    /// The most instances one reporter (an API key, or the keyless local
    /// caller) holds, in every pack together (100,000): one key may fill a
    /// label, so a fleet sharing one key works, but only half a pack, so
    /// a key that leaks or misbehaves leaves room for the others.
    pub per_key: usize,
}

impl Default for FleetLimits {
    fn default() -> Self {
        FleetLimits {
            per_label: DEFAULT_FLEET_CAPACITY,
            per_pack: 200_000,
            per_key: 100_000,
        }
    }
}

/// The shortest and longest report intervals accepted.
pub const REPORT_INTERVALS: std::ops::RangeInclusive<Duration> =
    Duration::from_millis(100)..=Duration::from_secs(3600);

/// The longest instance id, name, library and last error kept.
pub const MAX_INSTANCE_ID: usize = 64;
/// See [`MAX_INSTANCE_ID`].
pub const MAX_INSTANCE_NAME: usize = 128;
/// See [`MAX_INSTANCE_ID`].
pub const MAX_LIBRARY: usize = 64;
/// See [`MAX_INSTANCE_ID`].
pub const MAX_LAST_ERROR: usize = 1024;

/// Where the prompts an instance serves come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Served {
    /// Nothing was received: the host's own prompts.
    Local,
    /// The follower's disk cache, from an earlier run.
    Cache,
    /// The server, in this run.
    Server,
    /// A baked bundle file the follower started from.
    Bundle,
}

impl Served {
    /// Its name in reports and the database: `local`, `cache`, `server`,
    /// `bundle`.
    pub fn as_str(self) -> &'static str {
        match self {
            Served::Local => "local",
            Served::Cache => "cache",
            Served::Server => "server",
            Served::Bundle => "bundle",
        }
    }
}

impl std::str::FromStr for Served {
    type Err = Error;

    fn from_str(s: &str) -> Result<Served, Error> {
        match s {
            "local" => Ok(Served::Local),
            "cache" => Ok(Served::Cache),
            "server" => Ok(Served::Server),
            "bundle" => Ok(Served::Bundle),
            other => Err(Error::new(
                ErrorKind::InvalidInput,
                format!("the source `{other}` is none of `local`, `cache`, `server`, `bundle`"),
            )),
        }
    }
}

/// What one instance says it serves, as it reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceReport {
    /// The instance's id: random per process unless its host sets one
    /// (1 to 64 of `A-Z a-z 0-9 . _ : -`).
    pub instance: String,
    /// A name its host gave it (`web-3`), shown beside the id.
    pub name: Option<String>,
    /// The library and its version (`promptreg-rust/0.9.0`).
    pub library: String,
    /// Where what it serves comes from.
    pub source: Served,
    /// The label's revision it serves, when it knows it.
    pub revision: Option<u64>,
    /// The digest of the state it serves (its bundle's ETag).
    pub digest: Option<String>,
    /// Its last failure, until a sync succeeds.
    pub last_error: Option<String>,
    /// How often it reports.
    pub interval: Duration,
    /// The split whose candidate it holds and serves to its share of
    /// subjects, if any.
    pub split: Option<u64>,
}

impl InstanceReport {
    /// Checks every field against its bound; the error names the field.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for a field out of its bounds.
    pub fn check(&self) -> Result<(), Error> {
        let invalid = |message: String| Err(Error::new(ErrorKind::InvalidInput, message));
        let id = &self.instance;
        if id.is_empty()
            || id.len() > MAX_INSTANCE_ID
            || !id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b".:_-".contains(&b))
        {
            return invalid(format!(
                "the instance id `{}` must be 1 to {MAX_INSTANCE_ID} of `A-Z a-z 0-9 . _ : -`",
                id.escape_debug()
            ));
        }
        bounded("the instance name", self.name.as_deref(), MAX_INSTANCE_NAME)?;
        bounded("the library", Some(&self.library), MAX_LIBRARY)?;
        bounded("the last error", self.last_error.as_deref(), MAX_LAST_ERROR)?;
        if self.library.is_empty() {
            return invalid("the library must be named (`promptreg-rust/0.9.0`)".to_owned());
        }
        if let Some(digest) = &self.digest
            && (digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return invalid(format!(
                "the digest `{}` is not 64 hex digits",
                digest.escape_debug()
            ));
        }
        if self.revision.is_some_and(|r| r == 0 || r > i64::MAX as u64) {
            return invalid("the revision must be a number from 1".to_owned());
        }
        if !REPORT_INTERVALS.contains(&self.interval) {
            return invalid(format!(
                "the interval {:?} is outside {:?} to {:?}",
                self.interval,
                REPORT_INTERVALS.start(),
                REPORT_INTERVALS.end()
            ));
        }
        Ok(())
    }
}

/// A text field is at most `max` bytes with no control character.
fn bounded(field: &str, text: Option<&str>, max: usize) -> Result<(), Error> {
    let Some(text) = text else { return Ok(()) };
    if text.len() > max {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("{field} is {} bytes, more than {max}", text.len()),
        ));
    }
    if text.chars().any(char::is_control) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("{field} holds a control character"),
        ));
    }
    Ok(())
}

/// One instance in the view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Instance {
    /// Its id.
    pub instance: String,
    /// The name its host gave it.
    pub name: Option<String>,
    /// The library and its version.
    pub library: String,
    /// Where what it serves comes from.
    pub source: Served,
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
    /// Who reported it: `key:NAME`, or the user of a local tool.
    pub reporter: String,
    /// Its first report, in this view.
    pub first_seen: Timestamp,
    /// Its last report.
    pub last_seen: Timestamp,
    /// Whether it reported within three of its intervals.
    pub online: bool,
}

/// How many instances serve one revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RevisionServed {
    /// The revision (`None`: instances that do not know it, serving their
    /// host's own prompts or a bundle of a server that predates
    /// revisions).
    pub revision: Option<u64>,
    /// Instances online serving it.
    pub online: u64,
    /// Of those, instances reporting (seen within one and a half
    /// intervals): what a wait counts.
    pub reporting: u64,
}

/// The fleet view of a label: what it points at, and what is served.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Fleet {
    /// The pack.
    pub pack: String,
    /// The label.
    pub label: String,
    /// The label's newest revision, if it has one.
    pub revision: Option<u64>,
    /// Its digest.
    pub digest: Option<String>,
    /// When the view was read.
    pub at: Timestamp,
    /// Every instance kept (online and offline).
    pub instances_total: u64,
    /// Instances online.
    pub online: u64,
    /// Instances reporting: seen within one and a half intervals.
    pub reporting: u64,
    /// Instances offline: unseen for three intervals, kept for a day.
    pub offline: u64,
    /// Online instances per revision served, newest revision first.
    pub served: Vec<RevisionServed>,
    /// The split running on the label, and how many instances online
    /// hold its candidate (both bundles).
    pub split: Option<(u64, u64)>,
    /// One page of the instances, by id (see [`FleetQuery`]).
    pub instances: Vec<Instance>,
    /// The id to pass as [`FleetQuery::after`] for the next page.
    pub next: Option<String>,
}

impl Fleet {
    /// Instances reporting that serve revision `revision` or a later one
    /// the label has: one past its newest, which it never had, counts as
    /// none.
    pub fn reporting_on(&self, revision: u64) -> u64 {
        let newest = self.revision.unwrap_or(0);
        self.served
            .iter()
            .filter(|s| s.revision.is_some_and(|r| r >= revision && r <= newest))
            .map(|s| s.reporting)
            .sum()
    }

    /// Whether at least `ratio` (0 to 1) of the instances reporting serve
    /// revision `revision` or a later one. With no instance reporting, a
    /// fleet has converged: nothing serves anything older.
    pub fn converged(&self, revision: u64, ratio: f64) -> bool {
        if self.reporting == 0 {
            return true;
        }
        let on = self.reporting_on(revision) as f64;
        on >= (ratio.clamp(0.0, 1.0) * self.reporting as f64) - f64::EPSILON
    }

    /// The view in one line: `production: revision 12 live on 237 of 240
    /// instances; 2 on revision 11; 1 offline`.
    pub fn summary(&self) -> String {
        let label = &self.label;
        let mut line = match self.revision {
            Some(current) => {
                let on = self
                    .served
                    .iter()
                    .find(|s| s.revision == Some(current))
                    .map_or(0, |s| s.online);
                format!(
                    "{label}: revision {current} live on {on} of {} instance{}",
                    self.instances_total,
                    plural(self.instances_total)
                )
            }
            None => format!(
                "{label}: no revision yet; {} of {} instance{} online",
                self.online,
                self.instances_total,
                plural(self.instances_total)
            ),
        };
        for other in self.served.iter().filter(|s| s.revision != self.revision) {
            match other.revision {
                Some(r) => line.push_str(&format!("; {} on revision {r}", other.online)),
                None => line.push_str(&format!("; {} on no known revision", other.online)),
            }
        }
        if self.offline > 0 {
            line.push_str(&format!("; {} offline", self.offline));
        }
        if let Some((split, holding)) = self.split {
            line.push_str(&format!("; split {split}'s candidate held by {holding}"));
        }
        line
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Which instances [`Store::fleet`] lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetQuery {
    /// The time to judge online and offline by (now, for a live view).
    pub at: Timestamp,
    /// Instances after this id (the previous page's [`Fleet::next`]).
    pub after: Option<String>,
    /// At most this many instances (capped at [`MAX_PAGE`]).
    pub limit: usize,
    /// Only the instances reporting that serve an older revision than
    /// this (or none known): those a wait for it is waiting for.
    pub behind: Option<u64>,
}

/// The largest page of instances.
pub const MAX_PAGE: usize = 1000;

impl FleetQuery {
    /// The first 100 instances, judged now.
    pub fn now() -> FleetQuery {
        FleetQuery {
            at: Timestamp::now(),
            after: None,
            limit: 100,
            behind: None,
        }
    }
}

/// The bounds, as milliseconds, that the SQL of `ops/fleet.rs` compares
/// `last_seen` with: kept since, online and reporting per interval.
pub(crate) struct Horizon {
    pub(crate) at: i64,
    pub(crate) kept_since: i64,
}

impl Horizon {
    pub(crate) fn of(at: Timestamp) -> Horizon {
        Horizon {
            at: at.0,
            kept_since: at.0.saturating_sub(KEPT_FOR.as_millis() as i64),
        }
    }
}

impl Store {
    /// Records what an instance serves on `label` of `pack`, reported by
    /// `reporter` at `at`; drops instances unseen for a day, now and then.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownPack`]; [`ErrorKind::InvalidInput`] for a field
    /// out of bounds; [`ErrorKind::UnknownLabel`] for a label nothing ever
    /// moved; [`ErrorKind::UnknownRevision`] for a revision past the
    /// label's newest; [`ErrorKind::InstanceTaken`] for an instance
    /// another reporter reported first; [`ErrorKind::TooManyInstances`]
    /// when this one is new and its label, pack or reporter holds its most
    /// instances ([`FleetLimits`]). A refused report records nothing.
    pub async fn report_instance(
        &self,
        pack: &str,
        label: &Label,
        report: &InstanceReport,
        reporter: &str,
        at: Timestamp,
    ) -> Result<(), Error> {
        let one = ReportOf {
            pack,
            label,
            report,
            reporter,
        };
        let mut outcomes = self.report_instances(&[one], at).await?;
        outcomes.pop().unwrap_or(Ok(()))
    }

    /// Records several reports in one transaction, as
    /// [`report_instance`](Self::report_instance) records one: a server
    /// that receives many at once writes them together. The outcome of
    /// each, in order.
    ///
    /// # Errors
    ///
    /// The database's failure, for the whole batch: nothing was recorded.
    pub async fn report_instances(
        &self,
        batch: &[ReportOf<'_>],
        at: Timestamp,
    ) -> Result<Vec<Result<(), Error>>, Error> {
        let horizon = Horizon::of(at);
        if self.fleet_prune_due(at) {
            on_backend!(self, prune_fleet(horizon.kept_since))?;
        }
        let mut outcomes: Vec<Result<(), Error>> = Vec::with_capacity(batch.len());
        let mut rows = Vec::with_capacity(batch.len());
        let mut known = Known::default();
        for item in batch {
            match self.admit(item, &mut known).await {
                Ok(pack_id) => {
                    rows.push((pack_id, item.label.as_str(), item.report, item.reporter));
                    outcomes.push(Ok(()));
                }
                Err(e) => outcomes.push(Err(e)),
            }
        }
        let limits = self.fleet_limits();
        let refusals = on_backend!(self, report_instances(&rows, &horizon, &limits))?;
        let mut refusals = refusals.into_iter();
        for (item, outcome) in batch.iter().zip(&mut outcomes) {
            if outcome.is_err() {
                continue;
            }
            if let Some(refused) = refusals.next().flatten() {
                *outcome = Err(refused.error(item, &limits));
            }
        }
        Ok(outcomes)
    }

    /// The pack's id of a report whose fields are in bounds, and whose
    /// label and revision exist: a report of anything else would make the
    /// view claim what no instance serves.
    async fn admit<'a>(&self, item: &ReportOf<'a>, known: &mut Known<'a>) -> Result<i64, Error> {
        item.report.check()?;
        let pack_id = match known.packs.get(item.pack) {
            Some(&id) => id,
            None => {
                let id = self.pack_id(item.pack).await?;
                known.packs.insert(item.pack, id);
                id
            }
        };
        let label = item.label.as_str();
        let newest = match known.heads.get(&(pack_id, label)) {
            Some(&newest) => newest,
            None => {
                let head = on_backend!(self, label_head(pack_id, label))?;
                let newest = head.map(|(n, _)| n);
                known.heads.insert((pack_id, label), newest);
                newest
            }
        };
        let pack = item.pack;
        let Some(newest) = newest else {
            return Err(Error::new(
                ErrorKind::UnknownLabel,
                format!(
                    "pack `{pack}` has no label `{label}`: nothing ever moved it, so no instance serves it; report the label the instance follows"
                ),
            ));
        };
        match item.report.revision {
            Some(revision) if revision > newest => Err(Error::new(
                ErrorKind::UnknownRevision,
                format!(
                    "label `{label}` of pack `{pack}` has no revision {revision}: its newest is {newest}; report the revision the label's bundle names (`Promptreg-Revision`), or none"
                ),
            )),
            _ => Ok(pack_id),
        }
    }

    /// The fleet view of `label` in `pack`: its revision, the instances
    /// online per revision served, and one page of the instances.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownPack`].
    pub async fn fleet(
        &self,
        pack: &str,
        label: &Label,
        query: &FleetQuery,
    ) -> Result<Fleet, Error> {
        let pack_id = self.pack_id(pack).await?;
        let horizon = Horizon::of(query.at);
        let limit = query.limit.clamp(1, MAX_PAGE);
        let head = self.newest_revision(pack, label).await?;
        let newest = head.as_ref().map(|(n, _)| *n);
        let counts = on_backend!(self, fleet_counts(pack_id, label.as_str(), &horizon))?;
        let mut instances = on_backend!(
            self,
            fleet_instances(pack_id, label.as_str(), &horizon, query, newest, limit + 1)
        )?;
        let next = if instances.len() > limit {
            instances.truncate(limit);
            instances.last().map(|i| i.instance.clone())
        } else {
            None
        };
        let mut served: Vec<RevisionServed> = counts
            .iter()
            .filter(|c| c.online > 0)
            .map(|c| RevisionServed {
                revision: c.revision,
                online: c.online,
                reporting: c.reporting,
            })
            .collect();
        served.sort_by_key(|s| std::cmp::Reverse(s.revision));
        let split = match on_backend!(self, running_split_id(pack_id, label.as_str()))? {
            Some(id) => Some((
                id,
                on_backend!(self, holding_split(pack_id, label.as_str(), id, &horizon))?,
            )),
            None => None,
        };
        let sum = |f: fn(&FleetCount) -> u64| counts.iter().map(f).sum::<u64>();
        let (total, online, reporting) =
            (sum(|c| c.total), sum(|c| c.online), sum(|c| c.reporting));
        Ok(Fleet {
            pack: pack.to_owned(),
            label: label.as_str().to_owned(),
            revision: head.as_ref().map(|(n, _)| *n),
            digest: head.map(|(_, d)| d),
            at: query.at,
            instances_total: total,
            online,
            reporting,
            offline: total - online,
            served,
            split,
            instances,
            next,
        })
    }
}

/// One report of a batch ([`Store::report_instances`]): what `reporter`
/// says an instance serves on `label` of `pack`.
#[derive(Debug, Clone, Copy)]
pub struct ReportOf<'a> {
    /// The pack.
    pub pack: &'a str,
    /// The label the instance follows.
    pub label: &'a Label,
    /// What it serves.
    pub report: &'a InstanceReport,
    /// Who sent it: `key:NAME`, `local`.
    pub reporter: &'a str,
}

/// What one batch of reports has read already: each pack's id, and each
/// label's newest revision (`None`: the label has none).
#[derive(Default)]
struct Known<'a> {
    packs: HashMap<&'a str, i64>,
    heads: HashMap<(i64, &'a str), Option<u64>>,
}

/// Why the SQL of `ops/fleet.rs` did not record a report.
pub(crate) enum Refused {
    /// A new instance, and its label is full.
    Label,
    /// A new instance, and its pack is full.
    Pack,
    /// A new instance, and its reporter holds its most.
    Key,
    /// Another reporter reported this instance first: it, by name.
    Taken(String),
}

impl Refused {
    fn error(&self, item: &ReportOf<'_>, limits: &FleetLimits) -> Error {
        let (pack, label, instance) = (item.pack, item.label, &item.report.instance);
        let until = "is not recorded until others have been unseen for a day";
        let detail = match self {
            Refused::Label => format!(
                "label `{label}` of pack `{pack}` holds {} instances, its most: instance `{instance}` {until}, or the server's `fleet_limits.per_label` is raised",
                limits.per_label
            ),
            Refused::Pack => format!(
                "pack `{pack}` holds {} instances, its most: instance `{instance}` {until}, or the server's `fleet_limits.per_pack` is raised",
                limits.per_pack
            ),
            Refused::Key => format!(
                "`{}` reports {} instances, its most: instance `{instance}` {until}; give other fleets keys of their own, or raise the server's `fleet_limits.per_key`",
                item.reporter, limits.per_key
            ),
            Refused::Taken(owner) => {
                return Error::new(
                    ErrorKind::InstanceTaken,
                    format!(
                        "instance `{instance}` of label `{label}` is reported by `{owner}`, not `{}`: give this instance an id of its own; the id is free again a day after `{owner}` last reports it",
                        item.reporter
                    ),
                );
            }
        };
        Error::new(ErrorKind::TooManyInstances, detail)
    }
}

/// What holds instances, for the bounds of [`FleetLimits`].
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) enum Holder {
    Label(i64, String),
    Pack(i64),
    Reporter(String),
}

/// The instances each holder holds, counted once per batch and kept up
/// to date as the batch records new ones.
#[derive(Default)]
pub(crate) struct Held(HashMap<Holder, u64>);

impl Held {
    pub(crate) fn count(&self, holder: &Holder) -> Option<u64> {
        self.0.get(holder).copied()
    }

    pub(crate) fn set(&mut self, holder: Holder, count: u64) {
        self.0.insert(holder, count);
    }

    /// A new instance of `label` by `reporter` was recorded.
    pub(crate) fn recorded(&mut self, pack_id: i64, label: &str, reporter: &str) {
        let holders = [
            Holder::Label(pack_id, label.to_owned()),
            Holder::Pack(pack_id),
            Holder::Reporter(reporter.to_owned()),
        ];
        for holder in holders {
            *self.0.entry(holder).or_default() += 1;
        }
    }
}

/// One row of the counts per revision served.
pub(crate) struct FleetCount {
    pub(crate) revision: Option<u64>,
    pub(crate) total: u64,
    pub(crate) online: u64,
    pub(crate) reporting: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> InstanceReport {
        InstanceReport {
            instance: "a1b2".into(),
            name: Some("web-1".into()),
            library: "promptreg-rust/0.9.0".into(),
            source: Served::Server,
            revision: Some(3),
            digest: Some("ab".repeat(32)),
            last_error: None,
            interval: Duration::from_secs(30),
            split: None,
        }
    }

    #[test]
    fn a_report_out_of_bounds_names_its_field() {
        assert!(report().check().is_ok());
        type Spoil = fn(&mut InstanceReport);
        let cases: [(Spoil, &str); 7] = [
            (|r| r.instance = "a b".into(), "the instance id `a b`"),
            (|r| r.instance = "x".repeat(65), "must be 1 to 64"),
            (
                |r| r.name = Some("n".repeat(129)),
                "the instance name is 129 bytes",
            ),
            (
                |r| r.name = Some("a\u{1b}[2J".into()),
                "the instance name holds a control",
            ),
            (|r| r.digest = Some("zz".into()), "the digest `zz`"),
            (|r| r.revision = Some(0), "the revision must be"),
            (
                |r| r.interval = Duration::from_millis(10),
                "the interval 10ms",
            ),
        ];
        for (spoil, expected) in cases {
            let mut bad = report();
            spoil(&mut bad);
            let error = bad.check().unwrap_err();
            assert_eq!(error.kind(), ErrorKind::InvalidInput);
            assert!(error.to_string().contains(expected), "{error}");
        }
    }

    #[test]
    fn a_fleet_converges_on_a_share_of_the_instances_reporting() {
        let served = |revision, reporting| RevisionServed {
            revision: Some(revision),
            online: reporting,
            reporting,
        };
        let fleet = Fleet {
            pack: "demo".into(),
            label: "production".into(),
            revision: Some(12),
            digest: None,
            at: Timestamp(0),
            instances_total: 240,
            online: 239,
            reporting: 239,
            offline: 1,
            served: vec![served(12, 237), served(11, 2)],
            split: None,
            instances: vec![],
            next: None,
        };
        assert_eq!(
            fleet.summary(),
            "production: revision 12 live on 237 of 240 instances; 2 on revision 11; 1 offline"
        );
        assert!(!fleet.converged(12, 1.0));
        assert!(fleet.converged(12, 0.99));
        assert!(fleet.converged(11, 1.0));
        let empty = Fleet {
            reporting: 0,
            served: vec![],
            ..fleet
        };
        assert!(empty.converged(12, 1.0));
    }
}
