//! A pack's translatable text for one locale, and importing it back.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, DiagnosticCode, printable};
use crate::error::Error;
use crate::id::PromptId;
use crate::locale::Locale;
use crate::pack::translation::{SourceText, TRANSLATED_FROM, UnitName};
use crate::pack::{Pack, PackPrompt, Translation};

use super::Format;
use super::protect::Syntax;

/// The most units [`Catalog::read`] reads from one file. A unit is a
/// prompt's body or one of its pinned blocks, so this is far more than any
/// pack has; a file with more is not an export of one, and reading it on
/// would only take time and memory.
pub const MAX_UNITS: usize = 50_000;

/// Refuses a file once `read` units have been read from it and another
/// comes.
pub(super) fn check_unit_count(read: usize) -> Result<(), Diagnostic> {
    if read < MAX_UNITS {
        return Ok(());
    }
    Err(Diagnostic::error(
        DiagnosticCode::Translation,
        format!("the file has more than {MAX_UNITS} units, more than any pack: it is not an export of one"),
    )
    .suggest(Some(
        "export the pack again with `promptreg l10n export`".to_owned(),
    )))
}

/// Every translatable unit of a pack for one locale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    /// The pack's name.
    pub pack: String,
    /// The locale of the sources: the pack's default locale.
    pub source_locale: String,
    /// The locale translated into, as the file says.
    pub locale: String,
    /// The units, by prompt, in composition order.
    pub units: Vec<CatalogUnit>,
}

/// One translatable text: a prompt's body or one of its pinned blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogUnit {
    /// The prompt.
    pub prompt: String,
    /// Which of its texts.
    pub unit: UnitName,
    /// The default's text.
    pub source: String,
    /// The translation, when there is one.
    pub target: Option<String>,
    /// Where the translation stands.
    pub state: UnitState,
    /// For a stale unit: the default's text the translation was made from.
    pub previous_source: Option<String>,
    /// Whether the text is a template, or chat messages: what it must keep.
    pub(crate) syntax: Syntax,
}

/// Where the translation of a unit stands. A file read back has units
/// [`Translated`](UnitState::Translated) when the translator's tool marked
/// them done, [`New`](UnitState::New) otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitState {
    /// Not translated yet.
    New,
    /// Translated from an older text of the default.
    Stale,
    /// Translated, but the variant records no source: to review.
    Untracked,
    /// Translated from the default's current text.
    Translated,
}

impl UnitState {
    /// `new`, `stale`, `untracked`, `translated`.
    pub fn as_str(self) -> &'static str {
        match self {
            UnitState::New => "new",
            UnitState::Stale => "stale",
            UnitState::Untracked => "untracked",
            UnitState::Translated => "translated",
        }
    }
}

impl CatalogUnit {
    /// The unit's name in a file: `<prompt>:<unit>` (`greeting:body`,
    /// `greeting:pin_head.1`).
    pub fn key(&self) -> String {
        format!("{}:{}", self.prompt, self.unit)
    }
}

/// What an import writes: the variant files, each with its new text, and
/// the prompts left as they were because some of their units are not
/// translated yet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    /// The variant files to write, with their whole new text.
    pub files: Vec<(PathBuf, String)>,
    /// Prompts not imported, with the units still to translate.
    pub incomplete: Vec<(PromptId, Vec<String>)>,
    /// What a reviewer should look at in the file's translations: one
    /// with bidirectional-text controls
    /// ([`BidiControl`](DiagnosticCode::BidiControl)), one per unit.
    pub warnings: Vec<Diagnostic>,
}

