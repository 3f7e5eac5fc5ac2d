//! Prompt files, as every source reads them: a pack's `defaults/` folder
//! and the user's prompt directories alike.
//!
//! - reading one file as text: a size limit, UTF-8 only, a byte order mark
//!   dropped, no NUL byte, regular files only, "not found" told apart from
//!   every other failure, and an optional admission check of where the
//!   file leads before a byte of it is read ([`read_file`]);
//! - listing the `*.md` files of a folder ([`markdown_names`]);
//! - what a name `<id>[.<locale>].md` stands for ([`file_key`]);
//! - the warnings every prompt file gets: a file-name locale that names no
//!   language, template syntax in a literal file, unused variables,
//!   bidirectional-text controls.
//!
//! Each source turns what it reads into its own diagnostics: a pack's
//! undeclared file is an error, a user's unknown file a warning. The user
//! configuration's trust boundary is an admission check layered on top.

mod names;
mod warnings;

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, DiagnosticCode, LineIndex};

/// The error of a directory that cannot be listed: every reader of a
/// folder (defaults, snippets, shared files, tests, prompt directories)
/// says it the same way.
pub(crate) fn unreadable_dir(dir: &Path, error: &io::Error) -> Diagnostic {
    Diagnostic::error(
        DiagnosticCode::Io,
        format!("cannot read the directory: {error}"),
    )
    .in_file(dir)
}

#[cfg(feature = "packs")]
pub(crate) use names::names_ending;
pub(crate) use names::{DeclaredIds, FileKey, file_key, file_locale_warning, markdown_names};
pub(crate) use warnings::prompt_file_warnings;
#[cfg_attr(not(feature = "l10n"), allow(unused_imports))]
pub(crate) use warnings::{BIDI_SUGGESTION, bidi_count, is_bidi_control};

/// The "blank counts as absent" rule, written once: `text` trimmed, or
/// `None` when nothing but whitespace is left. A blank `inline`, `file`,
/// prompt file or settings file is treated as if it were not there.
pub(crate) fn non_blank(text: &str) -> Option<&str> {
    Some(text.trim()).filter(|t| !t.is_empty())
}

const BOM: &str = "\u{feff}";

/// A file's text and the file actually read.
#[derive(Debug)]
pub(crate) struct FileText {
    pub(crate) text: String,
    /// The path read, symbolic links and `..` resolved, when it differs
    /// from the path the file was found at.
    pub(crate) target: Option<PathBuf>,
}

/// Reads `path` as UTF-8 text.
///
/// `Ok(None)` when the file does not exist; a diagnostic for anything else
/// that goes wrong: a directory or another non-regular file (a FIFO would
/// block) where a file was expected, a file over `max_bytes`, invalid UTF-8
/// or a NUL byte (with the byte offset), any other read error.
/// A UTF-8 byte order mark is dropped.
///
/// Without an admission check there is nothing to resolve the path for:
/// the system follows its links when it opens the file.
pub(crate) fn read_text(path: &Path, max_bytes: u64) -> Result<Option<String>, Diagnostic> {
    match metadata(path)? {
        Some(meta) => read_with(path, path, &meta, max_bytes, None).map(Some),
        None => Ok(None),
    }
}

/// The metadata of what `path` leads to, links followed; `None` when it
/// does not exist.
pub(crate) fn metadata(path: &Path) -> Result<Option<fs::Metadata>, Diagnostic> {
    match fs::metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(path, e)),
    }
}

/// A check of where a file leads before it is read: given the path as
/// found and its resolved target, an error refuses the file. The user
/// configuration's trust boundary is one.
pub(crate) type Admission<'a> = &'a dyn Fn(&Path, &Path) -> Result<(), Diagnostic>;

/// [`read_text`], through the path resolved: with an `admit` check, a file
/// it refuses is not read at all.
pub(crate) fn read_file(
    path: &Path,
    max_bytes: u64,
    admit: Option<Admission<'_>>,
) -> Result<Option<FileText>, Diagnostic> {
    let Some(target) = resolve(path).map_err(|e| io_error(path, e))? else {
        return Ok(None);
    };
    if let Some(admit) = admit {
        admit(path, &target)?;
    }
    // Read through the path checked, so that a link changed in between is
    // not followed.
    let meta = fs::metadata(&target).map_err(|e| io_error(path, e))?;
    let text = read_with(path, &target, &meta, max_bytes, admit)?;
    let target = leads_elsewhere(path, &target).then_some(target);
    Ok(Some(FileText { text, target }))
}

/// Whether resolving `path` to `target` changed more than making it
/// absolute: a symbolic link or a `..` on the way.
pub(crate) fn leads_elsewhere(path: &Path, target: &Path) -> bool {
    std::path::absolute(path).map_or(true, |absolute| absolute != target)
}

