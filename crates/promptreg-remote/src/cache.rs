//! The disk cache: the last good bundle of each server, pack and label,
//! so that a start with the server down still renders what was last
//! followed.
//!
//! A file holds one header line, `promptreg-follow sha256=<hex>
//! etag=<etag>` and the bundle's headers as the wire protocol writes them
//! for a file ([`BundleHeaders::to_fields`]: `revision=<n>
//! signatures=<a>,<b>` when the server named them; a split's candidate,
//! in a `.candidate` file beside, `split=id=<id>;share=<basis
//! points>;digest=<etag>`), then the bundle as received. It is written to a temporary
//! file and renamed, so a reader sees a whole file or the previous one;
//! the hash catches a truncated or altered file, which is then ignored.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::bundle::Received;
use crate::split::SplitRule;
use crate::wire::{BundleHeaders, SplitHeader};

const MAGIC: &str = "promptreg-follow";

/// A candidate's split as files written before the wire protocol had one
/// form wrote it: `split=<id> share=<basis points>`.
fn legacy_split(fields: &[&str]) -> Option<SplitRule> {
    let number = |name: &str| {
        fields
            .iter()
            .filter_map(|f| f.split_once('='))
            .find(|(k, _)| *k == name)
            .and_then(|(_, v)| v.parse::<u64>().ok())
    };
    Some(SplitRule {
        id: number("split")?,
        basis_points: u32::try_from(number("share")?).unwrap_or(u32::MAX),
    })
}

/// The cache file of one followed label.
#[derive(Debug, Clone)]
pub(crate) struct CacheFile {
    path: PathBuf,
}

/// What a cache file held.
#[derive(Debug)]
pub(crate) struct Cached {
    /// The bundle (files written before revisions have none; before
    /// signatures, no signatures).
    pub(crate) received: Received,
    /// For a split's candidate: the split, as it was when written.
    pub(crate) split: Option<SplitRule>,
}

impl CacheFile {
    /// The file for `server`, `pack` and `label` under `dir`.
    pub(crate) fn new(dir: &Path, server: &str, pack: &str, label: &str) -> CacheFile {
        let name = format!("{}--{pack}--{label}.bundle", file_name_of(server));
        CacheFile {
            path: dir.join(name),
        }
    }

    /// The file of the candidate of a split of the same label, beside.
    pub(crate) fn candidate(&self) -> CacheFile {
        CacheFile {
            path: self.path.with_extension("candidate"),
        }
    }

    /// Removes the file (a split that ended); a file already gone is fine.
    pub(crate) fn remove(&self) -> Result<(), String> {
        match fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(self.problem(&format!("cannot be removed: {e}"))),
        }
    }

    #[cfg(test)]
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The cached bundle; `Ok(None)` when there is none, `Err` with why
    /// when the file is unreadable, truncated or altered.
    pub(crate) fn read(&self) -> Result<Option<Cached>, String> {
        let bytes = match fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.problem(&format!("cannot be read: {e}"))),
        };
        self.parse(&bytes).map(Some)
    }

    fn parse(&self, bytes: &[u8]) -> Result<Cached, String> {
        let end = bytes
            .iter()
            .position(|b| *b == b'\n')
            .ok_or_else(|| self.problem("has no header line"))?;
        let header = std::str::from_utf8(&bytes[..end])
            .map_err(|_| self.problem("has a header that is not UTF-8"))?;
        let mut fields = header.split(' ');
        let (magic, hash, etag) = (fields.next(), fields.next(), fields.next());
        // Then the bundle's headers as `name=value` fields, in any order;
        // unknown ones are ignored (a newer promptreg may write more).
        let fields: Vec<&str> = fields.collect();
        let headers = BundleHeaders::from_fields(fields.iter().copied());
        let split = headers
            .split
            .map(|s| s.rule)
            .or_else(|| legacy_split(&fields));
        let (Some(MAGIC), Some(hash), Some(etag)) = (
            magic,
            hash.and_then(|h| h.strip_prefix("sha256=")),
            etag.and_then(|e| e.strip_prefix("etag=")),
        ) else {
            return Err(self.problem("does not start with a promptreg cache header"));
        };
        let raw = &bytes[end + 1..];
        if hex(&Sha256::digest(raw)) != hash {
            return Err(self.problem("does not match its hash (truncated or altered)"));
        }
        Ok(Cached {
            received: Received {
                raw: raw.to_vec(),
                etag: etag.to_owned(),
                revision: headers.revision,
                signatures: headers.signatures,
            },
            split,
        })
    }

    /// Writes the bundle with its ETag, revision and signatures (or, for
    /// a candidate, its split): a temporary file beside, then a rename.
    pub(crate) fn write(&self, bundle: &Received, split: Option<SplitRule>) -> Result<(), String> {
        let (etag, raw) = (&bundle.etag, &bundle.raw);
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let temp = self
            .path
            .with_extension(format!("tmp{}", std::process::id()));
        let headers = BundleHeaders {
            revision: bundle.revision,
            signatures: bundle.signatures.clone(),
            split: split.map(|rule| SplitHeader {
                rule,
                digest: etag.trim_matches('"').to_owned(),
            }),
        };
        let header = format!(
            "{MAGIC} sha256={} etag={}{}\n",
            hex(&Sha256::digest(raw)),
            etag.replace(' ', ""),
            headers.to_fields()
        );
        let written = fs::create_dir_all(dir)
            .and_then(|()| {
                let mut file = fs::File::create(&temp)?;
                file.write_all(header.as_bytes())?;
                file.write_all(raw)?;
                file.sync_all()
            })
            .and_then(|()| fs::rename(&temp, &self.path));
        written.map_err(|e| {
            let _ = fs::remove_file(&temp);
            self.problem(&format!("cannot be written: {e}"))
        })
    }

    fn problem(&self, what: &str) -> String {
        format!(
            "the cache file {} {what}; it is ignored",
            self.path.display()
        )
    }
}

