//! A pack's snippets: `snippets/<name>.md` and its locale variants
//! `snippets/<name>.<locale>.md`, read into memory at load and checked
//! there (names, syntax, missing includes, cycles).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diagnostic::{Diagnostic, DiagnosticCode, Diagnostics};
use crate::locale::Locale;
use crate::prompt_file;
use crate::snippet::{self, SNIPPETS_DIR, SnippetFile, Snippets};
use crate::template;

/// Every `*.md` file of the pack's `snippets/` folder, read; none when the
/// folder does not exist. A file whose path leads outside the pack (a
/// symbolic link) is refused, not read.
pub(super) fn read(
    root: &Path,
    limit: u64,
    diagnostics: &mut Diagnostics,
) -> Vec<(PathBuf, String)> {
    let folder = PackFolder {
        name: SNIPPETS_DIR,
        endings: &[".md"],
        code: DiagnosticCode::Snippet,
        noun: "snippet",
    };
    folder.read(root, limit, diagnostics)
}

/// A folder of a pack whose files are read whole at load, none of them
/// leading outside the pack.
pub(super) struct PackFolder<'a> {
    /// Its name in the pack: `snippets`.
    pub(super) name: &'a str,
    /// The endings of the files read: `.md`.
    pub(super) endings: &'a [&'a str],
    /// The code of a diagnostic about a file.
    pub(super) code: DiagnosticCode,
    /// What a file is, in a message: `snippet`.
    pub(super) noun: &'a str,
}

impl PackFolder<'_> {
    /// Every file of the folder in the pack at `root`, read; none when
    /// the folder does not exist. A file whose path leads outside the pack
    /// (a symbolic link) is refused, not read.
    pub(super) fn read(
        &self,
        root: &Path,
        limit: u64,
        diagnostics: &mut Diagnostics,
    ) -> Vec<(PathBuf, String)> {
        let dir = root.join(self.name);
        let names = match prompt_file::names_ending(&dir, self.endings) {
            Ok(names) => names.unwrap_or_default(),
            Err(e) => {
                diagnostics.push(prompt_file::unreadable_dir(&dir, &e));
                return Vec::new();
            }
        };
        let Ok(Some(pack)) = prompt_file::resolve(root) else {
            return Vec::new();
        };
        let inside = |path: &Path, target: &Path| self.inside_pack(&pack, path, target);
        let mut files = Vec::new();
        for path in names.into_iter().map(|name| dir.join(name)) {
            match prompt_file::read_file(&path, limit, Some(&inside)) {
                Ok(Some(file)) => files.push((path, file.text)),
                Ok(None) => {}
                Err(d) => diagnostics.push(d),
            }
        }
        files
    }

    /// A file of the folder is part of the pack: it cannot lead elsewhere.
    fn inside_pack(&self, pack: &Path, path: &Path, target: &Path) -> Result<(), Diagnostic> {
        if target.starts_with(pack) {
            return Ok(());
        }
        let noun = self.noun;
        Err(Diagnostic::error(
            self.code,
            format!(
                "this {noun} leads outside the pack, to {}",
                target.display()
            ),
        )
        .in_file(path)
        .suggest(Some(format!(
            "copy the text into the pack: a {noun} is read from the pack's own files only"
        ))))
    }
}

/// The snippets among `files` (those directly in `snippets/`), each
/// checked: its name, its syntax, its includes; and the cycles among them.
pub(super) fn build(
    root: &Path,
    files: &[(PathBuf, String)],
    diagnostics: &mut Diagnostics,
) -> Arc<Snippets> {
    let dir = root.join(SNIPPETS_DIR);
    let mut snippets = Snippets::default();
    // Defaults reported already (a syntax error): not missing as well.
    let mut broken_defaults = std::collections::BTreeSet::new();
    for (path, text) in files
        .iter()
        .filter(|(p, _)| p.parent() == Some(dir.as_path()))
    {
        let Some((name, locale)) = diagnostics.ok(classify(path)) else {
            continue;
        };
        if diagnostics.ok(template::check_syntax(path, text)).is_none() {
            if locale.is_none() {
                broken_defaults.insert(name);
            }
            continue;
        }
        let file = SnippetFile {
            locale,
            path: path.clone(),
            source: text.clone(),
        };
        diagnostics.ok(snippets.insert(&name, file));
    }
    let missing = snippets
        .without_default()
        .filter(|(name, _)| !broken_defaults.contains(*name));
    for (name, file) in missing {
        diagnostics.push(
            Diagnostic::error(
                DiagnosticCode::Snippet,
                format!(
                    "snippet `{name}` has locale variants but no default: a render in another locale would find nothing to include"
                ),
            )
            .in_file(&file.path)
            .suggest(Some(format!("create {SNIPPETS_DIR}/{name}.md"))),
        );
    }
    for (_, file) in snippets.files() {
        diagnostics.extend(snippets.check_includes(&file.path, &file.source, 0));
    }
    diagnostics.extend(snippets.cycles());
    Arc::new(snippets)
}

/// `<name>.md` or `<name>.<locale>.md`: a last suffix naming a known
/// language makes a variant, as for prompt files of a key pattern.
fn classify(path: &Path) -> Result<(String, Option<Locale>), Diagnostic> {
    let file_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let stem = file_name.strip_suffix(".md").unwrap_or(file_name);
    let split = stem
        .rsplit_once('.')
        .and_then(|(name, tag)| Some((name, Locale::parse(tag).ok()?)))
        .filter(|(_, locale)| locale.names_known_language());
    let (name, locale) = match split {
        Some((name, locale)) => (name, Some(locale)),
        None => (stem, None),
    };
    match snippet::name_problem(name) {
        None => Ok((name.to_owned(), locale)),
        Some(why) => Err(Diagnostic::error(
            DiagnosticCode::Snippet,
            format!("`{name}` cannot be a snippet name: {why}"),
        )
        .in_file(path)
        .suggest(Some(
            "name snippet files with letters, digits, `-`, `_` and `.`".to_owned(),
        ))),
    }
}
