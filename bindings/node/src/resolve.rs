//! `resolvePromptBlock`: the stateless resolution rule of the
//! coding-agent extension, its user block alone (`index.js` puts it with
//! the default as `resolvePrompt`).

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

/// The user's block of one key, without the default: what
/// `resolvePromptBlock` returns.
#[napi(object)]
pub struct PromptBlock {
    /// The block, trimmed and non-blank.
    pub text: String,
    /// Where it came from.
    #[napi(ts_type = "'inline' | 'global' | 'local' | 'merged'")]
    pub source: String,
    /// Whether the block takes the default's place (mode `override`, or
    /// inline text) instead of following it after a blank line.
    pub replaces_default: bool,
}

/// The user's block of one prompt key by the rule of `resolvePrompt`,
/// without the default: `null` when nothing is injected. `resolvePrompt`
/// is this and the default put together in JavaScript, so that the
/// default never crosses into native code.
#[napi]
pub fn resolve_prompt_block(
    env: Env,
    #[napi(ts_arg_type = "string")] key: Unknown<'_>,
    #[napi(ts_arg_type = "PromptConfig | undefined")] cfg: Unknown<'_>,
    #[napi(ts_arg_type = "string")] cwd: Unknown<'_>,
    #[napi(ts_arg_type = "ResolvePromptOptions")] options: Unknown<'_>,
) -> Result<Option<PromptBlock>> {
    let key = args::string(&env, key, "key")?;
    let settings = settings_arg(&env, cfg)?;
    let cwd = args::string(&env, cwd, "cwd")?;
    let options: ResolvePromptOptions = args::object(&env, options, "options")?;
    let mut resolve_options = ResolveOptions::new(options.prompts_dir, options.home);
    resolve_options.locale = options
        .locale
        .as_deref()
        .map(Locale::parse)
        .transpose()
        .or_throw(&env)?;
    let block =
        config::resolve_block(&key, &settings, Path::new(&cwd), &resolve_options).or_throw(&env)?;
    Ok(block.map(|block| PromptBlock {
        text: block.text,
        source: block.source.as_str().to_owned(),
        replaces_default: block.replaces_default,
    }))
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
