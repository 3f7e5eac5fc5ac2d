//! What a locale variant translates: the text of its default (body and
//! pinned blocks) when it was translated, recorded in the variant's front
//! matter, and whether the default has changed since.
//!
//! ```text
//! ---
//! translated_from:
//!   digest: "5b1f0c2a9e4d7f63"
//!   body: |
//!     Work on the goal until every task is done.
//!   pin_tail:
//!     - Verify every task before you complete the goal.
//! ---
//! すべてのタスクが終わるまでゴールに取り組んでください。
//! ```
//!
//! The record keeps the source text itself, not only its digest, so that a
//! stale variant shows the change a translator must carry over wherever the
//! pack is (a folder, a store version, a followed bundle), with nothing
//! beside the file.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::diagnostic::{Diagnostic, DiagnosticCode, LineIndex};
use crate::front_matter::{Document, PIN_HEAD, PIN_TAIL, is_fence};
use crate::id::PromptId;
use crate::locale::Locale;

/// The front matter key of a variant's record.
pub const TRANSLATED_FROM: &str = "translated_from";

/// The translatable text of a prompt file: its body and pinned blocks, as
/// written (template syntax included).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceText {
    /// The body (a chat file's messages, as one text).
    pub body: String,
    /// The pinned blocks before the body.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pin_head: Vec<String>,
    /// The pinned blocks after the body.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pin_tail: Vec<String>,
}

/// One translatable text of a prompt: its body or one pinned block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum UnitName {
    /// Pinned block `n` before the body, from 1.
    PinHead(usize),
    /// The body.
    Body,
    /// Pinned block `n` after the body, from 1.
    PinTail(usize),
}

impl UnitName {
    /// Parses `body`, `pin_head.1`, `pin_tail.2`.
    pub fn parse(name: &str) -> Option<UnitName> {
        if name == "body" {
            return Some(UnitName::Body);
        }
        let (side, n) = name.split_once('.')?;
        let n: usize = n.parse().ok().filter(|n| *n >= 1)?;
        match side {
            PIN_HEAD => Some(UnitName::PinHead(n)),
            PIN_TAIL => Some(UnitName::PinTail(n)),
            _ => None,
        }
    }
}

impl fmt::Display for UnitName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitName::PinHead(n) => write!(f, "{PIN_HEAD}.{n}"),
            UnitName::Body => f.write_str("body"),
            UnitName::PinTail(n) => write!(f, "{PIN_TAIL}.{n}"),
        }
    }
}

impl SourceText {
    /// The translatable text of a parsed file.
    pub(crate) fn of(doc: &Document<'_>) -> SourceText {
        SourceText {
            body: doc.body.to_owned(),
            pin_head: doc.pin_texts(PIN_HEAD).to_vec(),
            pin_tail: doc.pin_texts(PIN_TAIL).to_vec(),
        }
    }

    /// The translatable text of a prompt file's `text`, front matter
    /// included; `None` when its front matter does not parse.
    ///
    /// ```
    /// use promptreg_packs::pack::SourceText;
    ///
    /// let source = SourceText::of_file("---\npin_tail: Be brief.\n---\nHello!\n").unwrap();
    /// assert_eq!((source.body.as_str(), source.pin_tail.len()), ("Hello!\n", 1));
    /// ```
    pub fn of_file(text: &str) -> Option<SourceText> {
        Document::parse(text, Path::new(""))
            .ok()
            .map(|doc| SourceText::of(&doc))
    }

    /// Its units in the order a render composes them: pinned head blocks,
    /// the body, pinned tail blocks.
    pub fn units(&self) -> impl Iterator<Item = (UnitName, &str)> {
        let head = (1..).zip(&self.pin_head);
        let tail = (1..).zip(&self.pin_tail);
        head.map(|(n, t)| (UnitName::PinHead(n), t.as_str()))
            .chain([(UnitName::Body, self.body.as_str())])
            .chain(tail.map(|(n, t)| (UnitName::PinTail(n), t.as_str())))
    }

    /// The text of one unit, if it has it.
    pub fn unit(&self, name: UnitName) -> Option<&str> {
        match name {
            UnitName::PinHead(n) => self.pin_head.get(n.checked_sub(1)?).map(String::as_str),
            UnitName::Body => Some(&self.body),
            UnitName::PinTail(n) => self.pin_tail.get(n.checked_sub(1)?).map(String::as_str),
        }
    }

