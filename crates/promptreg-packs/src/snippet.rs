//! Snippets: named template fragments a pack's prompts share, included by
//! name with `{% include "name" %}`, each with locale variants.
//!
//! The snippets live in memory: an including template's environment holds
//! every variant it can reach, compiled once at load, and a render picks
//! the variant its locale matches (the matching prompts use,
//! [`match_locale`]) without reading a file. Which snippets a template
//! reaches, and that no include is missing, cyclic or a path, is checked
//! when the pack loads, from the include tags of each source.

// Packs build snippets; with `templates` alone only the include check of
// a template's source is used.
#![cfg_attr(not(feature = "packs"), allow(dead_code))]

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::Map;
use crate::diagnostic::{Diagnostic, DiagnosticCode, LineIndex, Position};
use crate::locale::Locale;
use crate::locale_match::{match_locale, script_index};
use crate::suggest;
use crate::template_tags::{Include, includes_of};

/// The folder of snippets inside a pack.
pub const SNIPPETS_DIR: &str = "snippets";

/// The prefix of a snippet's template name in an environment: no include
/// name can contain `:`, so a prompt cannot name one directly.
const TEMPLATE_PREFIX: &str = "snippet:";

/// A pack's snippets, by name.
#[derive(Debug, Default)]
pub(crate) struct Snippets {
    by_name: BTreeMap<String, Snippet>,
}

/// One snippet: its default file and its locale variants.
#[derive(Debug, Default)]
struct Snippet {
    default: Option<SnippetFile>,
    variants: BTreeMap<Box<str>, SnippetFile>,
    by_script: Map<Box<str>, Box<[Box<str>]>>,
}

/// One snippet file: `snippets/<name>.md` or `snippets/<name>.<locale>.md`.
#[derive(Debug)]
pub(crate) struct SnippetFile {
    pub(crate) locale: Option<Locale>,
    pub(crate) path: PathBuf,
    pub(crate) source: String,
}

impl SnippetFile {
    /// The name its variant is compiled under in an environment.
    pub(crate) fn template_name(&self, name: &str) -> String {
        match &self.locale {
            Some(locale) => format!("{TEMPLATE_PREFIX}{name}@{}", locale.key()),
            None => format!("{TEMPLATE_PREFIX}{name}"),
        }
    }
}

impl Snippets {
    /// Adds a file; two files for one name and locale are an error.
    pub(crate) fn insert(&mut self, name: &str, file: SnippetFile) -> Result<(), Diagnostic> {
        let snippet = self.by_name.entry(name.to_owned()).or_default();
        let slot = match &file.locale {
            None => &mut snippet.default,
            Some(locale) => {
                let key: Box<str> = locale.key().into();
                if let Some(existing) = snippet.variants.get(&key) {
                    return Err(twice(name, &file.path, &existing.path));
                }
                snippet.variants.insert(key, file);
                snippet.by_script = script_index(snippet.variants.values().flat_map(|f| &f.locale));
                return Ok(());
            }
        };
        if let Some(existing) = slot {
            return Err(twice(name, &file.path, &existing.path));
        }
        *slot = Some(file);
        Ok(())
    }

    /// The snippets that have locale variants but no default file, each
    /// with its first variant.
    pub(crate) fn without_default(&self) -> impl Iterator<Item = (&str, &SnippetFile)> {
        self.by_name
            .iter()
            .filter_map(|(name, snippet)| match &snippet.default {
                Some(_) => None,
                None => Some((name.as_str(), snippet.variants.values().next()?)),
            })
    }

    /// The snippet names, sorted.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    /// Every file of every snippet.
    pub(crate) fn files(&self) -> impl Iterator<Item = (&str, &SnippetFile)> {
        self.by_name.iter().flat_map(|(name, snippet)| {
            snippet
                .default
                .iter()
                .chain(snippet.variants.values())
                .map(move |file| (name.as_str(), file))
        })
    }

    fn files_of(&self, name: &str) -> impl Iterator<Item = &SnippetFile> {
        self.by_name
            .get(name)
            .into_iter()
            .flat_map(|s| s.default.iter().chain(s.variants.values()))
    }

