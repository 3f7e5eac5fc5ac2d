//! What the commands share: the pack, the registry with the user's
//! configuration loaded, the locale, the render context, colours.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use promptreg::config::LoadOptions;
use promptreg::pack::{MANIFEST, Pack};
use promptreg::{Locale, PromptRegistry};

use crate::cli::{ColorChoice, GlobalArgs};
use crate::report::Failure;

/// The global options, resolved.
pub struct Session {
    pub args: GlobalArgs,
    pub home: PathBuf,
    /// Empty means no local configuration.
    pub cwd: PathBuf,
    pub color: bool,
}

impl Session {
    pub fn new(args: GlobalArgs) -> Result<Self, Failure> {
        let home = match &args.home {
            Some(home) => home.clone(),
            None => std::env::var_os("HOME")
                .or_else(|| std::env::var_os("USERPROFILE"))
                .map(PathBuf::from)
                .ok_or_else(|| {
                    Failure::usage("no home directory: HOME is not set; pass --home DIR")
                })?,
        };
        let cwd = match &args.cwd {
            Some(cwd) => cwd.clone(),
            None => current_dir()?,
        };
        existing_dir("--home", args.home.as_deref())?;
        existing_dir("--cwd", args.cwd.as_deref())?;
        let color = match args.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        };
        Ok(Session {
            args,
            home,
            cwd,
            color,
        })
    }

    /// The folder of the pack named by `--pack`, or of the nearest one.
    pub fn pack_dir(&self) -> Result<PathBuf, Failure> {
        match &self.args.pack {
            Some(dir) => Ok(dir.clone()),
            None => find_pack(&current_dir()?),
        }
    }

    /// The pack named by `--pack`, or the nearest one upward.
    pub fn pack(&self) -> Result<Pack, Failure> {
        let dir = self.pack_dir()?;
        ensure_pack(&dir)?;
        Pack::load(&dir).map_err(Failure::from)
    }

    /// The nearest pack, when there is one; `None` is not an error.
    pub fn optional_pack(&self) -> Result<Option<Pack>, Failure> {
        if self.args.pack.is_some() {
            return self.pack().map(Some);
        }
        match find_pack(&current_dir()?) {
            Ok(dir) => Pack::load(dir).map(Some).map_err(Failure::from),
            Err(_) => Ok(None),
        }
    }

    pub fn load_options(&self, pack: &Pack) -> LoadOptions {
        let env = pack
            .spec()
            .settings_env()
            .and_then(|var| std::env::var(var).ok());
        LoadOptions::new(&self.home, &self.cwd).settings_env_value(env)
    }

    /// A registry with the pack installed, without the user's configuration.
    pub fn host_registry(&self, pack: &Pack) -> Result<PromptRegistry, Failure> {
        let registry = PromptRegistry::new();
        pack.install(&registry)?;
        if let Some(locale) = &self.args.locale {
            registry.set_locale(locale.as_str())?;
        }
        Ok(registry)
    }

    /// A registry with the pack installed and the user's configuration
    /// loaded.
    pub fn registry(&self, pack: &Pack) -> Result<PromptRegistry, Failure> {
        let registry = self.host_registry(pack)?;
        registry.load_config(pack.spec().clone(), self.load_options(pack))?;
        Ok(registry)
    }

    /// The locale to render for.
    pub fn locale(&self, pack: &Pack) -> Result<Locale, Failure> {
        match &self.args.locale {
            Some(tag) => Ok(Locale::parse(tag)?),
            None => Ok(pack.default_locale().clone()),
        }
    }
}

/// The render context: JSON from a file or standard input, `{}` without.
pub fn read_context(path: Option<&Path>) -> Result<serde_json::Value, Failure> {
    let Some(path) = path else {
        return Ok(serde_json::Value::Object(Default::default()));
    };
    let (name, text) = if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map_err(|e| {
            Failure::usage(format!("cannot read the context from standard input: {e}"))
        })?;
        ("standard input".to_owned(), text)
    } else {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Failure::usage(format!(
                "cannot read the context file {}: {e}",
                path.display()
            ))
        })?;
        (path.display().to_string(), text)
    };
    serde_json::from_str(&text).map_err(|e| {
        Failure::usage(format!(
            "the context in {name} is not valid JSON: {} at line {} column {}",
            strip_position(&e.to_string()),
            e.line(),
            e.column()
        ))
    })
}

/// serde_json appends " at line L column C" itself; the message says it once.
fn strip_position(message: &str) -> &str {
    message.split(" at line ").next().unwrap_or(message)
}

/// A usage error unless `dir` holds a manifest.
pub fn ensure_pack(dir: &Path) -> Result<(), Failure> {
    if dir.join(MANIFEST).is_file() {
        return Ok(());
    }
    Err(Failure::usage(format!(
        "no pack at {}: it has no {MANIFEST}",
        dir.display()
    )))
}

/// A usage error when a folder named on the command line is missing: a
/// typo would otherwise read as "no configuration". `--cwd=` (empty) means
/// no project and is fine.
fn existing_dir(option: &str, dir: Option<&Path>) -> Result<(), Failure> {
    match dir {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            let what = if dir.exists() {
                "is not a directory"
            } else {
                "does not exist"
            };
            Err(Failure::usage(format!(
                "{option} {}: the folder {what}",
                dir.display()
            )))
        }
        _ => Ok(()),
    }
}

fn current_dir() -> Result<PathBuf, Failure> {
    std::env::current_dir()
        .map_err(|e| Failure::usage(format!("cannot read the current directory: {e}")))
}

/// The nearest folder from `start` upward that holds a manifest.
pub fn find_pack(start: &Path) -> Result<PathBuf, Failure> {
    start
        .ancestors()
        .find(|dir| dir.join(MANIFEST).is_file())
        .map(Path::to_path_buf)
        .ok_or_else(|| {
            Failure::usage(format!(
                "no {MANIFEST} in {} or any folder above it; pass --pack DIR",
                start.display()
            ))
        })
}
