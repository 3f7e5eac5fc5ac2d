//! The stateless resolver's memory of the blocks it read, so that a call
//! whose files did not change costs one `stat` per file instead of an
//! open and a read.
//!
//! A block is served from memory only while what the path leads to has
//! the same device, inode, size, modification and change times as when it
//! was read. A file written in the same tick of the file system's clock as
//! the read could keep all of them (a clock may tick every few
//! milliseconds, or every 2 seconds on FAT), so a file changed less than
//! [`SETTLED`] before it was looked at is read again at each call until
//! it is older. Errors are never remembered.
//!
//! The TypeScript resolver this replaces keeps the same kind of memory,
//! checked by modification time alone.

use std::ffi::OsString;
use std::fs;
use std::path::Path;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, SystemTime};

use crate::Map;
use crate::diagnostic::Diagnostic;
use crate::prompt_file::{self, non_blank};

/// How long after its last modification a file is trusted to keep its
/// stamp for as long as its content is unchanged.
const SETTLED: Duration = Duration::from_secs(2);

/// The most paths remembered; past it the memory starts over.
const CAPACITY: usize = 1024;

/// What identifies one state of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    #[cfg(unix)]
    inode: (u64, u64),
    modified: Option<SystemTime>,
    /// The last change of content or metadata (`ctime`), which no one can
    /// set back; the modification time where the system has no such time.
    changed: Option<SystemTime>,
    len: u64,
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let (inode, changed) = {
            use std::os::unix::fs::MetadataExt;
            let changed = u64::try_from(meta.ctime()).ok().and_then(|secs| {
                let since_epoch = Duration::new(secs, u32::try_from(meta.ctime_nsec()).ok()?);
                SystemTime::UNIX_EPOCH.checked_add(since_epoch)
            });
            ((meta.dev(), meta.ino()), changed)
        };
        #[cfg(not(unix))]
        let changed = meta.modified().ok();
        Stamp {
            #[cfg(unix)]
            inode,
            modified: meta.modified().ok(),
            changed,
            len: meta.len(),
        }
    }

    /// Whether the file last changed at least [`SETTLED`] before `now`.
    fn settled(&self, now: SystemTime) -> bool {
        self.changed
            .and_then(|changed| now.duration_since(changed).ok())
            .is_some_and(|age| age >= SETTLED)
    }
}

struct Remembered {
    stamp: Stamp,
    block: Option<String>,
}

/// Remembered blocks by the path as given, byte for byte: two spellings
/// of one path are two entries, never one entry for two files.
static BLOCKS: LazyLock<Mutex<Map<OsString, Remembered>>> = LazyLock::new(Default::default);

/// The non-blank, trimmed text of the file at `path`, `None` when it is
/// missing or blank: what [`prompt_file::read_text`] and
/// [`non_blank`] give, from memory when the file is unchanged.
pub(crate) fn read_block(path: &Path, max_bytes: u64) -> Result<Option<String>, Diagnostic> {
    let Some(meta) = prompt_file::metadata(path)? else {
        return Ok(None);
    };
    let stamp = Stamp::of(&meta);
    // The limit may differ from the call that remembered the file: the
    // full read checks it.
    if meta.is_file() && meta.len() <= max_bytes {
        let blocks = BLOCKS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(known) = blocks.get(path.as_os_str())
            && known.stamp == stamp
        {
            return Ok(known.block.clone());
        }
    }
    let now = SystemTime::now();
    #[cfg(test)]
    tests::READS.with(|reads| reads.set(reads.get() + 1));
    let text = prompt_file::read_with(path, path, &meta, max_bytes, None)?;
    let block = non_blank(&text).map(str::to_owned);
    if stamp.settled(now) {
        let mut blocks = BLOCKS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if blocks.len() >= CAPACITY {
            blocks.clear();
        }
        let remembered = Remembered {
            stamp,
            block: block.clone(),
        };
        blocks.insert(path.as_os_str().to_owned(), remembered);
    }
    Ok(block)
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    thread_local! {
        /// The files this thread read from disk.
        pub(super) static READS: Cell<usize> = const { Cell::new(0) };
    }

    fn reads() -> usize {
        READS.with(Cell::get)
    }

    #[test]
    fn a_settled_file_is_read_once_and_read_again_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auditor.md");
        fs::write(&path, "  Cite the command.\n").unwrap();
        std::thread::sleep(SETTLED);
        let before = reads();
        for _ in 0..3 {
            assert_eq!(
                read_block(&path, 1024).unwrap().as_deref(),
                Some("Cite the command.")
            );
        }
        assert_eq!(reads() - before, 1, "read once, then served from memory");
        // The same size, and the modification time set back to what it
        // was: the change time still tells.
        let modified = fs::metadata(&path).unwrap().modified().unwrap();
        fs::write(&path, "  Cite the outputs.\n").unwrap();
        let file = fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(modified).unwrap();
        assert_eq!(
            read_block(&path, 1024).unwrap().as_deref(),
            Some("Cite the outputs.")
        );
        // Changed just now: read at every call.
        let before = reads();
        read_block(&path, 1024).unwrap();
        read_block(&path, 1024).unwrap();
        assert_eq!(reads() - before, 2);
        fs::write(&path, " \n").unwrap();
        assert_eq!(read_block(&path, 1024).unwrap(), None);
        fs::remove_file(&path).unwrap();
        assert_eq!(read_block(&path, 1024).unwrap(), None);
    }

    #[test]
    fn a_remembered_file_still_obeys_a_lower_limit_and_errors_are_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("planner.md");
        fs::write(&path, "Plan in three steps.").unwrap();
        let bad = dir.path().join("bad.md");
        fs::write(&bad, b"caf\xe9").unwrap();
        std::thread::sleep(SETTLED);
        assert!(read_block(&path, 1024).unwrap().is_some());
        let error = read_block(&path, 4).unwrap_err();
        assert!(error.message.contains("limit of 4 bytes"), "{error:?}");

        assert!(read_block(&bad, 1024).is_err());
        let before = reads();
        assert!(read_block(&bad, 1024).is_err());
        assert_eq!(reads() - before, 1, "an error is not remembered");
        let dir_error = read_block(dir.path(), 1024).unwrap_err();
        assert!(dir_error.message.contains("directory"), "{dir_error:?}");
    }

    #[test]
    fn settled_means_unchanged_for_two_seconds_by_the_clock_now() {
        let now = SystemTime::now();
        let changed_at = |changed: SystemTime| Stamp {
            changed: Some(changed),
            ..Stamp::of(&fs::metadata(env!("CARGO_MANIFEST_DIR")).unwrap())
        };
        assert!(!changed_at(now).settled(now));
        assert!(!changed_at(now - Duration::from_millis(1500)).settled(now));
        assert!(changed_at(now - SETTLED).settled(now));
        // A clock set back since the change: not settled.
        assert!(!changed_at(now + Duration::from_secs(60)).settled(now));
    }
}
