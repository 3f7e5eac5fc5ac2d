//! Reading the registry's sources again: the user configuration and the
//! packs installed from folders. The core keeps what they need in
//! [`Sources`](crate::registry::Sources) without knowing their types; this module, above the core,
//! knows both and reloads them together.
//!
//! [`LoadConfig`] adds loading, reloading and unloading the user's
//! configuration to [`PromptRegistry`]; the functions below are what other
//! sources (a followed server) install a pack through.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::config::{ConfigSpec, LoadOptions, LoadReport, UserLayer};
use crate::error::{Error, ErrorKind};
use crate::layer::Layer;
use crate::registry::{PromptRegistry, Shared};
#[cfg(not(feature = "packs"))]
use crate::{id::PromptId, registry::Sources, snapshot::Snapshot};

#[cfg(feature = "packs")]
use packs::Reread;

/// Without packs, there is never a pack to read again.
#[cfg(not(feature = "packs"))]
struct Reread;

#[cfg(not(feature = "packs"))]
impl Reread {
    fn packs(_: &Sources) -> Result<Reread, Error> {
        Ok(Reread)
    }

    fn is_empty(&self) -> bool {
        true
    }

    fn spec_for(&self, spec: Arc<ConfigSpec>) -> Arc<ConfigSpec> {
        spec
    }

    fn publish(self, _: &mut Snapshot, _: &mut Sources, _: &mut BTreeSet<PromptId>) {}
}

#[cfg(feature = "packs")]
pub use packs::{install_pack, replace_pack, with_pack_replaced};

#[cfg(feature = "packs")]
mod packs {
    //! The packs among what the sources keep.

    use std::any::Any;
    use std::collections::BTreeSet;
    use std::sync::Arc;

    use crate::config::ConfigSpec;
    use crate::error::Error;
    use crate::id::PromptId;
    use crate::pack::Pack;
    use crate::registry::{Shared, Sources};
    use crate::snapshot::Snapshot;

    /// The packs installed from folders, each with its new reading.
    pub(super) struct Reread(Vec<(Arc<Pack>, Arc<Pack>)>);

    impl Reread {
        /// Reads every kept pack's folder again.
        pub(super) fn packs(sources: &Sources) -> Result<Reread, Error> {
            let reread = installed(sources)
                .into_iter()
                .map(|old| Ok((Arc::clone(&old), Arc::new(Pack::load(old.root())?))))
                .collect::<Result<_, Error>>()?;
            Ok(Reread(reread))
        }

        pub(super) fn is_empty(&self) -> bool {
            self.0.is_empty()
        }

        /// The declaration a configuration loads with: a pack's new one
        /// when the configuration was declared by that pack.
        pub(super) fn spec_for(&self, spec: Arc<ConfigSpec>) -> Arc<ConfigSpec> {
            self.0
                .iter()
                .find(|(old, _)| old.spec() == &*spec)
                .map_or(spec, |(_, new)| Arc::new(new.spec().clone()))
        }

        /// Replaces every old pack by its new reading.
        pub(super) fn publish(
            self,
            s: &mut Snapshot,
            sources: &mut Sources,
            changed: &mut BTreeSet<PromptId>,
        ) {
            for (old, new) in self.0 {
                changed.extend(new.changed_since(&old));
                replace(s, Some(&old), &new);
                keep(sources, new);
            }
        }
    }

    /// Takes `old`'s prompts out of `s` and puts `new`'s in; the locales
    /// follow `new`'s manifest where it changed them.
    fn replace(s: &mut Snapshot, old: Option<&Pack>, new: &Pack) {
        if let Some(old) = old {
            old.retract(s);
        }
        new.apply(s);
        if old.is_none_or(|o| new.default_locale() != o.default_locale()) {
            s.set_locale(new.default_locale().clone());
        }
        if old.is_none_or(|o| new.fallback_locale() != o.fallback_locale()) {
            s.set_fallback_locale(new.fallback_locale().clone());
        }
    }

    /// `main` with `old`'s prompts replaced by `new`'s: the state of a
    /// split's candidate, derived from the registry's.
    pub fn with_pack_replaced(main: &Snapshot, old: Option<&Pack>, new: &Pack) -> Snapshot {
        let mut next = Snapshot::clone(main);
        replace(&mut next, old, new);
        next
    }

    /// Puts `new` in force in place of `old` in one change: a pack that is
    /// not read from a folder (one followed on a server), so it is not kept
    /// to read again.
    pub fn replace_pack(shared: &Shared, old: Option<&Pack>, new: &Pack) {
        let _ = shared.try_update_with_sources(|s, _| {
            replace(s, old, new);
            Ok(())
        });
    }

    /// The packs among what the sources keep.
    pub(super) fn installed(sources: &Sources) -> Vec<Arc<Pack>> {
        sources
            .iter()
            .filter_map(|s| Arc::clone(s).downcast::<Pack>().ok())
            .collect()
    }

    /// Replaces the pack kept for `pack`'s folder, or adds it.
    fn keep(sources: &mut Sources, pack: Arc<Pack>) {
        sources.retain(|s| {
            (&**s as &dyn Any)
                .downcast_ref::<Pack>()
                .is_none_or(|p| p.root() != pack.root())
        });
        sources.push(pack);
    }

