//! XLIFF 2.0: one `<file>` for the pack (`original` is its name), one
//! `<unit>` per translatable text (`id` is `<prompt>:<unit>`). Template
//! tags and chat headings are `<ph>` inline codes whose text is in the
//! unit's `<originalData>`, so a translator's tool shows them and keeps
//! them; a character XML cannot carry is a `<cp hex="…"/>`. States:
//! `initial` (new, or stale with a `previous-source` note), `translated`
//! (translated, not recorded as current), `final` (current).

use quick_xml::XmlVersion;
use quick_xml::escape::{escape, resolve_predefined_entity};
use quick_xml::events::{BytesStart, Event};

use crate::diagnostic::{Diagnostic, DiagnosticCode, printable};
use crate::pack::UnitName;

use super::catalog::{Catalog, CatalogUnit, UnitState, check_unit_count};
use super::protect::Piece;

const NAMESPACE: &str = "urn:oasis:names:tc:xliff:document:2.0";

pub(super) fn write(catalog: &Catalog) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<xliff xmlns=\"{NAMESPACE}\" version=\"2.0\" srcLang=\"{}\" trgLang=\"{}\">\n",
        escape(&catalog.source_locale),
        escape(&catalog.locale)
    ));
    out.push_str(&format!(
        "  <file id=\"f1\" original=\"{}\">\n",
        escape(&catalog.pack)
    ));
    for unit in &catalog.units {
        write_unit(&mut out, unit);
    }
    out.push_str("  </file>\n</xliff>\n");
    out
}

fn write_unit(out: &mut String, unit: &CatalogUnit) {
    out.push_str(&format!("    <unit id=\"{}\">\n", escape(unit.key())));
    if let Some(previous) = &unit.previous_source {
        out.push_str("      <notes>\n        <note category=\"previous-source\">");
        push_text(out, previous);
        out.push_str("</note>\n      </notes>\n");
    }
    let pieces = unit.syntax.pieces(&unit.source);
    let codes: Vec<&str> = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Code(code) => Some(*code),
            Piece::Text(_) => None,
        })
        .collect();
    if !codes.is_empty() {
        out.push_str("      <originalData>\n");
        for (n, code) in (1..).zip(&codes) {
            out.push_str(&format!("        <data id=\"d{n}\">"));
            push_text(out, code);
            out.push_str("</data>\n");
        }
        out.push_str("      </originalData>\n");
    }
    let state = match unit.state {
        UnitState::New | UnitState::Stale => "initial",
        UnitState::Untracked => "translated",
        UnitState::Translated => "final",
    };
    out.push_str(&format!(
        "      <segment state=\"{state}\">\n        <source>"
    ));
    push_pieces(out, &pieces, &codes);
    out.push_str("</source>\n");
    if let Some(target) = &unit.target {
        out.push_str("        <target>");
        push_pieces(out, &unit.syntax.pieces(target), &codes);
        out.push_str("</target>\n");
    }
    out.push_str("      </segment>\n    </unit>\n");
}

