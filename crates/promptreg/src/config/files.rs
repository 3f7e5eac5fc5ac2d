//! Reading the user's files: where they are, and reading one safely (UTF-8,
//! size limit, "not found" told apart from every other failure, and, for a
//! project's configuration, nothing outside the project).

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::trust::Boundary;
use crate::diagnostic::{Diagnostic, DiagnosticCode, LineIndex};

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
pub(crate) fn read_text(path: &Path, max_bytes: u64) -> Result<Option<String>, Diagnostic> {
    Ok(read_file(path, max_bytes, None)?.map(|file| file.text))
}

/// [`read_text`], through the path resolved: with a `boundary`, a file
/// that resolves outside it is refused before a byte of it is read (`what`
/// says what it is in the refusal: "prompt file").
pub(crate) fn read_file(
    path: &Path,
    max_bytes: u64,
    boundary: Option<(&Boundary, &str)>,
) -> Result<Option<FileText>, Diagnostic> {
    let Some(target) = resolve(path).map_err(|e| io_error(path, e))? else {
        return Ok(None);
    };
    if let Some((boundary, what)) = boundary {
        boundary.admit(what, path, &target)?;
    }
    // Read through the path checked, so that a link changed in between is
    // not followed.
    let text = read_resolved(path, &target, max_bytes, boundary)?;
    let target = leads_elsewhere(path, &target).then_some(target);
    Ok(Some(FileText { text, target }))
}

/// Whether resolving `path` to `target` changed more than making it
/// absolute: a symbolic link or a `..` on the way.
pub(crate) fn leads_elsewhere(path: &Path, target: &Path) -> bool {
    std::path::absolute(path).map_or(true, |absolute| absolute != target)
}

/// A folder, resolved, when it exists; with a `boundary`, refused when it
/// resolves outside it (`what` names it in the refusal).
pub(crate) fn resolve_dir(
    dir: &Path,
    boundary: Option<(&Boundary, &str)>,
) -> Result<Option<PathBuf>, Diagnostic> {
    let unreadable = |e: io::Error| {
        Diagnostic::error(
            DiagnosticCode::Io,
            format!("cannot read the directory: {e}"),
        )
        .in_file(dir)
    };
    let Some(target) = resolve(dir).map_err(unreadable)? else {
        return Ok(None);
    };
    if let Some((boundary, what)) = boundary {
        boundary.admit(what, dir, &target)?;
    }
    Ok(Some(target))
}

/// `path` with every symbolic link and `..` resolved; `None` when it (or
/// what a link points to) does not exist.
fn resolve(path: &Path) -> io::Result<Option<PathBuf>> {
    match fs::canonicalize(path) {
        Ok(target) => Ok(Some(target)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn io_error(path: &Path, e: io::Error) -> Diagnostic {
    Diagnostic::error(DiagnosticCode::Io, format!("cannot read the file: {e}")).in_file(path)
}

/// Reads the resolved `target` of `path` (diagnostics name `path`, as the
/// user wrote or placed it).
fn read_resolved(
    path: &Path,
    target: &Path,
    max_bytes: u64,
    boundary: Option<(&Boundary, &str)>,
) -> Result<String, Diagnostic> {
    let meta = fs::metadata(target).map_err(|e| io_error(path, e))?;
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
    if let (Some((boundary, what)), Some(opened)) = (boundary, opened_path(&file)) {
        // A folder on the way replaced by a link since it was resolved.
        boundary.admit(what, path, &opened)?;
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

/// Resolves a path written by a user: `~` and `~/...` under home, an
/// absolute path as is, a relative one against cwd. `None` for a relative
/// path when there is no cwd.
pub(crate) fn expand(raw: &str, home: &Path, cwd: Option<&Path>) -> Option<PathBuf> {
    if raw == "~" {
        return Some(home.to_path_buf());
    }
    if let Some(rest) = raw.strip_prefix("~/") {
        return Some(home.join(rest));
    }
    let path = Path::new(raw);
    if path.is_absolute() {
        Some(path.to_path_buf())
    } else {
        cwd.map(|cwd| cwd.join(path))
    }
}

/// The global and local prompt directories of a declared prompts
/// directory (`dir`, as in [`ConfigSpec::prompts_dir`](super::ConfigSpec::prompts_dir)).
///
/// A relative directory is joined to home (global) and to `cwd` (local,
/// `None` without a project); `~`, `~/...` or an absolute directory is a
/// single directory, read as the global one, and there is no local one.
///
/// ```
/// use std::path::{Path, PathBuf};
/// use promptreg::config::prompt_dirs;
///
/// let (home, cwd) = (Path::new("/home/u"), Some(Path::new("/work/p")));
/// assert_eq!(prompt_dirs(".app/prompts", home, cwd),
///     (PathBuf::from("/home/u/.app/prompts"), Some(PathBuf::from("/work/p/.app/prompts"))));
/// assert_eq!(prompt_dirs("~", home, cwd), (PathBuf::from("/home/u"), None));
/// assert_eq!(prompt_dirs("~/x", home, cwd), (PathBuf::from("/home/u/x"), None));
/// ```
pub fn prompt_dirs(dir: &str, home: &Path, cwd: Option<&Path>) -> (PathBuf, Option<PathBuf>) {
    let path = Path::new(dir);
    match expand(dir, home, None) {
        // `~`, `~/...` or absolute: no cwd was needed.
        Some(single) => (single, None),
        None => (home.join(path), cwd.map(|cwd| cwd.join(path))),
    }
}

/// An empty path means "no cwd": no local file is consulted.
pub(crate) fn non_empty(path: &Path) -> Option<&Path> {
    (!path.as_os_str().is_empty()).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn expand_handles_tilde_absolute_relative_and_no_cwd() {
        let home = Path::new("/home/u");
        let cwd = Path::new("/work/p");
        assert_eq!(
            expand("~/a.md", home, Some(cwd)),
            Some(PathBuf::from("/home/u/a.md"))
        );
        assert_eq!(expand("~", home, Some(cwd)), Some(PathBuf::from("/home/u")));
        assert_eq!(
            expand("/etc/x.md", home, Some(cwd)),
            Some(PathBuf::from("/etc/x.md"))
        );
        assert_eq!(
            expand("rel/x.md", home, Some(cwd)),
            Some(PathBuf::from("/work/p/rel/x.md"))
        );
        assert_eq!(expand("rel/x.md", home, None), None);
    }

    #[test]
    fn prompt_dirs_are_never_nested_under_home_when_absolute() {
        let home = Path::new("/home/u");
        let cwd = Some(Path::new("/work/p"));
        assert_eq!(
            prompt_dirs(".app/prompts", home, cwd),
            (
                "/home/u/.app/prompts".into(),
                Some("/work/p/.app/prompts".into())
            )
        );
        assert_eq!(
            prompt_dirs("/srv/prompts", home, cwd),
            ("/srv/prompts".into(), None)
        );
        assert_eq!(prompt_dirs("~/p", home, cwd), ("/home/u/p".into(), None));
        assert_eq!(prompt_dirs("~", home, cwd), ("/home/u".into(), None));
        assert_eq!(prompt_dirs("rel", home, None), ("/home/u/rel".into(), None));
    }
}
