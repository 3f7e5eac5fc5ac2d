//! Where a pack's tests are read from: the pack's folder, or the pack's
//! files in memory (a stored state, tested without writing it anywhere).
//! Both give the same cases and the same diagnostics.

use std::collections::BTreeMap;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::prompt_file;

/// The files tests are read from.
pub(super) enum Source<'a> {
    /// The pack's folder on disk.
    Folder,
    /// Files by path under the pack's root `root`, as
    /// [`Pack::from_files`] names them, each path with its `.` and `..`
    /// applied ([`normal`]).
    ///
    /// [`Pack::from_files`]: crate::pack::Pack::from_files
    Memory {
        root: &'a Path,
        files: &'a BTreeMap<PathBuf, String>,
    },
}

impl Source<'_> {
    /// The test files directly in `dir`, sorted: every `*.toml`.
    pub(super) fn test_files(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let Source::Memory { files, .. } = self else {
            return super::file::test_files(dir);
        };
        // Named under `dir` as given, as a folder's listing names them.
        let within = normal(dir);
        Ok(files
            .keys()
            .filter(|p| p.parent() == Some(&within) && p.extension().is_some_and(|e| e == "toml"))
            .filter_map(|p| Some(dir.join(p.file_name()?)))
            .collect())
    }

    /// The text of `path`, at most `limit` bytes; `None`: there is no such
    /// file.
    pub(super) fn read(&self, path: &Path, limit: u64) -> Result<Option<String>, Diagnostic> {
        let Source::Memory { files, .. } = self else {
            return prompt_file::read_text(path, limit);
        };
        let Some(text) = files.get(&normal(path)) else {
            return Ok(None);
        };
        if text.len() as u64 > limit {
            return Err(Diagnostic::error(
                DiagnosticCode::FileTooLarge,
                format!("the file is larger than the limit of {limit} bytes"),
            )
            .in_file(path));
        }
        Ok(Some(text.clone()))
    }

    /// Where `path` leads, to tell whether it stays in the pack: through
    /// links on disk, by its components in memory. `None`: no such file.
    /// In memory a path out of the pack leads there whether or not a file
    /// is there, as a folder's neighbour may be: it is refused as outside.
    pub(super) fn resolve(&self, path: &Path) -> io::Result<Option<PathBuf>> {
        match self {
            Source::Folder => prompt_file::resolve(path),
            Source::Memory { root, files } => {
                let path = normal(path);
                let known = files.contains_key(&path) || !path.starts_with(normal(root));
                Ok(known.then_some(path))
            }
        }
    }

    /// Where the pack's root leads (see [`resolve`](Self::resolve)).
    pub(super) fn resolve_root(&self, root: &Path) -> Option<PathBuf> {
        match self {
            Source::Folder => prompt_file::resolve(root).ok().flatten(),
            Source::Memory { .. } => Some(normal(root)),
        }
    }
}

/// `path` with its `.` and `..` components applied.
pub(super) fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_in_memory_is_read_by_its_components() {
        let files = BTreeMap::from([(PathBuf::from("demo/context.json"), "{}".to_owned())]);
        let source = Source::Memory {
            root: Path::new("demo"),
            files: &files,
        };
        let up = Path::new("demo/tests/../context.json");
        assert_eq!(source.read(up, 10).unwrap().as_deref(), Some("{}"));
        assert_eq!(
            source.resolve(up).unwrap(),
            Some(PathBuf::from("demo/context.json"))
        );
        assert_eq!(source.read(Path::new("demo/none.json"), 10).unwrap(), None);
        assert_eq!(source.resolve(Path::new("demo/none.json")).unwrap(), None);
        let out = Path::new("demo/../elsewhere.json");
        assert_eq!(
            source.resolve(out).unwrap(),
            Some(PathBuf::from("elsewhere.json"))
        );
        let big = source.read(up, 1).unwrap_err();
        assert_eq!(big.code, DiagnosticCode::FileTooLarge);
        assert_eq!(normal(Path::new("demo/../../x")), PathBuf::from("../x"));
    }
}
