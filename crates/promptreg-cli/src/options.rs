//! The options every command resolves once (`Session`): the pack, the
//! registry with the user's configuration loaded, the locale, the render
//! context, colours.

use promptreg::prelude::*;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use promptreg::config::LoadOptions;
use promptreg::pack::{MANIFEST, Pack, Recovery};
use promptreg::{Locale, Message, PromptRegistry};

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
        let color = colours(args.color, std::io::stdout().is_terminal());
        // A tag that does not parse is an error where it is used; one of
        // no known language renders, but matches no variant: say so once.
        let written = args.locale.as_deref().map(Locale::parse);
        if let Some(warning) = written
            .and_then(Result::ok)
            .and_then(|locale| locale.unknown_language_warning("--locale"))
        {
            eprintln!("warning: {warning}");
        }
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

    /// The pack named by `--pack`, or the nearest one upward; with
    /// `--server`, the pack of that name at `--label` on the server.
    pub fn pack(&self) -> Result<Pack, Failure> {
        if let Some(baked) = crate::server_client::baked(&self.args)? {
            return Ok(baked.pack().clone());
        }
        if let Some(target) = crate::server_client::target(&self.args)? {
            return target.pack();
        }
        let dir = self.pack_dir()?;
        ensure_pack(&dir)?;
        Pack::load(&dir).map_err(Failure::from)
    }

    /// [`pack`](Self::pack) for a command that writes into the pack
    /// folder: a write to it that stopped half-way is finished or undone
    /// first, so the pack read is whole.
    pub fn pack_to_write(&self) -> Result<Pack, Failure> {
        let dir = self.pack_dir()?;
        ensure_pack(&dir)?;
        recover_pack(&dir)?;
        Pack::load(&dir).map_err(Failure::from)
    }

    /// The pack, for a command about the prompts `ids` only: when only
    /// other prompts have errors, the pack without them and a note saying
    /// so on standard error. An error of theirs, of the manifest or of a
    /// snippet fails as [`pack`](Self::pack) does.
    pub fn pack_for(&self, ids: &[impl AsRef<str>]) -> Result<Pack, Failure> {
        if self.args.server.is_some() || self.args.bundle.is_some() {
            return self.pack();
        }
        let dir = self.pack_dir()?;
        ensure_pack(&dir)?;
        match Pack::try_load(&dir) {
            Ok(pack) => Ok(pack),
            Err((Some(pack), _)) if !ids.iter().any(|id| failed(&pack, id.as_ref())) => {
                eprintln!("note: {}", errors_elsewhere(&pack));
                Ok(pack)
            }
            Err((_, diagnostics)) => Err(Failure::from(promptreg::Error::from_diagnostics(
                diagnostics,
            ))),
        }
    }

    /// The nearest pack, when there is one; `None` is not an error.
    pub fn optional_pack(&self) -> Result<Option<Pack>, Failure> {
        if self.args.pack.is_some() || self.args.server.is_some() || self.args.bundle.is_some() {
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

/// Whether a best-effort load left `id` out for errors in its files.
fn failed(pack: &Pack, id: &str) -> bool {
    pack.failed_prompts().any(|failed| failed.as_str() == id)
}

/// What the note of a best-effort load says: how many other prompts have
/// errors, or that other files do (a file for an undeclared id).
fn errors_elsewhere(pack: &Pack) -> String {
    let listed = "(promptreg check lists them)";
    match pack.failed_prompts().count() {
        0 => format!("other files of the pack have errors {listed}"),
        1 => format!("1 other prompt has errors {listed}"),
        n => format!("{n} other prompts have errors {listed}"),
    }
}

/// Whether output goes out in colour: `auto` means a terminal (`is_terminal`)
/// without `NO_COLOR`.
pub fn colours(choice: ColorChoice, is_terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && is_terminal
        }
    }
}

/// The render context: JSON from a regular file or standard input (`-`),
/// `{}` without; at most `max_bytes` are read.
pub fn read_context(path: Option<&Path>, max_bytes: u64) -> Result<serde_json::Value, Failure> {
    let Some(path) = path else {
        return Ok(serde_json::Value::Object(Default::default()));
    };
    match read_json(path, max_bytes, "context")? {
        serde_json::Value::Object(ctx) => Ok(serde_json::Value::Object(ctx)),
        other => Err(Failure::usage(format!(
            "the context in {} must be a JSON object of variables; got {}",
            path.display(),
            json_type(&other)
        ))),
    }
}