impl Catalog {
    /// The translatable text of every prompt of `pack` with a default
    /// file, for `locale`: each unit's translation taken from the variant
    /// for exactly `locale`, and its state.
    pub fn of(pack: &Pack, locale: &Locale) -> Catalog {
        let mut units = Vec::new();
        for prompt in pack.prompts() {
            let Some(source) = prompt.source_text() else {
                continue;
            };
            let syntax = syntax_of(prompt);
            let variant = prompt.variant_text(locale);
            let translation = prompt.translation(locale);
            for (name, text) in source.units().filter(|(_, t)| syntax.has_text(t)) {
                let target = variant.and_then(|v| v.unit(name)).map(str::to_owned);
                let (state, previous_source) = match (&target, translation) {
                    (None, _) | (_, None) => (UnitState::New, None),
                    (Some(_), Some(Translation::Current)) => (UnitState::Translated, None),
                    (Some(_), Some(Translation::Untracked)) => (UnitState::Untracked, None),
                    (Some(_), Some(Translation::Stale { from })) => match from.unit(name) {
                        Some(old) if old == text => (UnitState::Translated, None),
                        old => (UnitState::Stale, Some(old.unwrap_or_default().to_owned())),
                    },
                };
                units.push(CatalogUnit {
                    prompt: prompt.id().to_string(),
                    unit: name,
                    source: text.to_owned(),
                    target,
                    state,
                    previous_source,
                    syntax,
                });
            }
        }
        Catalog {
            pack: pack.name().to_owned(),
            source_locale: pack.default_locale().to_string(),
            locale: locale.to_string(),
            units,
        }
    }

    /// The catalog as a file in `format`.
    pub fn write(&self, format: Format) -> String {
        match format {
            Format::Xliff => super::xliff::write(self),
            Format::Po => super::po::write(self),
        }
    }

    /// Reads translation file `path`, whose text is `text`: XLIFF when it
    /// starts with `<`, PO otherwise.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) with a
    /// [`Translation`](DiagnosticCode::Translation) diagnostic naming the
    /// line and column of what is malformed in the file, or saying it is
    /// truncated; and a file of more than [`MAX_UNITS`] units. A line may
    /// be of any length.
    pub fn read(text: &str, path: &Path) -> Result<Catalog, Error> {
        let parsed = match text
            .trim_start_matches('\u{feff}')
            .trim_start()
            .starts_with('<')
        {
            true => super::xliff::read(text),
            false => super::po::read(text),
        };
        parsed.map_err(|d| Error::from_diagnostics(vec![d.in_file(path)]))
    }

    /// The variant files this translated catalog changes in `pack` for
    /// `locale`, each recording the default's current text as its source;
    /// `read` gives the current text of a variant file that exists. A
    /// prompt is imported when every one of its units is translated; one
    /// whose translation is unchanged and current is not written again.
    /// Nothing is written here: on success the caller writes every file.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) with one
    /// [`Translation`](DiagnosticCode::Translation) diagnostic per problem,
    /// each naming its unit: a file for another pack or locale, a unit
    /// the pack does not have, a source that changed since the export, a
    /// unit missing (a truncated file, or an older export), and a
    /// translation that changes template syntax or a chat heading.
    pub fn import(
        &self,
        pack: &Pack,
        locale: &Locale,
        read: impl Fn(&Path) -> Option<String>,
    ) -> Result<Imported, Error> {
        let mut problems = self.header_problems(pack, locale);
        let mut by_prompt: BTreeMap<&str, Vec<&CatalogUnit>> = BTreeMap::new();
        let mut seen = BTreeSet::new();
        for unit in &self.units {
            if !seen.insert((unit.prompt.as_str(), unit.unit)) {
                problems.push(problem(
                    format!(
                        "unit `{}` is in the file more than once",
                        printable(&unit.key())
                    ),
                    "keep one translation of each unit: export again and carry yours over",
                ));
                continue;
            }
            match self.unit_problem(pack, unit) {
                Some(problem) => problems.push(problem),
                None => by_prompt
                    .entry(unit.prompt.as_str())
                    .or_default()
                    .push(unit),
            }
        }
        problems.extend(missing_units(pack, &self.units));
        if !problems.is_empty() {
            if let Some(more) = crate::diagnostic::cap(&mut problems) {
                problems.push(more);
            }
            return Err(Error::from_diagnostics(problems));
        }
        let mut imported = Imported {
            warnings: self.units.iter().filter_map(bidi_warning).collect(),
            ..Imported::default()
        };
        for (id, units) in by_prompt {
            let Some(prompt) = pack.prompt(id) else {
                continue;
            };
            match translated_text(prompt, &units) {
                Plan::Nothing => {}
                Plan::Incomplete(todo) => imported.incomplete.push((prompt.id().clone(), todo)),
                Plan::Write(translated) => {
                    if let Some(file) = variant_file(pack, prompt, locale, &translated, &read) {
                        imported.files.push(file);
                    }
                }
            }
        }
        Ok(imported)
    }

