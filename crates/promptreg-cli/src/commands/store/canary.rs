//! `store canary LABEL`: a gradual release. `--from L [--revision N]
//! --percent P` starts a split of LABEL serving that candidate to P % of
//! subjects; `--percent P` alone changes the share; `--promote` makes the
//! candidate LABEL's next revision; `--abort` ends the split; alone, it
//! shows the split running.

use promptreg_store::{Candidate, Label, RevisionRef, Share, Split};
use serde_json::Value;

use super::{Command, Output, failure};
use crate::report::Failure;

/// What the flags ask.
pub(super) struct Asked<'a> {
    pub(super) from: Option<&'a str>,
    pub(super) revision: Option<&'a RevisionRef>,
    pub(super) percent: Option<Share>,
    pub(super) promote: bool,
    pub(super) abort: bool,
    pub(super) expect: Option<u64>,
}

impl Command<'_> {
    pub(super) async fn canary(
        &self,
        label: &str,
        asked: Asked<'_>,
        reason: &str,
    ) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let label = Label::new(label).map_err(failure)?;
        let store = self.store;
        let actor = self.actor()?;
        let starting = asked.from.is_some() || asked.revision.is_some();
        let split = match (starting, asked.percent, asked.promote, asked.abort) {
            (true, Some(share), ..) => {
                let source = match asked.from {
                    Some(from) => Label::new(from).map_err(failure)?,
                    None => label.clone(),
                };
                let candidate = Candidate {
                    label: source,
                    revision: asked.revision.cloned(),
                };
                store
                    .start_split(&pack, &label, &candidate, share, &actor, reason)
                    .await
            }
            (true, None, ..) => {
                return Err(Failure::usage(format!(
                    "starting a split of `{label}` needs the share its candidate serves: --percent P (0 to 100)"
                )));
            }
            (false, Some(share), ..) => {
                store
                    .set_split_share(&pack, &label, share, asked.expect, &actor, reason)
                    .await
            }
            (false, None, true, _) => store
                .promote_split(&pack, &label, asked.expect, &actor, reason)
                .await
                .map(|(split, _)| split),
            (false, None, false, true) => {
                store
                    .abort_split(&pack, &label, asked.expect, &actor, reason)
                    .await
            }
            (false, None, false, false) => {
                return self.show_split(&pack, &label).await;
            }
        }
        .map_err(failure)?;
        Ok(self.split_output(&split))
    }

    async fn show_split(&self, pack: &str, label: &Label) -> Result<Output, Failure> {
        match self
            .store
            .running_split(pack, label)
            .await
            .map_err(failure)?
        {
            Some(split) => Ok(self.split_output(&split)),
            None if self.session.args.json => Ok(Output::json(&Value::Null)),
            None => Ok(Output::text(format!(
                "{label}: no split running (start one with --from LABEL --percent P)\n"
            ))),
        }
    }

    fn split_output(&self, split: &Split) -> Output {
        if self.session.args.json {
            return Output::json(&split_json(split));
        }
        let paint = self.paint();
        let mut out = format!("{}\n", split.summary());
        if let Some(tests) = &split.tests {
            out += &format!("  tests: {tests}\n");
        }
        for b in &split.breaking {
            out += &format!("  breaking, forced: {b}\n");
        }
        if let Some(revision) = split.promoted_to {
            out += &format!("  {} is at revision {revision}\n", split.label);
        }
        for step in &split.steps {
            let line = format!(
                "  {}  {} {}  {}  {}",
                paint.dim(&step.at.to_string()),
                step.step.as_str(),
                step.share,
                step.actor,
                paint.dim(&step.reason)
            );
            out += line.trim_end();
            out += "\n";
        }
        Output::text(out)
    }
}

/// A split as `--json` prints it: the API's shape.
fn split_json(split: &Split) -> Value {
    serde_json::to_value(promptreg_server::SplitBody::from(split)).unwrap_or(Value::Null)
}