/// What kind of JSON value `value` is, with its article.
fn json_type(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The histories a chat render inserts (`--history FILE`): a JSON object
/// of placeholder names, each a list of `{"role", "content"}` messages.
pub fn read_history(
    path: Option<&Path>,
    max_bytes: u64,
) -> Result<Vec<(String, Vec<Message>)>, Failure> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    let value = read_json(path, max_bytes, "history")?;
    let shape = || {
        Failure::usage(format!(
            "the history in {} must be an object of placeholder names, each a list of messages: {{\"conversation\": [{{\"role\": \"user\", \"content\": \"Hi\"}}]}}",
            path.display()
        ))
    };
    let serde_json::Value::Object(histories) = value else {
        return Err(shape());
    };
    histories
        .into_iter()
        .map(|(name, messages)| {
            let messages = serde_json::from_value(messages).map_err(|e| {
                Failure::usage(format!(
                    "history `{name}` in {} is not a list of {{\"role\", \"content\"}} messages: {e}",
                    path.display()
                ))
            })?;
            Ok((name, messages))
        })
        .collect()
}

/// A JSON value from a regular file or standard input (`-`), `what` naming
/// it in messages; at most `max_bytes` are read.
fn read_json(path: &Path, max_bytes: u64, what: &str) -> Result<serde_json::Value, Failure> {
    let (name, bytes) = if path == Path::new("-") {
        let name = "standard input".to_owned();
        let bytes = read_at_most(std::io::stdin().lock(), max_bytes, &name)?;
        (name, bytes)
    } else {
        let described = format!("the {what} file {}", path.display());
        let bytes = read_context_file(path, max_bytes, &described)?;
        (path.display().to_string(), bytes)
    };
    let text = String::from_utf8(bytes)
        .map_err(|e| Failure::usage(format!("the {what} in {name} is not UTF-8: {e}")))?;
    serde_json::from_str(&text).map_err(|e| {
        Failure::usage(format!(
            "the {what} in {name} is not valid JSON: {} at line {} column {}",
            strip_position(&e.to_string()),
            e.line(),
            e.column()
        ))
    })
}

/// A regular file's bytes; anything else (a device such as `/dev/zero`, a
/// FIFO, a directory) is refused before it is opened, since reading it may
/// never end.
fn read_context_file(path: &Path, max_bytes: u64, name: &str) -> Result<Vec<u8>, Failure> {
    let unreadable = |e: std::io::Error| Failure::usage(format!("cannot read {name}: {e}"));
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_file() {
        return Err(Failure::usage(format!(
            "{name} is not a regular file; pass a JSON file, or `-` to read standard input"
        )));
    }
    if meta.len() > max_bytes {
        return Err(too_large(name, max_bytes));
    }
    let file = std::fs::File::open(path).map_err(unreadable)?;
    read_at_most(file, max_bytes, name)
}

/// Reads at most `max_bytes` (one more to tell that there was more).
fn read_at_most(reader: impl Read, max_bytes: u64, name: &str) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    reader
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::usage(format!("cannot read {name}: {e}")))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(name, max_bytes));
    }
    Ok(bytes)
}

fn too_large(name: &str, max_bytes: u64) -> Failure {
    Failure::usage(format!(
        "{name} is larger than the context limit of {}; pass --max-ctx-size to raise it",
        show_size(max_bytes)
    ))
}

/// `16 MiB`, `512 KiB` or `1000 bytes`: the unit the size is a whole number of.
fn show_size(bytes: u64) -> String {
    match bytes {
        0 => "0 bytes".to_owned(),
        b if b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// A size in bytes, with an optional binary unit: `4096`, `512KiB`, `16MiB`,
/// `1GiB` (`K`, `M`, `G` alone mean the same).
pub fn parse_size(value: &str) -> Result<u64, String> {
    let value = value.trim();
    let digits = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(digits);
    let shift = match unit.trim() {
        "" | "B" => 0,
        "K" | "KiB" => 10,
        "M" | "MiB" => 20,
        "G" | "GiB" => 30,
        other => {
            return Err(format!(
                "unknown unit `{other}`; use bytes, KiB, MiB or GiB"
            ));
        }
    };
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{value}` is not a size such as `16MiB` or `4096`"))?;
    number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("`{value}` is too large"))
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

/// Finishes or undoes a write to the pack folder `dir` that stopped
/// half-way, saying which on standard error.
pub fn recover_pack(dir: &Path) -> Result<(), Failure> {
    match promptreg::pack::recover(dir)? {
        Recovery::Finished(files) => eprintln!(
            "note: finished an interrupted write to {}: {} file{} written",
            dir.display(),
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        ),
        Recovery::Undone(_) => eprintln!(
            "note: undid an interrupted write to {}: its files are as they were before it",
            dir.display()
        ),
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("16MiB"), Ok(16 << 20));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert_eq!(parse_size("1 GiB"), Ok(1 << 30));
        assert!(parse_size("MiB").is_err());
        assert!(parse_size("12 parsecs").unwrap_err().contains("`parsecs`"));
        assert!(parse_size("99999999999999999999G").is_err());
        assert!(parse_size("18446744073709551615G").is_err());
    }

    #[test]
    fn sizes_are_shown_in_the_largest_whole_unit() {
        assert_eq!(show_size(16 << 20), "16 MiB");
        assert_eq!(show_size(2048), "2 KiB");
        assert_eq!(show_size(1536), "1536 bytes");
        assert_eq!(show_size(0), "0 bytes");
    }
}
