//! Writing several files of a pack folder as one change: whenever a
//! write stops (an error, a kill, a power cut), the files are either all
//! as they were or all as written, and the next writer tidies up.
//!
//! # The protocol
//!
//! [`FileSet::commit`] takes these steps (`Step`s, run by one loop):
//!
//! 1. the journal, listing every file of the set, is written under its
//!    pending name `.promptreg-journal.promptreg-tmp` in the pack folder,
//!    and synced with the folder;
//! 2. each new file is staged beside its target as
//!    `.<name>.promptreg-tmp` and synced, then every folder on the way;
//! 3. the journal is renamed to `.promptreg-journal`: the commit point;
//! 4. each staged file is renamed over its target, and the folders synced;
//! 5. the journal is removed.
//!
//! [`recover`] (run by `commit` first, and by every command that writes a
//! pack before it reads it) finishes what a stop left: a committed journal
//! is rolled forward (each file still staged is renamed over its target),
//! a pending one rolled back (the staged files it lists are removed).
//!
//! # Why a stop leaves a whole set
//!
//! Before step 3 no target has changed, and the pending journal, on disk
//! before the first file is staged, names every staged file: removing them
//! gives the old set. From step 3 on, every staged file is on disk (synced
//! before the commit), so each target is either renamed already (its staged
//! file gone) or still staged: renaming what is staged gives the new set.
//! A rename replaces a file whole, and finishing twice does nothing more,
//! so a stop during recovery is recovered the same way.
//!
//! The journal and the staged files are hidden names that no loader reads:
//! a pack loads `*.md` files and tests `*.toml` files, and the store's
//! `PackFiles` skips hidden names. One writer at a time: two processes
//! writing one pack folder at once may undo each other's uncommitted write.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::error::Error;

/// The committed journal's name, in the pack folder.
pub const JOURNAL: &str = ".promptreg-journal";
/// The suffix of a staged file and of the pending journal.
pub const STAGED_SUFFIX: &str = ".promptreg-tmp";
const PENDING: &str = ".promptreg-journal.promptreg-tmp";
const HEADER: &str = "promptreg file set 1";
const END: &str = "end";

/// New contents for files of one pack folder, written all or none.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// use promptreg_packs::pack::FileSet;
///
/// let mut set = FileSet::new(dir.path());
/// set.write("defaults/greeting.ja.md", "こんにちは");
/// set.write(dir.path().join("defaults/greeting.fr.md"), "Bonjour");
/// set.commit()?;
/// assert_eq!(std::fs::read_to_string(dir.path().join("defaults/greeting.fr.md"))?, "Bonjour");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct FileSet {
    root: PathBuf,
    files: BTreeMap<PathBuf, Vec<u8>>,
}

/// What [`recover`] found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Recovery {
    /// No write had stopped.
    Clean,
    /// A write had committed: these files now hold its new contents.
    Finished(Vec<PathBuf>),
    /// A write had not committed: its staged files were removed, and these
    /// files are as they were.
    Undone(Vec<PathBuf>),
}

/// One step of a commit, in order; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    WritePending,
    Stage(usize),
    SyncStaged,
    Commit,
    Rename(usize),
    SyncTargets,
    RemoveJournal,
}

impl FileSet {
    /// An empty set of files in the pack folder `root`.
    pub fn new(root: impl Into<PathBuf>) -> FileSet {
        FileSet {
            root: root.into(),
            files: BTreeMap::new(),
        }
    }

    /// Adds a file (replacing one added before): `path` inside the pack
    /// folder, relative to it or joined onto it.
    pub fn write(&mut self, path: impl Into<PathBuf>, bytes: impl Into<Vec<u8>>) -> &mut Self {
        self.files.insert(path.into(), bytes.into());
        self
    }

    /// The number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether there are no files.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Writes every file, creating the folders they need: after an error
    /// or a stop, the files are all old or all new (see the module
    /// documentation). First finishes a write that stopped ([`recover`]).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) with an
    /// [`Io`](DiagnosticCode::Io) diagnostic naming the file: a path
    /// outside the folder, a file that cannot be written. Its message says
    /// whether the files were left as they were.
    pub fn commit(&self) -> Result<(), Error> {
        recover(&self.root)?;
        if self.files.is_empty() {
            return Ok(());
        }
        let plan = self.plan()?;
        for step in plan.steps() {
            if let Err(error) = plan.take(step) {
                return Err(after_failure(&self.root, error));
            }
        }
        Ok(())
    }