    /// The content digest: SHA-256 over every unit's name and text, each
    /// length-prefixed, as hex, its first 16 digits (64 bits, which tell
    /// one text of a prompt from another, not an adversary's).
    pub fn digest(&self) -> String {
        let mut hash = Sha256::new();
        for (name, text) in self.units() {
            let name = name.to_string();
            for part in [name.as_bytes(), text.as_bytes()] {
                hash.update((part.len() as u64).to_be_bytes());
                hash.update(part);
            }
        }
        let digest = hash.finalize();
        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
    }

    /// What changed from `older` to this text, unit by unit, as a unified
    /// diff under each changed unit's name (`--- body`).
    pub fn diff_since(&self, older: &SourceText) -> String {
        let mut out = String::new();
        let mut names: Vec<UnitName> = older.units().chain(self.units()).map(|u| u.0).collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let (old, new) = (
                older.unit(name).unwrap_or(""),
                self.unit(name).unwrap_or(""),
            );
            if old == new {
                continue;
            }
            out.push_str(&format!("--- {name}\n"));
            let diff = similar::TextDiff::from_lines(old, new);
            for hunk in diff.unified_diff().context_radius(1).iter_hunks() {
                out.push_str(&format!("{}\n", hunk.header()));
                for change in hunk.iter_changes() {
                    let sign = match change.tag() {
                        similar::ChangeTag::Delete => '-',
                        similar::ChangeTag::Insert => '+',
                        similar::ChangeTag::Equal => ' ',
                    };
                    let line = change.value().trim_end_matches('\n');
                    out.push_str(&format!("{sign}{}\n", crate::diagnostic::printable(line)));
                }
            }
        }
        out
    }

    /// The record's YAML under [`TRANSLATED_FROM`], its digest first.
    fn to_yaml(&self) -> String {
        // Quoted: a digest of digits alone would read as a number.
        let mut out = format!("{TRANSLATED_FROM}:\n  digest: \"{}\"\n", self.digest());
        out.push_str(&format!("  body: {}\n", yaml_text(&self.body, 4)));
        for (key, blocks) in [(PIN_HEAD, &self.pin_head), (PIN_TAIL, &self.pin_tail)] {
            if blocks.is_empty() {
                continue;
            }
            out.push_str(&format!("  {key}:\n"));
            for block in blocks {
                out.push_str(&format!("    - {}\n", yaml_text(block, 6)));
            }
        }
        out
    }
}

/// The state of a locale variant's translation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Translation {
    /// Translated from the default's current text.
    Current,
    /// Translated from an older text of the default, kept here.
    Stale {
        /// The default's text it was translated from.
        from: Box<SourceText>,
    },
    /// The variant records no source: whether it is current is unknown.
    Untracked,
}

impl Translation {
    /// A short name for listings: `current`, `stale`, `untracked`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Translation::Current => "current",
            Translation::Stale { .. } => "stale",
            Translation::Untracked => "untracked",
        }
    }

    /// Whether the default changed since the variant was translated.
    pub fn is_stale(&self) -> bool {
        matches!(self, Translation::Stale { .. })
    }
}

/// A record as written in front matter.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    digest: String,
    #[serde(default)]
    body: String,
    #[serde(default)]
    pin_head: Vec<String>,
    #[serde(default)]
    pin_tail: Vec<String>,
}

/// The state of the variant `doc` against `source`, its default's current
/// text; an error for a malformed record.
pub(crate) fn state(
    doc: &Document<'_>,
    source: &SourceText,
    path: &Path,
) -> Result<Translation, Diagnostic> {
    let Some(value) = &doc.meta.translated_from else {
        return Ok(Translation::Untracked);
    };
    let record: Record = serde_json::from_value(value.clone()).map_err(|e| {
        let d = Diagnostic::error(
            DiagnosticCode::FrontMatter,
            format!("`{TRANSLATED_FROM}` is not a translation record: {e}"),
        )
        .in_file(path)
        .suggest(Some(
            "let `promptreg l10n mark-current` or `l10n import` write it".to_owned(),
        ));
        match doc.key_span(TRANSLATED_FROM) {
            Some(span) => d.at(&LineIndex::new(doc.text()), span),
            None => d,
        }
    })?;
    if record.digest == source.digest() {
        return Ok(Translation::Current);
    }
    let from = SourceText {
        body: record.body,
        pin_head: record.pin_head,
        pin_tail: record.pin_tail,
    };
    Ok(Translation::Stale {
        from: Box::new(from),
    })
}

