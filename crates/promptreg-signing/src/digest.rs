//! Content digests: of one entry's files, and of a label's state. The
//! store addresses versions and revisions by them; a follower recomputes
//! them from the files it received, so a signature over a state's digest
//! vouches for the files themselves.

use sha2::{Digest, Sha256};

/// The SHA-256, in hex, of the files' canonical form: for each file in
/// path order, the path's length and bytes, then the content's length and
/// bytes (lengths as 8-byte big-endian), so no two sets of files share a
/// form.
pub fn files_digest<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    let mut files: Vec<(&str, &[u8])> = files.into_iter().collect();
    files.sort_unstable_by_key(|(path, _)| *path);
    let mut hasher = Sha256::new();
    for (path, bytes) in files {
        hasher.update((path.len() as u64).to_be_bytes());
        hasher.update(path.as_bytes());
        hasher.update((bytes.len() as u64).to_be_bytes());
        hasher.update(bytes);
    }
    hex(&hasher.finalize())
}

/// The address of a label's state: the SHA-256, in hex, of each entry's
/// name and [`files_digest`] (`NAME NUL DIGEST LF`), the entries sorted by
/// name.
pub fn state_digest<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut entries: Vec<(&str, &str)> = entries.into_iter().collect();
    entries.sort_unstable();
    let mut hasher = Sha256::new();
    for (name, digest) in entries {
        hasher.update(name.as_bytes());
        hasher.update(b"\0");
        hasher.update(digest.as_bytes());
        hasher.update(b"\n");
    }
    hex(&hasher.finalize())
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canonical_form_separates_paths_from_contents_and_ignores_order() {
        let a = files_digest([("ab", b"c".as_slice())]);
        let b = files_digest([("a", b"bc".as_slice())]);
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        let one = files_digest([("x", b"1".as_slice()), ("y", b"2".as_slice())]);
        let other = files_digest([("y", b"2".as_slice()), ("x", b"1".as_slice())]);
        assert_eq!(one, other);
    }

    #[test]
    fn a_state_digest_depends_on_each_entry_and_not_on_their_order() {
        let one = state_digest([("a", "1"), ("b", "2")]);
        assert_eq!(one, state_digest([("b", "2"), ("a", "1")]));
        assert_ne!(one, state_digest([("a", "1"), ("b", "3")]));
    }
}