    /// The first `steps` steps of [`commit`](Self::commit), then nothing,
    /// as if the process had been killed there.
    #[cfg(test)]
    fn commit_stopping_after(&self, steps: usize) -> Result<(), Error> {
        recover(&self.root)?;
        let plan = self.plan()?;
        for step in plan.steps().into_iter().take(steps) {
            plan.take(step)?;
        }
        Ok(())
    }

    fn plan(&self) -> Result<Plan<'_>, Error> {
        let mut files = Vec::with_capacity(self.files.len());
        for (path, bytes) in &self.files {
            files.push((relative(&self.root, path)?, bytes.as_slice()));
        }
        Ok(Plan {
            root: &self.root,
            files,
        })
    }
}

/// A set checked and ready: each file by its path in the folder.
struct Plan<'a> {
    root: &'a Path,
    files: Vec<(String, &'a [u8])>,
}

impl Plan<'_> {
    fn steps(&self) -> Vec<Step> {
        let count = self.files.len();
        let mut steps = vec![Step::WritePending];
        steps.extend((0..count).map(Step::Stage));
        steps.extend([Step::SyncStaged, Step::Commit]);
        steps.extend((0..count).map(Step::Rename));
        steps.extend([Step::SyncTargets, Step::RemoveJournal]);
        steps
    }

    fn take(&self, step: Step) -> Result<(), Error> {
        let root = self.root;
        let target = |i: usize| join(root, &self.files[i].0);
        match step {
            Step::WritePending => {
                fs::create_dir_all(root).map_err(|e| failed("create the folder", root, e))?;
                let paths: Vec<&str> = self.files.iter().map(|(p, _)| p.as_str()).collect();
                let text = journal_text(&paths);
                write_synced(&root.join(PENDING), text.as_bytes())?;
                sync_dir(root)
            }
            Step::Stage(i) => {
                let target = target(i);
                if let Some(parent) = target.parent() {
                    fs::create_dir_all(parent)
                        .map_err(|e| failed("create the folder", parent, e))?;
                }
                write_synced(&staged(&target), self.files[i].1)
            }
            Step::SyncStaged | Step::SyncTargets => {
                sync_dirs(root, self.files.iter().map(|(p, _)| join(root, p)))
            }
            Step::Commit => {
                let journal = root.join(JOURNAL);
                fs::rename(root.join(PENDING), &journal)
                    .map_err(|e| failed("commit the journal", &journal, e))?;
                sync_dir(root)
            }
            Step::Rename(i) => rename_staged(&target(i)),
            Step::RemoveJournal => remove_journal(root, JOURNAL),
        }
    }
}

/// Finishes or undoes a write to the pack folder `root` that stopped
/// before its end (see the module documentation); nothing to do is
/// [`Recovery::Clean`].
///
/// # Errors
///
/// As [`FileSet::commit`]; a committed journal that cannot be read, or a
/// staged file that cannot be renamed, is named with what to do.
pub fn recover(root: impl AsRef<Path>) -> Result<Recovery, Error> {
    let root = root.as_ref();
    let finished = roll_forward(root)?;
    let undone = roll_back(root)?;
    Ok(match (finished, undone) {
        (Some(files), _) => Recovery::Finished(files),
        (None, Some(files)) => Recovery::Undone(files),
        (None, None) => Recovery::Clean,
    })
}

/// Completes the set a committed journal lists.
fn roll_forward(root: &Path) -> Result<Option<Vec<PathBuf>>, Error> {
    let journal = root.join(JOURNAL);
    let Some(text) = read_journal(&journal)? else {
        return Ok(None);
    };
    let paths = parse_committed(&text).map_err(|why| {
        let d = io_diagnostic(
            format!("cannot finish the interrupted write this journal records: {why}"),
            &journal,
        );
        Error::from_diagnostics(vec![d.suggest(Some(
            "its files may be part old, part new: check them, then remove the journal".to_owned(),
        ))])
    })?;
    let targets: Vec<PathBuf> = paths.iter().map(|p| join(root, p)).collect();
    for target in &targets {
        rename_staged(target).map_err(|e| unfinished(e, &journal))?;
    }
    sync_dirs(root, targets.iter().cloned()).map_err(|e| unfinished(e, &journal))?;
    remove_journal(root, JOURNAL)?;
    Ok(Some(targets))
}

