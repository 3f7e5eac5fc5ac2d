//! Side-by-side diffs: rows of old and new lines, removed text marked
//! `<del>` and added text `<ins>` by the templates; chat files split into
//! their messages to compare one message with its counterpart.

use serde::Serialize;
use similar::{DiffTag, TextDiff};

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// One row of a side-by-side diff.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    /// `same`, `change`, `del`, `ins`, or `gap` between hunks.
    kind: &'static str,
    old_no: Option<usize>,
    old: Option<String>,
    new_no: Option<usize>,
    new: Option<String>,
    /// For a `change` row, each side cut into runs of words, each marked
    /// changed or not: what the templates highlight inside the line.
    #[serde(skip_serializing_if = "Option::is_none")]
    words: Option<(Vec<Run>, Vec<Run>)>,
}

/// A run of text within a changed line, and whether it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Run {
    changed: bool,
    text: String,
}

/// The words of `old` and `new` (a changed line and its counterpart), each
/// side as runs: the removed words marked on the old side, the added ones
/// on the new side, whitespace kept.
fn word_runs(old: &str, new: &str) -> (Vec<Run>, Vec<Run>) {
    let diff = TextDiff::from_words(old, new);
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let push = |runs: &mut Vec<Run>, changed: bool, text: &str| match runs.last_mut() {
        Some(last) if last.changed == changed => last.text.push_str(text),
        _ => runs.push(Run {
            changed,
            text: text.to_owned(),
        }),
    };
    for change in diff.iter_all_changes() {
        let text = change.value();
        match change.tag() {
            similar::ChangeTag::Equal => {
                push(&mut before, false, text);
                push(&mut after, false, text);
            }
            similar::ChangeTag::Delete => push(&mut before, true, text),
            similar::ChangeTag::Insert => push(&mut after, true, text),
        }
    }
    (joined(before), joined(after))
}

/// `runs` with the blanks between two changed runs made part of them, so
/// `in order` is marked as one change, not two words.
fn joined(runs: Vec<Run>) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::with_capacity(runs.len());
    let mut runs = runs.into_iter().peekable();
    while let Some(run) = runs.next() {
        let between_changes = !run.changed
            && run.text.trim().is_empty()
            && out.last().is_some_and(|r| r.changed)
            && runs.peek().is_some_and(|r| r.changed);
        match out.last_mut() {
            Some(last) if between_changes || (last.changed && run.changed) => {
                last.text.push_str(&run.text)
            }
            _ => out.push(run),
        }
    }
    out
}

/// The rows comparing `old` with `new`, empty when they are equal.
pub(crate) fn side_by_side(old: &str, new: &str) -> Vec<Row> {
    let diff = TextDiff::from_lines(old, new);
    let (old_lines, new_lines) = (lines(old), lines(new));
    let mut rows = Vec::new();
    for (i, group) in diff.grouped_ops(CONTEXT).iter().enumerate() {
        if i > 0 {
            rows.push(gap());
        }
        for op in group {
            let (tag, a, b) = op.as_tag_tuple();
            let kind = match tag {
                DiffTag::Equal => "same",
                DiffTag::Delete => "del",
                DiffTag::Insert => "ins",
                DiffTag::Replace => "change",
            };
            let n = a.len().max(b.len());
            for k in 0..n {
                let (o, w) = (a.start + k, b.start + k);
                let old = (k < a.len()).then(|| old_lines.get(o).copied().unwrap_or_default());
                let new = (k < b.len()).then(|| new_lines.get(w).copied().unwrap_or_default());
                let words = match (kind, old, new) {
                    ("change", Some(old), Some(new)) => Some(word_runs(old, new)),
                    _ => None,
                };
                rows.push(Row {
                    kind,
                    old_no: old.is_some().then_some(o + 1),
                    old: old.map(str::to_owned),
                    new_no: new.is_some().then_some(w + 1),
                    new: new.map(str::to_owned),
                    words,
                });
            }
        }
    }
    rows
}

fn gap() -> Row {
    Row {
        kind: "gap",
        old_no: None,
        old: None,
        new_no: None,
        new: None,
        words: None,
    }
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

/// A chat file's messages: each `# role` heading with the text under it,
/// after the front matter.
pub(crate) fn messages(text: &str) -> Vec<(String, String)> {
    let body = strip_front_matter(text);
    let mut messages: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        if let Some(heading) = line.strip_prefix("# ") {
            messages.push((heading.trim().to_owned(), String::new()));
        } else if let Some((_, text)) = messages.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    messages
}

/// The text after a leading `---` … `---` block.
pub(crate) fn strip_front_matter(text: &str) -> &str {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return text;
    };
    match rest.find("\n---") {
        Some(end) => {
            let after = &rest[end + 4..];
            after.split_once('\n').map_or("", |(_, body)| body)
        }
        None => text,
    }
}

/// The front matter of a file (empty without one).
pub(crate) fn front_matter(text: &str) -> &str {
    let body = strip_front_matter(text);
    text.strip_suffix(body).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_pair_changed_lines_and_number_both_sides() {
        let rows = side_by_side("a\nb\nc\n", "a\nB\nc\nd\n");
        let kinds: Vec<&str> = rows.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, ["same", "change", "same", "ins"]);
        assert_eq!(rows[1].old.as_deref(), Some("b"));
        assert_eq!(rows[1].new.as_deref(), Some("B"));
        assert_eq!((rows[3].old_no, rows[3].new_no), (None, Some(4)));
        assert!(side_by_side("same\n", "same\n").is_empty());
    }

    #[test]
    fn a_changed_line_marks_the_words_that_changed() {
        let rows = side_by_side(
            "Work through the tasks in order.\n",
            "Work through the tasks one at a time.\n",
        );
        let (old, new) = rows[0].words.clone().unwrap();
        let marked = |runs: &[Run]| -> Vec<String> {
            runs.iter()
                .filter(|r| r.changed)
                .map(|r| r.text.clone())
                .collect()
        };
        assert_eq!(marked(&old), ["in order."]);
        assert_eq!(marked(&new), ["one at a time."]);
        let whole: String = new.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(whole, "Work through the tasks one at a time.");
        // Lines only added or removed have no runs: the whole line is marked.
        assert!(side_by_side("a\n", "a\nb\n")[1].words.is_none());
    }

    #[test]
    fn chat_files_split_into_messages_after_the_front_matter() {
        let text = "---\nkind: chat\n---\n# system\nBe brief.\n\n# user\nHi.\n";
        let got = messages(text);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], ("system".to_owned(), "Be brief.\n\n".to_owned()));
        assert_eq!(got[1].0, "user");
        assert_eq!(front_matter(text), "---\nkind: chat\n---\n");
    }
}
