//! What the store refuses to keep of the text a user gives it: checked
//! before any write, the same way whether the text came from the CLI, the
//! server or the library, so that a store never holds what `check` would
//! refuse after a pull, nor what one backend keeps and the other cannot.

use crate::error::{Error, ErrorKind};
use crate::files::PackFiles;

/// The longest message of a push, or reason of a label move, in bytes
/// (4 KiB): a line or a paragraph for the history, not a document.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// Refuses a push's message or a move's reason (`field`) holding a NUL
/// byte (PostgreSQL cannot store one in text) or longer than
/// [`MAX_MESSAGE_BYTES`].
pub(crate) fn check_message(field: &str, text: &str) -> Result<(), Error> {
    if let Some(offset) = text.find('\0') {
        return Err(nul_in(&format!("the {field}"), offset));
    }
    if text.len() > MAX_MESSAGE_BYTES {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "the {field} is {} bytes long, more than the {MAX_MESSAGE_BYTES} the store keeps: shorten it; nothing was written",
                text.len()
            ),
        ));
    }
    Ok(())
}

/// Refuses files holding a NUL byte, as `check` refuses them on disk;
/// names a file by its path in the folder read, if it was read from one.
pub(crate) fn check_files(files: &PackFiles) -> Result<(), Error> {
    for (path, bytes) in files.iter() {
        if let Some(offset) = bytes.iter().position(|&b| b == 0) {
            let path = match files.root() {
                Some(root) => root.join(path).display().to_string(),
                None => path.to_owned(),
            };
            let path = promptreg::printable(&promptreg::abbreviate(&path, 200)).into_owned();
            return Err(nul_in(&format!("file `{path}`"), offset));
        }
    }
    Ok(())
}

fn nul_in(what: &str, offset: usize) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!(
            "{what} holds a NUL byte at byte offset {offset}: the store keeps text only; remove it, nothing was written"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_at_the_limit_passes_and_one_byte_more_does_not() {
        assert!(check_message("message", &"a".repeat(MAX_MESSAGE_BYTES)).is_ok());
        let err = check_message("reason", &"a".repeat(MAX_MESSAGE_BYTES + 1)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(
            err.to_string().starts_with("the reason is 4097 bytes"),
            "{err}"
        );
    }

    #[test]
    fn a_nul_is_refused_naming_the_field_and_offset() {
        let err = check_message("message", "ok\0").unwrap_err();
        assert!(
            err.to_string()
                .contains("the message holds a NUL byte at byte offset 2"),
            "{err}"
        );
        let mut files = PackFiles::default();
        files.insert("defaults/a.md", "fine");
        files.insert("defaults/b.md", "x\0y");
        let err = check_files(&files).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("file `defaults/b.md` holds a NUL byte at byte offset 1"),
            "{err}"
        );
    }
}