/// Removes the staged files a pending journal lists, and the journal.
fn roll_back(root: &Path) -> Result<Option<Vec<PathBuf>>, Error> {
    let pending = root.join(PENDING);
    let Some(text) = read_journal(&pending)? else {
        return Ok(None);
    };
    let targets: Vec<PathBuf> = parse_pending(&text).map(|p| join(root, p)).collect();
    for target in &targets {
        let file = staged(target);
        if file.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            continue; // not staged by a write: a folder is never staged
        }
        match fs::remove_file(&file) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                let d = io_diagnostic(
                    format!("cannot remove a file an interrupted write staged: {e}"),
                    &file,
                );
                let d = d.suggest(Some("remove it, then run the command again".to_owned()));
                return Err(Error::from_diagnostics(vec![d]));
            }
            _ => {}
        }
    }
    remove_journal(root, PENDING)?;
    Ok(Some(targets))
}

/// The error of a step, with what recovering from it left.
fn after_failure(root: &Path, error: Error) -> Error {
    let (left, to_do) = match recover(root) {
        Ok(Recovery::Finished(_)) => ("every file was written on a second try".to_owned(), None),
        Ok(_) => (
            "nothing was changed".to_owned(),
            Some("make that file writable, then run the command again".to_owned()),
        ),
        Err(e) => (format!("tidying up failed too: {e}"), None),
    };
    let mut diagnostics = error.diagnostics().to_vec();
    match diagnostics.first_mut() {
        Some(first) => {
            first.message = format!("{}; {left}", first.message);
            first.suggestion = first.suggestion.take().or(to_do);
        }
        None => return error,
    }
    Error::from_diagnostics(diagnostics)
}

fn unfinished(error: Error, journal: &Path) -> Error {
    let mut diagnostics = error.diagnostics().to_vec();
    if let Some(first) = diagnostics.first_mut() {
        first.suggestion = Some(format!(
            "the write recorded in {} is finished the next time a promptreg command writes this pack",
            journal.display()
        ));
    }
    Error::from_diagnostics(diagnostics)
}

/// The journal's text: a header, one path per line, an end line that
/// shows it whole.
fn journal_text(paths: &[&str]) -> String {
    let mut text = format!("{HEADER}\n");
    for path in paths {
        text.push_str(path);
        text.push('\n');
    }
    text.push_str(END);
    text.push('\n');
    text
}

/// The paths of a committed journal, which was synced whole before it was
/// committed: anything else is a damaged file.
fn parse_committed(text: &str) -> Result<Vec<&str>, String> {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return Err(format!("it does not start with `{HEADER}`"));
    }
    let mut paths = Vec::new();
    for line in lines {
        if line == END {
            return Ok(paths);
        }
        if !is_relative_path(line) {
            return Err(format!("`{line}` is not a path inside the pack folder"));
        }
        paths.push(line);
    }
    Err(format!("it does not end with `{END}`"))
}

/// The paths of a pending journal, which a stop may have cut short: the
/// whole lines before any that is not a path (a cut journal has no staged
/// file yet).
fn parse_pending(text: &str) -> impl Iterator<Item = &str> {
    let mut lines = text.split_inclusive('\n');
    let whole = lines.next() == Some(&format!("{HEADER}\n"));
    lines
        .filter(move |_| whole)
        .map_while(|line| line.strip_suffix('\n'))
        .take_while(|line| *line != END && is_relative_path(line))
}

fn is_relative_path(line: &str) -> bool {
    !line.is_empty()
        && !line.contains(['\r', '\\'])
        && line
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

/// `path` as a journal line: relative to `root`, `/`-separated.
fn relative(root: &Path, path: &Path) -> Result<String, Error> {
    let inside = path.strip_prefix(root).unwrap_or(path);
    let mut parts = Vec::new();
    for component in inside.components() {
        let Component::Normal(part) = component else {
            return Err(io_error(
                format!(
                    "cannot write a file outside the pack folder {}",
                    root.display()
                ),
                path,
            ));
        };
        match part.to_str() {
            Some(part) if !part.contains(['\n', '\r', '\\', '/']) => parts.push(part),
            _ => {
                return Err(io_error(
                    "cannot write a file whose name is not plain text on one line".to_owned(),
                    path,
                ));
            }
        }
    }
    let reserved = parts
        .last()
        .is_some_and(|name| name.starts_with(JOURNAL) || name.ends_with(STAGED_SUFFIX));
    if parts.is_empty() || reserved {
        return Err(io_error(
            format!(
                "cannot write `{}`: promptreg keeps that name for its own",
                inside.display()
            ),
            path,
        ));
    }
    Ok(parts.join("/"))
}

fn join(root: &Path, relative: &str) -> PathBuf {
    let mut path = root.to_path_buf();
    path.extend(relative.split('/'));
    path
}

/// Where the new contents of `target` wait for the commit.
fn staged(target: &Path) -> PathBuf {
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    target.with_file_name(format!(".{name}{STAGED_SUFFIX}"))
}

/// Renames the staged file over `target`; one no longer staged was renamed
/// already.
fn rename_staged(target: &Path) -> Result<(), Error> {
    let from = staged(target);
    match fs::rename(&from, target) {
        Err(_) if !from.exists() => Ok(()),
        Err(e) => Err(failed(
            &format!("move the new contents from {} into place", from.display()),
            target,
            e,
        )),
        Ok(()) => Ok(()),
    }
}

fn read_journal(path: &Path) -> Result<Option<String>, Error> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(failed("read the journal of an interrupted write", path, e)),
    }
}

