//! What translation must keep: a template's tags and a chat file's
//! headings, found as a render would see them, and the check that a
//! translation kept them.

use std::collections::BTreeMap;

use crate::diagnostic::printable;
use crate::pack::protected_spans;

/// A piece of a unit's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// Text to translate.
    Text(&'a str),
    /// Syntax to keep as written.
    Code(&'a str),
}

/// What the text of a unit is written in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Syntax {
    pub(crate) template: bool,
    pub(crate) chat: bool,
}

impl Syntax {
    /// `text` as text and code, in order.
    pub(crate) fn pieces(self, text: &str) -> Vec<Piece<'_>> {
        let mut pieces = Vec::new();
        let mut at = 0;
        for span in protected_spans(text, self.template, self.chat) {
            if span.start > at {
                pieces.push(Piece::Text(&text[at..span.start]));
            }
            pieces.push(Piece::Code(&text[span.clone()]));
            at = span.end;
        }
        if at < text.len() {
            pieces.push(Piece::Text(&text[at..]));
        }
        pieces
    }

    /// Whether `text` has anything to translate: text that is not blank
    /// outside its syntax.
    pub(crate) fn has_text(self, text: &str) -> bool {
        self.pieces(text)
            .iter()
            .any(|p| matches!(p, Piece::Text(t) if !t.trim().is_empty()))
    }

    /// How `target` changes the syntax of `source`, if it does: the
    /// statements (`{% %}`) and headings in their order, the expressions
    /// (`{{ }}`) and comments in any order, as a translation may move a
    /// variable within its sentence.
    pub(crate) fn change(self, source: &str, target: &str) -> Option<String> {
        let (source, target) = (self.codes(source), self.codes(target));
        if source.ordered != target.ordered {
            return Some(format!(
                "the tags and headings that must stay in order were {}, the translation has {}",
                listed(&source.ordered),
                listed(&target.ordered)
            ));
        }
        if source.any_order != target.any_order {
            let missing: Vec<&str> = difference(&source.any_order, &target.any_order);
            let added: Vec<&str> = difference(&target.any_order, &source.any_order);
            return Some(match (missing.is_empty(), added.is_empty()) {
                (false, true) => format!("the translation lacks {}", listed(&missing)),
                (true, false) => format!("the translation adds {}", listed(&added)),
                _ => format!(
                    "the translation lacks {} and adds {}",
                    listed(&missing),
                    listed(&added)
                ),
            });
        }
        None
    }

    fn codes(self, text: &str) -> Codes<'_> {
        let mut codes = Codes::default();
        for piece in self.pieces(text) {
            let Piece::Code(code) = piece else { continue };
            if code.starts_with("{{") || code.starts_with("{#") {
                *codes.any_order.entry(code).or_default() += 1;
            } else {
                codes.ordered.push(code);
            }
        }
        codes
    }
}

/// A text's syntax: what must keep its order, and what may move.
#[derive(Default)]
struct Codes<'a> {
    ordered: Vec<&'a str>,
    any_order: BTreeMap<&'a str, usize>,
}

/// What `a` has more of than `b`.
fn difference<'a>(a: &BTreeMap<&'a str, usize>, b: &BTreeMap<&'a str, usize>) -> Vec<&'a str> {
    a.iter()
        .filter(|(code, n)| b.get(*code).copied().unwrap_or(0) < **n)
        .map(|(code, _)| *code)
        .collect()
}

/// Codes for a message, escaped: `{{ name }}`, `{% if x %}`; `nothing`.
fn listed(codes: &[&str]) -> String {
    if codes.is_empty() {
        return "nothing".to_owned();
    }
    codes
        .iter()
        .map(|c| format!("`{}`", printable(c)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: Syntax = Syntax {
        template: true,
        chat: false,
    };

    #[test]
    fn a_variable_may_move_a_statement_may_not() {
        let source = "Hello {{ name }}, {% if vip %}welcome back{% endif %}.";
        assert_eq!(
            TEMPLATE.change(source, "{% if vip %}おかえり{% endif %}、{{ name }}さん。"),
            None
        );
        assert_eq!(
            TEMPLATE
                .change(source, "{% if vip %}おかえり、{{ nom }}さん。{% endif %}")
                .unwrap(),
            "the translation lacks `{{ name }}` and adds `{{ nom }}`"
        );
        assert!(
            TEMPLATE
                .change(source, "{{ name }}{% endif %}{% if vip %}")
                .unwrap()
                .starts_with("the tags and headings that must stay in order were `{% if vip %}`, `{% endif %}`")
        );
    }

    #[test]
    fn chat_headings_are_kept_in_order() {
        let chat = Syntax {
            template: false,
            chat: true,
        };
        assert_eq!(
            chat.change("# system\nHi\n# user\nQ", "# system\nやあ\n# user\n質問"),
            None
        );
        assert!(chat.change("# system\nHi", "# システム\nやあ").is_some());
        assert_eq!(
            chat.pieces("# system\nHi"),
            [Piece::Code("# system"), Piece::Text("\nHi")]
        );
    }
}
