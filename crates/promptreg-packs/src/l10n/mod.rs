//! The translation workflow: how far each locale is translated, and the
//! pack's text in the files translators' tools read.
//!
//! - [`Status`]: per locale, which prompts have a current, stale or
//!   untracked translation and which fall back, and to what, by the same
//!   locale matching renders use;
//! - [`Catalog`]: every translatable unit of a pack for one locale (each
//!   prompt's body and pinned blocks), with its source, its current
//!   translation and its [state](UnitState); written as XLIFF 2.0 or
//!   gettext PO ([`Format`]) and read back, and [`Catalog::import`] turns a
//!   translated file into the variant files it changes, recording what each
//!   translates.
//!
//! A template's syntax (`{{ name }}`, `{% if %}`, `{# #}`) and a chat
//! file's `# role` headings are protected: XLIFF carries them as inline
//! codes a translator's tool does not let anyone edit, and an import whose
//! translation changes them is refused with the unit and the change.
//!
//! ```
//! use promptreg_packs::l10n::{Catalog, Format};
//! use promptreg_packs::pack::Pack;
//! use promptreg_core::Locale;
//!
//! let pack = Pack::from_files("demo", [
//!     ("promptreg.toml", "name = \"demo\"\nkeys = [\"greeting\"]\n[user]\nprompts_dir = \".demo\"\n"),
//!     ("defaults/greeting.md", "---\ntemplate: true\nvariables:\n  name:\n---\nHello {{ name }}!"),
//! ])?;
//! let ja = Locale::parse("ja")?;
//! let po = Catalog::of(&pack, &ja).write(Format::Po);
//! // A translator fills the translation in.
//! let po = po.replace("msgstr \"\"\n\n", "msgstr \"こんにちは、{{ name }}さん！\"\n\n");
//! let written = Catalog::read(&po, "ja.po".as_ref())?.import(&pack, &ja, |_| None)?;
//! assert!(written.files[0].1.ends_with("---\nこんにちは、{{ name }}さん！"));
//! # Ok::<(), promptreg_core::Error>(())
//! ```

mod catalog;
mod po;
mod protect;
mod status;
mod xliff;

pub use catalog::{Catalog, CatalogUnit, Imported, MAX_UNITS, UnitState};
pub use status::{Coverage, LocaleStatus, PromptStatus, Status};

/// The file formats of [`Catalog::write`] and [`Catalog::read`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// XLIFF 2.0 (OASIS), one `<unit>` per translatable text.
    Xliff,
    /// gettext PO, one message per translatable text, its unit in
    /// `msgctxt`.
    Po,
}

impl Format {
    /// Parses `xliff` or `po`.
    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "xliff" | "xlf" => Some(Format::Xliff),
            "po" => Some(Format::Po),
            _ => None,
        }
    }

    /// The usual file extension: `xlf`, `po`.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Xliff => "xlf",
            Format::Po => "po",
        }
    }
}
