//! The tags of a template's source, read without compiling it: where a
//! variable is first read (for a diagnostic's position) and which tags
//! load another template (`include`, `import`, `from`, `extends`), for the
//! snippets a template can reach. Comments, `raw` blocks and string
//! literals are skipped, as minijinja skips them.

use std::ops::Range;

/// An `include` (or `import`, `from`, `extends`) tag of a template.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Include {
    /// The tag's keyword.
    pub(crate) keyword: &'static str,
    /// The name, when it is one quoted string.
    pub(crate) name: Option<String>,
    /// The tag, in the source.
    pub(crate) span: Range<usize>,
}

/// Every tag of `source` that loads another template, outside comments,
/// `raw` blocks and string literals.
pub(crate) fn includes_of(source: &str) -> Vec<Include> {
    statement_tags(source)
        .filter_map(|(content, span)| {
            let content = content.trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace());
            let (word, rest) = content
                .split_once(char::is_whitespace)
                .unwrap_or((content, ""));
            let keyword = ["include", "import", "from", "extends"]
                .into_iter()
                .find(|k| *k == word)?;
            Some(Include {
                keyword,
                name: literal_name(rest.trim()),
                span,
            })
        })
        .collect()
}

/// The name of `"name"` or `'name'`, optionally followed by the
/// modifiers an include takes; `None` for anything computed.
fn literal_name(rest: &str) -> Option<String> {
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let end = rest[1..].find(quote)? + 1;
    let name = &rest[1..end];
    let modifiers = rest[end + 1..].split_whitespace();
    modifiers
        .into_iter()
        .all(|w| matches!(w, "ignore" | "missing" | "with" | "without" | "context"))
        .then(|| name.to_owned())
}

/// Every `{% %}` tag of `source` outside comments and `raw` blocks: its
/// content and its span.
fn statement_tags(source: &str) -> impl Iterator<Item = (&str, Range<usize>)> {
    tags(source, "")
        .filter(|tag| tag.statement && !is_raw(tag.content))
        .map(|tag| (tag.content, tag.span))
}

/// The byte offset of the first read of variable `name` in `source`: an
/// identifier inside `{{ }}` or `{% %}`, outside string literals, comments
/// and `raw` blocks, and not an attribute (`x.name`).
pub(crate) fn first_use(source: &str, name: &str) -> Option<usize> {
    tags(source, name).find_map(|tag| tag.read_at)
}

/// The spans of every tag of `source`: `{{ }}`, `{% %}` and `{# #}`, the
/// template's syntax, in order. The text between them is the template's
/// literal text (a `raw` block's inside included).
#[cfg_attr(not(feature = "packs"), allow(dead_code))]
pub(crate) fn syntax_spans(source: &str) -> Vec<Range<usize>> {
    tags(source, "").map(|tag| tag.span).collect()
}

/// A `{{ }}`, `{% %}` or `{# #}` tag of a template.
struct Tag<'a> {
    content: &'a str,
    span: Range<usize>,
    /// `{% %}` rather than `{{ }}`.
    statement: bool,
    /// Where the variable looked for is read in the tag, if it is.
    read_at: Option<usize>,
}

/// Every `{{ }}`, `{% %}` and `{# #}` tag of `source`, skipping the
/// inside of `raw` blocks, each with where `name` is read in it.
fn tags<'a>(source: &'a str, name: &'a str) -> impl Iterator<Item = Tag<'a>> {
    let mut rest = 0;
    std::iter::from_fn(move || {
        while let Some(found) = source[rest..].find('{') {
            let open = rest + found;
            let tag = &source[open..];
            let close = if tag.starts_with("{{") {
                "}}"
            } else if tag.starts_with("{%") {
                "%}"
            } else if tag.starts_with("{#") {
                rest = open + tag.find("#}").map_or(tag.len(), |i| i + 2);
                return Some(Tag {
                    content: "",
                    span: open..rest,
                    statement: false,
                    read_at: None,
                });
            } else {
                rest = open + 1;
                continue;
            };
            let (end, read_at) = scan_tag(source, open + 2, close, name);
            rest = end;
            let content = source
                .get(open + 2..end.saturating_sub(2))
                .unwrap_or_default();
            let statement = close == "%}";
            if statement && is_raw(content) {
                // On to the tag that ends the block.
                rest = source[rest..].find("endraw").map_or(source.len(), |i| {
                    let at = rest + i;
                    source[rest..at].rfind("{%").map_or(at, |open| rest + open)
                });
            }
            return Some(Tag {
                content,
                span: open..end,
                statement,
                read_at,
            });
        }
        None
    })
}

/// Scans one tag from `start` to its `close`: where the tag ends and where
/// `name` is read in it, if it is.
fn scan_tag(source: &str, start: usize, close: &str, name: &str) -> (usize, Option<usize>) {
    let bytes = source.as_bytes();
    let mut i = start;
    let mut quote: Option<u8> = None;
    let mut after_dot = false;
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = quote {
            match b {
                b'\\' => i += 1,
                _ if b == q => quote = None,
                _ => {}
            }
            i += 1;
            continue;
        }
        if bytes[i..].starts_with(close.as_bytes()) {
            return (i + close.len(), None);
        }
        if b == b'"' || b == b'\'' {
            quote = Some(b);
            after_dot = false;
        } else if b == b'_' || b.is_ascii_alphabetic() {
            let len = source[i..]
                .find(|c: char| c != '_' && !c.is_ascii_alphanumeric())
                .unwrap_or(source.len() - i);
            if !after_dot && &source[i..i + len] == name {
                return (i + len, Some(i));
            }
            i += len;
            after_dot = false;
            continue;
        } else if b == b'.' {
            after_dot = true;
        } else if !b.is_ascii_whitespace() {
            after_dot = false;
        }
        i += 1;
    }
    (bytes.len(), None)
}

/// Whether a `{% %}` tag's content opens a `raw` block.
fn is_raw(content: &str) -> bool {
    content.trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace()) == "raw"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_use_skips_non_ascii_text_and_unclosed_tags() {
        assert_eq!(first_use("名前 {{ 名前 }} {{ name }}", "name"), Some(23));
        assert_eq!(first_use("{{ \"é", "name"), None);
        assert_eq!(first_use("{% raw", "name"), None);
    }

    #[test]
    fn syntax_spans_cover_every_kind_of_tag_and_leave_raw_text() {
        let source =
            "Hi {{ name }}{# note #}, {% if x %}y{% endif %} {% raw %}{{ as is }}{% endraw %}";
        let spans: Vec<&str> = syntax_spans(source)
            .into_iter()
            .map(|s| &source[s])
            .collect();
        assert_eq!(
            spans,
            [
                "{{ name }}",
                "{# note #}",
                "{% if x %}",
                "{% endif %}",
                "{% raw %}",
                "{% endraw %}"
            ]
        );
    }
}
