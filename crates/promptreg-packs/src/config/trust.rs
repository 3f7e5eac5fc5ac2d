//! The trust boundary: what a project's configuration may read.
//!
//! Configuration from home is the user's own and reads any file. A
//! project's configuration (its settings file, its prompts folder, its
//! legacy files, and every path its settings name) comes with a repository
//! someone may have cloned, so it reads only files that resolve, symbolic
//! links followed, inside the project; unless the user listed the project
//! under `trustedProjects` in the global settings file.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use jsonc_parser::cst::{CstInputValue, CstRootNode};

use super::files;
use super::settings;
use super::spec::ConfigSpec;
use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::error::{Error, ErrorKind};
use crate::prompt_file::non_blank;

/// The global settings key that lists trusted project roots.
pub(crate) const TRUSTED_PROJECTS: &str = "trustedProjects";

/// Where a project's configuration may read: under the project's root,
/// symbolic links resolved.
#[derive(Debug, Clone)]
pub(crate) struct Boundary {
    root: PathBuf,
    /// The global settings file, where trust is recorded.
    settings_file: Option<PathBuf>,
}

impl Boundary {
    /// The boundary of the project at `cwd`, or `None` when its
    /// configuration may read anywhere: there is no project, the project is
    /// home itself, or an entry of `trusted` (as written in the global
    /// settings) is the project's root or a folder above it.
    pub(crate) fn of_project(
        cwd: Option<&Path>,
        home: &Path,
        trusted: &[String],
        settings_file: Option<PathBuf>,
    ) -> Option<Boundary> {
        let cwd = cwd?;
        // A project folder that cannot be resolved holds no files; keeping
        // its path as written still confines every read.
        let root = fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        if fs::canonicalize(home).is_ok_and(|home| home == root) {
            return None;
        }
        if trusted_entry(trusted, home, &root).is_some() {
            return None;
        }
        Some(Boundary {
            root,
            settings_file,
        })
    }

    /// `Ok` when `target` (resolved) is inside the project; otherwise the
    /// refusal, naming `path` as found, `what` it is ("prompt file") and
    /// `target`, in one sentence.
    pub(crate) fn admit(&self, what: &str, path: &Path, target: &Path) -> Result<(), Diagnostic> {
        if target.starts_with(&self.root) {
            return Ok(());
        }
        // The diagnostic names `path` as its file; the message says where
        // it leads.
        let message = if crate::prompt_file::leads_elsewhere(path, target) {
            format!(
                "not read: this {what} leads to {}, outside the project {}",
                target.display(),
                self.root.display()
            )
        } else {
            format!(
                "not read: this {what} is outside the project {}",
                self.root.display()
            )
        };
        Err(Diagnostic::error(DiagnosticCode::OutsideProject, message)
            .in_file(path)
            .suggest(Some(self.how_to_trust())))
    }

    fn how_to_trust(&self) -> String {
        match &self.settings_file {
            Some(file) => format!(
                "a project's configuration reads only the project's files; if you trust this project, run `promptreg trust {}`, which adds it to `{TRUSTED_PROJECTS}` in {}",
                shell_quote(&self.root.display().to_string()),
                file.display()
            ),
            None => "a project's configuration reads only the project's files; move the file into the project".to_owned(),
        }
    }
}

/// The first entry of `trusted` that trusts `root` (resolved): the entry,
/// `~/...` or absolute and resolved, is `root` or a folder above it.
/// Relative entries (reported when the settings are checked) and entries
/// that no longer exist trust nothing.
fn trusted_entry<'a>(trusted: &'a [String], home: &Path, root: &Path) -> Option<&'a String> {
    trusted.iter().find(|entry| {
        let raw = entry.trim();
        is_rooted(raw)
            && files::expand(raw, home, None)
                .and_then(|path| fs::canonicalize(path).ok())
                .is_some_and(|path| root.starts_with(path))
    })
}

/// Whether a `trustedProjects` entry names a folder on its own: `~`,
/// `~/...` or absolute.
pub(crate) fn is_rooted(raw: &str) -> bool {
    raw == "~" || raw.starts_with("~/") || Path::new(raw).is_absolute()
}

