//! What a pack folder was taken from: the store, the pack and each entry's
//! version, written by `store pull` and by each `store push` into
//! `.promptreg-base.json` beside the manifest (a dotfile, which the pack
//! format ignores). A push from the folder then refuses to change an entry
//! that moved in the store since, instead of quietly undoing someone
//! else's edit (`Store::push_from`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file's name in the pack folder.
pub(super) const FILE: &str = ".promptreg-base.json";

/// The store, pack and entry versions a folder holds.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(super) struct Base {
    /// The store, as `Store::location` names it (passwords hidden).
    pub(super) store: String,
    pub(super) pack: String,
    /// Entry -> version.
    pub(super) entries: BTreeMap<String, u64>,
}

impl Base {
    /// The base recorded in `dir` for `store` and `pack`: `None` when the
    /// folder records none, or one of another store or pack (a folder
    /// never taken from this store). A file that does not parse is an
    /// error naming it.
    pub(super) fn read(dir: &Path, store: &str, pack: &str) -> Result<Option<Base>, String> {
        let path = dir.join(FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let base: Base = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{} is not a record of a pull: {e}; delete it and push with --force, or pull again",
                path.display()
            )
        })?;
        Ok((base.store == store && base.pack == pack).then_some(base))
    }

    /// Writes the record into `dir`, replacing any: a temporary file
    /// renamed over it, so a reader finds the old record or the new one.
    pub(super) fn write(&self, dir: &Path) -> Result<(), String> {
        let path = dir.join(FILE);
        let staged = PathBuf::from(format!("{}.tmp", path.display()));
        let text = serde_json::to_string_pretty(self).unwrap_or_default() + "\n";
        std::fs::write(&staged, text)
            .and_then(|()| std::fs::rename(&staged, &path))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_read_back_only_for_its_own_store_and_pack() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Base::read(dir.path(), "a.db", "demo"), Ok(None));
        let base = Base {
            store: "a.db".into(),
            pack: "demo".into(),
            entries: BTreeMap::from([("greeting".to_owned(), 2)]),
        };
        base.write(dir.path()).unwrap();
        assert_eq!(Base::read(dir.path(), "a.db", "demo"), Ok(Some(base)));
        assert_eq!(Base::read(dir.path(), "b.db", "demo"), Ok(None));
        assert_eq!(Base::read(dir.path(), "a.db", "other"), Ok(None));
        std::fs::write(dir.path().join(FILE), "{").unwrap();
        let err = Base::read(dir.path(), "a.db", "demo").unwrap_err();
        assert!(err.contains("is not a record of a pull"), "{err}");
    }
}
