//! Two versions of a prompt compared file by file: the one logic behind
//! `promptreg store diff` and the server's diff route, each presenting it
//! its own way.

use promptreg::contract::{ContractChange, changes_between};
use promptreg::pack::declared_contract_with;
use promptreg::{Locale, PromptId};
use similar::TextDiff;

use crate::files::{PackFiles, is_pack_level};

/// How many unchanged lines surround each change in a unified diff.
const CONTEXT_LINES: usize = 3;

/// Two versions of a prompt, compared file by file.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PromptDiff {
    /// The prompt id, or `@pack`.
    pub id: String,
    /// The version compared from.
    pub from: u64,
    /// The version compared to.
    pub to: u64,
    /// Every file of either version (or of the locale asked for), sorted
    /// by path; empty when no file has that locale.
    pub files: Vec<FileDiff>,
    /// What the second version changes in the prompt's contract (its tools
    /// and output schema, as its default file declares them), each change
    /// classified breaking or not; empty when it changes none.
    pub contract: Vec<ContractChange>,
}

/// One file of a [`PromptDiff`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FileDiff {
    /// Path in the pack.
    pub path: String,
    /// The locale of a variant file; `None` for the default file and the
    /// manifest.
    pub locale: Option<Locale>,
    /// Whether the two versions differ (a file only one has differs).
    pub changed: bool,
    /// The unified diff, headed `PATH (vFROM)` and `PATH (vTO)`; empty when
    /// unchanged.
    pub diff: String,
}

impl PromptDiff {
    /// Compares the files of version `from.0` of `id` with those of
    /// version `to.0`; with `locale`, only the files of that locale. A file
    /// one version lacks compares as empty; bytes that are not UTF-8
    /// (which a push refuses) are shown replaced.
    pub fn new(
        id: &str,
        from: (u64, &PackFiles),
        to: (u64, &PackFiles),
        locale: Option<&Locale>,
    ) -> PromptDiff {
        let (a, a_files) = from;
        let (b, b_files) = to;
        let files = compare(
            (&format!("v{a}"), a_files),
            (&format!("v{b}"), b_files),
            |path| file_locale(id, path),
        )
        .into_iter()
        .filter(|f| locale.is_none() || f.locale.as_ref() == locale)
        .collect();
        PromptDiff {
            id: id.to_owned(),
            from: a,
            to: b,
            files,
            contract: contract_changes(id, a_files, b_files),
        }
    }

    /// Whether the second version changes the contract in a way an
    /// application written against the first may fail on.
    pub fn breaks_contract(&self) -> bool {
        self.contract.iter().any(|c| c.breaking)
    }

    /// Whether any file differs.
    pub fn changed(&self) -> bool {
        self.files.iter().any(|f| f.changed)
    }
}

/// Two revisions of a label compared: every file of the pack that differs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RevisionDiff {
    /// The label.
    pub label: String,
    /// The revision compared from.
    pub from: u64,
    /// The revision compared to.
    pub to: u64,
    /// The files that differ, sorted by path, each headed `PATH (rN)`; a
    /// file only one revision has compares as empty. Files are named by
    /// path alone (`locale` is `None`).
    pub files: Vec<FileDiff>,
}

impl RevisionDiff {
    /// Compares the pack's files at revision `from.0` with those at
    /// revision `to.0`.
    pub fn new(label: &str, from: (u64, &PackFiles), to: (u64, &PackFiles)) -> RevisionDiff {
        let files = compare(
            (&format!("r{}", from.0), from.1),
            (&format!("r{}", to.0), to.1),
            |_| None,
        );
        RevisionDiff {
            label: label.to_owned(),
            from: from.0,
            to: to.0,
            files: files.into_iter().filter(|f| f.changed).collect(),
        }
    }
}

/// What the default file of `id` in `to` changes in the contract it
/// declares in `from`, each side naming the shared tools and schemas
/// among its own files (`tools/`, `schemas/`). A file that does not read
/// declares none here: `check` refuses it before it is stored.
pub fn contract_changes(id: &str, from: &PackFiles, to: &PackFiles) -> Vec<ContractChange> {
    fn side<'a>(files: &'a PackFiles, path: &str) -> ContractSide<'a> {
        (files.get(path), shared_files(files))
    }
    let path = format!("defaults/{id}.md");
    default_file_contract_changes(id, side(from, &path), side(to, &path))
}

/// The shared tools and schemas among `files`, by path.
pub(crate) fn shared_files(files: &PackFiles) -> Vec<(String, String)> {
    files
        .iter()
        .filter(|(path, _)| is_shared_file(path))
        .map(|(path, bytes)| (path.to_owned(), String::from_utf8_lossy(bytes).into_owned()))
        .collect()
}

/// Whether `path` is a shared tool's or schema's file.
pub(crate) fn is_shared_file(path: &str) -> bool {
    [promptreg::pack::TOOLS_DIR, promptreg::pack::SCHEMAS_DIR]
        .iter()
        .any(|dir| {
            path.strip_prefix(dir)
                .is_some_and(|rest| rest.starts_with('/'))
        })
}

/// One side of a comparison: the default file (its bytes; `None` where
/// there is none) and the shared files it may name.
pub(crate) type ContractSide<'a> = (Option<&'a [u8]>, Vec<(String, String)>);