    /// The names reachable from `includes`, through the snippets' own
    /// includes (every variant's), sorted. Unknown names are left out.
    pub(crate) fn reachable<'a>(&'a self, includes: &[Include]) -> BTreeSet<&'a str> {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&str> = includes
            .iter()
            .filter_map(|i| i.name.as_deref())
            .filter_map(|n| self.by_name.get_key_value(n).map(|(k, _)| k.as_str()))
            .collect();
        while let Some(name) = todo.pop() {
            if !seen.insert(name) {
                continue;
            }
            for file in self.files_of(name) {
                for include in includes_of(&file.source) {
                    if let Some((known, _)) = include
                        .name
                        .as_deref()
                        .and_then(|n| self.by_name.get_key_value(n))
                    {
                        todo.push(known);
                    }
                }
            }
        }
        seen
    }

    /// The files of the snippets named, to compile into an environment.
    pub(crate) fn files_named<'a>(
        &'a self,
        names: &'a BTreeSet<&'a str>,
    ) -> impl Iterator<Item = (&'a str, &'a SnippetFile)> {
        names
            .iter()
            .flat_map(move |name| self.files_of(name).map(move |f| (*name, f)))
    }

    /// The template name `{% include "name" %}` resolves to in a render in
    /// `locale`: the variant locale matching finds, else the default.
    pub(crate) fn resolve(&self, name: &str, locale: &Locale, fallback: &Locale) -> String {
        let Some(snippet) = self.by_name.get(name) else {
            return name.to_owned();
        };
        let variant = match snippet.variants.is_empty() {
            true => None,
            false => match_locale(locale, fallback, &snippet.by_script, |key| {
                snippet.variants.get(key)
            })
            .map(|(file, _)| file),
        };
        match variant.or(snippet.default.as_ref()) {
            Some(file) => file.template_name(name),
            None => name.to_owned(),
        }
    }

    /// What is wrong with the includes of `source` (the part of `path`
    /// after its first `line_offset` lines): a tag other than `include`, a
    /// name that is not a quoted literal or is a path, an unknown snippet.
    pub(crate) fn check_includes(
        &self,
        path: &Path,
        source: &str,
        line_offset: usize,
    ) -> Vec<Diagnostic> {
        let lines = LineIndex::new(source);
        includes_of(source)
            .into_iter()
            .filter_map(|include| {
                let (message, hint) = self.include_problem(&include)?;
                Some(located(
                    Diagnostic::error(DiagnosticCode::Snippet, message)
                        .in_file(path)
                        .suggest(hint),
                    &lines,
                    include.span,
                    line_offset,
                ))
            })
            .collect()
    }

    fn include_problem(&self, include: &Include) -> Option<(String, Option<String>)> {
        if include.keyword != "include" {
            return Some((
                format!("`{{% {} %}}` is not supported in a pack", include.keyword),
                Some("include a snippet by name: `{% include \"name\" %}`".to_owned()),
            ));
        }
        let Some(name) = include.name.as_deref() else {
            return Some((
                "a snippet include must name its snippet as a quoted string".to_owned(),
                Some("write `{% include \"name\" %}`, with a snippet of snippets/".to_owned()),
            ));
        };
        if let Some(why) = name_problem(name) {
            return Some((
                format!("`{name}` cannot be a snippet name: {why}"),
                Some(format!(
                    "put the file in {SNIPPETS_DIR}/ and include it by its name, without folder or extension"
                )),
            ));
        }
        if self.by_name.contains_key(name) {
            return None;
        }
        let hint = suggest::did_you_mean(name, self.names())
            .unwrap_or_else(|| format!("create {SNIPPETS_DIR}/{name}.md"));
        Some((format!("no snippet `{name}` in this pack"), Some(hint)))
    }

    /// Every include cycle among the snippets, once each, as an error at
    /// the include that closes it, with the chain of names (`a -> b -> a`).
    pub(crate) fn cycles(&self) -> Vec<Diagnostic> {
        let mut reported: BTreeSet<BTreeSet<String>> = BTreeSet::new();
        let mut out = Vec::new();
        for start in self.by_name.keys() {
            let mut chain = vec![start.clone()];
            self.walk(&mut chain, &mut reported, &mut out);
        }
        out
    }

    /// Depth-first from the last name of `chain`.
    fn walk(
        &self,
        chain: &mut Vec<String>,
        reported: &mut BTreeSet<BTreeSet<String>>,
        out: &mut Vec<Diagnostic>,
    ) {
        let Some(current) = chain.last().cloned() else {
            return;
        };
        for file in self.files_of(&current) {
            for include in includes_of(&file.source) {
                let Some(next) = include.name.clone() else {
                    continue;
                };
                if !self.by_name.contains_key(&next) {
                    continue;
                }
                if let Some(at) = chain.iter().position(|n| *n == next) {
                    let cycle: BTreeSet<String> = chain[at..].iter().cloned().collect();
                    if reported.insert(cycle) {
                        out.push(cycle_error(&chain[at..], &next, file, include.span));
                    }
                    continue;
                }
                chain.push(next);
                self.walk(chain, reported, out);
                chain.pop();
            }
        }
    }
}

