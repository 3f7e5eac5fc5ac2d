//! A pack as files: what a version holds, byte for byte, and how the
//! files of a pack folder split into the store's entries.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use promptreg::pack::{
    DEFAULTS_DIR, FileSet, MANIFEST, Pack, SCHEMAS_DIR, SNIPPETS_DIR, TOOLS_DIR,
};
use promptreg::testing::{PromptTests, SNAPSHOTS_DIR, TESTS_DIR, context_files};

use crate::error::{Error, ErrorKind};

/// The entry that versions the pack-level files (the manifest and the
/// snippets), beside
/// one entry per prompt id. An id cannot start with `@`.
pub const PACK_ENTRY: &str = "@pack";

/// The entry that versions the pack's prompt tests (`tests/*.toml`) and
/// their snapshots (`tests/snapshots/*.txt`), beside the prompts they test.
/// A pack without tests has no such entry.
pub const TESTS_ENTRY: &str = "@tests";

/// Whether entry `name` is a pack-level one ([`PACK_ENTRY`],
/// [`TESTS_ENTRY`]) rather than a prompt: prompt ids cannot start with `@`.
pub fn is_pack_level(name: &str) -> bool {
    name.starts_with('@')
}

/// The folders of the pack format and the files each holds, directly.
const FORMAT_FOLDERS: [(&str, &str); 10] = [
    (DEFAULTS_DIR, ".md"),
    (SNIPPETS_DIR, ".md"),
    (TOOLS_DIR, ".yaml"),
    (TOOLS_DIR, ".yml"),
    (TOOLS_DIR, ".json"),
    (SCHEMAS_DIR, ".yaml"),
    (SCHEMAS_DIR, ".yml"),
    (SCHEMAS_DIR, ".json"),
    (TESTS_DIR, ".toml"),
    (SNAPSHOTS_DIR, ".txt"),
];

/// The folders whose files belong to the whole pack, as the manifest
/// does: any prompt may include a snippet or name a shared tool.
const PACK_WIDE_FOLDERS: [&str; 3] = [SNIPPETS_DIR, TOOLS_DIR, SCHEMAS_DIR];

/// The files of a pack, by path relative to its folder (`promptreg.toml`,
/// `defaults/greeting.ja.md`), each exactly as written. Two `PackFiles`
/// are equal when their files are, wherever they were read.
#[derive(Debug, Clone, Default)]
pub struct PackFiles {
    files: BTreeMap<String, Vec<u8>>,
    /// The folder read, to name files in diagnostics.
    root: Option<PathBuf>,
    /// The files of that folder outside the pack format, sorted.
    not_stored: Vec<String>,
}

impl PartialEq for PackFiles {
    fn eq(&self, other: &Self) -> bool {
        self.files == other.files
    }
}

impl Eq for PackFiles {}

impl PackFiles {
    /// The files a pack folder consists of, the pack format: its
    /// manifest, the `.md` files of its `defaults/` and `snippets/`
    /// folders and the `.yaml`, `.yml` and `.json` files of `tools/` and
    /// `schemas/` (what `Pack::load` reads), and its prompt tests, the
    /// `.toml` files of `tests/` and the `.txt` files of
    /// `tests/snapshots/`. Every other file is left out and listed by
    /// [`not_stored`](Self::not_stored).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`] naming the file or folder that cannot be read.
    pub fn read(dir: impl AsRef<Path>) -> Result<PackFiles, Error> {
        let dir = dir.as_ref();
        let mut files = PackFiles {
            root: Some(dir.to_path_buf()),
            ..PackFiles::default()
        };
        files.insert(MANIFEST, read_file(&dir.join(MANIFEST))?);
        for (folder, extension) in FORMAT_FOLDERS {
            files.read_folder(dir, folder, extension)?;
        }
        for path in files.test_contexts() {
            let file = dir.join(&path);
            if file.is_file() {
                files.insert(path, read_file(&file)?);
            }
        }
        let mut outside = Vec::new();
        files.find_not_stored(dir, "", &mut outside)?;
        outside.sort_unstable();
        files.not_stored = outside;
        Ok(files)
    }

    /// The files the tests name as their contexts (`context_file`), by
    /// path in the pack, sorted: part of the tests, stored with them. A name
    /// that leaves the pack is left out (loading the tests refuses it).
    fn test_contexts(&self) -> Vec<String> {
        let mut paths: Vec<String> = self
            .files
            .iter()
            .filter(|(p, _)| p.ends_with(".toml") && is_test_file(p))
            .flat_map(|(_, bytes)| context_files(&String::from_utf8_lossy(bytes)))
            .filter_map(|name| inside_pack(TESTS_DIR, &name))
            .collect();
        paths.sort_unstable();
        paths.dedup();
        paths
    }