/// `text` quoted for a POSIX shell when it needs quoting.
fn shell_quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// What [`trust_project`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TrustedProject {
    /// The project's root, symbolic links resolved: what is trusted.
    pub root: PathBuf,
    /// The global settings file that records it.
    pub settings_file: PathBuf,
    /// The `trustedProjects` entry that trusts it: the one added, or the
    /// one already there (the root itself or a folder above it).
    pub entry: String,
    /// Whether the entry was added; `false` when the project was already
    /// trusted and the file was left as it was.
    pub added: bool,
}

/// Trusts the project at `project`: adds its root, symbolic links
/// resolved, to `trustedProjects` in `spec`'s global settings file under
/// `home`, so its configuration may read files outside it. The rest of the
/// file (comments, formatting, other keys) is kept as it was; a missing
/// file is created. Trusting a project that is already trusted, by its own
/// entry or by a folder above it, changes nothing.
///
/// This is what `promptreg trust DIR` does; the [`config`](crate::config)
/// module describes the trust boundary.
///
/// ```
/// use promptreg_packs::config::{trust_project, ConfigSpec};
/// # let home = tempfile::tempdir()?;
/// # let project = tempfile::tempdir()?;
/// let spec = ConfigSpec::builder("app").key("auditor").prompts_dir(".app/prompts")
///     .settings_file(".app/settings.json").build()?;
///
/// let trusted = trust_project(&spec, home.path(), project.path())?;
/// assert!(trusted.added);
/// assert_eq!(trusted.root, project.path().canonicalize()?);
/// // A second time, nothing changes.
/// assert!(!trust_project(&spec, home.path(), project.path())?.added);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`ErrorKind::Config`] when the application declares no global settings
/// file, `project` is not a folder that exists, the settings file cannot be
/// read, does not parse, is not an object or has an invalid
/// `trustedProjects`, or cannot be written.
pub fn trust_project(
    spec: &ConfigSpec,
    home: &Path,
    project: &Path,
) -> Result<TrustedProject, Error> {
    let name = spec.global_settings_file().ok_or_else(|| {
        Error::new(
            ErrorKind::Config,
            format!(
                "application `{}` declares no global settings file, so it has nowhere to record trusted projects",
                spec.name()
            ),
        )
    })?;
    let root = project_root(project)?;
    let settings_file = home.join(name);
    let text = crate::prompt_file::read_text(&settings_file, spec.max_file_size())
        .map_err(|d| Error::from_diagnostics(vec![d]))?
        .unwrap_or_default();
    let trusted = trusted_in(&text, &settings_file, spec)?;
    if let Some(entry) = trusted_entry(&trusted, home, &root) {
        return Ok(TrustedProject {
            root,
            settings_file,
            entry: entry.clone(),
            added: false,
        });
    }
    let entry = root
        .to_str()
        .ok_or_else(|| {
            Error::new(
                ErrorKind::Config,
                format!(
                    "cannot trust {}: its path is not valid UTF-8, so JSON cannot hold it",
                    root.display()
                ),
            )
        })?
        .to_owned();
    let edited = with_entry(&text, &entry, &settings_file)?;
    write_replacing(&settings_file, &edited)?;
    Ok(TrustedProject {
        root,
        settings_file,
        entry,
        added: true,
    })
}

/// `project`, resolved; it must be a folder.
fn project_root(project: &Path) -> Result<PathBuf, Error> {
    let failed = |why: String| {
        Error::new(
            ErrorKind::Config,
            format!("cannot trust {}: {why}", project.display()),
        )
    };
    let root = fs::canonicalize(project).map_err(|e| failed(e.to_string()))?;
    if !root.is_dir() {
        return Err(failed("it is not a folder".to_owned()));
    }
    Ok(root)
}