/// The error for a cycle `names -> next`, at the include in `file`.
fn cycle_error(names: &[String], next: &str, file: &SnippetFile, span: Range<usize>) -> Diagnostic {
    let chain: Vec<&str> = names.iter().map(String::as_str).chain([next]).collect();
    located(
        Diagnostic::error(
            DiagnosticCode::Snippet,
            format!("snippets include each other in a cycle: {}", chain.join(" -> ")),
        )
        .in_file(&file.path)
        .suggest(Some(format!(
            "remove one of the includes; `{next}` cannot include itself, even through another snippet"
        ))),
        &LineIndex::new(&file.source),
        span,
        0,
    )
}

fn twice(name: &str, path: &Path, existing: &Path) -> Diagnostic {
    Diagnostic::error(
        DiagnosticCode::DuplicateId,
        format!(
            "snippet `{name}` is defined twice for one locale (also in {})",
            existing.display()
        ),
    )
    .in_file(path)
    .suggest(Some("keep one of the files".to_owned()))
}

/// Points `d` at `span` of `source`, which starts after `line_offset`
/// lines of its file.
fn located(
    mut d: Diagnostic,
    lines: &LineIndex<'_>,
    span: Range<usize>,
    line_offset: usize,
) -> Diagnostic {
    let local = lines.position(span.start);
    d.position = Some(Position {
        line: local.line + line_offset,
        column: local.column,
    });
    d.with_excerpt(lines, line_offset)
}

/// Why `name` cannot name a snippet: snippets are named, never located.
pub(crate) fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if name.contains(['/', '\\']) || name.starts_with('.') || name.contains("..") {
        return Some("it is a path, and snippets are included by name only");
    }
    if name.ends_with(".md") {
        return Some("the name leaves out the `.md` extension");
    }
    let valid = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    (!valid).then_some("a name has letters, digits, `-`, `_` and `.` only")
}

