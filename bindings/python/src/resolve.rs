//! `resolve_prompt`: the stateless resolution rule of the coding-agent
//! extension, with its signature and result.

use std::path::Path;

use promptreg::Locale;
use promptreg::config::{self, Mode, PromptSettings, ResolveOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::errors::{self, OrRaise, type_error};
use crate::record::record;

/// What `resolve_prompt` returns.
#[pyclass(frozen, get_all, module = "promptreg")]
pub struct ResolvedPrompt {
    /// The text to send: the default, the user's block, or both.
    #[pyo3(name = "final")]
    pub final_text: String,
    /// The user's block, when there is one.
    pub injected: Option<String>,
    /// Where the block came from: `inline`, `global`, `local`, `merged` or
    /// `none`.
    pub source: String,
}

record!(ResolvedPrompt[final, injected, source]);

/// Resolves one prompt key from its settings and the user's files, reading
/// the files at each call and keeping no state: inline text wins (and
/// replaces the default) in every mode; `off` injects nothing; then the
/// `file` setting; then the mode's files (local over global, `local` only,
/// or both merged); `override` replaces the default, the other modes put
/// the block after it, separated by a blank line.
#[pyfunction]
#[pyo3(signature = (key, cfg, cwd, default, *, home, prompts_dir, locale = None))]
#[allow(clippy::too_many_arguments)]
pub fn resolve_prompt(
    py: Python<'_>,
    key: &str,
    cfg: Option<&Bound<'_, PyAny>>,
    cwd: &str,
    default: &str,
    home: String,
    prompts_dir: String,
    locale: Option<&str>,
) -> PyResult<ResolvedPrompt> {
    let settings = settings_arg(cfg)?;
    let mut options = ResolveOptions::new(prompts_dir, home);
    options.locale = locale.map(Locale::parse).transpose().or_raise()?;
    let resolved = py
        .detach(|| config::resolve_prompt(key, &settings, Path::new(cwd), default, &options))
        .or_raise()?;
    Ok(ResolvedPrompt {
        final_text: resolved.final_text,
        injected: resolved.injected,
        source: resolved.source.as_str().to_owned(),
    })
}

/// The `cfg` argument: a dict `{"mode", "inline", "file"}`, or `None`.
fn settings_arg(cfg: Option<&Bound<'_, PyAny>>) -> PyResult<PromptSettings> {
    let Some(cfg) = cfg.filter(|c| !c.is_none()) else {
        return Ok(PromptSettings::default());
    };
    let cfg = cfg.cast::<PyDict>().map_err(|_| {
        type_error(
            "cfg",
            "a dict {\"mode\", \"inline\", \"file\"} or None",
            cfg,
        )
    })?;
    let text = |key: &str| -> PyResult<Option<String>> {
        match cfg.get_item(key)?.filter(|v| !v.is_none()) {
            Some(value) => match value.cast::<PyString>() {
                Ok(text) => Ok(Some(text.to_cow()?.into_owned())),
                Err(_) => Err(type_error(&format!("cfg[{key:?}]"), "a str", &value)),
            },
            None => Ok(None),
        }
    };
    let mode = match text("mode")? {
        Some(mode) => Some(mode.parse::<Mode>().map_err(|e| {
            errors::to_py(&promptreg::Error::new(
                promptreg::ErrorKind::Config,
                e.to_string(),
            ))
        })?),
        None => None,
    };
    Ok(PromptSettings {
        mode,
        inline: text("inline")?,
        file: text("file")?,
    })
}
