//! The pseudo-locale `en-XA`: every letter of a prompt's text accented,
//! every vowel doubled (a third longer, as many translations are) and the
//! whole between `⟦ ⟧`, its template syntax and a chat file's message
//! headings kept, so that a render shows what would break under
//! translation: text a parser expects verbatim, a length limit, a tag
//! that translation would cut. A pack's manifest turns it on with
//! `[l10n] pseudo = true`.
//!
//! ```
//! use promptreg_packs::pack::pseudo_translate;
//!
//! assert_eq!(pseudo_translate("Hi {{ name }}!", true, false), "⟦Ĥîî {{ name }}!⟧");
//! ```

use std::ops::Range;
use std::path::PathBuf;

use crate::front_matter::{Document, PIN_HEAD, PIN_TAIL};
use crate::id::PromptId;
use crate::template_tags::syntax_spans;

use super::prompt_files::PromptFile;
use super::translation::{
    SourceText, pins_yaml, record_source, set_front_matter_keys, split_front_matter,
};

/// The pseudo-locale's tag.
pub const PSEUDO_LOCALE: &str = "en-XA";

/// `text` pseudo-translated. A template (`template`) keeps every
/// `{{ }}`, `{% %}` and `{# #}` tag as written; a chat file (`chat`) keeps
/// its `# role` heading lines.
pub fn pseudo_translate(text: &str, template: bool, chat: bool) -> String {
    if text.trim().is_empty() {
        return text.to_owned();
    }
    let kept = protected_spans(text, template, chat);
    let mut out = String::with_capacity(text.len() * 2);
    let mut at = 0;
    for span in kept {
        out.push_str(&accented(&text[at..span.start]));
        out.push_str(&text[span.clone()]);
        at = span.end;
    }
    out.push_str(&accented(&text[at..]));
    // The brackets go around the text, inside its surrounding whitespace.
    let trimmed = out.trim_end();
    let (body, trailing) = out.split_at(trimmed.len());
    format!("⟦{body}⟧{trailing}")
}

/// What translation must keep of `text`, in order: a template's tags
/// (`template`) and a chat file's `# role` heading lines (`chat`).
pub(crate) fn protected_spans(text: &str, template: bool, chat: bool) -> Vec<Range<usize>> {
    let mut kept = if template {
        syntax_spans(text)
    } else {
        Vec::new()
    };
    if chat {
        let mut start = 0;
        for line in text.split_inclusive('\n') {
            if line.starts_with("# ") {
                let heading = line.trim_end_matches(['\n', '\r']);
                kept.push(start..start + heading.len());
            }
            start += line.len();
        }
        kept.sort_by_key(|span| span.start);
        // A tag inside a heading line counts once, as the heading.
        let mut last_end = 0;
        kept.retain(|span| {
            let keep = span.start >= last_end;
            if keep {
                last_end = span.end;
            }
            keep
        });
    }
    kept
}

/// Literal text: ASCII letters accented, vowels doubled.
fn accented(text: &str) -> String {
    const LOWER: [char; 26] = [
        'å', 'ƀ', 'ç', 'đ', 'é', 'ƒ', 'ĝ', 'ĥ', 'î', 'ĵ', 'ķ', 'ļ', 'ɱ', 'ñ', 'ö', 'þ', 'ǫ', 'ŕ',
        'š', 'ţ', 'û', 'ṽ', 'ŵ', 'ẋ', 'ý', 'ž',
    ];
    const UPPER: [char; 26] = [
        'Å', 'Ɓ', 'Ç', 'Đ', 'É', 'Ƒ', 'Ĝ', 'Ĥ', 'Î', 'Ĵ', 'Ķ', 'Ļ', 'Ṁ', 'Ñ', 'Ö', 'Þ', 'Ǫ', 'Ŕ',
        'Š', 'Ţ', 'Û', 'Ṽ', 'Ŵ', 'Ẋ', 'Ý', 'Ž',
    ];
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        let mapped = match c {
            'a'..='z' => LOWER[usize::from(c as u8 - b'a')],
            'A'..='Z' => UPPER[usize::from(c as u8 - b'A')],
            other => other,
        };
        out.push(mapped);
        if "aeiouAEIOU".contains(c) {
            out.push(mapped);
        }
    }
    out
}

/// The front matter keys a variant may not set, or takes from its default
/// (the contract: its descriptions are not pseudo-translated).
const DEFAULT_ONLY: [&str; 7] = [
    "description",
    "metadata",
    "kind",
    "roles",
    "attach",
    "tools",
    "output",
];

/// The `en-XA` variant files of the defaults among `files` that have none:
/// each a pseudo-translation of its default, recorded as translating its
/// current text. Defaults whose front matter does not parse get none
/// (their errors are reported as theirs).
pub(super) fn variant_files(files: &[PromptFile<'_>]) -> Vec<(PromptId, PathBuf, String)> {
    let has_own = |id: &PromptId| {
        files.iter().any(|f| {
            &f.id == id
                && f.locale
                    .as_ref()
                    .is_some_and(|l| l.as_str() == PSEUDO_LOCALE)
        })
    };
    let mut out = Vec::new();
    for file in files
        .iter()
        .filter(|f| f.locale.is_none() && !has_own(&f.id))
    {
        let Ok(doc) = Document::parse(file.text, file.path) else {
            continue;
        };
        let (template, chat) = (doc.is_template(), doc.meta.kind.as_deref() == Some("chat"));
        let source = SourceText::of(&doc);
        let pins = |key: &str, blocks: &[String]| {
            let pseudo: Vec<String> = blocks
                .iter()
                .map(|block| pseudo_translate(block, template, false))
                .collect();
            pins_yaml(key, &pseudo)
        };
        let mut keys: Vec<(&str, Option<String>)> =
            DEFAULT_ONLY.iter().map(|key| (*key, None)).collect();
        keys.push((PIN_HEAD, pins(PIN_HEAD, &source.pin_head)));
        keys.push((PIN_TAIL, pins(PIN_TAIL, &source.pin_tail)));
        let (yaml, _) = split_front_matter(file.text);
        let body = pseudo_translate(doc.body, template, chat);
        let text = set_front_matter_keys(&format!("---\n{yaml}---\n{body}"), &keys);
        let text = record_source(&text, &source);
        let path = file
            .path
            .with_file_name(format!("{}.{PSEUDO_LOCALE}.md", file.id));
        out.push((file.id.clone(), path, text));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_syntax_and_chat_headings_are_kept() {
        assert_eq!(
            pseudo_translate("{% if x %}Go{% endif %}\n", true, false),
            "⟦{% if x %}Ĝöö{% endif %}⟧\n"
        );
        assert_eq!(
            pseudo_translate("# system\nBe brief.\n# user\n{{ q }}", true, true),
            "⟦# system\nƁéé ƀŕîîééƒ.\n# user\n{{ q }}⟧"
        );
        // Not a template: braces are text, accented around.
        assert_eq!(pseudo_translate("{{x}}", false, false), "⟦{{ẋ}}⟧");
        assert_eq!(pseudo_translate("  \n", true, false), "  \n");
    }
}
