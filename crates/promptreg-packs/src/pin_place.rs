//! Where a pinned block's text stands in its prompt file. A pin is a YAML
//! value (`pin_tail: '…'`, a `|` block, a list of either); a template
//! error found in its text is counted in the text, and is moved here to
//! the line and column of the file, with the file's own lines as its
//! excerpt.

use crate::diagnostic::{Diagnostic, LineIndex, Position};

/// The place of one pinned block's text in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PinPlace {
    /// The line of the text's first character, from 1.
    line: usize,
    /// Its column, from 1.
    column: usize,
    /// How far the text's later lines are indented (a block scalar's).
    indent: usize,
}

impl PinPlace {
    /// The places of the texts given under the top-level key whose line
    /// starts at byte `key_line` of `file`, in their order: a value on the
    /// key's line, a `|` or `>` block below it, or a list of either.
    pub(crate) fn under_key(file: &str, key_line: usize) -> Vec<PinPlace> {
        let lines = LineIndex::new(file);
        let mut rest = file[key_line..].split_inclusive('\n');
        let Some(first) = rest.next() else {
            return Vec::new();
        };
        let line = lines.position(key_line).line;
        let value_at = first.find(':').map_or(first.len(), |colon| colon + 1);
        match value_of(first, value_at) {
            Some(Value::Inline(column)) => vec![PinPlace::inline(line, column)],
            Some(Value::Block) => PinPlace::block(line + 1, rest.clone())
                .into_iter()
                .collect(),
            Some(Value::Flow) => Vec::new(),
            None => list_items(line + 1, rest),
        }
    }

    fn inline(line: usize, column: usize) -> PinPlace {
        PinPlace {
            line,
            column,
            indent: column.saturating_sub(1),
        }
    }

    /// A block scalar whose first line is `line`, `lines` its text on.
    fn block<'a>(line: usize, mut lines: impl Iterator<Item = &'a str>) -> Option<PinPlace> {
        let first = lines.next()?;
        let indent = first.len() - first.trim_start_matches(' ').len();
        Some(PinPlace {
            line,
            column: indent + 1,
            indent,
        })
    }

    /// `problem`, located in the block's text, moved to the same place in
    /// `file`, with the file's excerpt (the span's length kept).
    pub(crate) fn locate(&self, mut problem: Diagnostic, file: &str) -> Diagnostic {
        let Some(local) = problem.position else {
            return problem;
        };
        let position = match local.line {
            1 => Position {
                line: self.line,
                column: self.column + local.column - 1,
            },
            n => Position {
                line: self.line + n - 1,
                column: self.indent + local.column,
            },
        };
        let length = problem.excerpt.as_ref().map_or(0, |e| e.span.len());
        let lines = LineIndex::new(file);
        let start = lines.offset(position);
        problem.position = Some(position);
        problem.excerpt = Some(lines.excerpt(start..start + length));
        problem
    }
}

/// What follows a key's colon.
enum Value {
    /// A plain or quoted text at this column (its first character's).
    Inline(usize),
    /// A block scalar below.
    Block,
    /// A flow list or mapping (`[a, b]`), whose items are not placed.
    Flow,
}

/// The value after byte `at` of a key's `line`; `None` for nothing (a
/// list or block on the next lines).
fn value_of(line: &str, at: usize) -> Option<Value> {
    let after = line.get(at..)?;
    let text = after.trim_start_matches(' ');
    let trimmed = text.trim_end();
    if trimmed.is_empty() {
        return None;
    }
    if trimmed.starts_with(['|', '>']) {
        return Some(Value::Block);
    }
    if trimmed.starts_with(['[', '{']) {
        return Some(Value::Flow);
    }
    let skipped = line.len() - text.len();
    let quote = usize::from(text.starts_with(['\'', '"']));
    let column = line[..skipped].chars().count() + 1 + quote;
    Some(Value::Inline(column))
}

/// The items of a block list starting on `line` (`- text`, `- |`): lines
/// at the first item's indentation that start with `-`; deeper lines are
/// the items' own (a block's text, a list inside it).
fn list_items<'a>(
    mut line: usize,
    mut lines: impl Iterator<Item = &'a str> + Clone,
) -> Vec<PinPlace> {
    let mut places = Vec::new();
    let mut items_at = None;
    while let Some(text) = lines.next() {
        let indent = text.len() - text.trim_start_matches(' ').len();
        let item = &text[indent..];
        if text.trim_end() == "---" {
            break;
        }
        if item.trim().is_empty() {
            line += 1;
            continue;
        }
        let at = *items_at.get_or_insert(indent);
        if indent < at || (indent == at && !item.starts_with('-')) {
            break;
        }
        if indent == at {
            match value_of(text, indent + 1) {
                Some(Value::Inline(column)) => places.push(PinPlace::inline(line, column)),
                Some(Value::Block) => places.extend(PinPlace::block(line + 1, lines.clone())),
                Some(Value::Flow) | None => {}
            }
        }
        line += 1;
    }
    places
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(file: &str, key: &str) -> Vec<(usize, usize, usize)> {
        let at = file.find(key).unwrap();
        PinPlace::under_key(file, at)
            .iter()
            .map(|p| (p.line, p.column, p.indent))
            .collect()
    }

    #[test]
    fn a_pin_on_the_keys_line_starts_after_its_quote() {
        let file = "---\ntemplate: true\npin_tail: '{% include \"safty\" %}'\n---\nB";
        assert_eq!(places(file, "pin_tail"), [(3, 12, 11)]);
        let file = "---\npin_head: Be brief.\n---\nB";
        assert_eq!(places(file, "pin_head"), [(2, 11, 10)]);
        assert_eq!(places("---\npin_head: [a, b]\n---\nB", "pin_head"), []);
    }

    #[test]
    fn a_block_pin_starts_on_the_next_line_at_its_indentation() {
        let file = "---\npin_head: |\n  First\n    {{ oops( }}\n---\nB";
        assert_eq!(places(file, "pin_head"), [(3, 3, 2)]);
    }

    #[test]
    fn the_items_of_a_list_are_each_at_their_line() {
        let file = "---\npin_tail:\n  - \"one\"\n  - |\n    two\n    lines\n  - three\n---\nB";
        assert_eq!(places(file, "pin_tail"), [(3, 6, 5), (5, 5, 4), (7, 5, 4)]);
    }
}
