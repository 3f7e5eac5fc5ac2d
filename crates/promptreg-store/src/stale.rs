//! Which translations a push leaves behind: per prompt, its default file
//! and the variants translated from an older text of it, and of those the
//! ones that went stale in this version (`translation_stale` events).

use std::collections::BTreeMap;

use promptreg::pack::{Pack, PackPrompt};

use crate::files::relative;

/// Where a prompt's translations stand in the files pushed: its default
/// file, and the variants translated from an older text of it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Translations {
    /// The default file's path.
    pub(crate) default: Option<String>,
    /// Each stale variant's locale and path.
    pub(crate) stale: Vec<(String, String)>,
}

impl Translations {
    pub(crate) fn of(pack: &Pack, prompt: &PackPrompt) -> Translations {
        let stale = prompt
            .variants()
            .filter(|(locale, _)| prompt.translation(locale).is_some_and(|t| t.is_stale()))
            .filter_map(|(locale, file)| Some((locale.to_string(), relative(pack.root(), file)?)))
            .collect();
        Translations {
            default: prompt.default_file().and_then(|f| relative(pack.root(), f)),
            stale,
        }
    }

    /// The stale variants that went stale between `before` (the files of
    /// the version this one follows) and `after`: the default's text
    /// changed, the variant did not.
    pub(crate) fn gone_stale<'a>(
        &'a self,
        before: &'a BTreeMap<String, Vec<u8>>,
        after: &'a BTreeMap<String, Vec<u8>>,
    ) -> impl Iterator<Item = &'a str> {
        let default_changed = self
            .default
            .as_ref()
            .is_some_and(|d| before.get(d) != after.get(d));
        self.stale
            .iter()
            .filter(move |(_, path)| {
                default_changed && before.get(path).is_some() && before.get(path) == after.get(path)
            })
            .map(|(locale, _)| locale.as_str())
    }
}
