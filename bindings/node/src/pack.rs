//! `Pack`: prompts declared in a folder (`promptreg.toml` and
//! `defaults/<id>[.<locale>].md`).

use napi::bindgen_prelude::Unknown;
use napi::{Env, Result};
use napi_derive::napi;

use crate::args;
use crate::config::ConfigSpec;
use crate::diagnostic::Diagnostic;
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

    /// The pack of the baked bundle at `path` (`promptreg bundle export`),
    /// checked like a download; with `options.trustKeys` (public keys or
    /// key files), only when one of those keys signed it. Throws an error
    /// with code `remote` or `signature` saying why not.
    #[napi(js_name = "fromBundle")]
    pub fn from_bundle(
        env: Env,
        #[napi(ts_arg_type = "string")] path: Unknown<'_>,
        #[napi(ts_arg_type = "{ trustKeys?: string[] }")] options: Option<Unknown<'_>>,
    ) -> Result<Pack> {
        let path = args::string(&env, path, "path")?;
        let baked = promptreg::remote::BakedBundle::read(&path).or_throw(&env)?;
        let trust_keys = match options.filter(|o| !args::is_absent(Some(o))) {
            Some(options) => {
                args::plain_object(&env, options, "options")?.get::<Unknown<'_>>("trustKeys")?
            }
            None => None,
        };
        if let Some(trusted) = args::optional_trusted_keys(&env, trust_keys, "options.trustKeys")? {
            baked.verify(&trusted).or_throw(&env)?;
        }
        Ok(Pack {
            inner: baked.pack().clone(),
        })
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
