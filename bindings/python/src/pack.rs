//! `Pack`: prompts declared in a folder (`promptreg.toml` and
//! `defaults/<id>[.<locale>].md`), or in a baked bundle.

use std::path::PathBuf;

use pyo3::prelude::*;

use crate::config::ConfigSpec;
use crate::diagnostic::{Diagnostic, diagnostics};
use crate::errors::OrRaise;
use crate::handle::PromptRegistry;
use crate::keys::trusted_keys;

/// A pack: its prompts, locale variants and the user configuration it
/// declares.
#[pyclass(frozen, module = "promptreg")]
pub struct Pack {
    inner: promptreg::pack::Pack,
}

impl From<promptreg::pack::Pack> for Pack {
    fn from(inner: promptreg::pack::Pack) -> Self {
        Pack { inner }
    }
}

#[pymethods]
impl Pack {
    /// Loads the pack in `dir` (a `str` or a path). Raises `ConfigError`
    /// with every problem in `diagnostics` when the pack is invalid.
    #[staticmethod]
    fn load(py: Python<'_>, dir: PathBuf) -> PyResult<Pack> {
        let inner = py.detach(|| promptreg::pack::Pack::load(&dir)).or_raise()?;
        Ok(Pack { inner })
    }

    /// The pack of the baked bundle at `path` (`promptreg bundle export`),
    /// checked like a download; with `trust_keys` (public keys or key
    /// files), only when one of those keys signed it. Raises `RemoteError`
    /// or `SignatureError` saying why not.
    #[staticmethod]
    #[pyo3(signature = (path, *, trust_keys = None))]
    fn from_bundle(
        py: Python<'_>,
        path: PathBuf,
        trust_keys: Option<Vec<String>>,
    ) -> PyResult<Pack> {
        let trusted = trust_keys
            .map(|keys| trusted_keys(&keys, "trust_keys"))
            .transpose()?;
        let inner = py
            .detach(|| -> Result<_, promptreg::Error> {
                let baked = promptreg::remote::BakedBundle::read(&path)?;
                if let Some(trusted) = &trusted {
                    baked.verify(trusted)?;
                }
                Ok(baked.pack().clone())
            })
            .or_raise()?;
        Ok(Pack { inner })
    }

    /// Every problem of the pack in `dir`, errors and warnings, without
    /// installing it.
    #[staticmethod]
    fn check(py: Python<'_>, dir: PathBuf) -> Vec<Diagnostic> {
        py.detach(|| diagnostics(&promptreg::pack::Pack::check(&dir)))
    }

    /// The pack's name.
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// The pack's description.
    #[getter]
    fn description(&self) -> Option<&str> {
        self.inner.description()
    }

    /// The ids of its prompts.
    #[getter]
    fn ids(&self) -> Vec<String> {
        self.inner.prompts().map(|p| p.id().to_string()).collect()
    }

    /// Warnings found while loading it.
    #[getter]
    fn warnings(&self) -> Vec<Diagnostic> {
        diagnostics(self.inner.warnings())
    }

    /// The user configuration the pack declares, for `load_config` and
    /// `check`.
    fn config_spec(&self) -> ConfigSpec {
        ConfigSpec {
            inner: self.inner.spec().clone(),
        }
    }

    /// Registers every default and locale variant in `registry` and sets
    /// its locale and fallback locale to the pack's, in one change. The
    /// registry remembers the folder: `reload` and `watch` read it again.
    fn install(&self, py: Python<'_>, registry: &PromptRegistry) -> PyResult<()> {
        py.detach(|| self.inner.install(&registry.inner)).or_raise()
    }

    fn __repr__(&self) -> String {
        format!(
            "Pack('{}', prompts={})",
            self.inner.name(),
            self.inner.prompts().count()
        )
    }
}
