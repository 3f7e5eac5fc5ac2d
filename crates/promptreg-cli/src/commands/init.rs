//! `promptreg init`: the user's prompt directory and a commented settings
//! file, never overwriting anything.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use promptreg::config::{ConfigSpec, Mode, prompt_dirs};
use serde_json::json;

use super::Output;
use crate::cli::InitArgs;
use crate::options::Session;
use crate::report::Failure;

pub fn run(session: &Session, args: &InitArgs) -> Result<Output, Failure> {
    let pack = session.pack()?;
    let spec = pack.spec();
    let (root, scope) = if args.global {
        (session.home.clone(), "global")
    } else if session.cwd.as_os_str().is_empty() {
        return Err(Failure::usage(
            "`init` needs a project directory: pass --cwd DIR or --global",
        ));
    } else {
        (session.cwd.clone(), "local")
    };
    let settings_name = if args.global {
        spec.global_settings_file()
    } else {
        spec.local_settings_file()
    };
    let settings_name = settings_name.ok_or_else(|| {
        Failure::usage(format!(
            "pack `{}` declares no {scope} settings file",
            pack.name()
        ))
    })?;
    let settings = root.join(settings_name);
    if settings.exists() {
        return Err(Failure::usage(format!(
            "{} already exists; `init` never overwrites a file",
            settings.display()
        )));
    }
    let prompts_dir = prompts_dir(spec.prompts_dir(), &session.home, &root, args.global);
    let io = |path: &Path, e: std::io::Error| {
        Failure::usage(format!("cannot create {}: {e}", path.display()))
    };
    fs::create_dir_all(&prompts_dir).map_err(|e| io(&prompts_dir, e))?;
    if let Some(parent) = settings.parent() {
        fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
    }
    fs::write(&settings, commented_settings(spec)).map_err(|e| io(&settings, e))?;
    if session.args.json {
        return Ok(Output::json(&json!({
            "scope": scope,
            "settings": settings.display().to_string(),
            "prompts_dir": prompts_dir.display().to_string(),
        })));
    }
    Ok(Output::text(format!(
        "created {}\ncreated {}/ (put <key>.md files here)\n",
        settings.display(),
        prompts_dir.display().to_string().trim_end_matches('/')
    )))
}

/// The prompts directory `init` creates: the one the library reads for
/// the scope (`root` is home or the project); `~`, `~/...` and absolute
/// directories are the single global one in both scopes.
fn prompts_dir(dir: &str, home: &Path, root: &Path, global: bool) -> PathBuf {
    let (global_dir, local_dir) = prompt_dirs(dir, home, Some(root));
    match (global, local_dir) {
        (false, Some(local)) => local,
        _ => global_dir,
    }
}

/// A settings file that changes nothing, with every key and mode in
/// comments.
fn commented_settings(spec: &ConfigSpec) -> String {
    let modes: Vec<&str> = Mode::ALL.iter().map(|m| m.as_str()).collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// Prompt settings for {} (JSON with comments).",
        spec.name()
    );
    let _ = writeln!(
        out,
        "// Each entry under \"prompts\" configures one prompt:"
    );
    let _ = writeln!(
        out,
        "//   \"mode\":   {} (default global-local)",
        modes.join(" | ")
    );
    let _ = writeln!(
        out,
        "//   \"inline\": text that wins over every file, in every mode"
    );
    let _ = writeln!(
        out,
        "//   \"file\":   a file to read the block from (~/..., absolute, or relative to the project)"
    );
    let _ = writeln!(
        out,
        "// Prompt files: {}<key>.md, and <key>.<locale>.md for one locale.",
        spec.prompts_dir()
    );
    let _ = writeln!(out, "// Check this file with `promptreg check`.");
    out.push_str("{\n  \"prompts\": {\n");
    for key in spec.keys() {
        let _ = writeln!(out, "    // \"{key}\": {{ \"mode\": \"append\" }},");
    }
    for pattern in spec.patterns() {
        let _ = writeln!(
            out,
            "    // \"{pattern}\" (any key of this form): {{ \"mode\": \"off\" }},"
        );
    }
    out.push_str("  }\n}\n");
    out
}