thread_local! {
    /// The locale and fallback locale of the template render running on
    /// this thread. minijinja resolves an include's name without the render
    /// state (`set_path_join_callback` gets the name and the parent only),
    /// so the render puts the locales here for the time it runs.
    static RENDER_LOCALES: RefCell<Option<(Locale, Locale)>> = const { RefCell::new(None) };

    /// While a traced render records them, the template names of the
    /// snippet variants its includes resolved to, in order.
    static INCLUDED: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Runs `render` and returns with its result the template names of the
/// snippets it included, each once, in the order first included: what
/// `explain` names as a part's snippet files.
pub(crate) fn recording_includes<T>(render: impl FnOnce() -> T) -> (T, Vec<String>) {
    let outer = INCLUDED.with(|recorded| recorded.borrow_mut().replace(Vec::new()));
    let result = render();
    let names = INCLUDED.with(|recorded| std::mem::replace(&mut *recorded.borrow_mut(), outer));
    let mut names = names.unwrap_or_default();
    let mut seen = BTreeSet::new();
    names.retain(|name| seen.insert(name.clone()));
    (result, names)
}

/// The locales of a render, set for as long as it lives.
pub(crate) struct RenderLocales {
    previous: Option<(Locale, Locale)>,
}

impl RenderLocales {
    pub(crate) fn enter(locale: &Locale, fallback: &Locale) -> Self {
        let previous = RENDER_LOCALES.with(|current| {
            current
                .borrow_mut()
                .replace((locale.clone(), fallback.clone()))
        });
        RenderLocales { previous }
    }
}

impl Drop for RenderLocales {
    fn drop(&mut self) {
        let previous = self.previous.take();
        RENDER_LOCALES.with(|current| *current.borrow_mut() = previous);
    }
}

/// The template name an include of `name` resolves to in the render
/// running on this thread (the default variant outside a render).
pub(crate) fn resolve_in_render<'s>(snippets: &Snippets, name: &'s str) -> Cow<'s, str> {
    let resolved = RENDER_LOCALES.with(|current| match &*current.borrow() {
        Some((locale, fallback)) => Cow::Owned(snippets.resolve(name, locale, fallback)),
        None => match snippets.by_name.get(name).and_then(|s| s.default.as_ref()) {
            Some(file) => Cow::Owned(file.template_name(name)),
            None => Cow::Borrowed(name),
        },
    });
    INCLUDED.with(|recorded| {
        if let Some(names) = recorded.borrow_mut().as_mut() {
            names.push(resolved.clone().into_owned());
        }
    });
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(locale: Option<&str>, source: &str) -> SnippetFile {
        SnippetFile {
            locale: locale.map(|l| Locale::parse(l).unwrap()),
            path: PathBuf::from(format!("snippets/x{}.md", locale.unwrap_or_default())),
            source: source.to_owned(),
        }
    }

    #[test]
    fn include_tags_are_found_outside_comments_raw_blocks_and_strings() {
        let source = "{# {% include \"no\" %} #}{% raw %}{% include \"no\" %}{% endraw %}\n{{ \"{% include 'no' %}\" }}{%- include \"yes\" ignore missing -%}{% include name %}{% import \"m\" as m %}";
        let found = includes_of(source);
        let names: Vec<_> = found.iter().map(|i| (i.keyword, i.name.clone())).collect();
        assert_eq!(
            names,
            [
                ("include", Some("yes".to_owned())),
                ("include", None),
                ("import", None)
            ]
        );
    }

    #[test]
    fn a_render_locale_selects_the_variant_prompts_would() {
        let mut snippets = Snippets::default();
        snippets.insert("x", file(None, "en")).unwrap();
        snippets.insert("x", file(Some("zh-TW"), "tw")).unwrap();
        snippets.insert("x", file(Some("ja"), "ja")).unwrap();
        let en = Locale::parse("en").unwrap();
        let at = |tag: &str| snippets.resolve("x", &Locale::parse(tag).unwrap(), &en);
        assert_eq!(at("ja-JP"), "snippet:x@ja");
        // The same language and script, as for prompts.
        assert_eq!(at("zh-HK"), "snippet:x@zh-TW");
        assert_eq!(at("zh-CN"), "snippet:x");
        assert_eq!(at("fr"), "snippet:x");
    }

    #[test]
    fn cycles_are_reported_once_with_the_chain() {
        let mut snippets = Snippets::default();
        snippets
            .insert("a", file(None, "A {% include \"b\" %}"))
            .unwrap();
        snippets
            .insert("b", file(None, "B\n  {% include \"a\" %}"))
            .unwrap();
        snippets
            .insert("c", file(None, "{% include \"c\" %}"))
            .unwrap();
        let cycles = snippets.cycles();
        let messages: Vec<_> = cycles.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "snippets include each other in a cycle: a -> b -> a",
                "snippets include each other in a cycle: c -> c"
            ]
        );
        assert_eq!(cycles[0].position, Some(Position { line: 2, column: 3 }));
    }

    #[test]
    fn names_are_never_paths() {
        for name in ["../x", "/etc/passwd", "a/b", "x.md", "", ".hidden", "a b"] {
            assert!(name_problem(name).is_some(), "{name}");
        }
        for name in ["verification", "tool-rules", "a.b_c"] {
            assert_eq!(name_problem(name), None, "{name}");
        }
    }
}
