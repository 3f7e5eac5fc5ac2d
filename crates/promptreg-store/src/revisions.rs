//! A label's revisions through the [`Store`]: listing them, restoring
//! one for the whole pack (a pack rollback is one step back), reading and
//! comparing the pack as one of them held it.

use crate::diff::RevisionDiff;
use crate::error::{Error, ErrorKind};
use crate::files::PackFiles;
use crate::model::{Label, Restored, Revision, RevisionRef, Writer};
use crate::store::Store;
use crate::text;

impl Store {
    /// The revision of `label` in `pack` that `wanted` names (a number,
    /// or a digest: the newest revision holding that state).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownVersion`] naming the revision asked and the
    /// ones there are; [`ErrorKind::InvalidInput`] for a start of a digest
    /// that several revisions' digests share.
    pub async fn revision(
        &self,
        pack: &str,
        label: &Label,
        wanted: impl Into<RevisionRef>,
    ) -> Result<Revision, Error> {
        let wanted = wanted.into();
        let id = self.pack_id(pack).await?;
        let number = on_backend!(self, revision_number(id, label.as_str(), &wanted))?;
        // With the one before, for what it changed.
        let mut read = on_backend!(
            self,
            revisions(id, label.as_str(), number.saturating_sub(1).max(1)..=number)
        )?;
        match read.first() {
            Some(found) if found.number == number => Ok(read.swap_remove(0)),
            _ => Err(Error::new(
                ErrorKind::UnknownVersion,
                format!("label `{label}` has no revision {number}"),
            )),
        }
    }

    /// The newest revision of `label` in `pack` and its digest, if the
    /// label has one: one row read.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownPack`].
    pub async fn newest_revision(
        &self,
        pack: &str,
        label: &Label,
    ) -> Result<Option<(u64, String)>, Error> {
        let id = self.pack_id(pack).await?;
        on_backend!(self, label_head(id, label.as_str()))
    }

    /// The revisions of `label` in `pack`, newest first: each change to
    /// what the label resolves to (a move, a release, a rollback, a push
    /// that moved `latest`) is one, with every entry's version and what it
    /// changed. A release of any number of prompts is one revision.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownPack`]; [`ErrorKind::UnknownVersion`] when no
    /// change ever moved the label.
    pub async fn revisions(&self, pack: &str, label: &Label) -> Result<Vec<Revision>, Error> {
        let id = self.pack_id(pack).await?;
        let revisions = on_backend!(self, revisions(id, label.as_str(), 1..=u64::MAX))?;
        if revisions.is_empty() {
            return Err(Error::new(
                ErrorKind::UnknownVersion,
                format!(
                    "label `{label}` of pack `{pack}` has no revisions: nothing ever moved it (`promptreg store history` lists the moves)"
                ),
            ));
        }
        Ok(revisions)
    }

    /// Points `label` of `pack` at what its revision `revision` held, on
    /// every entry (prompts, manifest, snippets, tests) in one transaction,
    /// recorded as a new revision restoring it; with `expect`, only if the
    /// label's newest revision is that one. The history records
    /// `restore revision N`, then `reason`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownVersion`] naming the revisions there are;
    /// [`ErrorKind::Conflict`] with the newest revision when it is not
    /// `expect`; [`ErrorKind::Forbidden`] as for a move.
    pub async fn restore(
        &self,
        pack: &str,
        label: &Label,
        revision: impl Into<RevisionRef>,
        expect: Option<u64>,
        actor: &impl Writer,
        reason: &str,
    ) -> Result<Restored, Error> {
        let revision = revision.into();
        self.restore_to(pack, label, Some(&revision), expect, actor, reason)
            .await
    }

    /// Rolls `label` of `pack` back one revision for the whole pack, in one
    /// transaction: to the revision before the one it stands on (a restore
    /// stands on the revision it restored, so rollbacks walk back, r5, r4,
    /// r3, as per-prompt rollbacks do). The history records
    /// `rollback to revision N`, then `reason`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownVersion`] when the label stands on its first
    /// revision or has none; [`ErrorKind::Forbidden`] as for a move.
    pub async fn rollback_pack(
        &self,
        pack: &str,
        label: &Label,
        actor: &impl Writer,
        reason: &str,
    ) -> Result<Restored, Error> {
        self.restore_to(pack, label, None, None, actor, reason)
            .await
    }

    async fn restore_to(
        &self,
        pack: &str,
        label: &Label,
        revision: Option<&RevisionRef>,
        expect: Option<u64>,
        actor: &impl Writer,
        reason: &str,
    ) -> Result<Restored, Error> {
        let actor = actor.writer(&|| format!("move label `{label}`"))?;
        actor.require_forcing_allowed(reason)?;
        if label.is_latest() {
            return Err(Error::new(
                ErrorKind::InvalidLabel,
                "label `latest` follows pushes and cannot be pointed at a revision: push the content, or use another label",
            ));
        }
        text::check_message("reason", reason)?;
        let id = self.pack_id(pack).await?;
        let done = self
            .through_gates(pack, |tested| async move {
                raw!(
                    self,
                    restore(id, label, revision, expect, actor, reason, &tested)
                )
            })
            .await;
        let (restores, revision, moves) = self.published(self.explain_conflict(done, id).await?);
        Ok(Restored {
            restores,
            revision,
            moves,
        })
    }

    /// The pack's files as revision `revision` of `label` held them, byte
    /// for byte.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownVersion`] naming the revisions there are.
    pub async fn checkout_revision(
        &self,
        pack: &str,
        label: &Label,
        revision: impl Into<RevisionRef>,
    ) -> Result<PackFiles, Error> {
        Ok(self.revision_files(pack, label, &revision.into()).await?.1)
    }

    /// The number of the revision `wanted` names, and its files.
    async fn revision_files(
        &self,
        pack: &str,
        label: &Label,
        wanted: &RevisionRef,
    ) -> Result<(u64, PackFiles), Error> {
        let id = self.pack_id(pack).await?;
        let (number, rows) = on_backend!(self, checkout_revision(id, label.as_str(), wanted))?;
        let files = rows
            .into_iter()
            .map(|(_, path, bytes)| (path, bytes))
            .collect();
        Ok((number, files))
    }

    /// Every file that differs between revisions `a` and `b` of `label`.
    ///
    /// # Errors
    ///
    /// As [`checkout_revision`](Self::checkout_revision), for either.
    pub async fn diff_revisions(
        &self,
        pack: &str,
        label: &Label,
        a: impl Into<RevisionRef>,
        b: impl Into<RevisionRef>,
    ) -> Result<RevisionDiff, Error> {
        let (a, old) = self.revision_files(pack, label, &a.into()).await?;
        let (b, new) = self.revision_files(pack, label, &b.into()).await?;
        Ok(RevisionDiff::new(label.as_str(), (a, &old), (b, &new)))
    }
}