    /// The files of the folder read that are outside the pack format
    /// (`context.json` beside the manifest, `notes.txt` in `defaults/`),
    /// sorted: a push does not store them and a pull does not give them
    /// back. Hidden files and folders (`.git`, a project's `.demo/`) are
    /// not listed.
    pub fn not_stored(&self) -> &[String] {
        &self.not_stored
    }

    /// Adds to `out` every file under `dir/prefix` that is not one of
    /// these files, skipping hidden names and not following links.
    fn find_not_stored(
        &self,
        dir: &Path,
        prefix: &str,
        out: &mut Vec<String>,
    ) -> Result<(), Error> {
        let path = dir.join(prefix);
        let entries = fs::read_dir(&path).map_err(|e| io_error("cannot read folder", &path, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| io_error("cannot read folder", &path, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str().filter(|n| !n.starts_with('.')) else {
                continue;
            };
            let relative = if prefix.is_empty() {
                name.to_owned()
            } else {
                format!("{prefix}/{name}")
            };
            let kind = entry
                .file_type()
                .map_err(|e| io_error("cannot read", &entry.path(), e))?;
            if kind.is_dir() {
                self.find_not_stored(dir, &relative, out)?;
            } else if !self.files.contains_key(&relative) {
                out.push(relative);
            }
        }
        Ok(())
    }

    /// Adds the files directly in `dir/folder` whose names end with
    /// `extension`, when the folder exists.
    fn read_folder(&mut self, dir: &Path, folder: &str, extension: &str) -> Result<(), Error> {
        let path = dir.join(folder);
        let entries = match fs::read_dir(&path) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_error("cannot read folder", &path, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| io_error("cannot read folder", &path, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str().filter(|n| n.ends_with(extension)) else {
                continue;
            };
            let is_file = entry
                .file_type()
                .map_err(|e| io_error("cannot read", &entry.path(), e))?
                .is_file();
            if !is_file {
                continue;
            }
            let bytes = read_file(&entry.path())?;
            self.insert(format!("{folder}/{name}"), bytes);
        }
        Ok(())
    }

    /// Writes every file under `dir`, which must not exist or hold no
    /// file, so that the folder holds exactly these files. The files are
    /// written as one [`FileSet`]: a write that stops leaves the folder
    /// without them, or finished by the next write to it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Io`] when `dir` holds a file or a write fails (then no
    /// file is written).
    pub fn write(&self, dir: impl AsRef<Path>) -> Result<(), Error> {
        let dir = dir.as_ref();
        if dir.is_dir() {
            promptreg::pack::recover(dir).map_err(written)?;
        }
        if holds_a_file(dir).map_err(|e| io_error("cannot read folder", dir, e))? {
            return Err(Error::new(
                ErrorKind::Io,
                format!(
                    "{} is not empty: pull writes a whole pack into a new or empty folder",
                    dir.display()
                ),
            ));
        }
        let mut set = FileSet::new(dir);
        for (path, bytes) in &self.files {
            set.write(path, bytes.as_slice());
        }
        set.commit().map_err(written)
    }

    /// Adds or replaces a file.
    pub fn insert(&mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) {
        self.files.insert(path.into(), bytes.into());
    }

    /// The files, sorted by path.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files.iter().map(|(p, b)| (p.as_str(), b.as_slice()))
    }

    /// One file.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    /// The folder the files were read from, if they were.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// The number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether there are no files.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Builds the pack these files declare, exactly as `Pack::load` would
    /// from a folder holding them; `root` names it in messages.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidPack`] with every diagnostic, as `check` reports
    /// them (a file that is not UTF-8 included).
    pub fn to_pack(&self, root: impl Into<PathBuf>) -> Result<Pack, Error> {
        let root = root.into();
        let mut texts = Vec::with_capacity(self.files.len());
        for (path, bytes) in &self.files {
            let text = std::str::from_utf8(bytes).map_err(|e| {
                let file = root.join(path);
                Error::invalid_pack(promptreg::Error::from_diagnostics(vec![
                    promptreg::Diagnostic::error(
                        promptreg::DiagnosticCode::Io,
                        format!("{} is not UTF-8 text: {e}", file.display()),
                    )
                    .in_file(&file),
                ]))
            })?;
            texts.push((path.as_str(), text));
        }
        Pack::from_files(root, texts).map_err(Error::invalid_pack)
    }

    /// The prompt tests among these files, of `pack` (built from them),
    /// read exactly as `check` and `promptreg test` read them in a folder
    /// holding the files.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidPack`] with every diagnostic of the test files.
    pub fn tests(&self, pack: &Pack) -> Result<PromptTests, Error> {
        let texts = self
            .iter()
            .filter_map(|(path, bytes)| Some((path, std::str::from_utf8(bytes).ok()?)));
        PromptTests::from_files(pack, texts).map_err(Error::invalid_pack)
    }

    /// Splits the files into the store's entries: [`PACK_ENTRY`] (the
    /// manifest, snippets, shared tools and schemas), one per prompt of `pack` (its default and
    /// variants), and [`TESTS_ENTRY`] (the tests and snapshots) when there
    /// are any.
    pub(crate) fn entries(&self, pack: &Pack) -> Vec<Entry> {
        let shared = self.files.keys().filter(|p| {
            PACK_WIDE_FOLDERS.iter().any(|dir| {
                p.strip_prefix(dir)
                    .is_some_and(|rest| rest.starts_with('/'))
            })
        });
        let pack_files = std::iter::once(MANIFEST.to_owned()).chain(shared.cloned());
        let mut entries = vec![self.entry(PACK_ENTRY, pack_files)];
        for prompt in pack.prompts() {
            let paths = prompt
                .default_file()
                .into_iter()
                .chain(prompt.variants().map(|(_, file)| file))
                .filter_map(|file| relative(pack.root(), file));
            let mut entry = self.entry(prompt.id().as_str(), paths);
            entry.translations = crate::stale::Translations::of(pack, prompt);
            entries.push(entry);
        }
        let mut tests: Vec<String> = self
            .files
            .keys()
            .filter(|p| is_test_file(p))
            .cloned()
            .collect();
        tests.extend(self.test_contexts());
        if !tests.is_empty() {
            entries.push(self.entry(TESTS_ENTRY, tests));
        }
        entries
    }

    /// The files no entry holds, sorted: what a push of them leaves out.
    pub(crate) fn unheld(&self, entries: &[Entry]) -> Vec<String> {
        let held: std::collections::BTreeSet<&str> = entries
            .iter()
            .flat_map(|e| e.files.keys().map(String::as_str))
            .collect();
        self.files
            .keys()
            .filter(|p| !held.contains(p.as_str()))
            .cloned()
            .collect()
    }

    fn entry(&self, name: &str, paths: impl IntoIterator<Item = String>) -> Entry {
        let files: BTreeMap<String, Vec<u8>> = paths
            .into_iter()
            .filter_map(|p| self.files.get(&p).map(|b| (p, b.clone())))
            .collect();
        Entry {
            name: name.to_owned(),
            digest: digest(&files),
            files,
            translations: crate::stale::Translations::default(),
        }
    }
}

impl FromIterator<(String, Vec<u8>)> for PackFiles {
    fn from_iter<I: IntoIterator<Item = (String, Vec<u8>)>>(iter: I) -> Self {
        PackFiles {
            files: iter.into_iter().collect(),
            root: None,
            not_stored: Vec::new(),
        }
    }
}

/// The paths of `prompt`'s files in `files`, as `pack` (built from them)
/// sorts them into entries.
pub(crate) fn entry_paths(files: &PackFiles, pack: &Pack, prompt: &str) -> Vec<String> {
    files
        .entries(pack)
        .into_iter()
        .filter(|e| e.name == prompt)
        .flat_map(|e| e.files.into_keys())
        .collect()
}

/// `name`, relative to folder `base` of the pack, as a path in the pack
/// (`..` and `.` resolved), or `None` when it leaves the pack.
fn inside_pack(base: &str, name: &str) -> Option<String> {
    if name.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = base.split('/').collect();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Whether `path` is a prompt test file or a snapshot, directly in its
/// folder.
fn is_test_file(path: &str) -> bool {
    let directly_in = |folder: &str, extension: &str| {
        path.strip_prefix(folder)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|name| !name.contains('/') && name.ends_with(extension))
    };
    directly_in(TESTS_DIR, ".toml") || directly_in(SNAPSHOTS_DIR, ".txt")
}

/// One entry's files and their content address.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) digest: String,
    pub(crate) files: BTreeMap<String, Vec<u8>>,
    /// A prompt's translations (none for the pack-wide entries).
    pub(crate) translations: crate::stale::Translations,
}

/// The content address of a version's files
/// ([`files_digest`](promptreg::signing::files_digest)).
pub(crate) fn digest(files: &BTreeMap<String, Vec<u8>>) -> String {
    promptreg::signing::files_digest(files.iter().map(|(p, b)| (p.as_str(), b.as_slice())))
}

/// The address of a label's state: each entry's name and version digest
/// ([`state_digest`](promptreg::signing::state_digest), which a follower
/// recomputes from the files it receives). A label's revisions and its
/// bundle's ETag carry it.
pub use promptreg::signing::state_digest;

/// `file` relative to `root`, with `/` separators.
pub(crate) fn relative(root: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(root).ok()?;
    let parts: Vec<&str> = rel
        .components()
        .map(|c| match c {
            Component::Normal(part) => part.to_str(),
            _ => None,
        })
        .collect::<Option<_>>()?;
    Some(parts.join("/"))
}

fn read_file(path: &Path) -> Result<Vec<u8>, Error> {
    fs::read(path).map_err(|e| io_error("cannot read", path, e))
}

/// A pack folder's write that failed, as the store's error: the message
/// names the file and what the folder holds now.
fn written(e: promptreg::Error) -> Error {
    Error::new(ErrorKind::Io, e.to_string()).with_source(e)
}

/// Whether `dir` or a folder in it holds a file (a folder that does not
/// exist holds none; nor do empty folders, which a stopped pull leaves).
fn holds_a_file(dir: &Path) -> io::Result<bool> {
    let entries = match fs::read_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        entries => entries?,
    };
    for entry in entries {
        let entry = entry?;
        if !entry.file_type()?.is_dir() || holds_a_file(&entry.path())? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn io_error(what: &str, path: &Path, e: io::Error) -> Error {
    Error::new(ErrorKind::Io, format!("{what} {}: {e}", path.display())).with_source(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_name_resolves_inside_the_pack_or_not_at_all() {
        let inside = |name| inside_pack("tests", name);
        assert_eq!(inside("../context.json").as_deref(), Some("context.json"));
        assert_eq!(
            inside("./cases/a.json").as_deref(),
            Some("tests/cases/a.json")
        );
        assert_eq!(inside("../../etc/passwd"), None);
        assert_eq!(inside("/etc/passwd"), None);
        assert_eq!(inside(".."), None);
    }

    fn pulled() -> PackFiles {
        let mut files = PackFiles::default();
        files.insert(MANIFEST, "name = \"demo\"\n");
        files.insert("defaults/greeting.md", "Hello!\n");
        files.insert("tests/snapshots/greeting.ada.txt", "Hello!");
        files
    }

    fn on_disk(dir: &Path) -> PackFiles {
        let mut files = PackFiles::default();
        for path in [
            "promptreg.toml",
            "defaults/greeting.md",
            "tests/snapshots/greeting.ada.txt",
        ] {
            if let Ok(bytes) = fs::read(dir.join(path)) {
                files.insert(path, bytes);
            }
        }
        files
    }

    /// A pull stopped before its commit left staged files, their pending
    /// journal and folders: the next pull into the folder removes them
    /// and writes the whole pack.
    #[test]
    fn a_pull_into_the_folder_of_a_stopped_one_writes_the_whole_pack() {
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("copy");
        fs::create_dir_all(dir.join("defaults")).unwrap();
        fs::create_dir_all(dir.join("tests/snapshots")).unwrap();
        fs::write(dir.join("defaults/.greeting.md.promptreg-tmp"), "Hel").unwrap();
        let journal = "promptreg file set 1\ndefaults/greeting.md\npromptreg.toml\ntests/snapshots/greeting.ada.txt\nend\n";
        fs::write(dir.join(".promptreg-journal.promptreg-tmp"), journal).unwrap();
        pulled().write(&dir).unwrap();
        assert_eq!(PackFiles::read(&dir).unwrap(), pulled());
        assert!(!dir.join("defaults/.greeting.md.promptreg-tmp").exists());
        assert!(!dir.join(".promptreg-journal.promptreg-tmp").exists());
    }

    #[test]
    fn a_pull_that_cannot_write_a_file_writes_none() {
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("copy");
        // The last file cannot be staged: a folder holds its name.
        let blocker = dir.join("tests/snapshots/.greeting.ada.txt.promptreg-tmp");
        fs::create_dir_all(&blocker).unwrap();
        let err = pulled().write(&dir).unwrap_err();
        assert!(err.to_string().contains("nothing was changed"), "{err}");
        assert!(
            err.to_string().contains(".greeting.ada.txt.promptreg-tmp"),
            "{err}"
        );
        assert!(on_disk(&dir).is_empty());
        fs::remove_dir(&blocker).unwrap();
        pulled().write(&dir).unwrap();
        assert_eq!(on_disk(&dir), pulled());
        assert!(
            pulled()
                .write(&dir)
                .unwrap_err()
                .to_string()
                .contains("is not empty")
        );
    }
}
