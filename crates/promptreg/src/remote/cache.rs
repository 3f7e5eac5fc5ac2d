//! The disk cache: the last good bundle of each server, pack and label,
//! so that a start with the server down still renders what was last
//! followed.
//!
//! A file holds one header line, `promptreg-follow sha256=<hex>
//! etag=<etag> revision=<n>` (the revision when the server named one),
//! then the bundle as received. It is written to a temporary
//! file and renamed, so a reader sees a whole file or the previous one;
//! the hash catches a truncated or altered file, which is then ignored.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

const MAGIC: &str = "promptreg-follow";

/// The cache file of one followed label.
#[derive(Debug, Clone)]
pub(crate) struct CacheFile {
    path: PathBuf,
}

/// What a cache file held.
#[derive(Debug)]
pub(crate) struct Cached {
    pub(crate) etag: String,
    /// The label's revision, when the server named it (files written
    /// before revisions have none).
    pub(crate) revision: Option<u64>,
    pub(crate) raw: Vec<u8>,
}

impl CacheFile {
    /// The file for `server`, `pack` and `label` under `dir`.
    pub(crate) fn new(dir: &Path, server: &str, pack: &str, label: &str) -> CacheFile {
        let name = format!("{}--{pack}--{label}.bundle", file_name_of(server));
        CacheFile {
            path: dir.join(name),
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
        let revision = fields
            .next()
            .and_then(|r| r.strip_prefix("revision="))
            .and_then(|r| r.parse().ok());
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
            etag: etag.to_owned(),
            revision,
            raw: raw.to_vec(),
        })
    }

    /// Writes `raw` with its ETag and revision: a temporary file beside,
    /// then a rename.
    pub(crate) fn write(
        &self,
        etag: &str,
        revision: Option<u64>,
        raw: &[u8],
    ) -> Result<(), String> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let temp = self
            .path
            .with_extension(format!("tmp{}", std::process::id()));
        let revision = revision
            .map(|r| format!(" revision={r}"))
            .unwrap_or_default();
        let header = format!(
            "{MAGIC} sha256={} etag={}{revision}\n",
            hex(&Sha256::digest(raw)),
            etag.replace(' ', "")
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

    #[test]
    fn what_is_written_reads_back() {
        let (_dir, file) = cache();
        assert!(file.read().unwrap().is_none());
        file.write("\"abc\"", Some(7), b"{\"x\":1}").unwrap();
        let got = file.read().unwrap().unwrap();
        assert_eq!(
            (got.etag.as_str(), got.revision, got.raw.as_slice()),
            ("\"abc\"", Some(7), &b"{\"x\":1}"[..])
        );
        // A file written before revisions has none.
        file.write("\"abc\"", None, b"{}").unwrap();
        assert_eq!(file.read().unwrap().unwrap().revision, None);
        assert!(
            file.path()
                .ends_with("127.0.0.1_7878--web-agent--production.bundle")
        );
    }

    #[test]
    fn a_truncated_or_altered_file_is_refused_with_its_path() {
        let (_dir, file) = cache();
        file.write("\"abc\"", None, b"{\"x\":1}").unwrap();
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
