//! A label of a pack as the server sends it (`GET /v1/packs/{pack}/labels/
//! {label}`), and its validation into a [`Pack`].

use std::collections::BTreeMap;

use crate::pack::{Pack, StoreStamp};
use crate::signing::{Signature, Statement, TrustedKeys, files_digest, state_digest};
use crate::wire::BundleDocument;

/// A bundle as it arrived, from the server, the disk cache or a baked
/// file, before anything in it is believed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Received {
    /// The document.
    pub(crate) raw: Vec<u8>,
    /// The server's ETag of it.
    pub(crate) etag: String,
    /// The label's revision it is, when the server named it
    /// (`Promptreg-Revision`).
    pub(crate) revision: Option<u64>,
    /// The revision's signatures, one line each (`Promptreg-Signature`).
    pub(crate) signatures: Vec<String>,
}

/// A bundle that loaded as a pack with no error: what may be published.
#[derive(Debug, Clone)]
pub(crate) struct Bundle {
    /// The pack it makes.
    pub(crate) pack: Pack,
    /// Prompt id (or `@pack`) -> version.
    pub(crate) versions: BTreeMap<String, u64>,
    /// The digest of its state, computed from its files: what a signature
    /// covers.
    pub(crate) digest: String,
    /// What arrived.
    pub(crate) received: Received,
    /// The fingerprint of the trusted key whose signature vouched for it,
    /// when the follower trusts keys.
    pub(crate) verified_by: Option<String>,
}

impl Bundle {
    /// Parses what arrived and loads it as a pack named `origin` in
    /// messages and provenance; it must be `pack` at `label`. Each part's
    /// provenance names its prompt's version and digest, the label and the
    /// revision.
    pub(crate) fn validate(
        received: Received,
        origin: &str,
        pack: &str,
        label: &str,
    ) -> Result<Bundle, String> {
        let doc: BundleDocument = serde_json::from_slice(&received.raw)
            .map_err(|e| format!("{origin}: the bundle is not valid JSON of a bundle: {e}"))?;
        if doc.pack != pack || doc.label != label {
            return Err(format!(
                "{origin}: the bundle is pack `{}` at label `{}`, not `{pack}` at `{label}`",
                doc.pack, doc.label
            ));
        }
        let files = doc.entries.iter().flat_map(|e| e.files.iter());
        let mut loaded = Pack::from_files(origin, files)
            .map_err(|e| format!("{origin}: the bundle does not load as a pack: {e}"))?;
        if loaded.name() != pack {
            return Err(format!(
                "{origin}: the bundle's manifest names pack `{}`, not `{pack}`",
                loaded.name()
            ));
        }
        let entry_digests: Vec<(&str, String)> = doc
            .entries
            .iter()
            .map(|e| {
                let files = e.files.iter().map(|(p, t)| (p.as_str(), t.as_bytes()));
                (e.id.as_str(), files_digest(files))
            })
            .collect();
        let digest = state_digest(entry_digests.iter().map(|(id, d)| (*id, d.as_str())));
        let stamped: BTreeMap<String, (u64, String)> = doc
            .entries
            .into_iter()
            .map(|e| (e.id, (e.version, e.digest)))
            .collect();
        loaded.stamp_origin(&StoreStamp {
            versions: &stamped,
            label,
            revision: received.revision,
        });
        let versions = stamped.into_iter().map(|(id, (v, _))| (id, v)).collect();
        Ok(Bundle {
            pack: loaded,
            versions,
            digest,
            received,
            verified_by: None,
        })
    }

    /// Every file of the pack, by path in it, as received.
    pub(crate) fn files(&self) -> Vec<(String, String)> {
        serde_json::from_slice::<BundleDocument>(&self.received.raw)
            .map(|doc| doc.entries.into_iter().flat_map(|e| e.files).collect())
            .unwrap_or_default()
    }

    /// The server's ETag of it.
    pub(crate) fn etag(&self) -> &str {
        &self.received.etag
    }

    /// The label's revision it is, when known.
    pub(crate) fn revision(&self) -> Option<u64> {
        self.received.revision
    }

    /// The fingerprint of the trusted key whose signature vouches for this
    /// bundle as revision of `label` of `pack`, computed from its files;
    /// else why none does.
    pub(crate) fn verify(
        &self,
        trusted: &TrustedKeys,
        pack: &str,
        label: &str,
    ) -> Result<String, String> {
        let Some(revision) = self.revision() else {
            return Err(format!(
                "the bundle of `{pack}` at `{label}` names no revision, so no signature can vouch for it"
            ));
        };
        self.verify_as(
            trusted,
            &Statement::revision(pack, label, revision, &self.digest),
        )
    }

    /// As [`verify`](Self::verify), for the candidate of split `split`
    /// of `label`.
    pub(crate) fn verify_split(
        &self,
        trusted: &TrustedKeys,
        pack: &str,
        label: &str,
        split: u64,
    ) -> Result<String, String> {
        self.verify_as(trusted, &Statement::split(pack, label, split, &self.digest))
    }

    fn verify_as(&self, trusted: &TrustedKeys, statement: &Statement) -> Result<String, String> {
        let signatures: Vec<Signature> = self
            .received
            .signatures
            .iter()
            .filter_map(|s| Signature::from_header(s).ok())
            .collect();
        trusted
            .verify(statement, &signatures)
            .map_err(|e| e.to_string())
    }
}
