//! gettext PO: one message per unit, the unit in `msgctxt`
//! (`greeting:body`), the pack in `Project-Id-Version` and the locale in
//! `Language`. A stale or untracked translation is `fuzzy`, a stale one
//! with the source it was made from in a comment; the template syntax to
//! keep is listed in a comment too.
//!
//! Written and read here: the grammar is small (comments `#`, `#.`, `#:`,
//! `#,`, `#|`, `#~`; `msgctxt`, `msgid`, `msgid_plural`, `msgstr`,
//! `msgstr[n]`, each with a quoted string continued by quoted strings on
//! the lines after; C escapes), and a reader of our own has no limit on a
//! line's length and names the line and column of what it refuses. The
//! writer wraps as gettext's tools do, so a file reads the same in them.

use crate::diagnostic::{Diagnostic, DiagnosticCode, LineIndex, abbreviate, printable};

use super::catalog::{Catalog, CatalogUnit, UnitState, check_unit_count};
use super::protect::Piece;

pub(super) fn write(catalog: &Catalog) -> String {
    let mut header = String::new();
    if !catalog.pack.is_empty() {
        header.push_str(&format!("Project-Id-Version: {}\n", catalog.pack));
    }
    header.push_str("MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n");
    header.push_str("Content-Transfer-Encoding: 8bit\n");
    if !catalog.locale.is_empty() {
        header.push_str(&format!("Language: {}\n", catalog.locale));
    }
    header.push_str("Plural-Forms: nplurals=1; plural=0;\n");
    let mut out = String::from("msgid \"\"\n");
    push_field(&mut out, "msgstr", &header);
    out.push('\n');
    for unit in &catalog.units {
        push_message(&mut out, unit);
    }
    out
}

fn push_message(out: &mut String, unit: &CatalogUnit) {
    for comment in comments(unit) {
        out.push_str("#. ");
        out.push_str(&comment);
        out.push('\n');
    }
    if matches!(unit.state, UnitState::Stale | UnitState::Untracked) {
        out.push_str("#, fuzzy\n");
    }
    push_field(out, "msgctxt", &unit.key());
    push_field(out, "msgid", &unit.source);
    push_field(out, "msgstr", unit.target.as_deref().unwrap_or_default());
    out.push('\n');
}

/// The extracted comments of a unit, each one line: the syntax to keep,
/// and the source a stale translation was made from.
fn comments(unit: &CatalogUnit) -> Vec<String> {
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
    comments
}

/// A field as gettext's tools write it: on one line when it fits in 78
/// columns and holds at most one newline; else an empty string first, then
/// a line per newline, folded after spaces at 77 columns.
fn push_field(out: &mut String, name: &str, text: &str) {
    let escaped = escape(text);
    let one_line = text.matches('\n').count() <= 1 && name.len() + escaped.chars().count() <= 78;
    out.push_str(name);
    if one_line {
        out.push_str(" \"");
        out.push_str(&escaped);
        out.push_str("\"\n");
        return;
    }
    out.push_str(" \"\"\n");
    // A split after `\n` never falls inside an escape: `n` starts none.
    for line in escaped.split_inclusive("\\n") {
        for folded in fold(line) {
            out.push('"');
            out.push_str(folded);
            out.push_str("\"\n");
        }
    }
}

/// `line` cut after spaces into pieces of at most 77 characters; a word
/// longer than that stays whole.
fn fold(line: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut start, mut end, mut width) = (0, 0, 0);
    for word in line.split_inclusive(' ') {
        let w = word.chars().count();
        if end > 0 && width + w > 77 {
            pieces.push(&line[start..end]);
            (start, width) = (end, 0);
        }
        end += word.len();
        width += w;
    }
    pieces.push(&line[start..]);
    pieces
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out
}

