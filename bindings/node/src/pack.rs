//! `Pack`: prompts declared in a folder (`promptreg.toml` and
//! `defaults/<id>[.<locale>].md`).

use napi::bindgen_prelude::Unknown;
use napi::{Env, Result};
use napi_derive::napi;

use crate::args;
use crate::config::{ConfigSpec, Diagnostic};
use crate::errors::OrThrow;

/// A pack loaded from a folder: its prompts, locale variants and the user
/// configuration it declares.
#[napi]
pub struct Pack {
    inner: promptreg::pack::Pack,
}

impl From<promptreg::pack::Pack> for Pack {
    fn from(inner: promptreg::pack::Pack) -> Self {
        Pack { inner }
    }
}

#[napi]
impl Pack {
    /// Loads the pack in `dir`. Throws an error with code `config` and
    /// every problem in `diagnostics` when the pack is invalid.
    #[napi]
    pub fn load(env: Env, #[napi(ts_arg_type = "string")] dir: Unknown<'_>) -> Result<Pack> {
        let dir = args::string(&env, dir, "dir")?;
        let inner = promptreg::pack::Pack::load(&dir).or_throw(&env)?;
        Ok(Pack { inner })
    }

    /// Every problem of the pack in `dir`, errors and warnings, without
    /// installing it.
    #[napi]
    pub fn check(
        env: Env,
        #[napi(ts_arg_type = "string")] dir: Unknown<'_>,
    ) -> Result<Vec<Diagnostic>> {
        let dir = args::string(&env, dir, "dir")?;
        Ok(promptreg::pack::Pack::check(&dir)
            .iter()
            .map(Diagnostic::from)
            .collect())
    }

    /// The pack's name.
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.inner.name().to_owned()
    }

    /// The pack's description.
    #[napi(getter)]
    pub fn description(&self) -> Option<String> {
        self.inner.description().map(str::to_owned)
    }

    /// The ids of its prompts.
    #[napi(getter)]
    pub fn ids(&self) -> Vec<String> {
        self.inner.prompts().map(|p| p.id().to_string()).collect()
    }

    /// Warnings found while loading it.
    #[napi(getter)]
    pub fn warnings(&self) -> Vec<Diagnostic> {
        self.inner.warnings().iter().map(Diagnostic::from).collect()
    }

    /// The user configuration the pack declares, for `loadConfig` and
    /// `check`.
    #[napi]
    pub fn config_spec(&self) -> ConfigSpec {
        ConfigSpec::from(self.inner.spec())
    }

    /// Registers every default and locale variant in `registry` and sets
    /// its locale and fallback locale to the pack's, in one change. The
    /// registry remembers the folder: `reload` and `watch` read it again.
    #[napi]
    pub fn install(
        &self,
        env: Env,
        #[napi(ts_arg_type = "PromptRegistry")] registry: Unknown<'_>,
    ) -> Result<()> {
        let registry = args::registry(&env, registry, "registry")?;
        self.inner.install(registry.inner()).or_throw(&env)
    }
}
