//! The loader: a pack's folder (or files in memory) read, checked and
//! built, every problem collected as a diagnostic.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::config::{ConfigSpec, DEFAULT_MAX_FILE_SIZE};
use crate::diagnostic::{Diagnostic, DiagnosticCode, Diagnostics, LineIndex};
use crate::id::PromptId;
use crate::locale::Locale;
use crate::prompt_file::{self, FileKey, file_locale_warning};

use super::prompt_files::{PackWide, PromptFile, add_file, classify};
use super::pseudo::{self, PSEUDO_LOCALE};
use super::translation::{self, Translation};
use super::{
    DEFAULTS_DIR, Digests, MANIFEST, Pack, PackPrompt, manifest, shared_contract, snippets,
};

/// How a load treats errors confined to some prompts' files.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Errors {
    /// Any error fails the load: what installs or reloads.
    Fail,
    /// A pack with the other prompts, when every error is in a file of
    /// `defaults/` (the manifest and the snippets load): what shows one
    /// prompt.
    SparePrompts,
}

/// Reads the manifest and default files of `dir`: the default files
/// with the manifest's `max_file_size` (the manifest itself with the
/// default limit, as nothing declares its own).
pub(super) fn read(dir: &Path, errors: Errors) -> (Option<Pack>, Vec<Diagnostic>) {
    let mut diagnostics = Diagnostics::default();
    let manifest_path = dir.join(MANIFEST);
    let manifest = read_pack_file(&manifest_path, DEFAULT_MAX_FILE_SIZE, &mut diagnostics)
        .map(|text| ManifestRead::parse(text, &manifest_path));
    let limit = manifest
        .as_ref()
        .and_then(|m| m.parsed.as_ref().ok())
        .map_or(DEFAULT_MAX_FILE_SIZE, |m| m.spec.max_file_size());
    let mut files = read_defaults(&dir.join(DEFAULTS_DIR), limit, &mut diagnostics);
    files
        .read
        .extend(snippets::read(dir, limit, &mut diagnostics));
    files
        .read
        .extend(shared_contract::read(dir, limit, &mut diagnostics));
    build(dir, manifest, files, diagnostics, errors)
}

/// Builds a pack from files given in memory, paths relative to `root`.
pub(super) fn from_memory(
    root: &Path,
    files: impl IntoIterator<Item = (PathBuf, String)>,
) -> (Option<Pack>, Vec<Diagnostic>) {
    let manifest_path = root.join(MANIFEST);
    let mut manifest = None;
    let mut defaults = Vec::new();
    for (path, text) in files {
        if path == manifest_path {
            manifest.get_or_insert_with(|| ManifestRead::parse(text, &manifest_path));
        } else {
            defaults.push((path, text));
        }
    }
    let defaults = DefaultFiles {
        read: defaults,
        unreadable: Vec::new(),
    };
    build(
        root,
        manifest,
        defaults,
        Diagnostics::default(),
        Errors::Fail,
    )
}

/// A file of the pack, read: its text, or `None` when it does not exist.
fn read_pack_file(path: &Path, limit: u64, diagnostics: &mut Diagnostics) -> Option<String> {
    diagnostics
        .ok(prompt_file::read_text(path, limit))
        .flatten()
}

/// Every `*.md` file of the `defaults/` folder, read; none when the folder
/// does not exist.
fn read_defaults(defaults: &Path, limit: u64, diagnostics: &mut Diagnostics) -> DefaultFiles {
    let names = match prompt_file::markdown_names(defaults) {
        Ok(names) => names.unwrap_or_default(),
        Err(e) => {
            diagnostics.push(prompt_file::unreadable_dir(defaults, &e));
            Vec::new()
        }
    };
    let mut files = DefaultFiles::default();
    for path in names.into_iter().map(|name| defaults.join(name)) {
        match prompt_file::read_text(&path, limit) {
            Ok(Some(text)) => files.read.push((path, text)),
            // Gone since the folder was listed.
            Ok(None) => {}
            Err(d) => {
                diagnostics.push(d);
                files.unreadable.push(path);
            }
        }
    }
    files
}