/// The warning about a stale variant: what changed in its default since.
pub(crate) fn stale_warning(
    id: &PromptId,
    locale: &Locale,
    path: &Path,
    from: &SourceText,
    now: &SourceText,
) -> Diagnostic {
    Diagnostic::warning(
        DiagnosticCode::StaleTranslation,
        format!("the `{locale}` variant of `{id}` is stale: its default changed since it was translated"),
    )
    .with_detail(now.diff_since(from))
    .in_file(path)
    .suggest(Some(format!(
        "carry the change over to the translation, then run `promptreg l10n mark-current {id} {locale}`"
    )))
}

/// One note for the variants that record no source, if any.
pub(crate) fn untracked_note(untracked: &[&Path]) -> Option<Diagnostic> {
    let (first, rest) = untracked.split_first()?;
    let message = match rest.len() {
        0 => format!(
            "1 locale variant records no source ({}): whether it is current is unknown",
            first.display()
        ),
        n => format!(
            "{} locale variants record no source ({} and {n} more): whether they are current is unknown",
            n + 1,
            first.display()
        ),
    };
    Some(
        Diagnostic::note(DiagnosticCode::UntrackedTranslation, message).suggest(Some(
            "once a variant is up to date, `promptreg l10n mark-current ID LOCALE` records what it translates"
                .to_owned(),
        )),
    )
}

/// The variant file `text` with its record set to `source`, the text of
/// its default it now translates: the other front matter keys and the
/// body as they were. What `promptreg l10n mark-current` writes.
///
/// ```
/// use promptreg_packs::pack::{SourceText, translation::record_source};
///
/// let source = SourceText { body: "Hello!".into(), ..SourceText::default() };
/// let marked = record_source("こんにちは！", &source);
/// assert!(marked.starts_with("---\ntranslated_from:\n  digest: \""));
/// assert!(marked.ends_with("  body: |-\n    Hello!\n---\nこんにちは！"));
/// ```
pub fn record_source(text: &str, source: &SourceText) -> String {
    set_front_matter_keys(text, &[(TRANSLATED_FROM, Some(source.to_yaml()))])
}

/// `text` with each top-level front matter `key` replaced by its YAML
/// (which starts with `key:`), or removed for `None`; a file without front
/// matter gets one. Other keys, comments and the body are kept as written.
pub(crate) fn set_front_matter_keys(text: &str, keys: &[(&str, Option<String>)]) -> String {
    let (yaml, body) = split_front_matter(text);
    let mut kept = String::new();
    let mut skipping = false;
    for line in yaml.split_inclusive('\n') {
        let continues = line.starts_with([' ', '\t', '-']) || line.trim().is_empty();
        if skipping && continues {
            continue;
        }
        skipping = keys.iter().any(|(key, _)| is_key_line(line, key));
        if !skipping {
            kept.push_str(line);
        }
    }
    if !kept.is_empty() && !kept.ends_with('\n') {
        kept.push('\n');
    }
    for yaml in keys.iter().filter_map(|(_, yaml)| yaml.as_deref()) {
        kept.push_str(yaml);
    }
    if kept.is_empty() {
        return body.to_owned();
    }
    format!("---\n{kept}---\n{body}")
}

/// Whether `line` starts top-level key `key`.
fn is_key_line(line: &str, key: &str) -> bool {
    line.strip_prefix(key)
        .is_some_and(|rest| rest.trim_start().starts_with(':'))
}

/// A file's front matter YAML (empty when it has none) and its body.
pub(crate) fn split_front_matter(text: &str) -> (&str, &str) {
    let mut lines = text.split_inclusive('\n');
    if lines.next().is_none_or(|l| !is_fence(l)) {
        return ("", text);
    }
    let start = text.find('\n').map_or(text.len(), |i| i + 1);
    let mut offset = start;
    for line in lines {
        if is_fence(line) {
            return (&text[start..offset], &text[offset + line.len()..]);
        }
        offset += line.len();
    }
    ("", text)
}