/// `path` with every symbolic link and `..` resolved; `None` when it (or
/// what a link points to) does not exist.
pub(crate) fn resolve(path: &Path) -> io::Result<Option<PathBuf>> {
    match fs::canonicalize(path) {
        Ok(target) => Ok(Some(target)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn io_error(path: &Path, e: io::Error) -> Diagnostic {
    Diagnostic::error(DiagnosticCode::Io, format!("cannot read the file: {e}")).in_file(path)
}

/// Reads `target`, what `path` leads to, whose metadata is `meta`
/// (diagnostics name `path`, as the user wrote or placed it).
pub(crate) fn read_with(
    path: &Path,
    target: &Path,
    meta: &fs::Metadata,
    max_bytes: u64,
    admit: Option<Admission<'_>>,
) -> Result<String, Diagnostic> {
    if meta.is_dir() {
        return Err(Diagnostic::error(
            DiagnosticCode::Io,
            "the path is a directory; a file is expected",
        )
        .in_file(path));
    }
    if !meta.is_file() {
        // A FIFO or a device would block the reader or never end.
        return Err(Diagnostic::error(
            DiagnosticCode::Io,
            "expected a regular file, found a FIFO, socket or device",
        )
        .in_file(path));
    }
    let too_large = || {
        Diagnostic::error(
            DiagnosticCode::FileTooLarge,
            format!("the file is larger than the limit of {max_bytes} bytes"),
        )
        .in_file(path)
    };
    if meta.len() > max_bytes {
        return Err(too_large());
    }
    let file = fs::File::open(target).map_err(|e| io_error(path, e))?;
    if let (Some(admit), Some(opened)) = (admit, opened_path(&file)) {
        // A folder on the way replaced by a link since it was resolved.
        admit(path, &opened)?;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The file may grow between the size check and the read.
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(path, e))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large());
    }
    decode(bytes).map_err(|d| d.in_file(path))
}

/// The path of the file `file` is open on, where the system tells it.
#[cfg(target_os = "linux")]
fn opened_path(file: &fs::File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

#[cfg(not(target_os = "linux"))]
fn opened_path(_file: &fs::File) -> Option<PathBuf> {
    None
}

/// UTF-8 text without a leading byte order mark and without NUL bytes.
fn decode(bytes: Vec<u8>) -> Result<String, Diagnostic> {
    if let Some(offset) = bytes.iter().position(|&b| b == 0) {
        let d = Diagnostic::error(
            DiagnosticCode::InvalidUtf8,
            format!("NUL byte at byte offset {offset}: this is not a text file"),
        );
        return Err(at_byte(d, &bytes, offset));
    }
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with(BOM) {
                text.drain(..BOM.len());
            }
            Ok(text)
        }
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            let d = Diagnostic::error(
                DiagnosticCode::InvalidUtf8,
                format!("invalid UTF-8 at byte offset {offset}"),
            )
            .suggest(Some("save the file as UTF-8".to_owned()));
            Err(at_byte(d, e.as_bytes(), offset))
        }
    }
}

/// Locates byte `offset`, the first that is not text (the bytes are read
/// leniently: an invalid sequence shows as one replacement character).
fn at_byte(d: Diagnostic, bytes: &[u8], offset: usize) -> Diagnostic {
    let text = String::from_utf8_lossy(bytes);
    let start = String::from_utf8_lossy(&bytes[..offset]).len();
    let end = text[start..]
        .chars()
        .next()
        .map_or(start, |c| start + c.len_utf8());
    d.at(&LineIndex::new(&text), start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_is_absent_and_text_is_trimmed() {
        assert_eq!(non_blank(""), None);
        assert_eq!(non_blank(" \n\t\r\n"), None);
        assert_eq!(non_blank("  Be brief.\n"), Some("Be brief."));
    }

    #[test]
    fn missing_is_none_and_a_bom_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_text(&dir.path().join("missing.md"), 10).unwrap(), None);
        let path = dir.path().join("bom.md");
        fs::write(&path, "\u{feff}hello").unwrap();
        assert_eq!(read_text(&path, 100).unwrap().as_deref(), Some("hello"));
    }

    #[test]
    fn invalid_utf8_names_the_file_and_offset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.md");
        fs::write(&path, b"abc\xffdef").unwrap();
        let d = read_text(&path, 100).unwrap_err();
        assert_eq!(d.code, DiagnosticCode::InvalidUtf8);
        assert_eq!(d.file.as_deref(), Some(path.as_path()));
        assert!(d.message.contains("byte offset 3"), "{d}");
    }

    #[test]
    fn too_large_and_directories_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.md");
        fs::write(&path, "x".repeat(11)).unwrap();
        assert_eq!(
            read_text(&path, 10).unwrap_err().code,
            DiagnosticCode::FileTooLarge
        );
        assert_eq!(read_text(&path, 11).unwrap().unwrap().len(), 11);
        assert_eq!(
            read_text(dir.path(), 10).unwrap_err().code,
            DiagnosticCode::Io
        );
    }

    #[test]
    fn an_admission_check_refuses_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.md");
        fs::write(&path, "hello").unwrap();
        let refuse = |p: &Path, _: &Path| -> Result<(), Diagnostic> {
            Err(Diagnostic::error(DiagnosticCode::OutsideProject, "no").in_file(p))
        };
        let d = read_file(&path, 100, Some(&refuse)).unwrap_err();
        assert_eq!(d.code, DiagnosticCode::OutsideProject);
        let admit = |_: &Path, _: &Path| Ok(());
        assert_eq!(
            read_file(&path, 100, Some(&admit)).unwrap().unwrap().text,
            "hello"
        );
    }
}