/// The `trustedProjects` entries of the global settings `text`; an error
/// when the file is in no state to be edited (it does not parse, is not an
/// object, or its list is invalid). Other problems are left to `check`.
fn trusted_in(text: &str, path: &Path, spec: &ConfigSpec) -> Result<Vec<String>, Error> {
    if non_blank(text).is_none() {
        return Ok(Vec::new());
    }
    let (parsed, diagnostics) = settings::parse(text, path, spec);
    let blocking: Vec<Diagnostic> = diagnostics
        .into_iter()
        .filter(|d| {
            d.is_error()
                && d.key_path
                    .as_deref()
                    .is_none_or(|k| k.starts_with(TRUSTED_PROJECTS))
        })
        .collect();
    if !blocking.is_empty() {
        return Err(Error::from_diagnostics(blocking));
    }
    Ok(parsed
        .trusted_projects()
        .map(|list| list.entries.clone())
        .unwrap_or_default())
}

/// `text` with `entry` appended to its `trustedProjects` list (created
/// when absent or `null`), everything else kept.
fn with_entry(text: &str, entry: &str, path: &Path) -> Result<String, Error> {
    let source = non_blank(text).map_or("{}\n", |_| text);
    let root = CstRootNode::parse(source, &settings::parse_options()).map_err(|e| {
        Error::new(
            ErrorKind::Config,
            format!("cannot edit {}: {e}", path.display()),
        )
    })?;
    let list = root
        .object_value_or_set()
        .array_value_or_set(TRUSTED_PROJECTS);
    list.append(CstInputValue::String(entry.to_owned()));
    list.ensure_multiline();
    Ok(root.to_string())
}

/// Replaces the file at `path` (the file a symbolic link points to, if it
/// is one) with `text` in one step: a new file beside it, renamed over it,
/// so no reader ever sees half of it.
fn write_replacing(path: &Path, text: &str) -> Result<(), Error> {
    let failed = |e: std::io::Error| {
        Error::new(
            ErrorKind::Config,
            format!("cannot write {}: {e}", path.display()),
        )
        .with_source(e)
    };
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = target.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(failed)?;
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = fs::File::create(&temporary)?;
        file.write_all(text.as_bytes())?;
        if let Ok(meta) = fs::metadata(&target) {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        fs::rename(&temporary, &target)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written.map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting_leaves_plain_paths_alone() {
        assert_eq!(shell_quote("/home/u/code/app"), "/home/u/code/app");
        assert_eq!(shell_quote("/home/u/my app"), "'/home/u/my app'");
        assert_eq!(shell_quote("/tmp/it's"), r"'/tmp/it'\''s'");
    }

    #[test]
    fn an_entry_is_added_keeping_comments_and_other_keys() {
        let text = "{\n  // mine\n  \"prompts\": {},\n}\n";
        let edited = with_entry(text, "/p", Path::new("s.json")).unwrap();
        assert_eq!(
            edited,
            "{\n  // mine\n  \"prompts\": {},\n  \"trustedProjects\": [\n    \"/p\"\n  ],\n}\n"
        );
        let again = with_entry(&edited, "/q", Path::new("s.json")).unwrap();
        assert!(again.contains("\"/p\",\n    \"/q\""), "{again}");
    }

    #[test]
    fn an_empty_file_becomes_an_object_with_the_list() {
        let edited = with_entry("", "/p", Path::new("s.json")).unwrap();
        let value: serde_json::Value = serde_json::from_str(&edited).unwrap();
        assert_eq!(value["trustedProjects"][0], "/p");
    }

    #[test]
    fn a_null_list_is_replaced() {
        let edited = with_entry("{ \"trustedProjects\": null }", "/p", Path::new("s")).unwrap();
        let value: serde_json::Value = serde_json::from_str(&edited).unwrap();
        assert_eq!(value["trustedProjects"], serde_json::json!(["/p"]));
    }

    #[test]
    fn a_folder_above_trusts_the_folders_below_it_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("code/app")).unwrap();
        fs::create_dir_all(root.join("code-other")).unwrap();
        let trusted = [format!("{}/code", root.display())];
        let home = Path::new("/nonexistent-home");
        assert!(trusted_entry(&trusted, home, &root.join("code/app")).is_some());
        assert!(trusted_entry(&trusted, home, &root.join("code")).is_some());
        assert!(trusted_entry(&trusted, home, &root.join("code-other")).is_none());
        assert!(trusted_entry(&["code".to_owned()], home, &root.join("code")).is_none());
    }
}