/// Pinned blocks as front matter key `key` (a list), or `None` for none.
pub(crate) fn pins_yaml(key: &str, blocks: &[String]) -> Option<String> {
    (!blocks.is_empty()).then(|| {
        let mut yaml = format!("{key}:\n");
        for block in blocks {
            yaml.push_str(&format!("  - {}\n", yaml_text(block, 4)));
        }
        yaml
    })
}

/// `text` as a YAML scalar after `key: `: a literal block (`|`), its lines
/// indented by `indent` spaces, when that keeps it exactly; otherwise a
/// double-quoted string (JSON's escapes are YAML's).
pub(crate) fn yaml_text(text: &str, indent: usize) -> String {
    // A literal block takes its indentation from its first line that is
    // not empty, which must not start with blanks of its own.
    let first_line = text.split('\n').find(|line| !line.is_empty());
    let literal = first_line.is_some_and(|line| !line.starts_with([' ', '\t']))
        && !text.trim().is_empty()
        && text.chars().all(|c| c == '\n' || !c.is_control())
        && !text.contains('\u{feff}');
    if !literal {
        return serde_json::Value::String(text.to_owned()).to_string();
    }
    let body = text.trim_end_matches('\n');
    let chomp = match text.len() - body.len() {
        0 => "|-",
        1 => "|",
        _ => "|+",
    };
    let pad = " ".repeat(indent);
    let mut out = chomp.to_owned();
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
    }
    if chomp == "|+" {
        for _ in 1..text.len() - body.len() {
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(body: &str, head: &[&str]) -> SourceText {
        SourceText {
            body: body.into(),
            pin_head: head.iter().map(|s| (*s).to_owned()).collect(),
            pin_tail: Vec::new(),
        }
    }

    #[test]
    fn the_digest_changes_with_any_unit_and_its_place() {
        let a = source("Hello", &["Rule"]);
        assert_eq!(a.digest().len(), 16);
        assert_ne!(a.digest(), source("Hello!", &["Rule"]).digest());
        assert_ne!(a.digest(), source("Hello", &["Rule!"]).digest());
        let moved = SourceText {
            pin_tail: vec!["Rule".into()],
            ..source("Hello", &[])
        };
        assert_ne!(a.digest(), moved.digest());
    }

    #[test]
    fn a_diff_names_each_changed_unit() {
        let old = source("one\ntwo\n", &["Rule"]);
        let new = source("one\n2\n", &["Rule"]);
        assert_eq!(
            new.diff_since(&old),
            "--- body\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
        );
    }

    #[test]
    fn every_text_survives_its_yaml() {
        for text in [
            "plain",
            "two\nlines\n",
            "ends\n\n\n",
            " leading space",
            "",
            "   ",
            "tab\there",
            "ctrl\u{1}char",
            "key: value # not a comment",
            "{{ name }} and {% if x %}y{% endif %}",
            "a\n\n\n\nb",
            "\n\nafter blank lines\n  indented\n",
            "\n  indented first",
            "- dash",
        ] {
            let record = source(text, &[text]);
            let file = record_source("body\n", &record);
            let doc = Document::parse(&file, Path::new("x.ja.md")).expect(&file);
            let back: Record =
                serde_json::from_value(doc.meta.translated_from.clone().expect(&file)).unwrap();
            assert_eq!(back.body, text, "{file}");
            assert_eq!(back.pin_head, [text], "{file}");
            assert_eq!(back.digest, record.digest());
            assert_eq!(doc.body, "body\n");
        }
    }

    #[test]
    fn a_record_replaces_the_old_one_and_keeps_the_rest() {
        let file = "---\n# a comment\nmodel:\n  temperature: 0.1\ntranslated_from:\n  digest: x\n  body: old\npin_head:\n- Regel\n---\nText\n";
        let new = record_source(file, &source("new", &[]));
        assert!(new.starts_with("---\n# a comment\nmodel:\n  temperature: 0.1\npin_head:\n- Regel\ntranslated_from:\n  digest: "));
        assert!(new.ends_with("  body: |-\n    new\n---\nText\n"));
        assert_eq!(
            record_source("Text", &source("b", &[])),
            format!("---\n{}---\nText", source("b", &[]).to_yaml())
        );
    }
}