fn remove_journal(root: &Path, name: &str) -> Result<(), Error> {
    let path = root.join(name);
    fs::remove_file(&path).map_err(|e| failed("remove the journal", &path, e))?;
    sync_dir(root)
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let write = || -> io::Result<()> {
        let mut file = File::create(path)?;
        file.write_all(bytes)?;
        file.sync_all()
    };
    write().map_err(|e| failed("write", path, e))
}

/// Syncs the folder of each path and every folder between it and `root`,
/// so that the names created in them last.
fn sync_dirs(root: &Path, targets: impl IntoIterator<Item = PathBuf>) -> Result<(), Error> {
    let mut dirs = BTreeSet::new();
    for mut dir in targets {
        while dir.pop() && dir.starts_with(root) {
            dirs.insert(dir.clone());
        }
    }
    dirs.iter().try_for_each(|dir| sync_dir(dir))
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> Result<(), Error> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| failed("sync the folder", dir, e))
}

/// Windows cannot open a folder as a file; its renames are journalled by
/// the file system.
#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> Result<(), Error> {
    Ok(())
}

fn failed(what: &str, path: &Path, e: io::Error) -> Error {
    io_error(format!("cannot {what}: {e}"), path)
}

fn io_error(message: String, path: &Path) -> Error {
    Error::from_diagnostics(vec![io_diagnostic(message, path)])
}

