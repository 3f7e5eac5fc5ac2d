//! Baked bundles: a release as one file (`promptreg bundle export`), so an
//! image ships its prompts for a cold or air-gapped start.
//!
//! The file is JSON: the format's name, the pack, label, revision and
//! digest, the revision's signatures as OpenSSH writes them, and the
//! label's bundle as the server sends it. Nothing in it is believed
//! without checking: the bundle must load as that pack at that label, its
//! files must have the digest written beside them, and with trusted keys
//! a signature by one of them must vouch for exactly that revision.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::bundle::{Bundle, Received};
use crate::error::{Error, ErrorKind};
use crate::pack::Pack;
use crate::registry::PromptRegistry;
use crate::signing::{Signature, TrustedKeys};

/// The format's name, first in the file.
const FORMAT: &str = "promptreg-bundle/1";

/// The largest baked bundle read, as for a download.
const MAX_FILE: u64 = 64 * 1024 * 1024;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format: String,
    pack: String,
    label: String,
    revision: Option<u64>,
    digest: String,
    signatures: Vec<String>,
    bundle: Box<serde_json::value::RawValue>,
}

/// A release read from a baked bundle file, checked: it loads as its pack
/// and its files have the digest written in it.
///
/// ```no_run
/// use promptreg_core::PromptRegistry;
/// use promptreg_remote::FromBundle;
/// use promptreg_signing::TrustedKeys;
///
/// let mut trusted = TrustedKeys::new();
/// trusted.add_file("release-keys.pub".as_ref())?;
/// let registry = PromptRegistry::from_bundle("prod.bundle", Some(&trusted))?;
/// let text = registry.render_plain("narrator")?;
/// # Ok::<(), promptreg_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct BakedBundle {
    pack: String,
    label: String,
    pub(crate) bundle: Bundle,
}

fn bundle_error(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Remote, format!("{}: {why}", path.display()))
}

impl BakedBundle {
    /// Reads and checks the baked bundle at `path`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Remote`] naming the file and what is wrong: unreadable,
    /// larger than 64 MiB, truncated or not a baked bundle, a bundle that
    /// does not load as a pack, files that do not have the digest
    /// written beside them (altered after export).
    pub fn read(path: impl AsRef<Path>) -> Result<BakedBundle, Error> {
        let path = path.as_ref();
        let size = std::fs::metadata(path)
            .map_err(|e| bundle_error(path, format!("cannot read the bundle: {e}")))?
            .len();
        if size > MAX_FILE {
            return Err(bundle_error(
                path,
                format!("the bundle is {size} bytes, more than the {MAX_FILE} read"),
            ));
        }
        let bytes = std::fs::read(path)
            .map_err(|e| bundle_error(path, format!("cannot read the bundle: {e}")))?;
        BakedBundle::from_slice(&bytes, &path.display().to_string())
    }