/// The files of `defaults/`: those read, and those that could not be
/// (reported already).
#[derive(Default)]
struct DefaultFiles {
    read: Vec<(PathBuf, String)>,
    unreadable: Vec<PathBuf>,
}

/// The manifest's text and what parsing it gave.
struct ManifestRead {
    text: String,
    parsed: Result<manifest::Manifest, Vec<Diagnostic>>,
}

impl ManifestRead {
    fn parse(text: String, path: &Path) -> ManifestRead {
        let parsed = manifest::parse(&text, path);
        ManifestRead { text, parsed }
    }
}

/// Builds a pack from the manifest and the default files read, collecting
/// every diagnostic: the pack when none is an error (or, with
/// [`Errors::SparePrompts`], when every error is in a prompt's file).
fn build(
    root: &Path,
    manifest: Option<ManifestRead>,
    files: DefaultFiles,
    mut diagnostics: Diagnostics,
    errors: Errors,
) -> (Option<Pack>, Vec<Diagnostic>) {
    let Some((manifest, manifest_text)) = valid_manifest(root, manifest, &mut diagnostics) else {
        return (None, diagnostics.into_vec());
    };
    let snippets = snippets::build(root, &files.read, &mut diagnostics);
    let shared = shared_contract::build(root, &files.read, &mut diagnostics);
    let mut classified = classify_files(root, &manifest.spec, &files.read, &mut diagnostics);
    // A default file that fails to read or load is reported as it is, not
    // as missing.
    let with_default_file: BTreeSet<PromptId> = classified
        .iter()
        .filter(|file| file.locale.is_none())
        .map(|file| file.id.clone())
        .chain(unreadable_defaults(&manifest.spec, &files.unreadable))
        .collect();
    let pseudo_files = match manifest.l10n.pseudo {
        true => pseudo::variant_files(&classified),
        false => Vec::new(),
    };
    classified.extend(pseudo_files.iter().map(|(id, path, text)| PromptFile {
        id: id.clone(),
        locale: Locale::parse(PSEUDO_LOCALE).ok(),
        path,
        text,
    }));
    // Defaults first: their variants inherit their variable declarations.
    classified.sort_by_key(|f| (f.id.clone(), f.locale.is_some(), f.path.to_path_buf()));
    // A snippet or a shared tool can change any prompt: they count as the
    // manifest does.
    let snippet_texts: Vec<(&str, &str)> = snippets
        .files()
        .map(|(name, file)| (name, file.source.as_str()))
        .collect();
    let digests = Digests {
        manifest: crate::config::digest(&(&manifest_text, snippet_texts, shared.digest_input())),
        prompts: prompt_digests(&classified),
    };
    let read_with = PackWide {
        snippets: &snippets,
        extra_model_keys: &manifest.extra_model_keys,
        shared: &shared,
    };
    let mut prompts: BTreeMap<PromptId, PackPrompt> = BTreeMap::new();
    // A variant is checked against its default: when the default fails,
    // those checks would only echo its errors, so they wait for it.
    let mut failed_defaults = BTreeSet::new();
    let mut skipped = Vec::new();
    for file in classified {
        if file.locale.is_some() && failed_defaults.contains(&file.id) {
            skipped.push(file.path);
            continue;
        }
        let (id, is_default) = (file.id.clone(), file.locale.is_none());
        add_file(&mut prompts, file, &read_with, &mut diagnostics);
        if is_default && prompts.get(&id).is_none_or(|p| p.default.is_none()) {
            failed_defaults.insert(id);
        }
    }
    diagnostics.extend(skipped_variants_note(&skipped));
    for (id, path, _) in &pseudo_files {
        let variant = prompts
            .get_mut(id)
            .and_then(|p| p.variants.get_mut(PSEUDO_LOCALE))
            .filter(|v| &v.file == path);
        if let Some(variant) = variant {
            std::sync::Arc::make_mut(&mut variant.provenance).what = "pseudo-translation".into();
        }
    }
    let untracked: Vec<&Path> = prompts
        .values()
        .flat_map(|p| p.variants.values())
        .filter(|v| v.translation == Translation::Untracked)
        .map(|v| v.file.as_path())
        .collect();
    diagnostics.extend(translation::untracked_note(&untracked));
    let missing_defaults = missing_defaults(root, &manifest, &manifest_text, &with_default_file);
    diagnostics.extend(missing_defaults.values().cloned());
    let diagnostics = diagnostics.into_vec();
    let failed = match errors {
        Errors::Fail => no_errors(&diagnostics),
        Errors::SparePrompts => prompts_with_errors(root, &manifest.spec, &diagnostics),
    };
    let Some(failed) = failed else {
        return (None, diagnostics);
    };
    prompts.retain(|id, _| !failed.contains(id));
    let pack = Pack {
        root: root.to_path_buf(),
        name: manifest.name,
        description: manifest.description,
        default_locale: manifest.default_locale,
        fallback_locale: manifest.fallback_locale,
        spec: manifest.spec,
        prompts,
        snippets,
        warnings: diagnostics
            .iter()
            .filter(|d| d.is_warning())
            .cloned()
            .collect(),
        digests,
        on_disk: false,
        missing_defaults,
        gated: manifest.gated,
        signed: manifest.signed,
        stable_contract: manifest.stable_contract,
        l10n: manifest.l10n,
        failed,
    };
    (Some(pack), diagnostics)
}

