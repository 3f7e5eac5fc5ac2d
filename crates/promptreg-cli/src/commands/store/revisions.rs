//! A label's revisions: listing them, pointing a label at one for the
//! whole pack, rolling the pack back, comparing two.

use promptreg_store::{Label, Restored, RevisionRef};
use serde_json::{Value, json};

use super::{Command, failure, move_json};
use crate::commands::Output;
use crate::report::Failure;

impl Command<'_> {
    /// `store revisions LABEL`.
    pub(super) async fn revisions(&self, label: &str) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let label = Label::new(label).map_err(failure)?;
        let revisions = self.store.revisions(&pack, &label).await.map_err(failure)?;
        if self.session.args.json {
            // The API's shape of them (`GET …/labels/{label}/revisions`).
            let body = promptreg_server::Revisions::of(&pack, label.as_str(), &revisions);
            return Ok(Output::json(
                &serde_json::to_value(body).unwrap_or(Value::Null),
            ));
        }
        let paint = self.paint();
        let show = |v: Option<u64>| v.map_or("-".to_owned(), |n| format!("v{n}"));
        let mut out = String::new();
        for r in &revisions {
            let line = format!(
                "{}  {label} r{}  {}  {}  {}  {}",
                paint.dim(&r.at.to_string()),
                r.number,
                &r.digest[..12.min(r.digest.len())],
                r.cause,
                r.actor,
                paint.dim(&r.reason),
            );
            out += line.trim_end();
            if let Some(tests) = &r.tests {
                out += &format!("  [tests: {tests}]");
            }
            if !r.signatures.is_empty() {
                let keys: Vec<&str> = r
                    .signatures
                    .iter()
                    .map(|s| s.key_name.as_deref().unwrap_or(&s.fingerprint))
                    .collect();
                out += &format!("  [signed by {}]", keys.join(", "));
            }
            out += "\n";
            for b in &r.breaking {
                out += &format!("  breaking, forced: {b}\n");
            }
            for c in &r.changes {
                out += &format!("  {} {} -> {}\n", c.entry, show(c.from), show(c.to));
            }
        }
        Ok(Output::text(out))
    }

    /// `store label LABEL --revision N [--expect M]`.
    pub(super) async fn restore(
        &self,
        label: &str,
        revision: &RevisionRef,
        expect: Option<&str>,
        reason: &str,
    ) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let label = Label::new(label).map_err(failure)?;
        let expect = expect.map(revision_number).transpose()?;
        let restored = self
            .store
            .restore(
                &pack,
                &label,
                revision.clone(),
                expect,
                &self.actor()?,
                reason,
            )
            .await
            .map_err(failure)?;
        Ok(self.restored(&label, &restored))
    }

    /// `store rollback --label LABEL`.
    pub(super) async fn rollback_pack(&self, label: &str, reason: &str) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let label = Label::new(label).map_err(failure)?;
        let restored = self
            .store
            .rollback_pack(&pack, &label, &self.actor()?, reason)
            .await
            .map_err(failure)?;
        Ok(self.restored(&label, &restored))
    }

    /// What a restore did: its new revision and the moves.
    fn restored(&self, label: &Label, restored: &Restored) -> Output {
        let restores = restored.restores;
        if self.session.args.json {
            let moves: Vec<Value> = restored.moves.iter().map(move_json).collect();
            return Output::json(&json!({
                "label": label.as_str(),
                "revision": restored.revision,
                "restores": restores,
                "moves": moves,
            }));
        }
        let Some(number) = restored.revision else {
            return Output::text(format!(
                "{label} already holds revision {restores}: nothing moved\n"
            ));
        };
        let mut out = self.moves(&restored.moves);
        // The new revision follows the one the label stood on: writers of
        // a pack take turns.
        let was = number - 1;
        let head = format!("{label}: r{was} -> r{number}, restoring r{restores}\n");
        out.stdout.insert_str(0, &head);
        out
    }

    /// `store diff --revision A B --label LABEL`.
    pub(super) async fn diff_revisions(
        &self,
        label: &str,
        a: &str,
        b: &str,
    ) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let label = Label::new(label).map_err(failure)?;
        let (a, b) = (revision_ref(a)?, revision_ref(b)?);
        let diff = self
            .store
            .diff_revisions(&pack, &label, a, b)
            .await
            .map_err(failure)?;
        let mut output = if self.session.args.json {
            let files: Vec<Value> = diff
                .files
                .iter()
                .map(|f| json!({ "path": f.path, "diff": f.diff }))
                .collect();
            Output::json(&json!({
                "label": label.as_str(), "from": diff.from, "to": diff.to, "files": files,
            }))
        } else if diff.files.is_empty() {
            Output::text(format!(
                "{label}: r{} and r{} hold the same files\n",
                diff.from, diff.to
            ))
        } else {
            let paint = self.paint();
            Output::text(diff.files.iter().map(|f| paint.diff(&f.diff)).collect())
        };
        output.code = crate::commands::diff::exit_code(!diff.files.is_empty());
        Ok(output)
    }
}

/// A revision number: `3`, or `r3` as `store revisions` prints it.
fn revision_number(text: &str) -> Result<u64, Failure> {
    text.strip_prefix('r')
        .unwrap_or(text)
        .parse()
        .map_err(|_| Failure::usage(format!("`{text}` is not a revision number (like 3 or r3)")))
}

/// A revision: its number (`3`, or `r3` as `store revisions` prints it)
/// or its digest.
fn revision_ref(text: &str) -> Result<RevisionRef, Failure> {
    text.parse().map_err(failure)
}
