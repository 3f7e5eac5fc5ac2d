//! gettext PO: one message per unit, the unit in `msgctxt`
//! (`greeting:body`), the pack in `Project-Id-Version` and the locale in
//! `Language`. A stale or untracked translation is `fuzzy`, a stale one
//! with the source it was made from in a comment; the template syntax to
//! keep is listed in a comment too.

use std::io::BufWriter;

use polib::catalog::Catalog as PoCatalog;
use polib::message::{Message, MessageFlags};
use polib::metadata::CatalogMetadata;

use crate::diagnostic::{Diagnostic, DiagnosticCode, printable};

use super::catalog::{Catalog, CatalogUnit, UnitState};
use super::protect::Piece;

pub(super) fn write(catalog: &Catalog) -> String {
    let metadata = CatalogMetadata {
        project_id_version: catalog.pack.clone(),
        language: catalog.locale.clone(),
        mime_version: "1.0".to_owned(),
        content_type: "text/plain; charset=UTF-8".to_owned(),
        content_transfer_encoding: "8bit".to_owned(),
        ..CatalogMetadata::default()
    };
    let mut po = PoCatalog::new(metadata);
    for unit in &catalog.units {
        po.append_or_update(message(unit));
    }
    let mut out = BufWriter::new(Vec::new());
    // Writing to memory cannot fail.
    let _ = polib::po_file::write(&po, &mut out);
    String::from_utf8(out.into_inner().unwrap_or_default()).unwrap_or_default()
}

fn message(unit: &CatalogUnit) -> Message {
    let mut comments = Vec::new();
    let codes: Vec<String> = unit
        .syntax
        .pieces(&unit.source)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Code(code) => Some(format!("`{}`", printable(code))),
            Piece::Text(_) => None,
        })
        .collect();
    if !codes.is_empty() {
        comments.push(format!("keep as written: {}", codes.join(", ")));
    }
    if let Some(previous) = &unit.previous_source {
        comments.push("stale: translated from this older source:".to_owned());
        comments.extend(previous.lines().map(|l| format!("| {}", printable(l))));
    }
    let mut flags = MessageFlags::new();
    if matches!(unit.state, UnitState::Stale | UnitState::Untracked) {
        flags.add_flag("fuzzy");
    }
    Message::build_singular()
        .with_msgctxt(unit.key())
        .with_msgid(unit.source.clone())
        .with_msgstr(unit.target.clone().unwrap_or_default())
        .with_extracted_comments(comments.join("\n"))
        .with_flags(flags)
        .done()
}

pub(super) fn read(text: &str) -> Result<Catalog, Diagnostic> {
    check_lines(text)?;
    let po = polib::po_file::parse_from_reader(text.as_bytes())
        .map_err(|e| invalid(format!("not a PO file: {}", printable(&e.to_string()))))?;
    let mut units = Vec::new();
    for message in po.messages() {
        // Comments after the last message read as an empty one.
        if message.msgctxt().is_none() && message.msgid().is_empty() {
            continue;
        }
        let Some(key) = message.msgctxt() else {
            return Err(invalid(format!(
                "message \"{}\" has no `msgctxt`, which names its unit",
                printable(message.msgid())
            )));
        };
        let (prompt, unit) = super::xliff::unit_key(key)?;
        let msgstr = message.msgstr().unwrap_or_default();
        let translated = !message.is_fuzzy() && !msgstr.is_empty();
        units.push(CatalogUnit {
            prompt,
            unit,
            source: message.msgid().to_owned(),
            target: (!msgstr.is_empty()).then(|| msgstr.to_owned()),
            state: match translated {
                true => UnitState::Translated,
                false => UnitState::New,
            },
            previous_source: None,
            syntax: Default::default(),
        });
    }
    if po.metadata.project_id_version.is_empty() || po.metadata.language.is_empty() {
        return Err(invalid(
            "the header names no pack (`Project-Id-Version`) or no locale (`Language`)".to_owned(),
        ));
    }
    Ok(Catalog {
        pack: po.metadata.project_id_version.clone(),
        source_locale: String::new(),
        locale: po.metadata.language.clone(),
        units,
    })
}

/// Every line is PO syntax polib reads: a comment, a keyword and a quoted
/// string, a quoted continuation of a field, or blank. (polib's parser
/// slices lines it assumes are well-formed, so this runs first; it also
/// names the line.)
fn check_lines(text: &str) -> Result<(), Diagnostic> {
    const KEYWORDS: [&str; 4] = ["msgctxt ", "msgid ", "msgid_plural ", "msgstr "];
    const COMMENTS: [&str; 4] = ["# ", "#. ", "#: ", "#, "];
    let quoted = |s: &str| s.len() >= 2 && s.starts_with('"') && s.ends_with('"');
    fn keyword(line: &str) -> Option<&str> {
        KEYWORDS
            .iter()
            .find_map(|k| line.strip_prefix(k))
            .or_else(|| {
                let rest = line.strip_prefix("msgstr[")?;
                let (n, rest) = rest.split_once("] ")?;
                (n.len() == 1 && n.bytes().all(|b| b.is_ascii_digit())).then_some(rest)
            })
    }
    // Whether a field has started: what a continuation line adds to.
    let mut in_field = false;
    for (number, line) in (1..).zip(text.split('\n')) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let valid = if line.is_empty() {
            true
        } else if line.starts_with('#') {
            in_field |= COMMENTS.iter().any(|c| line.starts_with(c));
            line != "#" || in_field
        } else if line.starts_with('"') {
            in_field && quoted(line)
        } else if let Some(rest) = keyword(line) {
            in_field = true;
            quoted(rest)
        } else {
            false
        };
        if !valid {
            let lines = crate::diagnostic::LineIndex::new(text);
            let start = lines.offset(crate::diagnostic::Position {
                line: number,
                column: 1,
            });
            return Err(invalid(format!(
                "line {number} is not PO syntax: \"{}\"",
                crate::diagnostic::abbreviate(&printable(line), 60)
            ))
            .at(&lines, start..start + line.len()));
        }
    }
    Ok(())
}

fn invalid(message: String) -> Diagnostic {
    Diagnostic::error(DiagnosticCode::Translation, message).suggest(Some(
        "export the file again with `promptreg l10n export`".to_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lines_polib_would_slice_wrongly_are_errors_naming_the_line() {
        for (text, line) in [
            ("msgid \"\"\nmsgstr \"Language: ja\\n\"\n\n\"", 4),
            ("\"orphan\"", 1),
            ("msgid \"é", 1),
            ("#\n", 1),
            ("msgid", 1),
            ("hello", 1),
        ] {
            let error = read(text).unwrap_err();
            assert!(
                error
                    .message
                    .starts_with(&format!("line {line} is not PO syntax")),
                "{text:?}: {}",
                error.message
            );
        }
    }

    proptest! {
        /// No text makes the reader panic: PO-like fragments in any order.
        #[test]
        fn any_text_reads_or_fails_cleanly(parts in proptest::collection::vec(
            prop_oneof![
                Just("msgid "), Just("msgstr "), Just("msgctxt "), Just("msgstr[1] "),
                Just("\""), Just("\\"), Just("#"), Just("# "), Just("#, fuzzy"),
                Just("\n"), Just("\r\n"), Just("é"), Just("x"), Just("Language: ja\\n"),
                Just("Project-Id-Version: p\\n"),
            ],
            0..40,
        )) {
            let _ = read(&parts.concat());
        }
    }
}
