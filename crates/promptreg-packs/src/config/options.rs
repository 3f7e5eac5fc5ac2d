//! [`LoadOptions`]: where a configuration is read from.

use std::path::{Path, PathBuf};

use super::files::non_empty;
use super::spec::ConfigSpec;
use crate::error::{Error, ErrorKind};
use crate::prompt_file::non_blank;

/// Where a configuration is read from: home, cwd and the value of the
/// settings environment variable.
///
/// Everything is explicit so that tests and tools choose their own folders;
/// [`LoadOptions::from_process`] reads the real ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadOptions {
    home: PathBuf,
    cwd: PathBuf,
    settings_env: Option<String>,
}

impl LoadOptions {
    /// Reads global files under `home` and local files under `cwd`. An
    /// empty `cwd` means no local files.
    pub fn new(home: impl Into<PathBuf>, cwd: impl Into<PathBuf>) -> Self {
        LoadOptions {
            home: home.into(),
            cwd: cwd.into(),
            settings_env: None,
        }
    }

    /// The value of the settings environment variable: a settings file read
    /// after the global and local ones (`~/...`, absolute, or relative to
    /// cwd). A blank value counts as unset.
    pub fn settings_env_value(mut self, value: Option<String>) -> Self {
        self.settings_env = value.filter(|v| non_blank(v).is_some());
        self
    }

    /// The process's home directory (`HOME`, or `USERPROFILE` on Windows),
    /// current directory and the value of `spec`'s environment variable.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`] when there is no home directory or the current
    /// directory cannot be read.
    pub fn from_process(spec: &ConfigSpec) -> Result<Self, Error> {
        let home = std::env::var_os("HOME")
            .or_else(|| std::env::var_os("USERPROFILE"))
            .filter(|h| !h.is_empty())
            .ok_or_else(|| Error::new(ErrorKind::Config, "no home directory: HOME is not set"))?;
        let cwd = std::env::current_dir().map_err(|e| {
            Error::new(
                ErrorKind::Config,
                format!("cannot read the current directory: {e}"),
            )
            .with_source(e)
        })?;
        let env = spec.settings_env().and_then(|var| std::env::var(var).ok());
        Ok(LoadOptions::new(home, cwd).settings_env_value(env))
    }

    /// The home directory.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The value of the settings environment variable, when set.
    pub fn settings_env(&self) -> Option<&str> {
        self.settings_env.as_deref()
    }

    /// The project directory, `None` when empty.
    pub fn cwd(&self) -> Option<&Path> {
        non_empty(&self.cwd)
    }
}