/// Text and codes: a code of the source is a `<ph>` to its data; one the
/// source lacks (a stale target's) stays text, for the import to refuse.
fn push_pieces(out: &mut String, pieces: &[Piece<'_>], codes: &[&str]) {
    let mut next_ph = 1;
    for piece in pieces {
        match piece {
            Piece::Code(code) => match codes.iter().position(|c| c == code) {
                Some(i) => {
                    out.push_str(&format!(
                        "<ph id=\"{next_ph}\" dataRef=\"d{}\" disp=\"{}\"/>",
                        i + 1,
                        escape(printable(code))
                    ));
                    next_ph += 1;
                }
                None => push_text(out, code),
            },
            Piece::Text(text) => push_text(out, text),
        }
    }
}

/// Escaped text; characters XML 1.0 cannot carry (and `\r`, which a
/// parser would turn into `\n`) as `<cp>`.
fn push_text(out: &mut String, text: &str) {
    let mut run = String::new();
    for c in text.chars() {
        let carried = matches!(c, '\t' | '\n')
            || (c >= ' ' && !matches!(c, '\u{FFFE}' | '\u{FFFF}'))
                && !('\u{7F}'..='\u{9F}').contains(&c);
        if carried {
            run.push(c);
        } else {
            out.push_str(&escape(std::mem::take(&mut run)));
            out.push_str(&format!("<cp hex=\"{:04X}\"/>", u32::from(c)));
        }
    }
    out.push_str(&escape(run));
}

/// Where text read goes.
#[derive(Clone, Copy, PartialEq)]
enum Into {
    Nowhere,
    Source,
    Target,
    Data,
}

/// A piece of a unit's content read: text, or a reference to its data.
enum Read {
    Text(String),
    Ref(String),
}

#[derive(Default)]
struct UnitRead {
    key: String,
    state: String,
    data: Vec<(String, String)>,
    source: Vec<Read>,
    target: Option<Vec<Read>>,
}

pub(super) fn read(text: &str) -> Result<Catalog, Diagnostic> {
    let mut reader = quick_xml::Reader::from_str(text);
    let mut catalog = Catalog {
        pack: String::new(),
        source_locale: String::new(),
        locale: String::new(),
        units: Vec::new(),
    };
    let (mut seen_root, mut closed_root) = (false, false);
    let mut unit: Option<UnitRead> = None;
    let mut into = Into::Nowhere;
    loop {
        let at = reader.buffer_position();
        let event = reader.read_event().map_err(|e| {
            let error = printable(&e.to_string()).into_owned();
            located(
                text,
                reader.error_position(),
                format!("not valid XML: {error}"),
            )
        })?;
        match event {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == "xliff" => {
                seen_root = true;
                catalog.source_locale = attribute(&e, "srcLang").unwrap_or_default();
                catalog.locale = attribute(&e, "trgLang").unwrap_or_default();
            }
            Event::Start(e) if e.local_name().as_ref() == "file" => {
                catalog.pack = attribute(&e, "original").unwrap_or_default();
            }
            Event::Start(e) if e.local_name().as_ref() == "unit" => {
                let key = attribute(&e, "id")
                    .ok_or_else(|| located(text, at, "a `<unit>` has no `id`".to_owned()))?;
                unit = Some(UnitRead {
                    key,
                    ..UnitRead::default()
                });
            }
            Event::Start(e) if e.local_name().as_ref() == "data" => {
                if let Some(unit) = &mut unit {
                    let id = attribute(&e, "id").unwrap_or_default();
                    unit.data.push((id, String::new()));
                    into = Into::Data;
                }
            }
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == "segment" => {
                if let Some(unit) = &mut unit {
                    unit.state = attribute(&e, "state").unwrap_or_else(|| "initial".into());
                }
            }
            Event::Start(e) if e.local_name().as_ref() == "source" => into = Into::Source,
            Event::Start(e) if e.local_name().as_ref() == "target" => {
                if let Some(unit) = &mut unit {
                    unit.target = Some(Vec::new());
                }
                into = Into::Target;
            }
            Event::Empty(e) if e.local_name().as_ref() == "target" => {
                if let Some(unit) = &mut unit {
                    unit.target = Some(Vec::new());
                }
            }
            Event::Empty(e) if e.local_name().as_ref() == "ph" => {
                let reference = attribute(&e, "dataRef")
                    .ok_or_else(|| located(text, at, "a `<ph>` has no `dataRef`".to_owned()))?;
                push(&mut unit, into, Read::Ref(reference));
            }
            Event::Empty(e) if e.local_name().as_ref() == "cp" => {
                let c = attribute(&e, "hex")
                    .and_then(|hex| u32::from_str_radix(&hex, 16).ok())
                    .and_then(char::from_u32)
                    .ok_or_else(|| located(text, at, "a `<cp>` names no character".to_owned()))?;
                push(&mut unit, into, Read::Text(c.to_string()));
            }
            Event::Text(e) => {
                let content = e.xml_content(XmlVersion::Implicit1_0).into_owned();
                push(&mut unit, into, Read::Text(content));
            }
            Event::CData(e) => {
                let content = e.xml_content(XmlVersion::Implicit1_0).into_owned();
                push(&mut unit, into, Read::Text(content));
            }
            Event::GeneralRef(e) => {
                let resolved = match e.resolve_char_ref() {
                    Ok(Some(c)) => Some(c.to_string()),
                    _ => {
                        let name = e.xml_content(XmlVersion::Implicit1_0);
                        resolve_predefined_entity(&name).map(str::to_owned)
                    }
                };
                let resolved = resolved.ok_or_else(|| {
                    located(text, at, "an entity XLIFF does not define".to_owned())
                })?;
                push(&mut unit, into, Read::Text(resolved));
            }
            Event::End(e) => match e.local_name().as_ref() {
                "source" | "target" | "data" => into = Into::Nowhere,
                "unit" => {
                    if let Some(read) = unit.take() {
                        check_unit_count(catalog.units.len())?;
                        catalog.units.push(finish(text, at, read)?);
                    }
                }
                "xliff" => closed_root = true,
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    if !seen_root || !closed_root {
        let message = match seen_root {
            true => "the file ends before `</xliff>`: it is truncated",
            false => "not an XLIFF file: no `<xliff>` element",
        };
        return Err(located(text, text.len() as u64, message.to_owned()));
    }
    Ok(catalog)
}

fn push(unit: &mut Option<UnitRead>, into: Into, piece: Read) {
    let Some(unit) = unit else { return };
    match (into, piece) {
        (Into::Source, piece) => unit.source.push(piece),
        (Into::Target, piece) => unit.target.get_or_insert_with(Vec::new).push(piece),
        (Into::Data, Read::Text(text)) => {
            if let Some((_, data)) = unit.data.last_mut() {
                data.push_str(&text);
            }
        }
        _ => {}
    }
}

/// A unit read: its references resolved to its data.
fn finish(text: &str, at: u64, read: UnitRead) -> Result<CatalogUnit, Diagnostic> {
    let (prompt, unit) = unit_key(&read.key)?;
    let resolve = |pieces: &[Read]| -> Result<String, Diagnostic> {
        let mut out = String::new();
        for piece in pieces {
            match piece {
                Read::Text(t) => out.push_str(t),
                Read::Ref(id) => {
                    let data = read.data.iter().find(|(d, _)| d == id).ok_or_else(|| {
                        located(
                            text,
                            at,
                            format!(
                                "unit `{}`: a `<ph>` refers to data `{}` the unit does not have",
                                printable(&read.key),
                                printable(id)
                            ),
                        )
                    })?;
                    out.push_str(&data.1);
                }
            }
        }
        Ok(out)
    };
    let source = resolve(&read.source)?;
    let target = read.target.as_deref().map(resolve).transpose()?;
    let done = matches!(read.state.as_str(), "translated" | "reviewed" | "final");
    let state = match done && target.is_some() {
        true => UnitState::Translated,
        false => UnitState::New,
    };
    Ok(CatalogUnit {
        prompt,
        unit,
        source,
        target,
        state,
        previous_source: None,
        syntax: Default::default(),
    })
}

/// A unit's key, `<prompt>:<unit>`, split.
pub(super) fn unit_key(key: &str) -> Result<(String, UnitName), Diagnostic> {
    let parsed = key
        .rsplit_once(':')
        .and_then(|(prompt, unit)| Some((prompt.to_owned(), UnitName::parse(unit)?)));
    parsed.ok_or_else(|| {
        Diagnostic::error(
            DiagnosticCode::Translation,
            format!(
                "unit `{}` is not `<prompt>:<unit>` (`greeting:body`, `greeting:pin_head.1`)",
                printable(key)
            ),
        )
        .suggest(Some(
            "export the file again with `promptreg l10n export`".to_owned(),
        ))
    })
}

fn attribute(e: &BytesStart<'_>, name: &str) -> Option<String> {
    let attr = e.try_get_attribute(name).ok().flatten()?;
    Some(
        attr.normalized_value(XmlVersion::Implicit1_0)
            .ok()?
            .into_owned(),
    )
}

/// A problem at byte `offset` of the file.
fn located(text: &str, offset: u64, message: String) -> Diagnostic {
    let lines = crate::diagnostic::LineIndex::new(text);
    let start = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(text.len());
    let start = (0..=start)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    Diagnostic::error(DiagnosticCode::Translation, message)
        .at(&lines, start..start)
        .suggest(Some(
            "export the file again with `promptreg l10n export`".to_owned(),
        ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// No text makes the reader panic: XLIFF-like fragments in any order.
        #[test]
        fn any_text_reads_or_fails_cleanly(parts in proptest::collection::vec(
            prop_oneof![
                Just("<xliff trgLang=\"ja\">"), Just("</xliff>"), Just("<file original=\"p\">"),
                Just("<unit id=\"p:body\">"), Just("<unit id=\"p:pin_head.0\">"), Just("</unit>"),
                Just("<segment state=\"final\">"), Just("<source>"), Just("</source>"),
                Just("<target>"), Just("</target>"), Just("<target/>"), Just("<ph dataRef=\"d1\"/>"),
                Just("<originalData><data id=\"d1\">{{ x }}</data></originalData>"),
                Just("<cp hex=\"1\"/>"), Just("<cp hex=\"D800\"/>"), Just("&amp;"), Just("&#0;"),
                Just("&nope;"), Just("é"), Just("<"), Just("\r\n"),
            ],
            0..40,
        )) {
            let _ = read(&parts.concat());
        }
    }

    #[test]
    fn a_truncated_file_and_a_dangling_reference_are_errors() {
        let unit = "<xliff trgLang=\"ja\"><file original=\"p\"><unit id=\"p:body\"><segment><source><ph id=\"1\" dataRef=\"d9\"/></source></segment></unit></file></xliff>";
        assert!(
            read(unit)
                .unwrap_err()
                .message
                .contains("refers to data `d9`")
        );
        assert!(
            read("<xliff trgLang=\"ja\"><file original=\"p\">")
                .unwrap_err()
                .message
                .contains("truncated")
        );
    }
}
