//! `store fleet LABEL`: what every instance following a label serves,
//! from their reports; and `--wait` after a change of a label: until the
//! instances reporting serve its new revision, or the time is up.

use std::time::{Duration, Instant};

use promptreg_server::FleetBody;
use promptreg_store::{Fleet, FleetQuery, Instance, Label, MAX_PAGE};
use serde_json::{Value, json};

use super::{Command, Output, failure};
use crate::cli::WaitArgs;
use crate::report::Failure;

/// How often a wait reads the view again.
const POLL: Duration = Duration::from_millis(200);

/// How many instances `store fleet` lists without `--all`.
const SHOWN: usize = 100;

impl Command<'_> {
    /// `store fleet LABEL [--all]`.
    pub(super) async fn fleet(&self, label: &str, all: bool) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let label = Label::new(label).map_err(failure)?;
        let mut query = FleetQuery {
            limit: if all { MAX_PAGE } else { SHOWN },
            ..FleetQuery::now()
        };
        let mut fleet = self
            .store
            .fleet(&pack, &label, &query)
            .await
            .map_err(failure)?;
        while all && let Some(next) = fleet.next.take() {
            query.after = Some(next);
            let page = self
                .store
                .fleet(&pack, &label, &query)
                .await
                .map_err(failure)?;
            fleet.instances.extend(page.instances);
            fleet.next = page.next;
        }
        let split = self
            .store
            .running_split(&pack, &label)
            .await
            .map_err(failure)?;
        if self.session.args.json {
            return Ok(Output::json(&body(&fleet, None, split.as_ref())));
        }
        let mut out = format!("{}\n", fleet.summary());
        if let Some(split) = &split {
            out += &format!(
                "split {}: {} on {} r{}\n",
                split.id, split.share, split.source_label, split.source_revision
            );
        }
        out += &self.table(&fleet.instances);
        if fleet.next.is_some() {
            out += &format!(
                "(the first {SHOWN} of {} instances; --all lists every one)\n",
                fleet.instances_total
            );
        }
        Ok(Output::text(out))
    }

    /// After a change of `label` that succeeded, with `--wait`: waits until
    /// the instances reporting serve the label's newest revision (the
    /// share `--wait-ratio` asks), at most `--wait`. Exit status 1, naming
    /// the instances behind, when the time is up first.
    pub(super) async fn then_wait(
        &self,
        done: Result<Output, Failure>,
        label: &str,
        wait: &WaitArgs,
    ) -> Result<Output, Failure> {
        let output = done?;
        let Some(limit) = wait.wait else {
            return Ok(output);
        };
        let pack = self.pack().await?;
        let label = Label::new(label).map_err(failure)?;
        let newest = self
            .store
            .newest_revision(&pack, &label)
            .await
            .map_err(failure)?;
        let Some((revision, _)) = newest else {
            return Ok(output);
        };
        let deadline = Instant::now() + limit;
        let fleet = loop {
            let query = FleetQuery {
                limit: MAX_PAGE,
                behind: Some(revision),
                ..FleetQuery::now()
            };
            let fleet = self
                .store
                .fleet(&pack, &label, &query)
                .await
                .map_err(failure)?;
            let left = deadline.saturating_duration_since(Instant::now());
            if fleet.converged(revision, wait.wait_ratio) || left.is_zero() {
                break fleet;
            }
            tokio::time::sleep(POLL.min(left)).await;
        };
        Ok(self.waited(output, &fleet, revision, wait, limit))
    }

    /// The change's output, then what the wait found.
    fn waited(
        &self,
        change: Output,
        fleet: &Fleet,
        revision: u64,
        wait: &WaitArgs,
        limit: Duration,
    ) -> Output {
        let converged = fleet.converged(revision, wait.wait_ratio);
        if self.session.args.json {
            let change = change.json.unwrap_or(Value::Null);
            let mut combined = match change {
                Value::Object(map) => Value::Object(map),
                other => json!({ "moves": other }),
            };
            combined["wait"] = json!({
                "revision": revision,
                "ratio": wait.wait_ratio,
                "fleet": body(fleet, Some(converged), None),
            });
            let mut output = Output::json(&combined);
            output.code = u8::from(!converged);
            return output;
        }
        let mut out = change.stdout;
        if converged {
            out += &fleet.summary();
            if fleet.reporting == 0 {
                out += " (no instance reporting: nothing to wait for)";
            }
            out += "\n";
            return Output::text(out);
        }
        let on = fleet.reporting_on(revision);
        out += &format!(
            "not live within {}: {on} of {} instance{} reporting serve revision {revision} (--wait-ratio {}); behind:\n",
            humantime::format_duration(limit),
            fleet.reporting,
            if fleet.reporting == 1 { "" } else { "s" },
            wait.wait_ratio,
        );
        out += &self.table(&fleet.instances);
        let mut output = Output::text(out);
        output.code = 1;
        output
    }

    /// The instances, one a line, in aligned columns.
    fn table(&self, instances: &[Instance]) -> String {
        if instances.is_empty() {
            return String::new();
        }
        let paint = self.paint();
        let rows: Vec<[String; 8]> = instances.iter().map(row).collect();
        let head = [
            "INSTANCE",
            "NAME",
            "REVISION",
            "SOURCE",
            "STATE",
            "LAST SEEN",
            "LIBRARY",
            "ERROR",
        ];
        let mut widths = head.map(str::len);
        for row in &rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(widths)
                .map(|(cell, width)| format!("{cell:width$}"))
                .collect();
            padded.join("  ").trim_end().to_owned() + "\n"
        };
        let head: Vec<String> = head.iter().map(|h| h.to_string()).collect();
        let mut out = paint.dim(line(&head).trim_end()) + "\n";
        for row in rows {
            out += &line(&row);
        }
        out
    }
}

fn row(instance: &Instance) -> [String; 8] {
    [
        instance.instance.clone(),
        instance.name.clone().unwrap_or_default(),
        instance
            .revision
            .map_or("-".to_owned(), |r| format!("r{r}")),
        instance.source.as_str().to_owned(),
        if instance.online { "online" } else { "offline" }.to_owned(),
        instance.last_seen.to_string(),
        instance.library.clone(),
        instance.last_error.clone().unwrap_or_default(),
    ]
}

/// The API's shape of the view.
fn body(fleet: &Fleet, converged: Option<bool>, split: Option<&promptreg_store::Split>) -> Value {
    serde_json::to_value(FleetBody::of(fleet, converged, split)).unwrap_or(Value::Null)
}
