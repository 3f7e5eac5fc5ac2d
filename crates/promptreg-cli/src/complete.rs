//! Shell completion, computed by the binary itself when the shell asks
//! (clap_complete's dynamic completion): the modes after `--mode`, and the
//! ids of the pack (named by `--pack` on the line being completed, else the
//! nearest one) after `render`, `explain` and `diff`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::CommandFactory;
use clap_complete::CompletionCandidate;
use clap_complete::env::{CompleteEnv, Shells};
use promptreg::config::Mode;
use promptreg::pack::Pack;

use crate::cli::Cli;
use crate::options::find_pack;

/// The variable the shell sets when it asks for completions.
const VAR: &str = "COMPLETE";

/// Answers the shell and exits when it is asking for completions; returns
/// otherwise.
pub fn answer_the_shell() {
    CompleteEnv::with_factory(Cli::command).var(VAR).complete();
}

/// The script that makes `shell` ask `promptreg` for completions.
pub fn registration(shell: clap_complete::Shell) -> Result<String, String> {
    let name = shell.to_string();
    let shells = Shells::builtins();
    let completer = shells
        .completer(&name)
        .ok_or_else(|| format!("no dynamic completion for {name}"))?;
    let mut script = Vec::new();
    completer
        .write_registration(VAR, "promptreg", "promptreg", "promptreg", &mut script)
        .map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&script).into_owned())
}

/// Every mode, for `--mode`.
pub fn modes() -> Vec<CompletionCandidate> {
    Mode::ALL
        .iter()
        .map(|m| CompletionCandidate::new(m.as_str()))
        .collect()
}

/// Every prompt id of the pack, with its description.
pub fn prompt_ids() -> Vec<CompletionCandidate> {
    let Some(pack) = pack_on_the_line().and_then(|dir| Pack::load(dir).ok()) else {
        return Vec::new();
    };
    pack.prompts()
        .map(|p| {
            CompletionCandidate::new(p.id().as_str())
                .help(p.description().map(|d| d.to_owned().into()))
        })
        .collect()
}

/// The folder given to `--pack` on the line being completed, else the
/// nearest pack from the current directory.
fn pack_on_the_line() -> Option<PathBuf> {
    let args: Vec<OsString> = std::env::args_os().collect();
    let named = args.iter().enumerate().find_map(|(i, arg)| {
        let arg = arg.to_str()?;
        match arg.strip_prefix("--pack") {
            Some("") => args.get(i + 1).map(PathBuf::from),
            Some(rest) => rest.strip_prefix('=').map(PathBuf::from),
            None => None,
        }
    });
    named.or_else(|| find_pack(&std::env::current_dir().ok()?).ok())
}