/// What the default file of `id` changes in its contract, from `from` to
/// `to`.
pub(crate) fn default_file_contract_changes(
    id: &str,
    from: ContractSide<'_>,
    to: ContractSide<'_>,
) -> Vec<ContractChange> {
    let Ok(prompt) = PromptId::new(id) else {
        return Vec::new();
    };
    let contract = |(file, shared): ContractSide<'_>| {
        declared_contract_with(&prompt, &String::from_utf8_lossy(file?), shared)
    };
    changes_between(contract(from).as_ref(), contract(to).as_ref())
}

/// Every file of either set, sorted by path, compared line by line, each
/// side headed `PATH (NAME)`; `locale` names a file's locale.
fn compare(
    (a, a_files): (&str, &PackFiles),
    (b, b_files): (&str, &PackFiles),
    locale: impl Fn(&str) -> Option<Locale>,
) -> Vec<FileDiff> {
    let mut paths: Vec<&str> = a_files
        .iter()
        .chain(b_files.iter())
        .map(|(p, _)| p)
        .collect();
    paths.sort_unstable();
    paths.dedup();
    paths
        .into_iter()
        .map(|path| {
            let old = String::from_utf8_lossy(a_files.get(path).unwrap_or_default());
            let new = String::from_utf8_lossy(b_files.get(path).unwrap_or_default());
            let changed = old != new;
            let diff = if changed {
                TextDiff::from_lines(old.as_ref(), new.as_ref())
                    .unified_diff()
                    .context_radius(CONTEXT_LINES)
                    .header(&format!("{path} ({a})"), &format!("{path} ({b})"))
                    .to_string()
            } else {
                String::new()
            };
            FileDiff {
                path: path.to_owned(),
                locale: locale(path),
                changed,
                diff,
            }
        })
        .collect()
}

/// The locale of `defaults/<id>.<locale>.md`; the default file and the
/// manifest have none.
pub fn file_locale(id: &str, path: &str) -> Option<Locale> {
    if is_pack_level(id) {
        return None;
    }
    let name = path.rsplit('/').next()?.strip_suffix(".md")?;
    let tag = name.strip_prefix(id)?.strip_prefix('.')?;
    Locale::parse(tag).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(entries: &[(&str, &str)]) -> PackFiles {
        let mut files = PackFiles::default();
        for (path, text) in entries {
            files.insert(*path, *text);
        }
        files
    }

    #[test]
    fn every_file_of_either_version_is_compared_and_a_locale_keeps_its_own() {
        let old = files(&[
            ("defaults/hi.md", "Hello.\n"),
            ("defaults/hi.fr.md", "Salut.\n"),
        ]);
        let new = files(&[
            ("defaults/hi.md", "Hello.\n"),
            ("defaults/hi.ja.md", "やあ。\n"),
        ]);
        let diff = PromptDiff::new("hi", (1, &old), (2, &new), None);
        let seen: Vec<(&str, Option<&str>, bool)> = diff
            .files
            .iter()
            .map(|f| {
                (
                    f.path.as_str(),
                    f.locale.as_ref().map(Locale::as_str),
                    f.changed,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("defaults/hi.fr.md", Some("fr"), true),
                ("defaults/hi.ja.md", Some("ja"), true),
                ("defaults/hi.md", None, false),
            ]
        );
        assert!(diff.changed());
        assert_eq!(
            diff.files[0].diff,
            "--- defaults/hi.fr.md (v1)\n+++ defaults/hi.fr.md (v2)\n@@ -1 +0,0 @@\n-Salut.\n"
        );
        assert_eq!(diff.files[2].diff, "");

        let ja = Locale::parse("ja").unwrap();
        let only = PromptDiff::new("hi", (1, &old), (2, &new), Some(&ja));
        assert_eq!(only.files.len(), 1);
        let de = Locale::parse("de").unwrap();
        assert!(
            PromptDiff::new("hi", (1, &old), (2, &new), Some(&de))
                .files
                .is_empty()
        );
        assert!(!PromptDiff::new("hi", (1, &old), (1, &old), None).changed());
    }

    #[test]
    fn a_version_s_contract_changes_are_classified() {
        let tool = |name: &str| {
            format!("---\ntools:\n  - name: {name}\n    description: Open a page.\n---\nGuide.\n")
        };
        let old = files(&[("defaults/hi.md", &tool("open_page"))]);
        let new = files(&[("defaults/hi.md", &tool("open"))]);
        let diff = PromptDiff::new("hi", (1, &old), (2, &new), None);
        let changes: Vec<String> = diff.contract.iter().map(ToString::to_string).collect();
        assert_eq!(
            changes,
            [
                "breaking: tool `open_page` removed",
                "compatible: tool `open` added"
            ]
        );
        assert!(diff.breaks_contract());
        // Text alone changes no contract; a file that does not read has none.
        let text = files(&[("defaults/hi.md", "Hello.\n")]);
        assert!(
            PromptDiff::new("hi", (1, &text), (2, &text), None)
                .contract
                .is_empty()
        );
        let broken = files(&[("defaults/hi.md", "---\ntools: [\n---\nx\n")]);
        let diff = PromptDiff::new("hi", (1, &broken), (2, &old), None);
        assert_eq!(diff.contract.len(), 1);
        assert!(!diff.breaks_contract());
    }
}