pub(super) fn read(text: &str) -> Result<Catalog, Diagnostic> {
    // Some editors save a byte order mark; gettext's tools skip it too.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let messages = Reader::default().read(text)?;
    let mut units = Vec::new();
    let mut header = None;
    for message in messages {
        let Some(key) = &message.msgctxt else {
            if message.msgid.is_empty() {
                // The header; a second one, or comments alone, add nothing.
                header.get_or_insert(message.msgstr);
                continue;
            }
            return Err(at_line(
                text,
                message.start,
                format!(
                    "message \"{}\" has no `msgctxt`, which names its unit",
                    abbreviate(&printable(&message.msgid), 60)
                ),
            ));
        };
        if message.plural {
            return Err(at_line(
                text,
                message.start,
                format!(
                    "message `{}` has plural forms (`msgid_plural`), and a unit has one text",
                    printable(key)
                ),
            ));
        }
        let (prompt, unit) = super::xliff::unit_key(key)?;
        check_unit_count(units.len())?;
        let translated = !message.fuzzy && !message.msgstr.is_empty();
        units.push(CatalogUnit {
            prompt,
            unit,
            source: message.msgid,
            target: (!message.msgstr.is_empty()).then_some(message.msgstr),
            state: match translated {
                true => UnitState::Translated,
                false => UnitState::New,
            },
            previous_source: None,
            syntax: Default::default(),
        });
    }
    let header = header.unwrap_or_default();
    let (pack, locale) = (
        header_field(&header, "Project-Id-Version"),
        header_field(&header, "Language"),
    );
    if pack.is_empty() || locale.is_empty() {
        return Err(invalid(
            "the header names no pack (`Project-Id-Version`) or no locale (`Language`)".to_owned(),
        ));
    }
    Ok(Catalog {
        pack: pack.to_owned(),
        source_locale: String::new(),
        locale: locale.to_owned(),
        units,
    })
}

/// The value of `key` in the header's `Key: value` lines; the last wins.
fn header_field<'h>(header: &'h str, key: &str) -> &'h str {
    header
        .split('\n')
        .filter_map(|line| line.split_once(':'))
        .filter(|(k, _)| *k == key)
        .map(|(_, value)| value.trim())
        .next_back()
        .unwrap_or_default()
}

/// One message as read, its strings unescaped.
#[derive(Default)]
struct Message {
    /// The byte offset of its first line with a keyword.
    start: usize,
    fuzzy: bool,
    msgctxt: Option<String>,
    msgid: String,
    has_msgid: bool,
    plural: bool,
    msgstr: String,
    has_msgstr: bool,
}

impl Message {
    fn has_keyword(&self) -> bool {
        self.msgctxt.is_some() || self.has_msgid
    }
}

/// The field a string on a line of its own continues.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Field {
    #[default]
    None,
    Context,
    Id,
    /// `msgid_plural` and `msgstr[n]`: read, and refused with the message.
    Plural,
    Translation,
}

/// A problem: the byte offset in the file where it is, and what it is.
type Fault = (usize, String);

#[derive(Default)]
struct Reader {
    messages: Vec<Message>,
    /// How many of them name a unit: the reader stops past MAX_UNITS.
    units: usize,
    current: Message,
    field: Field,
}

impl Reader {
    fn read(mut self, text: &str) -> Result<Vec<Message>, Diagnostic> {
        let mut start = 0;
        for line in text.split('\n') {
            let content = line.strip_suffix('\r').unwrap_or(line);
            self.line(content, start)
                .map_err(|(at, why)| syntax_error(text, at, &why))?;
            // Refused as soon as one unit too many is read.
            check_unit_count(self.units.saturating_sub(1))?;
            start += line.len() + 1;
        }
        self.finish()
            .map_err(|(at, why)| syntax_error(text, at, &why))?;
        Ok(self.messages)
    }

    /// Reads one line (without its line break), which starts at byte
    /// `start` of the file.
    fn line(&mut self, line: &str, start: usize) -> Result<(), Fault> {
        let rest = line.trim_start_matches([' ', '\t']);
        let start = start + (line.len() - rest.len());
        if rest.is_empty() {
            if self.current.has_keyword() {
                self.finish()?;
            }
            return Ok(());
        }
        if let Some(comment) = rest.strip_prefix('#') {
            return self.comment(comment);
        }
        if rest.starts_with('"') {
            let text = string(rest).map_err(|(at, why)| (start + at, why))?;
            return self.continue_field(&text, start);
        }
        self.keyword(rest, start)
    }

    fn comment(&mut self, comment: &str) -> Result<(), Fault> {
        // A comment after a message's translation starts the next message.
        if self.current.has_msgstr {
            self.finish()?;
        }
        self.field = Field::None;
        if let Some(flags) = comment.strip_prefix(',') {
            self.current.fuzzy |= flags.split(',').any(|flag| flag.trim() == "fuzzy");
        }
        Ok(())
    }