/// No prompt failed, when no diagnostic is an error.
fn no_errors(diagnostics: &[Diagnostic]) -> Option<BTreeSet<PromptId>> {
    match diagnostics.iter().any(Diagnostic::is_error) {
        true => None,
        false => Some(BTreeSet::new()),
    }
}

/// The prompts with an error in one of their files (the default or a
/// variant), when every error is in a file of `defaults/`: an error in the
/// manifest or a snippet may concern any prompt, so it gives `None`. A
/// file for an undeclared id fails no prompt but is still an error.
fn prompts_with_errors(
    root: &Path,
    spec: &ConfigSpec,
    diagnostics: &[Diagnostic],
) -> Option<BTreeSet<PromptId>> {
    let defaults = root.join(DEFAULTS_DIR);
    let mut failed = BTreeSet::new();
    for error in diagnostics.iter().filter(|d| d.is_error()) {
        let file = error.file.as_deref()?;
        if file.parent() != Some(defaults.as_path()) {
            return None;
        }
        let name = file.file_name()?.to_str()?;
        if let Ok((id, _)) = classify(spec, name, file) {
            failed.insert(id);
        }
    }
    Some(failed)
}

/// One note naming the variant files not checked because their default
/// file failed, if any.
fn skipped_variants_note(skipped: &[&Path]) -> Option<Diagnostic> {
    let (first, rest) = skipped.split_first()?;
    let message = match rest.len() {
        0 => format!(
            "1 locale variant not checked ({}): its default file has errors",
            first.display()
        ),
        n => format!(
            "{} locale variants not checked ({} and {n} more): their default files have errors",
            n + 1,
            first.display()
        ),
    };
    Some(
        Diagnostic::note(DiagnosticCode::SkippedChecks, message)
            .suggest(Some("fix the errors above and check again".to_owned())),
    )
}

