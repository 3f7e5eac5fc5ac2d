//! What a release's signature covers.

use std::fmt;

/// What a statement is about: a revision of the label, or the candidate
/// of a split running on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Subject {
    /// The label's revision of this number.
    Revision(u64),
    /// The candidate of the split of this id.
    Split(u64),
}

/// The text a release's signature is made over: the pack, the label, the
/// revision (or split) and the digest of the state, one per line.
///
/// ```text
/// promptreg release v1
/// pack web-agent
/// label production
/// revision 12
/// digest 3f9c01ab…
/// ```
///
/// Every field is signed, so a signature of one pack, label or revision
/// vouches for no other: an older release replayed by a server, or one
/// pack's signed state served as another's, fails to verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pack: String,
    label: String,
    subject: Subject,
    digest: String,
}

impl Statement {
    /// Revision `revision` of `label` of `pack`, holding the state of
    /// `digest` (a [`state_digest`](super::state_digest), in hex).
    pub fn revision(pack: &str, label: &str, revision: u64, digest: &str) -> Statement {
        Statement::new(pack, label, Subject::Revision(revision), digest)
    }

    /// The candidate of split `split` of `label` of `pack`, holding the
    /// state of `digest`.
    pub fn split(pack: &str, label: &str, split: u64, digest: &str) -> Statement {
        Statement::new(pack, label, Subject::Split(split), digest)
    }

    fn new(pack: &str, label: &str, subject: Subject, digest: &str) -> Statement {
        Statement {
            pack: pack.to_owned(),
            label: label.to_owned(),
            subject,
            digest: digest.to_ascii_lowercase(),
        }
    }

    /// The pack.
    pub fn pack(&self) -> &str {
        &self.pack
    }

    /// The label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The revision or split.
    pub fn subject(&self) -> Subject {
        self.subject
    }

    /// The state's digest, in lowercase hex.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The bytes signed: the text above, each line ending in `\n`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let (what, number) = match self.subject {
            Subject::Revision(n) => ("revision", n),
            Subject::Split(n) => ("split", n),
        };
        format!(
            "promptreg release v1\npack {}\nlabel {}\n{what} {number}\ndigest {}\n",
            self.pack, self.label, self.digest
        )
        .into_bytes()
    }
}

impl fmt::Display for Statement {
    /// `web-agent` at `production` revision 12 (3f9c01ab)
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let short = self.digest.get(..8).unwrap_or(&self.digest);
        match self.subject {
            Subject::Revision(n) => write!(
                f,
                "`{}` at `{}` revision {n} ({short})",
                self.pack, self.label
            ),
            Subject::Split(n) => write!(
                f,
                "`{}` at `{}` split {n}'s candidate ({short})",
                self.pack, self.label
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signed_text_names_every_field_on_a_line_of_its_own() {
        let text = Statement::revision("web-agent", "production", 12, "3F9C").to_bytes();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "promptreg release v1\npack web-agent\nlabel production\nrevision 12\ndigest 3f9c\n"
        );
        let split = Statement::split("web-agent", "production", 4, "3f9c").to_bytes();
        assert!(String::from_utf8(split).unwrap().contains("\nsplit 4\n"));
    }
}