    /// Checks the baked bundle `bytes`, named `origin` in errors and in
    /// the provenance of its parts.
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read).
    pub fn from_slice(bytes: &[u8], origin: &str) -> Result<BakedBundle, Error> {
        if bytes.len() as u64 > MAX_FILE {
            return Err(Error::new(
                ErrorKind::Remote,
                format!(
                    "{origin}: the bundle is {} bytes, more than the {MAX_FILE} read",
                    bytes.len()
                ),
            ));
        }
        BakedBundle::parse(bytes, origin)
            .map_err(|why| Error::new(ErrorKind::Remote, format!("{origin}: {why}")))
    }

    fn parse(bytes: &[u8], origin: &str) -> Result<BakedBundle, String> {
        let file: File = serde_json::from_slice(bytes).map_err(|e| {
            let what = match e.classify() {
                serde_json::error::Category::Eof => "is truncated",
                _ => "is not a baked bundle",
            };
            format!("the file {what} ({e}); make one with `promptreg bundle export`")
        })?;
        if file.format != FORMAT {
            return Err(format!(
                "the file is of format `{}`, not `{FORMAT}`: made by another version of promptreg?",
                file.format
            ));
        }
        let signatures = file
            .signatures
            .iter()
            .map(|s| Signature::from_armored(s).map(|s| s.to_header()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let received = Received {
            raw: file.bundle.get().as_bytes().to_vec(),
            etag: format!("\"{}\"", file.digest),
            revision: file.revision,
            signatures,
        };
        let bundle = Bundle::validate(received, origin, &file.pack, &file.label)?;
        if bundle.digest != file.digest {
            return Err(format!(
                "the bundle's files have digest {}, not the {} written beside them: altered after export",
                bundle.digest, file.digest
            ));
        }
        Ok(BakedBundle {
            pack: file.pack,
            label: file.label,
            bundle,
        })
    }

    /// Writes `bundle`, in force for `pack` at `label`, to `path`: a
    /// temporary file beside, then a rename.
    pub(crate) fn write(
        bundle: &Bundle,
        pack: &str,
        label: &str,
        path: &Path,
    ) -> Result<(), Error> {
        let document = String::from_utf8(bundle.received.raw.clone())
            .ok()
            .and_then(|text| serde_json::value::RawValue::from_string(text).ok())
            .ok_or_else(|| bundle_error(path, "the bundle in force is not JSON"))?;
        let signatures = bundle
            .received
            .signatures
            .iter()
            .filter_map(|s| Signature::from_header(s).ok())
            .map(|s| s.to_armored())
            .collect();
        let file = File {
            format: FORMAT.to_owned(),
            pack: pack.to_owned(),
            label: label.to_owned(),
            revision: bundle.revision(),
            digest: bundle.digest.clone(),
            signatures,
            bundle: document,
        };
        let mut text = serde_json::to_vec(&file).unwrap_or_default();
        text.push(b'\n');
        let temp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&temp, &text)
            .and_then(|()| std::fs::rename(&temp, path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&temp);
                bundle_error(path, format!("cannot be written: {e}"))
            })
    }

    /// The pack it holds.
    pub fn pack(&self) -> &Pack {
        &self.bundle.pack
    }

    /// Every file of the pack, by path in it (`defaults/narrator.md`,
    /// `tests/narrator.toml`): what
    /// `PromptTests::from_files`
    /// takes to run the pack's tests.
    pub fn files(&self) -> Vec<(String, String)> {
        self.bundle.files()
    }

    /// The pack's name.
    pub fn pack_name(&self) -> &str {
        &self.pack
    }

    /// The label it is a revision of.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The label's revision it is, when the server named one.
    pub fn revision(&self) -> Option<u64> {
        self.bundle.revision()
    }

    /// The digest of its state, computed from its files.
    pub fn digest(&self) -> &str {
        &self.bundle.digest
    }

    /// The fingerprint of the key among `trusted` whose signature vouches
    /// for it as its pack, label and revision.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Signature`] saying why no signature does.
    pub fn verify(&self, trusted: &TrustedKeys) -> Result<String, Error> {
        self.bundle
            .verify(trusted, &self.pack, &self.label)
            .map_err(|why| Error::new(ErrorKind::Signature, why))
    }
}

/// A registry started from a baked bundle: in scope with
/// `use promptreg_remote::Follow`.
pub trait FromBundle: Sized {
    /// A registry holding the pack of the baked bundle at `path`
    /// (`promptreg bundle export`), checked like a download: it renders
    /// with no server at all. With `trusted`, only a bundle signed by one
    /// of those keys for its pack, label and revision is accepted.
    ///
    /// # Errors
    ///
    /// As [`BakedBundle::read`] and [`BakedBundle::verify`]; an error
    /// installing the pack.
    fn from_bundle(path: impl AsRef<Path>, trusted: Option<&TrustedKeys>) -> Result<Self, Error>;
}

impl FromBundle for PromptRegistry {
    fn from_bundle(
        path: impl AsRef<Path>,
        trusted: Option<&TrustedKeys>,
    ) -> Result<PromptRegistry, Error> {
        let baked = BakedBundle::read(path)?;
        if let Some(trusted) = trusted {
            baked.verify(trusted)?;
        }
        let registry = PromptRegistry::new();
        baked.pack().install(&registry)?;
        Ok(registry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_a_baked_bundle_says_so_and_how_to_make_one() {
        let truncated =
            BakedBundle::parse(b"{\"format\": \"promptreg-bundle/1\", \"pa", "x").unwrap_err();
        assert!(truncated.contains("is truncated"), "{truncated}");
        let other = BakedBundle::parse(b"[1, 2]", "x").unwrap_err();
        assert!(other.contains("not a baked bundle"), "{other}");
        assert!(other.contains("promptreg bundle export"), "{other}");
        let format = br#"{"format":"zip","pack":"p","label":"l","revision":1,"digest":"","signatures":[],"bundle":{}}"#;
        assert!(
            BakedBundle::parse(format, "x")
                .unwrap_err()
                .contains("format `zip`")
        );
        let signature = br#"{"format":"promptreg-bundle/1","pack":"p","label":"l","revision":1,"digest":"","signatures":["-----BEGIN PGP SIGNATURE-----"],"bundle":{}}"#;
        assert!(
            BakedBundle::parse(signature, "x")
                .unwrap_err()
                .contains("not an SSH signature")
        );
    }
}