    fn header_problems(&self, pack: &Pack, locale: &Locale) -> Vec<Diagnostic> {
        let mut problems = Vec::new();
        if self.pack != pack.name() {
            problems.push(problem(
                format!(
                    "this file is for the pack `{}`, not `{}`",
                    printable(&self.pack),
                    pack.name()
                ),
                "export the pack you import into",
            ));
        }
        if Locale::parse(&self.locale).ok().as_ref() != Some(locale) {
            problems.push(problem(
                format!(
                    "this file translates into `{}`, not `{locale}`",
                    printable(&self.locale)
                ),
                format!("import it with `--locale {}`", printable(&self.locale)),
            ));
        }
        problems
    }

    fn unit_problem(&self, pack: &Pack, unit: &CatalogUnit) -> Option<Diagnostic> {
        let key = printable(&unit.key()).into_owned();
        let Some(source) = pack.prompt(&unit.prompt).and_then(PackPrompt::source_text) else {
            return Some(problem(
                format!(
                    "unit `{key}`: the pack has no prompt `{}`",
                    printable(&unit.prompt)
                ),
                "export again: the prompt was removed or renamed since",
            ));
        };
        let Some(current) = source.unit(unit.unit) else {
            return Some(problem(
                format!(
                    "unit `{key}`: the default of `{}` has no {}, so the number of pinned blocks changed",
                    unit.prompt, unit.unit
                ),
                "export again, and carry the translations over",
            ));
        };
        if current != unit.source {
            let (at, was, now) = where_they_differ(&unit.source, current);
            return Some(problem(
                format!(
                    "unit `{key}`: its source changed since the export, at character {at}: the file has \"{}\", the default now \"{}\"",
                    printable(&was),
                    printable(&now)
                ),
                "export again: the new export keeps each translation and marks this unit stale",
            ));
        }
        let target = unit
            .target
            .as_deref()
            .filter(|_| unit.state == UnitState::Translated)?;
        let syntax = pack.prompt(&unit.prompt).map(syntax_of).unwrap_or_default();
        let change = syntax.change(current, target)?;
        Some(problem(
            format!("unit `{key}`: the translation changes the template: {change}"),
            "keep every tag and heading of the source as written",
        ))
    }
}

