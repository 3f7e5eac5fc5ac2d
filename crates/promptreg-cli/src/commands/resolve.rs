//! `promptreg resolve KEY --default=TEXT ...`: the stateless resolution
//! rule, no pack needed.

use promptreg::Locale;
use promptreg::config::{Mode, PromptSettings, ResolveOptions, resolve_prompt};

use super::Output;
use crate::cli::ResolveArgs;
use crate::options::Session;
use crate::report::Failure;

pub fn run(session: &Session, args: &ResolveArgs) -> Result<Output, Failure> {
    let mode = args
        .mode
        .as_deref()
        .map(|m| m.parse::<Mode>().map_err(|e| Failure::usage(e.to_string())))
        .transpose()?;
    let prompts_dir = match &args.prompts_dir {
        Some(dir) => dir.clone(),
        None => match session.optional_pack()? {
            Some(pack) => pack.spec().prompts_dir().to_owned(),
            None => {
                return Err(Failure::usage(
                    "no prompts directory: pass --prompts-dir DIR (or run inside a pack)",
                ));
            }
        },
    };
    let mut options = ResolveOptions::new(prompts_dir, &session.home);
    options.locale = session
        .args
        .locale
        .as_deref()
        .map(Locale::parse)
        .transpose()?;
    let settings = PromptSettings {
        mode,
        inline: args.inline.clone(),
        file: args.file.clone(),
    };
    let resolved = resolve_prompt(&args.key, &settings, &session.cwd, &args.default, &options)?;
    if session.args.json {
        let value = serde_json::to_value(&resolved).map_err(|e| Failure::usage(e.to_string()))?;
        let mut text = serde_json::to_string(&value).map_err(|e| Failure::usage(e.to_string()))?;
        text.push('\n');
        return Ok(Output::text(text));
    }
    Ok(Output::prompt(resolved.final_text))
}