    /// Installs `pack` in one change, and remembers it when it can be read
    /// again.
    pub fn install_pack(shared: &Shared, pack: Pack) {
        let _ = shared.try_update_with_sources(|s, sources| {
            replace(s, None, &pack);
            if pack.is_on_disk() {
                keep(sources, Arc::new(pack));
            }
            Ok(())
        });
    }
}

/// Every path the registry's sources read: the packs installed from
/// folders and the user configuration. `None` when there is none.
#[cfg(feature = "watch")]
pub(crate) fn source_paths(shared: &Shared) -> Option<crate::config::ConfigPaths> {
    let current = shared.current();
    let config = crate::config::LoadedConfig::of(&current).map(|c| c.paths());
    #[cfg_attr(not(feature = "packs"), allow(unused_mut))]
    let mut paths = config.cloned().unwrap_or_default();
    #[cfg(feature = "packs")]
    for pack in packs::installed(&shared.sources()) {
        let more = pack.paths();
        paths.files.extend(more.files);
        paths.dirs.extend(more.dirs);
    }
    let none = config.is_none() && paths.files.is_empty() && paths.dirs.is_empty();
    (!none).then_some(paths)
}

/// Reads every source again (the packs installed from folders, then the
/// user configuration) and publishes the result in one change; on error
/// nothing is published.
pub(crate) fn reload(shared: &Shared) -> Result<LoadReport, Error> {
    let current = shared.current();
    let config = UserLayer::of(&current).map(|l| (Arc::clone(l.spec()), l.options().clone()));
    drop(current);
    // Files are read before taking the writer lock: other writers are
    // not held up by I/O, and a failure publishes nothing.
    let packs = Reread::packs(&shared.sources())?;
    if packs.is_empty() && config.is_none() {
        return Err(Error::new(
            ErrorKind::NotLoaded,
            "no user configuration is loaded and no pack was installed from a folder; call `load_config` first",
        ));
    }
    let (layer, warnings) = match config {
        Some((spec, options)) => {
            // A configuration declared by a pack follows its manifest.
            let (layer, warnings) = UserLayer::try_load(packs.spec_for(spec), options)?;
            (Some(Arc::new(layer)), warnings)
        }
        None => (None, Vec::new()),
    };
    let mut changed = BTreeSet::new();
    shared.try_update_with_sources(|s, sources| {
        packs.publish(s, sources, &mut changed);
        if let Some(layer) = layer {
            changed.extend(layer.changed_since(UserLayer::of(s)));
            s.set_layer(Some(layer as Arc<dyn Layer>));
        }
        Ok(())
    })?;
    Ok(LoadReport {
        changed: changed.into_iter().collect(),
        warnings,
    })
}

fn load_layer(
    shared: &Shared,
    spec: Arc<ConfigSpec>,
    options: LoadOptions,
) -> Result<LoadReport, Error> {
    // Files are read before taking the writer lock: other writers are
    // not held up by I/O, and a failure publishes nothing.
    let (layer, warnings) = UserLayer::try_load(spec, options)?;
    let layer = Arc::new(layer);
    let mut changed = Vec::new();
    shared.update(|s| {
        changed = layer.changed_since(UserLayer::of(s));
        s.set_layer(Some(layer as Arc<dyn Layer>));
    });
    Ok(LoadReport { changed, warnings })
}

/// The user's configuration, loaded into a registry and read again: in
/// scope with `use promptreg_packs::prelude::*`.
pub trait LoadConfig {
    /// Reads the user configuration declared by `spec` (settings files and
    /// prompt directories under `options`' home and cwd) into the registry.
    ///
    /// The user layer sits between the host's code and the appenders: per
    /// the [resolution rule](crate::config::resolve_prompt), a user block
    /// follows the body (modes `append`, `global-local`, ...) or replaces it
    /// (mode `override`, or an `inline` setting). Pinned blocks stay in
    /// every mode and appenders still come last. Renders read no files:
    /// call [`reload`](Self::reload) after files change.
    ///
    /// Returns the keys whose configuration changed and the warnings (see
    /// [`config::check`](crate::config::check)).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`] with every diagnostic when a file is invalid or
    /// unreadable. The registry then keeps its previous configuration.
    fn load_config(&self, spec: ConfigSpec, options: LoadOptions) -> Result<LoadReport, Error>;

    /// Re-reads what the registry was loaded from, the packs installed from
    /// folders and the user configuration, and publishes the result
    /// atomically. A reloaded pack replaces the defaults and locale
    /// variants it had registered; a configuration declared by a pack
    /// follows the pack's new manifest. On failure everything stays as it
    /// was and the error is returned.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`] as for [`load_config`](Self::load_config) and
    /// a pack's load; [`ErrorKind::NotLoaded`] when no configuration was
    /// loaded and no pack was installed from a folder.
    fn reload(&self) -> Result<LoadReport, Error>;

    /// Removes the user configuration; renders use the host's prompts only.
    fn unload_config(&self);
}

impl LoadConfig for PromptRegistry {
    fn load_config(&self, spec: ConfigSpec, options: LoadOptions) -> Result<LoadReport, Error> {
        load_layer(self.shared(), Arc::new(spec), options)
    }

    fn reload(&self) -> Result<LoadReport, Error> {
        reload(self.shared())
    }

    fn unload_config(&self) {
        self.shared().update(|s| s.set_layer(None));
    }
}
