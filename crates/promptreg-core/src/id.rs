//! [`PromptId`]: what a valid prompt id is.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use crate::diagnostic::{NAME_MAX, abbreviate};
use crate::error::{Error, ErrorKind};

/// The longest id accepted, in bytes (ids are ASCII, so also in characters).
pub const MAX_ID_LEN: usize = 128;

/// A validated prompt id such as `planner.system` or `tool-get-goal`.
///
/// Ids name prompts in code, in settings files and on disk (a user's
/// `<id>.md` file), so the rules keep every id a safe, portable file name:
///
/// - 1 to 128 characters;
/// - ASCII letters, digits, `.`, `_` and `-` only (no `/`, `\`, spaces or
///   control characters);
/// - starting with a letter or a digit (no hidden files, no leading `-`);
/// - never containing `..`.
///
/// ```
/// use promptreg_core::PromptId;
///
/// let id = PromptId::new("planner.system")?;
/// assert_eq!(id.as_str(), "planner.system");
///
/// assert!(PromptId::new("../../etc/passwd").is_err());
/// assert!(PromptId::new("a/b").is_err());
/// # Ok::<(), promptreg_core::Error>(())
/// ```
///
/// Cloning is cheap (a reference count).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PromptId(Arc<str>);

impl PromptId {
    /// Validates `id` and wraps it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidId`] naming the id and the rule it breaks.
    pub fn new(id: &str) -> Result<Self, Error> {
        validate(id)?;
        Ok(PromptId(Arc::from(id)))
    }

    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Checks `id` against the rules documented on [`PromptId`].
///
/// # Errors
///
/// [`ErrorKind::InvalidId`] naming the rule it breaks.
pub fn validate(id: &str) -> Result<(), Error> {
    match broken_rule(id) {
        None => Ok(()),
        Some(rule) => Err(Error::new(
            ErrorKind::InvalidId,
            format!(
                "invalid prompt id `{}`: {rule}",
                abbreviate(id, NAME_MAX).escape_debug()
            ),
        )
        .with_id(id)),
    }
}

fn broken_rule(id: &str) -> Option<String> {
    if id.is_empty() {
        return Some("an id cannot be empty".into());
    }
    if id.len() > MAX_ID_LEN {
        return Some(format!(
            "an id has at most {MAX_ID_LEN} characters, this one has {}",
            id.chars().count()
        ));
    }
    if let Some(c) = id.chars().find(|c| !is_id_char(*c)) {
        return Some(format!(
            "`{}` is not allowed; use ASCII letters, digits, `.`, `_` and `-`",
            c.escape_debug()
        ));
    }
    if !id.as_bytes()[0].is_ascii_alphanumeric() {
        return Some("an id starts with a letter or a digit".into());
    }
    if id.contains("..") {
        return Some("an id cannot contain `..`".into());
    }
    None
}

fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

impl Deref for PromptId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for PromptId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for PromptId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PromptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An id serialises as its text.
impl serde::Serialize for PromptId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self)
    }
}

impl fmt::Debug for PromptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl std::str::FromStr for PromptId {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        PromptId::new(s)
    }
}

impl PartialEq<str> for PromptId {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for PromptId {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_ids_of_both_seed_documents() {
        for id in [
            "inline-edit.system",
            "webagent-narrator.system",
            "goal-running",
            "tool-get-goal",
            "auditor",
            "a",
            "0_x",
        ] {
            assert!(PromptId::new(id).is_ok(), "{id}");
        }
    }

    #[test]
    fn refuses_ids_that_are_not_safe_file_names() {
        for id in [
            "",
            "../../etc/passwd",
            "a/b",
            "a\\b",
            "a..b",
            ".hidden",
            "-flag",
            "_x",
            "has space",
            "tab\there",
            "naïve",
            "nul\0",
        ] {
            let err = PromptId::new(id).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidId, "{id:?}");
            assert_eq!(err.id(), Some(id));
        }
    }

    #[test]
    fn length_limit_is_128() {
        assert!(PromptId::new(&"a".repeat(128)).is_ok());
        let err = PromptId::new(&"a".repeat(129)).unwrap_err();
        assert!(err.to_string().contains("at most 128"), "{err}");
    }

    #[test]
    fn error_names_the_offending_character() {
        let err = PromptId::new("tool-../x").unwrap_err();
        assert!(err.to_string().contains("`/`"), "{err}");
    }
}