/// Where two texts first differ: the character's number (from 1) and an
/// excerpt of each around it, a little before and more after, `…` marking
/// what is left out. Two texts cut at the same prefix would read the same.
fn where_they_differ(was: &str, now: &str) -> (usize, String, String) {
    const BEFORE: usize = 20;
    const AFTER: usize = 40;
    let same = was
        .chars()
        .zip(now.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let excerpt = |text: &str| {
        let start = same.saturating_sub(BEFORE);
        let shown: String = text
            .chars()
            .skip(start)
            .take(same - start + AFTER)
            .collect();
        let head = if start > 0 { "…" } else { "" };
        let tail = if text.chars().count() > same + AFTER {
            "…"
        } else {
            ""
        };
        format!("{head}{shown}{tail}")
    };
    (same + 1, excerpt(was), excerpt(now))
}

/// A warning for a translation with bidirectional-text controls.
fn bidi_warning(unit: &CatalogUnit) -> Option<Diagnostic> {
    use crate::prompt_file::{BIDI_SUGGESTION, bidi_count, is_bidi_control};

    let target = unit
        .target
        .as_deref()
        .filter(|_| unit.state == UnitState::Translated)?;
    let first = target.chars().find(|&c| is_bidi_control(c))?;
    let count = target.chars().filter(|&c| is_bidi_control(c)).count();
    Some(
        Diagnostic::warning(
            DiagnosticCode::BidiControl,
            format!(
                "unit `{}`: the translation holds {} (the first U+{:04X}): it shows in another order than the model reads it",
                printable(&unit.key()),
                bidi_count(count),
                u32::from(first)
            ),
        )
        .suggest(Some(BIDI_SUGGESTION.to_owned())),
    )
}

/// What the texts of `prompt` are written in.
fn syntax_of(prompt: &PackPrompt) -> Syntax {
    Syntax {
        template: prompt.is_template(),
        chat: prompt.is_chat(),
    }
}

/// The units of the pack the catalog lacks: a truncated file, or one
/// exported before a pinned block was added.
fn missing_units(pack: &Pack, units: &[CatalogUnit]) -> Vec<Diagnostic> {
    let given: BTreeSet<(&str, UnitName)> =
        units.iter().map(|u| (u.prompt.as_str(), u.unit)).collect();
    let mut missing = Vec::new();
    for prompt in pack.prompts() {
        let Some(source) = prompt.source_text() else {
            continue;
        };
        let syntax = syntax_of(prompt);
        for (name, text) in source.units() {
            if syntax.has_text(text) && !given.contains(&(prompt.id().as_str(), name)) {
                missing.push(problem(
                    format!("the file has no unit `{}:{name}`", prompt.id()),
                    "the file may be truncated, or exported before this text was added: export again",
                ));
            }
        }
    }
    missing
}

fn problem(message: String, suggestion: impl Into<String>) -> Diagnostic {
    Diagnostic::error(DiagnosticCode::Translation, message).suggest(Some(suggestion.into()))
}

/// What an import does with one prompt.
enum Plan {
    /// Nothing of it is translated.
    Nothing,
    /// Some of it is: the units still to translate.
    Incomplete(Vec<String>),
    /// Its variant's new text: the body, and the pinned blocks of each side
    /// translated (a side with none translated is left to the default).
    Write(SourceText),
}

/// One unit of an import.
enum Taken {
    /// Translated.
    Done(String),
    /// Syntax alone, nothing to translate: kept as written.
    Kept(String),
    /// Not translated: its key.
    Todo(String),
}

impl Taken {
    fn text(&self) -> Option<&str> {
        match self {
            Taken::Done(text) | Taken::Kept(text) => Some(text),
            Taken::Todo(_) => None,
        }
    }
}

/// The translated text of `prompt` from its `units`. A unit that is
/// template syntax alone (`{% include "rules" %}`) has nothing to
/// translate and is kept as written; a side of pinned blocks none of
/// which is translated is left to the default, as a variant may.
fn translated_text(prompt: &PackPrompt, units: &[&CatalogUnit]) -> Plan {
    let Some(source) = prompt.source_text() else {
        return Plan::Nothing;
    };
    let syntax = syntax_of(prompt);
    let take = |name: UnitName, text: &str| -> Taken {
        if !syntax.has_text(text) {
            return Taken::Kept(text.to_owned());
        }
        let unit = units.iter().find(|u| u.unit == name);
        match unit.filter(|u| u.state == UnitState::Translated) {
            Some(unit) => Taken::Done(unit.target.clone().unwrap_or_default()),
            None => Taken::Todo(format!("{}:{name}", prompt.id())),
        }
    };
    let body = take(UnitName::Body, &source.body);
    let side = |blocks: &[String], name: fn(usize) -> UnitName| -> Vec<Taken> {
        let taken: Vec<Taken> = (1..).zip(blocks).map(|(n, t)| take(name(n), t)).collect();
        match taken.iter().any(|t| matches!(t, Taken::Done(_))) {
            true => taken,
            false => Vec::new(),
        }
    };
    let (head, tail) = (
        side(&source.pin_head, UnitName::PinHead),
        side(&source.pin_tail, UnitName::PinTail),
    );
    let all = || std::iter::once(&body).chain(&head).chain(&tail);
    if !all().any(|t| matches!(t, Taken::Done(_))) {
        return Plan::Nothing;
    }
    let todo: Vec<String> = all()
        .filter_map(|t| match t {
            Taken::Todo(key) => Some(key.clone()),
            _ => None,
        })
        .collect();
    if !todo.is_empty() {
        return Plan::Incomplete(todo);
    }
    let texts = |side: &[Taken]| {
        side.iter()
            .filter_map(|t| t.text().map(str::to_owned))
            .collect()
    };
    Plan::Write(SourceText {
        body: body.text().unwrap_or_default().to_owned(),
        pin_head: texts(&head),
        pin_tail: texts(&tail),
    })
}

/// The new text of the `locale` variant of `prompt`: `translated`, its
/// source recorded; `None` when it would not change.
fn variant_file(
    pack: &Pack,
    prompt: &PackPrompt,
    locale: &Locale,
    translated: &SourceText,
    read: &impl Fn(&Path) -> Option<String>,
) -> Option<(PathBuf, String)> {
    let source = prompt.source_text()?;
    let current = prompt.translation(locale) == Some(&Translation::Current);
    if current && prompt.variant_text(locale) == Some(translated) {
        return None;
    }
    let path = prompt
        .variant_file(locale)
        .map_or_else(|| pack.variant_path(prompt.id(), locale), Path::to_path_buf);
    let existing = read(&path).unwrap_or_else(|| match prompt.is_template() {
        true => "---\ntemplate: true\n---\n".to_owned(),
        false => String::new(),
    });
    let now = prompt.variant_text(locale);
    Some((path, variant_text(&existing, now, source, translated)))
}

/// `existing` (a variant file's text) with the body and pinned blocks of
/// `translated` and the record of `source`; a side of pinned blocks that
/// `current` (the variant as it is) already gives is left as written.
fn variant_text(
    existing: &str,
    current: Option<&SourceText>,
    source: &SourceText,
    translated: &SourceText,
) -> String {
    use crate::front_matter::{PIN_HEAD, PIN_TAIL};
    use crate::pack::translation::{pins_yaml, set_front_matter_keys, split_front_matter};

    let (yaml, _) = split_front_matter(existing);
    let text = format!("---\n{yaml}---\n{}", translated.body);
    let mut keys = vec![(TRANSLATED_FROM, None)];
    for (key, blocks, now) in [
        (PIN_HEAD, &translated.pin_head, current.map(|c| &c.pin_head)),
        (PIN_TAIL, &translated.pin_tail, current.map(|c| &c.pin_tail)),
    ] {
        if now != Some(blocks) {
            keys.push((key, pins_yaml(key, blocks)));
        }
    }
    crate::pack::translation::record_source(&set_front_matter_keys(&text, &keys), source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_sources_are_shown_where_they_first_differ() {
        let was = format!("{}Work through the task list in order.", "x".repeat(100));
        let now = format!(
            "{}Work through the task list one task at a time.",
            "x".repeat(100)
        );
        let (at, a, b) = where_they_differ(&was, &now);
        assert_eq!(at, 128);
        assert_eq!(a, "…rough the task list in order.");
        assert_eq!(b, "…rough the task list one task at a time.");
        assert_eq!(
            where_they_differ("ab", "ab!"),
            (3, "ab".to_owned(), "ab!".to_owned())
        );
    }
}
