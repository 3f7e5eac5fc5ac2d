//! `promptreg trust [DIR]`: let a project's configuration read files
//! outside the project, by listing its root under `trustedProjects` in the
//! global settings file.

use promptreg::config::trust_project;
use serde_json::json;

use super::Output;
use crate::cli::TrustArgs;
use crate::options::Session;
use crate::report::Failure;

pub fn run(session: &Session, args: &TrustArgs) -> Result<Output, Failure> {
    let pack = session.pack()?;
    let dir = args.dir.as_ref().unwrap_or(&session.cwd);
    if dir.as_os_str().is_empty() {
        return Err(Failure::usage(
            "`trust` needs a project folder: pass DIR or --cwd DIR",
        ));
    }
    let trusted = trust_project(pack.spec(), &session.home, dir)?;
    if session.args.json {
        return Ok(Output::json(&json!({
            "root": trusted.root.display().to_string(),
            "settings": trusted.settings_file.display().to_string(),
            "entry": trusted.entry,
            "added": trusted.added,
        })));
    }
    let text = if trusted.added {
        format!(
            "trusted {}\nadded to `trustedProjects` in {}\n",
            trusted.root.display(),
            trusted.settings_file.display()
        )
    } else {
        format!(
            "{} is already trusted by `{}` in {}\n",
            trusted.root.display(),
            trusted.entry,
            trusted.settings_file.display()
        )
    };
    Ok(Output::text(text))
}
