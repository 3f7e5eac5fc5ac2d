//! `resolvePrompt`: the stateless resolution rule of the coding-agent
//! extension, with its signature and result.

use std::path::Path;

use napi::bindgen_prelude::Unknown;
use napi::{Env, Result};
use napi_derive::napi;
use promptreg::Locale;
use promptreg::config::{self, Mode, PromptSettings, ResolveOptions};

use crate::args;
use crate::errors::OrThrow;

/// The settings of one prompt key: the `prompts.<key>` block.
#[napi(object)]
pub struct PromptConfig {
    /// How the user's block combines with the default (default
    /// `global-local`).
    #[napi(
        ts_type = "'override' | 'append' | 'global-local' | 'local' | 'global-local-merge' | 'off'"
    )]
    pub mode: Option<String>,
    /// Text that wins over every file, in every mode.
    pub inline: Option<String>,
    /// A file to read the block from: `~/...`, absolute, or relative to
    /// cwd.
    pub file: Option<String>,
}

/// Where `resolvePrompt` looks.
#[napi(object)]
pub struct ResolvePromptOptions {
    /// The home folder (global files).
    pub home: String,
    /// The prompts folder: relative (joined to home and to cwd), `~/...`
    /// or absolute.
    pub prompts_dir: String,
    /// When set, `<key>.<locale>.md` is looked up along the locale's
    /// fallback chain before `<key>.md`.
    pub locale: Option<String>,
}

/// What `resolvePrompt` returns.
#[napi(object)]
pub struct ResolvedPrompt {
    /// The text to send: the default, the user's block, or both.
    #[napi(js_name = "final")]
    pub final_text: String,
    /// The user's block, when there is one.
    pub injected: Option<String>,
    /// Where the block came from.
    #[napi(ts_type = "'inline' | 'global' | 'local' | 'merged' | 'none'")]
    pub source: String,
}

/// Resolves one prompt key from its settings and the user's files, reading
/// the files at each call and keeping no state: inline text wins (and
/// replaces the default) in every mode; `off` injects nothing; then the
/// `file` setting; then the mode's files (local over global, `local` only,
/// or both merged); `override` replaces the default, the other modes put
/// the block after it, separated by a blank line.
#[napi]
pub fn resolve_prompt(
    env: Env,
    #[napi(ts_arg_type = "string")] key: Unknown<'_>,
    #[napi(ts_arg_type = "PromptConfig | undefined")] cfg: Unknown<'_>,
    #[napi(ts_arg_type = "string")] cwd: Unknown<'_>,
    #[napi(ts_arg_type = "string")] default_prompt: Unknown<'_>,
    #[napi(ts_arg_type = "ResolvePromptOptions")] options: Unknown<'_>,
) -> Result<ResolvedPrompt> {
    let key = args::string(&env, key, "key")?;
    let settings = settings_arg(&env, cfg)?;
    let cwd = args::string(&env, cwd, "cwd")?;
    let default_prompt = args::string(&env, default_prompt, "defaultPrompt")?;
    let options: ResolvePromptOptions = args::object(&env, options, "options")?;
    let mut resolve_options = ResolveOptions::new(options.prompts_dir, options.home);
    resolve_options.locale = options
        .locale
        .as_deref()
        .map(Locale::parse)
        .transpose()
        .or_throw(&env)?;
    let resolved = config::resolve_prompt(
        &key,
        &settings,
        Path::new(&cwd),
        &default_prompt,
        &resolve_options,
    )
    .or_throw(&env)?;
    Ok(ResolvedPrompt {
        final_text: resolved.final_text,
        injected: resolved.injected,
        source: serde_json::to_value(resolved.source)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
    })
}

/// The `cfg` argument: a `PromptConfig`, or `undefined`/`null` for none.
fn settings_arg(env: &Env, cfg: Unknown<'_>) -> Result<PromptSettings> {
    if args::is_absent(Some(&cfg)) {
        return Ok(PromptSettings::default());
    }
    let cfg: PromptConfig = args::object(env, cfg, "cfg")?;
    let mode = match cfg.mode.as_deref() {
        Some(mode) => Some(mode.parse::<Mode>().map_err(|e| {
            let error = promptreg::Error::new(promptreg::ErrorKind::Config, e.to_string());
            crate::errors::throw(env, &error)
        })?),
        None => None,
    };
    Ok(PromptSettings {
        mode,
        inline: cfg.inline,
        file: cfg.file,
    })
}