    fn continue_field(&mut self, text: &str, start: usize) -> Result<(), Fault> {
        let message = &mut self.current;
        match self.field {
            Field::None => {
                return Err((
                    start,
                    "a string that continues no field: a `msgid`, `msgstr` or `msgctxt` line comes first".to_owned(),
                ));
            }
            Field::Context => message.msgctxt.get_or_insert_default().push_str(text),
            Field::Id => message.msgid.push_str(text),
            Field::Plural => {}
            Field::Translation => message.msgstr.push_str(text),
        }
        Ok(())
    }

    /// A line that starts with a keyword, at byte `start` of the file.
    fn keyword(&mut self, rest: &str, start: usize) -> Result<(), Fault> {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '[' | ']')))
            .unwrap_or(rest.len());
        let (keyword, after) = rest.split_at(end);
        let quoted = after.trim_start_matches([' ', '\t']);
        let at = start + rest.len() - quoted.len();
        let value = match quoted.starts_with('"') {
            true => string(quoted).map_err(|(offset, why)| (at + offset, why))?,
            false if is_keyword(keyword) => {
                return Err((
                    start + end,
                    format!("`{keyword}` is followed by no quoted string"),
                ));
            }
            false => {
                return Err((
                    start,
                    "not a comment, a keyword or a quoted string".to_owned(),
                ));
            }
        };
        match keyword {
            "msgctxt" => {
                if self.current.has_msgid {
                    self.finish()?;
                }
                if self.current.msgctxt.is_some() {
                    return Err((
                        start,
                        "a second `msgctxt` before the message's `msgid`".to_owned(),
                    ));
                }
                self.begin(start);
                self.current.msgctxt = Some(value);
                self.field = Field::Context;
            }
            "msgid" => {
                if self.current.has_msgid {
                    self.finish()?;
                }
                self.begin(start);
                (self.current.msgid, self.current.has_msgid) = (value, true);
                self.field = Field::Id;
            }
            "msgid_plural" => {
                self.after_msgid(keyword, start)?;
                self.current.plural = true;
                self.field = Field::Plural;
            }
            "msgstr" => {
                self.after_msgid(keyword, start)?;
                if self.current.has_msgstr {
                    return Err((start, "a second `msgstr` for one message".to_owned()));
                }
                (self.current.msgstr, self.current.has_msgstr) = (value, true);
                self.field = Field::Translation;
            }
            _ if is_keyword(keyword) => {
                self.after_msgid(keyword, start)?;
                self.current.has_msgstr = true;
                self.field = Field::Plural;
            }
            _ => {
                return Err((
                    start,
                    format!(
                        "`{}` is not a PO keyword (`msgctxt`, `msgid`, `msgid_plural`, `msgstr`, `msgstr[n]`)",
                        abbreviate(&printable(keyword), 40)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Records where the message starts, at its first keyword.
    fn begin(&mut self, start: usize) {
        if !self.current.has_keyword() {
            self.current.start = start;
        }
    }

    fn after_msgid(&self, keyword: &str, start: usize) -> Result<(), Fault> {
        match self.current.has_msgid {
            true => Ok(()),
            false => Err((start, format!("`{keyword}` before the message's `msgid`"))),
        }
    }

    /// Ends the message read so far: it needs a `msgid` and a `msgstr`.
    /// Comments alone are dropped.
    fn finish(&mut self) -> Result<(), Fault> {
        let message = std::mem::take(&mut self.current);
        self.field = Field::None;
        if !message.has_keyword() {
            return Ok(());
        }
        let missing = match (message.has_msgid, message.has_msgstr) {
            (true, true) => {
                self.units += usize::from(message.msgctxt.is_some());
                self.messages.push(message);
                return Ok(());
            }
            (false, _) => "`msgid`",
            (true, false) => "`msgstr`",
        };
        Err((
            message.start,
            format!("the message that starts here has no {missing}"),
        ))
    }
}

fn is_keyword(word: &str) -> bool {
    matches!(word, "msgctxt" | "msgid" | "msgid_plural" | "msgstr")
        || word
            .strip_prefix("msgstr[")
            .and_then(|rest| rest.strip_suffix(']'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The quoted string `rest` starts with, unescaped; only white space may
/// follow it on the line. An error's offset is in `rest`.
fn string(rest: &str) -> Result<String, Fault> {
    let mut out = String::new();
    let mut chars = rest.char_indices().skip(1).peekable();
    let end = loop {
        match chars.next() {
            None => {
                return Err((
                    rest.len(),
                    "the string does not end: the closing `\"` is missing".to_owned(),
                ));
            }
            Some((at, '"')) => break at + 1,
            Some((at, '\\')) => out.push(unescape(&mut chars).map_err(|why| (at, why))?),
            Some((_, c)) => out.push(c),
        }
    };
    let after = &rest[end..];
    match after.trim_start_matches([' ', '\t']).is_empty() {
        true => Ok(out),
        false => Err((end, "text after the string's closing `\"`".to_owned())),
    }
}

/// The character an escape stands for, its backslash read.
fn unescape(
    chars: &mut std::iter::Peekable<impl Iterator<Item = (usize, char)>>,
) -> Result<char, String> {
    let Some((_, c)) = chars.next() else {
        return Err("a `\\` ends the line: write `\\\\` for a backslash".to_owned());
    };
    let simple = match c {
        'n' => Some('\n'),
        't' => Some('\t'),
        'r' => Some('\r'),
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'f' => Some('\u{c}'),
        'v' => Some('\u{b}'),
        '\\' | '"' | '\'' | '?' => Some(c),
        _ => None,
    };
    if let Some(simple) = simple {
        return Ok(simple);
    }
    let (radix, first, most) = match c {
        '0'..='7' => (8, c.to_digit(8), 3),
        'x' => (16, None, usize::MAX),
        _ => {
            return Err(format!(
                "`\\{}` is not an escape PO knows",
                printable(&c.to_string())
            ));
        }
    };
    let mut value = first.unwrap_or(0);
    let mut digits = usize::from(first.is_some());
    while digits < most {
        let Some(d) = chars.peek().and_then(|(_, c)| c.to_digit(radix)) else {
            break;
        };
        chars.next();
        value = value.saturating_mul(radix).saturating_add(d);
        digits += 1;
    }
    match (digits, u8::try_from(value)) {
        (0, _) => Err("`\\x` with no hex digit after it".to_owned()),
        (_, Ok(byte)) if byte.is_ascii() => Ok(char::from(byte)),
        _ => Err(
            "an escape of a byte outside ASCII: write the character itself, in UTF-8".to_owned(),
        ),
    }
}

/// A syntax error at byte `at` of the file, with its line.
fn syntax_error(text: &str, at: usize, why: &str) -> Diagnostic {
    let lines = LineIndex::new(text);
    let at = at.min(text.len());
    let position = lines.position(at);
    let start = lines.offset(crate::diagnostic::Position {
        line: position.line,
        column: 1,
    });
    let line = text[start..].split('\n').next().unwrap_or_default();
    let line = line.strip_suffix('\r').unwrap_or(line);
    let excerpt = match line.is_empty() {
        true => String::new(),
        false => format!(": \"{}\"", abbreviate(&printable(line), 60)),
    };
    invalid(format!(
        "line {} is not PO syntax: {why} (column {}){excerpt}",
        position.line, position.column
    ))
    .at(&lines, at..at)
}

/// A problem with the message whose first line starts at byte `start`.
fn at_line(text: &str, start: usize, message: String) -> Diagnostic {
    invalid(message).at(&LineIndex::new(text), start..start)
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

    const HEADER: &str =
        "msgid \"\"\nmsgstr \"\"\n\"Project-Id-Version: p\\n\"\n\"Language: ja\\n\"\n\n";

    #[test]
    fn malformed_lines_are_errors_naming_the_line_and_column() {
        for (text, line, column) in [
            ("msgid \"\"\nmsgstr \"Language: ja\\n\"\n\n\"", 4, 2),
            ("\"orphan\"", 1, 1),
            ("msgid \"é", 1, 9),
            ("msgid", 1, 6),
            ("hello", 1, 1),
            ("msgid \"a\" b", 1, 10),
            ("msgid \"a\\q\"", 1, 9),
            ("msgid \"\\xff\"", 1, 8),
            ("msgid \"\\", 1, 8),
            ("msgid \"a\"\n  msgsrt \"b\"", 2, 3),
            ("msgid \"a\"\nmsgstr \"b\"\nmsgstr \"c\"", 3, 1),
            ("msgstr \"b\"", 1, 1),
        ] {
            let error = read(text).unwrap_err();
            let expected = format!("line {line} is not PO syntax");
            assert!(
                error.message.starts_with(&expected),
                "{text:?}: {}",
                error.message
            );
            assert!(
                error.message.contains(&format!("(column {column})")),
                "{text:?}: {}",
                error.message
            );
            let position = error.position.unwrap();
            assert_eq!((position.line, position.column), (line, column), "{text:?}");
        }
        // A message cut before its translation names where it starts.
        let cut = format!("{HEADER}msgctxt \"p:body\"\nmsgid \"Hi\"\n");
        let error = read(&cut).unwrap_err();
        assert!(
            error.message.contains("has no `msgstr`"),
            "{}",
            error.message
        );
        assert_eq!(error.position.unwrap().line, 6);
    }

    #[test]
    fn strings_continue_and_escapes_read_as_c_writes_them() {
        let text = format!(
            "# a translator's comment\n#| msgid \"older\"\n{HEADER}#. keep\n#, c-format, fuzzy\nmsgctxt \"p:\"\n\"body\"\nmsgid \"\"\n\"a\\tb\\n\"\n\"\\\"q\\\" \\\\ \\101\\x42\\0\"\nmsgstr \"x\"\n\"y\"\n#~ msgid \"obsolete\"\n"
        );
        // After a byte order mark.
        let catalog = read(&format!("\u{feff}{text}")).unwrap();
        assert_eq!(
            (catalog.pack.as_str(), catalog.locale.as_str()),
            ("p", "ja")
        );
        let unit = &catalog.units[0];
        assert_eq!(unit.key(), "p:body");
        assert_eq!(unit.source, "a\tb\n\"q\" \\ AB\0");
        assert_eq!(unit.target.as_deref(), Some("xy"));
        assert_eq!(unit.state, UnitState::New, "fuzzy");
    }

    #[test]
    fn a_plural_message_or_one_without_a_unit_is_refused_naming_its_line() {
        let plural = format!(
            "{HEADER}msgctxt \"p:body\"\nmsgid \"a\"\nmsgid_plural \"as\"\nmsgstr[0] \"x\"\n"
        );
        let error = read(&plural).unwrap_err();
        assert!(error.message.contains("plural forms"), "{}", error.message);
        assert_eq!(error.position.unwrap().line, 6);
        let bare = format!("{HEADER}msgid \"a\"\nmsgstr \"x\"\n");
        let error = read(&bare).unwrap_err();
        assert!(
            error.message.contains("has no `msgctxt`"),
            "{}",
            error.message
        );
    }

    #[test]
    fn long_fields_fold_at_spaces_and_newlines_as_gettext_does() {
        let mut out = String::new();
        push_field(&mut out, "msgid", "short\n");
        assert_eq!(out, "msgid \"short\\n\"\n");
        let mut out = String::new();
        let long = format!("{} {}\nnext", "a".repeat(50), "b".repeat(50));
        push_field(&mut out, "msgstr", &long);
        assert_eq!(
            out,
            format!(
                "msgstr \"\"\n\"{} \"\n\"{}\\n\"\n\"next\"\n",
                "a".repeat(50),
                "b".repeat(50)
            )
        );
    }

    proptest! {
        /// No text makes the reader panic: PO-like fragments in any order.
        #[test]
        fn any_text_reads_or_fails_cleanly(parts in proptest::collection::vec(
            prop_oneof![
                Just("msgid "), Just("msgstr "), Just("msgctxt "), Just("msgstr[1] "),
                Just("\""), Just("\\"), Just("#"), Just("# "), Just("#, fuzzy"),
                Just("\n"), Just("\r\n"), Just("é"), Just("x"), Just("Language: ja\\n"),
                Just("Project-Id-Version: p\\n"), Just("\\x"), Just("\\7"), Just(" "),
            ],
            0..40,
        )) {
            let _ = read(&parts.concat());
        }

        /// What the writer writes, the reader reads back as it was.
        #[test]
        fn written_text_reads_back(
            source in "[a-z \\n\\t\\\\\"é日\u{1}]{0,200}",
            target in "[a-z \\n\\r\\\\\"é]{0,200}",
        ) {
            let catalog = Catalog {
                pack: "p".to_owned(),
                source_locale: "en".to_owned(),
                locale: "ja".to_owned(),
                units: vec![CatalogUnit {
                    prompt: "greeting".to_owned(),
                    unit: crate::pack::UnitName::Body,
                    source: source.clone(),
                    target: Some(target.clone()),
                    state: UnitState::Translated,
                    previous_source: None,
                    syntax: Default::default(),
                }],
            };
            let read = read(&write(&catalog)).unwrap();
            prop_assert_eq!(&read.units[0].source, &source);
            let expected = (!target.is_empty()).then_some(target);
            prop_assert_eq!(&read.units[0].target, &expected);
        }
    }
}
