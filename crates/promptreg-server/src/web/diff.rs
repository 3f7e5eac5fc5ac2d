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
                rows.push(Row {
                    kind,
                    old_no: old.is_some().then_some(o + 1),
                    old: old.map(str::to_owned),
                    new_no: new.is_some().then_some(w + 1),
                    new: new.map(str::to_owned),
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
    fn chat_files_split_into_messages_after_the_front_matter() {
        let text = "---\nkind: chat\n---\n# system\nBe brief.\n\n# user\nHi.\n";
        let got = messages(text);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], ("system".to_owned(), "Be brief.\n\n".to_owned()));
        assert_eq!(got[1].0, "user");
        assert_eq!(front_matter(text), "---\nkind: chat\n---\n");
    }
}