/// The platform's cache folder for followed bundles:
/// `$XDG_CACHE_HOME/promptreg/follow`, else `~/.cache/promptreg/follow`.
pub(crate) fn default_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("promptreg").join("follow"))
}

/// A server URL as a file name: letters, digits, `-` and `.` kept, the
/// rest `_`.
fn file_name_of(server: &str) -> String {
    let bare = server.split_once("://").map_or(server, |(_, rest)| rest);
    bare.trim_end_matches('/')
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache() -> (tempfile::TempDir, CacheFile) {
        let dir = tempfile::tempdir().unwrap();
        let file = CacheFile::new(
            dir.path(),
            "http://127.0.0.1:7878/",
            "web-agent",
            "production",
        );
        (dir, file)
    }

    fn received(etag: &str, revision: Option<u64>, raw: &[u8]) -> Received {
        Received {
            raw: raw.to_vec(),
            etag: etag.to_owned(),
            revision,
            signatures: Vec::new(),
        }
    }

    #[test]
    fn what_is_written_reads_back() {
        let (_dir, file) = cache();
        assert!(file.read().unwrap().is_none());
        let mut bundle = received("\"abc\"", Some(7), b"{\"x\":1}");
        bundle.signatures = vec!["c2ln+/=".to_owned(), "b3RoZXI=".to_owned()];
        file.write(&bundle, None).unwrap();
        let got = file.read().unwrap().unwrap().received;
        assert_eq!(
            (got.etag.as_str(), got.revision, got.raw.as_slice()),
            ("\"abc\"", Some(7), &b"{\"x\":1}"[..])
        );
        assert_eq!(got.signatures, bundle.signatures);
        // A file written before revisions has none.
        file.write(&received("\"abc\"", None, b"{}"), None).unwrap();
        let got = file.read().unwrap().unwrap().received;
        assert_eq!((got.revision, got.signatures.len()), (None, 0));
        // A candidate's file keeps its split; removing it twice is fine.
        let candidate = file.candidate();
        let rule = SplitRule {
            id: 4,
            basis_points: 1000,
        };
        candidate
            .write(&received("\"c\"", None, b"{}"), Some(rule))
            .unwrap();
        assert_eq!(candidate.read().unwrap().unwrap().split, Some(rule));
        assert!(
            candidate
                .path()
                .ends_with("127.0.0.1_7878--web-agent--production.candidate")
        );
        candidate.remove().unwrap();
        candidate.remove().unwrap();
        assert!(candidate.read().unwrap().is_none());
        assert!(
            file.path()
                .ends_with("127.0.0.1_7878--web-agent--production.bundle")
        );
    }

    #[test]
    fn a_truncated_or_altered_file_is_refused_with_its_path() {
        let (_dir, file) = cache();
        file.write(&received("\"abc\"", None, b"{\"x\":1}"), None)
            .unwrap();
        let whole = fs::read(file.path()).unwrap();
        fs::write(file.path(), &whole[..whole.len() - 2]).unwrap();
        let error = file.read().unwrap_err();
        assert!(error.contains("does not match its hash"), "{error}");
        assert!(
            error.contains(&file.path().display().to_string()),
            "{error}"
        );
        fs::write(file.path(), b"garbage").unwrap();
        assert!(file.read().unwrap_err().contains("no header"));
    }
}