/// The manifest and its text, when it exists and is valid.
fn valid_manifest(
    root: &Path,
    manifest: Option<ManifestRead>,
    diagnostics: &mut Diagnostics,
) -> Option<(manifest::Manifest, String)> {
    let Some(ManifestRead { text, parsed }) = manifest else {
        diagnostics.push(
            Diagnostic::error(DiagnosticCode::Manifest, "no pack manifest")
                .in_file(root.join(MANIFEST))
                .suggest(Some(format!(
                    "a pack is a folder with a {MANIFEST} and a {DEFAULTS_DIR}/ folder"
                ))),
        );
        return None;
    };
    match parsed {
        Ok(mut manifest) => {
            diagnostics.extend(std::mem::take(&mut manifest.warnings));
            Some((manifest, text))
        }
        Err(problems) => {
            diagnostics.extend(problems);
            None
        }
    }
}

/// The files directly in `defaults/`, each named after a declared id,
/// with a warning for a file-name locale that names no language.
fn classify_files<'a>(
    root: &Path,
    spec: &ConfigSpec,
    files: &'a [(PathBuf, String)],
    diagnostics: &mut Diagnostics,
) -> Vec<PromptFile<'a>> {
    let defaults = root.join(DEFAULTS_DIR);
    let in_defaults = files
        .iter()
        .filter(|(path, _)| path.parent() == Some(defaults.as_path()));
    let mut classified = Vec::new();
    for (path, text) in in_defaults {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let Some((id, locale)) = diagnostics.ok(classify(spec, name, path)) else {
            continue;
        };
        if let Some(locale) = &locale {
            diagnostics.extend(file_locale_warning(&id, locale, path));
        }
        classified.push(PromptFile {
            id,
            locale,
            path,
            text,
        });
    }
    classified
}

/// The ids whose default file (`<id>.md`, not a variant) could not be read.
fn unreadable_defaults<'a>(
    spec: &'a ConfigSpec,
    paths: &'a [PathBuf],
) -> impl Iterator<Item = PromptId> + 'a {
    paths.iter().filter_map(|path| {
        let stem = path.file_name()?.to_str()?.strip_suffix(".md")?;
        match prompt_file::file_key(spec, stem) {
            FileKey::Key(id, None) => Some(id),
            _ => None,
        }
    })
}

/// A hash of each prompt's files, in load order.
fn prompt_digests(files: &[PromptFile<'_>]) -> BTreeMap<PromptId, u64> {
    let mut texts: BTreeMap<&PromptId, Vec<(&Path, &str)>> = BTreeMap::new();
    for file in files {
        texts
            .entry(&file.id)
            .or_default()
            .push((file.path, file.text));
    }
    texts
        .into_iter()
        .map(|(id, texts)| (id.clone(), crate::config::digest(&texts)))
        .collect()
}

/// A warning for every declared key without a default file, at the key in
/// the manifest.
///
/// A warning, not an error: a pack's `keys` also declare what users may
/// configure, and an application may register some defaults in code
/// (`register_default`) rather than in files. Most often, though, the file
/// was forgotten or misnamed, and `render` cannot show the prompt; `check
/// --deny-warnings` makes it fail.
fn missing_defaults(
    root: &Path,
    manifest: &manifest::Manifest,
    manifest_text: &str,
    with_default_file: &BTreeSet<PromptId>,
) -> BTreeMap<PromptId, Diagnostic> {
    let manifest_path = root.join(MANIFEST);
    let lines = LineIndex::new(manifest_text);
    manifest
        .spec
        .keys()
        .filter(|id| !with_default_file.contains(*id))
        .map(|id| {
            let file = format!("{DEFAULTS_DIR}/{id}.md");
            let mut d = Diagnostic::warning(
                DiagnosticCode::MissingDefault,
                format!("key `{id}` is declared but has no default file {file}"),
            )
            .in_file(&manifest_path)
            .key_path("keys")
            .suggest(Some(format!(
                "create {file}, or remove `{id}` from `keys` unless the application registers its default in code"
            )));
            if let Some(span) = manifest.key_spans.get(id) {
                d = d.at(&lines, span.clone());
            }
            (id.clone(), d)
        })
        .collect()
}
