//! The user's files: where they are, and reading them through the shared
//! prompt-file reader with, for a project's configuration, nothing read
//! outside the project.

use std::io;
use std::path::{Path, PathBuf};

use super::trust::Boundary;
use crate::diagnostic::Diagnostic;
use crate::prompt_file::{self, FileText};

/// Reads `path` with [`prompt_file::read_file`]; with a `boundary`, a file
/// that resolves outside it is refused before a byte of it is read (`what`
/// says what it is in the refusal: "prompt file").
pub(crate) fn read_file(
    path: &Path,
    max_bytes: u64,
    boundary: Option<(&Boundary, &str)>,
) -> Result<Option<FileText>, Diagnostic> {
    match boundary {
        Some((boundary, what)) => {
            let admit = |path: &Path, target: &Path| boundary.admit(what, path, target);
            prompt_file::read_file(path, max_bytes, Some(&admit))
        }
        None => prompt_file::read_file(path, max_bytes, None),
    }
}

/// A folder, resolved, when it exists; with a `boundary`, refused when it
/// resolves outside it (`what` names it in the refusal).
pub(crate) fn resolve_dir(
    dir: &Path,
    boundary: Option<(&Boundary, &str)>,
) -> Result<Option<PathBuf>, Diagnostic> {
    let unreadable = |e: io::Error| prompt_file::unreadable_dir(dir, &e);
    let Some(target) = prompt_file::resolve(dir).map_err(unreadable)? else {
        return Ok(None);
    };
    if let Some((boundary, what)) = boundary {
        boundary.admit(what, dir, &target)?;
    }
    Ok(Some(target))
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
/// use promptreg_packs::config::prompt_dirs;
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
