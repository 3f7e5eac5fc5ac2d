//! A label of a pack as the server sends it (`GET /v1/packs/{pack}/labels/
//! {label}`), and its validation into a [`Pack`].

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::pack::{Pack, StoreStamp};

/// The bundle document; fields the follower does not need are ignored.
#[derive(Debug, Deserialize)]
struct Document {
    pack: String,
    label: String,
    entries: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
struct Entry {
    id: String,
    version: u64,
    #[serde(default)]
    digest: String,
    files: BTreeMap<String, String>,
}

/// A bundle that loaded as a pack with no error: what may be published.
#[derive(Debug, Clone)]
pub(crate) struct Bundle {
    /// The pack it makes.
    pub(crate) pack: Pack,
    /// Prompt id (or `@pack`) -> version.
    pub(crate) versions: BTreeMap<String, u64>,
    /// The server's ETag of it.
    pub(crate) etag: String,
    /// The label's revision it is, when the server named it
    /// (`Promptreg-Revision`).
    pub(crate) revision: Option<u64>,
    /// The document as received, for the disk cache.
    pub(crate) raw: Vec<u8>,
}

impl Bundle {
    /// Parses `raw` and loads it as a pack named `origin` in messages and
    /// provenance; it must be `pack` at `label`. Each part's provenance
    /// names its prompt's version and digest, the label and `revision`.
    pub(crate) fn validate(
        raw: Vec<u8>,
        etag: String,
        revision: Option<u64>,
        origin: &str,
        pack: &str,
        label: &str,
    ) -> Result<Bundle, String> {
        let doc: Document = serde_json::from_slice(&raw)
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
        let stamped: BTreeMap<String, (u64, String)> = doc
            .entries
            .into_iter()
            .map(|e| (e.id, (e.version, e.digest)))
            .collect();
        loaded.stamp_origin(&StoreStamp {
            versions: &stamped,
            label,
            revision,
        });
        let versions = stamped.into_iter().map(|(id, (v, _))| (id, v)).collect();
        Ok(Bundle {
            pack: loaded,
            versions,
            etag,
            revision,
            raw,
        })
    }
}