fn io_diagnostic(message: String, path: &Path) -> Diagnostic {
    Diagnostic::error(DiagnosticCode::Io, message).in_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: [(&str, &str); 2] = [("defaults/a.ja.md", "a old"), ("defaults/b.ja.md", "b old")];
    const NEW: [(&str, &str); 3] = [
        ("defaults/a.ja.md", "a new"),
        ("defaults/b.ja.md", "b new"),
        ("tests/snapshots/a.full.txt", "snapshot new"),
    ];

    /// Every file under `dir`, by path, with its text.
    fn tree(dir: &Path) -> BTreeMap<String, String> {
        fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>) {
            for entry in fs::read_dir(dir).unwrap() {
                let entry = entry.unwrap();
                let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
                if entry.file_type().unwrap().is_dir() {
                    walk(&entry.path(), &format!("{name}/"), out);
                } else {
                    out.insert(name, fs::read_to_string(entry.path()).unwrap());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(dir, "", &mut out);
        out
    }

    fn state(files: &[(&str, &str)]) -> BTreeMap<String, String> {
        files
            .iter()
            .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
            .collect()
    }

    /// A folder holding the old set, and the set that writes the new one.
    fn old_folder() -> (tempfile::TempDir, FileSet) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in OLD {
            let file = dir.path().join(path);
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            fs::write(file, text).unwrap();
        }
        let mut set = FileSet::new(dir.path());
        for (path, text) in NEW {
            set.write(dir.path().join(path), text);
        }
        (dir, set)
    }

    #[test]
    fn a_commit_writes_the_new_set_and_nothing_else() {
        let (dir, set) = old_folder();
        set.commit().unwrap();
        assert_eq!(tree(dir.path()), state(&NEW));
        assert_eq!(recover(dir.path()).unwrap(), Recovery::Clean);
    }

    #[test]
    fn a_stop_at_any_step_recovers_to_the_old_set_or_the_new_one() {
        let steps = old_folder().1.plan().unwrap().steps();
        let committed = steps.iter().position(|s| *s == Step::Commit).unwrap() + 1;
        let mut mixed = false;
        for k in 0..=steps.len() {
            let (dir, set) = old_folder();
            set.commit_stopping_after(k).unwrap();
            let targets: BTreeMap<_, _> = tree(dir.path())
                .into_iter()
                .filter(|(p, _)| !p.contains("/.") && !p.starts_with('.'))
                .collect();
            mixed |= targets != state(&OLD) && targets != state(&NEW);
            let recovery = recover(dir.path()).unwrap();
            let expected = if k >= committed { &NEW[..] } else { &OLD[..] };
            assert_eq!(tree(dir.path()), state(expected), "stopped after {k} steps");
            match recovery {
                Recovery::Clean => assert!(k == 0 || k == steps.len(), "after {k} steps"),
                Recovery::Finished(files) => assert!(k >= committed && files.len() == NEW.len()),
                Recovery::Undone(_) => assert!(k < committed, "after {k} steps"),
            }
        }
        assert!(
            mixed,
            "some stop should leave the targets part old, part new"
        );
    }

    #[test]
    fn a_stop_while_recovering_is_recovered_again() {
        let (dir, set) = old_folder();
        let steps = set.plan().unwrap().steps();
        let committed = steps.iter().position(|s| *s == Step::Commit).unwrap() + 1;
        set.commit_stopping_after(committed).unwrap();
        // A recovery stopped after its first rename.
        rename_staged(&dir.path().join(NEW[0].0)).unwrap();
        assert!(matches!(
            recover(dir.path()).unwrap(),
            Recovery::Finished(_)
        ));
        assert_eq!(tree(dir.path()), state(&NEW));
    }

    #[test]
    fn a_failed_write_changes_nothing() {
        let (dir, set) = old_folder();
        // The second file cannot be staged: a folder holds its name.
        let blocker = dir.path().join("defaults/.b.ja.md.promptreg-tmp");
        fs::create_dir(&blocker).unwrap();
        let err = set.commit().unwrap_err();
        assert!(err.to_string().contains("nothing was changed"), "{err}");
        assert_eq!(
            err.diagnostics()[0].file.as_deref(),
            Some(blocker.as_path())
        );
        fs::remove_dir(&blocker).unwrap();
        let mut expected = state(&OLD);
        expected.retain(|p, _| p.starts_with("defaults/"));
        assert_eq!(tree(dir.path()), expected);
    }

    #[test]
    fn a_damaged_journal_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join(JOURNAL);
        fs::write(&journal, format!("{HEADER}\ndefaults/a.ja.md\n")).unwrap();
        let err = recover(dir.path()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("does not end with `end`"), "{text}");
        assert!(text.contains("then remove the journal"), "{text}");
        assert_eq!(
            err.diagnostics()[0].file.as_deref(),
            Some(journal.as_path())
        );
        fs::write(&journal, format!("{HEADER}\n../outside.md\n{END}\n")).unwrap();
        assert!(recover(dir.path()).is_err());
        assert!(
            journal.exists(),
            "a refused journal is kept for the user to check"
        );
    }

    #[test]
    fn a_cut_pending_journal_removes_the_staged_files_it_names() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("defaults")).unwrap();
        let staged_a = dir.path().join("defaults/.a.md.promptreg-tmp");
        fs::write(&staged_a, "staged").unwrap();
        let cut = format!("{HEADER}\ndefaults/a.md\ndefaults/b.m");
        fs::write(dir.path().join(PENDING), cut).unwrap();
        let recovery = recover(dir.path()).unwrap();
        assert_eq!(
            recovery,
            Recovery::Undone(vec![dir.path().join("defaults/a.md")])
        );
        assert!(tree(dir.path()).is_empty());
    }

    #[test]
    fn paths_outside_the_folder_or_of_its_own_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        for path in [
            PathBuf::from("../escape.md"),
            other.path().join("x.md"),
            PathBuf::from("defaults/.x.md.promptreg-tmp"),
            PathBuf::from(JOURNAL),
            PathBuf::from("line\nbreak.md"),
        ] {
            let mut set = FileSet::new(dir.path());
            set.write(&path, "x");
            let err = set.commit().unwrap_err();
            assert_eq!(err.diagnostics()[0].file.as_deref(), Some(path.as_path()));
        }
        assert!(tree(dir.path()).is_empty());
        assert!(tree(other.path()).is_empty());
    }

    #[test]
    fn a_pack_loads_beside_a_stopped_write() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("defaults")).unwrap();
        fs::write(
            dir.path().join("promptreg.toml"),
            "name = \"demo\"\nkeys = [\"greeting\"]\n[user]\nprompts_dir = \".demo\"\n",
        )
        .unwrap();
        fs::write(dir.path().join("defaults/greeting.md"), "Hello!").unwrap();
        let mut set = FileSet::new(dir.path());
        set.write("defaults/greeting.ja.md", "こんにちは");
        set.commit_stopping_after(4).unwrap();
        assert!(dir.path().join(JOURNAL).exists());
        let (pack, diagnostics) = crate::pack::Pack::load_with_diagnostics(dir.path());
        assert!(pack.is_some() && diagnostics.is_empty(), "{diagnostics:?}");
    }
}
