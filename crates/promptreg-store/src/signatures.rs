//! Signed releases in the store: a revision is signed by its actor's key
//! in the transaction that records it ([`Actor::signing_with`]), or later
//! ([`Store::sign_revision`]); a label the manifest names in
//! `[release] signed` moves only with a signature. The store keeps
//! signatures, never a private key: whoever moves the label signs where
//! they run, and a follower verifies against the keys it trusts, whatever
//! the store or server says.

use promptreg::signing::{Signature, SigningKey, Statement};

use crate::error::{Error, ErrorKind};
use crate::model::{Actor, Label, Permission, RevisionRef, RevisionSignature};
use crate::store::Store;

/// Whether the manifest `manifest` (its bytes) requires signatures for
/// moves of `label`.
pub(crate) fn requires_signature(manifest: &[u8], label: &str) -> bool {
    crate::gate::rules::rules(manifest)
        .signed()
        .iter()
        .any(|l| l == label)
}

/// The refusal of an unsigned move of a label that requires signatures.
pub(crate) fn unsigned(label: &str) -> Error {
    Error::new(
        ErrorKind::SignatureRequired,
        format!(
            "label `{label}` moves only with a signature (`[release] signed` in the pack's manifest): make the change with `promptreg store … --sign KEYFILE`, where the releaser's key is"
        ),
    )
}

pub(crate) fn sign(key: &SigningKey, statement: &Statement) -> Result<Signature, Error> {
    key.sign(statement)
        .map_err(|e| Error::new(ErrorKind::InvalidInput, e.to_string()))
}

impl Store {
    /// The signatures of revision `revision` of `label` in `pack`, oldest
    /// first.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::UnknownPack`].
    pub async fn revision_signatures(
        &self,
        pack: &str,
        label: &Label,
        revision: u64,
    ) -> Result<Vec<RevisionSignature>, Error> {
        let id = self.pack_id(pack).await?;
        let mut by_revision = raw!(
            self,
            revision_signatures(id, label.as_str(), revision..=revision)
        )
        .map_err(|e| self.error(e))?;
        Ok(by_revision.remove(&revision).unwrap_or_default())
    }

    /// Signs revision `revision` of `label` in `pack` with the key of
    /// `actor` ([`Actor::signing_with`]): a release made without one, or
    /// a second releaser's signature. Returns the revision's number and
    /// the key's fingerprint.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`] for an actor without a key;
    /// [`ErrorKind::UnknownVersion`] for a revision the label does not
    /// have; [`ErrorKind::Forbidden`] without the write permission.
    pub async fn sign_revision(
        &self,
        pack: &str,
        label: &Label,
        revision: impl Into<RevisionRef>,
        actor: &Actor,
    ) -> Result<(u64, String), Error> {
        actor.require(Permission::Write, &format!("sign revisions of `{label}`"))?;
        let id = self.pack_id(pack).await?;
        let revision = revision.into();
        let done = raw!(self, sign_revision(id, label, &revision, actor));
        Ok(self.published(done.map_err(|e| self.error(e))?))
    }

    /// Names the signing key of `fingerprint` (`SHA256:…`, as `ssh-keygen
    /// -l` prints it), for the web page and the API.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Forbidden`] without the admin permission;
    /// [`ErrorKind::InvalidInput`] for an empty name or a fingerprint that
    /// is not `SHA256:`.
    pub async fn name_signing_key(
        &self,
        fingerprint: &str,
        name: &str,
        actor: &Actor,
    ) -> Result<(), Error> {
        actor.require(Permission::Admin, "name signing keys")?;
        if !fingerprint.starts_with("SHA256:") || fingerprint.len() < 20 {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "`{fingerprint}` is not a key fingerprint: expected `SHA256:…`, as `ssh-keygen -l -f KEY.pub` prints it"
                ),
            ));
        }
        crate::text::check_message("key name", name)?;
        if name.trim().is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "a key's name cannot be empty",
            ));
        }
        on_backend!(
            self,
            name_signing_key(fingerprint, name.trim(), &actor.name)
        )
    }

    /// The signatures of split `split`'s candidate (made when the split
    /// started, by a signing actor), as OpenSSH writes them.
    ///
    /// # Errors
    ///
    /// As any read of the store.
    pub async fn split_signatures(&self, split: u64) -> Result<Vec<String>, Error> {
        on_backend!(self, split_signatures(split))
    }

    /// Every named signing key: fingerprint and name.
    pub async fn signing_keys(&self) -> Result<Vec<(String, String)>, Error> {
        on_backend!(self, signing_keys())
    }
}
