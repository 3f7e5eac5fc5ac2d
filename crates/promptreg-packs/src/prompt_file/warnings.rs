//! Warnings about a prompt file that loads but will not do what its author
//! meant, shared by user files and pack files.

use std::collections::BTreeSet;
use std::path::Path;

use crate::diagnostic::{Diagnostic, DiagnosticCode, LineIndex};
use crate::front_matter::Document;
use crate::renderer::Renderer;
use crate::template::Template;

/// Warnings about one prompt file that loads but will not do what its
/// author meant: template syntax in a file that is not a template,
/// declared variables that none of `parts` (the file's body and pinned
/// blocks, compiled) uses, and bidirectional-text controls.
pub(crate) fn prompt_file_warnings(
    doc: &Document<'_>,
    text: &str,
    path: &Path,
    parts: &[&Renderer],
) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    warnings.extend(literal_template_syntax(doc, text, path));
    warnings.extend(unused_variables(doc, text, path, parts));
    warnings.extend(bidi_controls(text, path));
    warnings
}

/// Whether `c` overrides or isolates the direction of text (U+202A to
/// U+202E, U+2066 to U+2069): text holding one shows in another order
/// than a model reads it. The marks (U+200E, U+200F) only nudge and are
/// left alone.
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// One warning for a file holding bidirectional-text controls, at the
/// first.
fn bidi_controls(text: &str, path: &Path) -> Option<Diagnostic> {
    let (at, first) = text.char_indices().find(|&(_, c)| is_bidi_control(c))?;
    let count = text.chars().filter(|&c| is_bidi_control(c)).count();
    let d = Diagnostic::warning(
        DiagnosticCode::BidiControl,
        format!(
            "{} (the first U+{:04X}): the text shows in another order than the model reads it",
            bidi_count(count),
            u32::from(first)
        ),
    )
    .in_file(path)
    .at(&LineIndex::new(text), at..at + first.len_utf8())
    .suggest(Some(BIDI_SUGGESTION.to_owned()));
    Some(d)
}

/// "1 bidirectional-text control character", "3 … characters".
pub(crate) fn bidi_count(count: usize) -> String {
    let s = if count == 1 { "" } else { "s" };
    format!("{count} bidirectional-text control character{s}")
}

pub(crate) const BIDI_SUGGESTION: &str =
    "remove them unless the text needs them: a reviewer does not see them, the model does";

/// `{{` or `{%` in a file that does not say whether it is a template: it
/// is sent as those characters, most likely not what was meant.
fn literal_template_syntax(doc: &Document<'_>, text: &str, path: &Path) -> Option<Diagnostic> {
    if doc.meta.template.is_some() {
        return None;
    }
    let (at, marker) = ["{{", "{%"]
        .into_iter()
        .filter_map(|marker| Some((doc.body.find(marker)?, marker)))
        .min()?;
    let start = doc.body_offset(text) + at;
    let d = Diagnostic::warning(
        DiagnosticCode::TemplateSyntaxInText,
        format!("`{marker}` is sent as written: the file is not marked as a template"),
    )
    .in_file(path)
    .at(&LineIndex::new(text), start..start + marker.len())
    .suggest(Some(
        "to fill it in, give the file front matter with `template: true`; to send the braces as they are, say `template: false`".to_owned(),
    ));
    Some(d)
}

/// A warning for every declared variable that no part of the file uses.
fn unused_variables(
    doc: &Document<'_>,
    text: &str,
    path: &Path,
    parts: &[&Renderer],
) -> Vec<Diagnostic> {
    let used: BTreeSet<String> = parts
        .iter()
        .filter_map(|part| part.computed::<crate::template::Template>())
        .flat_map(Template::used_variables)
        .collect();
    let suggestion = match doc.is_template() {
        true => "use it in the text, or remove its declaration",
        false => "the file is not a template: add `template: true` to use it, or remove it",
    };
    let lines = LineIndex::new(text);
    doc.variables()
        .into_iter()
        .filter(|v| !used.contains(&v.name))
        .map(|v| {
            let d = Diagnostic::warning(
                DiagnosticCode::UnusedVariable,
                format!(
                    "variable `{}` is declared but no part of the file uses it",
                    v.name
                ),
            )
            .in_file(path)
            .key_path(format!("variables.{}", v.name))
            .suggest(Some(suggestion.to_owned()));
            match doc.variable_span(&v.name) {
                Some(span) => d.at(&lines, span),
                None => d,
            }
        })
        .collect()
}
