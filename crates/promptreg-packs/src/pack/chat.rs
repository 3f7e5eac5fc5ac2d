//! Chat files: a pack file whose front matter says `kind: chat`, its body
//! messages under role headings.
//!
//! ```text
//! ---
//! kind: chat
//! roles: [critic]
//! ---
//! # system
//! You review drafts.
//!
//! # history: draft
//!
//! # critic
//! Be harsh, and say why.
//! ```
//!
//! A line `# <role>` outside a fenced code block starts a message; deeper
//! headings (`## Rules`) are content. `# history: NAME` is where the
//! caller's messages for `NAME` go.

use std::ops::Range;
use std::path::Path;

use crate::chat::{BUILT_IN_ROLES, Chat, Role};
use crate::diagnostic::{Diagnostic, DiagnosticCode, LineIndex};
use crate::front_matter::{Attach, Document};
use crate::renderer::Renderer;
use crate::suggest;
use crate::template::Variable;

/// The values of `kind`.
const KINDS: [&str; 2] = ["text", "chat"];

/// What a chat file's front matter declares, which its locale variants
/// inherit unless they say otherwise.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChatDecl {
    pub(crate) roles: Vec<String>,
    pub(crate) attach: Option<Attach>,
}

impl ChatDecl {
    /// The file's own declaration, each key it leaves out taken from
    /// `inherited` (its default's).
    pub(crate) fn of(doc: &Document<'_>, inherited: Option<&ChatDecl>) -> ChatDecl {
        let inherited = inherited.cloned().unwrap_or_default();
        ChatDecl {
            roles: doc.meta.roles.clone().unwrap_or(inherited.roles),
            attach: doc.meta.attach.clone().or(inherited.attach),
        }
    }
}

/// The kind of a file: `true` for chat. `default` is its default's
/// declaration for a locale variant (`Some(None)`: a text default), `None`
/// for a default file. A variant inherits its default's kind and cannot
/// change it.
pub(crate) fn is_chat(
    doc: &Document<'_>,
    path: &Path,
    default: Option<Option<&ChatDecl>>,
) -> Result<bool, Diagnostic> {
    let declared = match doc.meta.kind.as_deref() {
        None => None,
        Some("chat") => Some(true),
        Some("text") => Some(false),
        Some(other) => {
            let hint = suggest::did_you_mean(other, KINDS).unwrap_or_else(|| {
                "`kind` is `text` (the default) or `chat` (messages under role headings)".to_owned()
            });
            return Err(
                at_key(doc, path, "kind", format!("unknown kind `{other}`")).suggest(Some(hint))
            );
        }
    };
    let inherited = default.map(|decl| decl.is_some());
    match (declared, inherited) {
        (Some(own), Some(theirs)) if own != theirs => {
            let (own, theirs) = (KINDS[own as usize], KINDS[theirs as usize]);
            Err(at_key(
                doc,
                path,
                "kind",
                format!("this locale variant is `{own}` but its default is `{theirs}`"),
            )
            .suggest(Some(
                "a variant has its default's kind: remove `kind`, or change the default".to_owned(),
            )))
        }
        (Some(own), _) => Ok(own),
        (None, inherited) => Ok(inherited.unwrap_or(false)),
    }
}

/// `roles` and `attach` in a text file: they only mean something in a
/// chat file.
pub(crate) fn chat_keys_in_text(doc: &Document<'_>, path: &Path) -> Result<(), Diagnostic> {
    let key = match (&doc.meta.roles, &doc.meta.attach) {
        (Some(_), _) => "roles",
        (_, Some(_)) => "attach",
        _ => return Ok(()),
    };
    Err(at_key(
        doc,
        path,
        key,
        format!("`{key}` applies to chat prompts, and this file is text"),
    )
    .suggest(Some(
        "add `kind: chat` and write the messages under role headings, or remove it".to_owned(),
    )))
}

/// One `# ...` heading of a chat file and the content below it.
struct Section {
    heading: Heading,
    /// The heading's text after `# `, in the file.
    span: Range<usize>,
    /// The content up to the next heading, in the file.
    content: Range<usize>,
}

enum Heading {
    Role(String),
    History(String),
}

/// The messages of a chat file, each compiled with `variables`; every
/// problem of the file when it has any.
pub(crate) fn parse(
    doc: &Document<'_>,
    path: &Path,
    variables: &[Variable],
    decl: &ChatDecl,
) -> Result<Chat, Vec<Diagnostic>> {
    let text = doc.text();
    let lines = LineIndex::new(text);
    let error = |message: String, span: Range<usize>, hint: String| {
        Diagnostic::error(DiagnosticCode::Chat, message)
            .in_file(path)
            .at(&lines, span)
            .suggest(Some(hint))
    };
    let mut problems = declared_roles_problems(doc, path, &decl.roles);
    let (before, sections) = sections(text, doc.body_offset(text));
    if let Some(span) = visible(text, before.clone()) {
        problems.push(error(
            "text before the first role heading belongs to no message".to_owned(),
            span,
            "start the body with a role heading such as `# system`".to_owned(),
        ));
    } else if sections.is_empty() {
        problems.push(error(
            "a chat file needs at least one message".to_owned(),
            before,
            "write `# system` on a line, then the message below it".to_owned(),
        ));
    }
    let mut chat = decl
        .roles
        .iter()
        .fold(Chat::new(), |chat, role| chat.role(role.as_str()));
    let mut placeholders: Vec<&str> = Vec::new();
    for section in &sections {
        let content = &text[section.content.clone()];
        match &section.heading {
            Heading::Role(name) => {
                let Some(role) = role(name, decl, section.span.clone(), &error, &mut problems)
                else {
                    continue;
                };
                if visible(text, section.content.clone()).is_none() {
                    problems.push(error(
                        format!("the `{name}` message is empty"),
                        section.span.clone(),
                        "write the message below its heading, or remove the heading".to_owned(),
                    ));
                    continue;
                }
                let line_offset = lines.position(section.content.start).line - 1;
                match doc.compile(path, content, line_offset, variables) {
                    Ok(renderer) => chat = chat.message(role, renderer),
                    Err(d) => problems.push(d),
                }
            }
            Heading::History(name) => {
                if let Some(problem) =
                    placeholder_problem(name, &placeholders, section, text, &error)
                {
                    problems.push(problem);
                    continue;
                }
                placeholders.push(name);
                chat = chat.history(name.as_str());
            }
        }
    }
    if let Some(attach) = &decl.attach {
        match attach_index(&chat, attach) {
            Ok(index) => chat = chat.attach(index),
            Err((message, hint)) => {
                problems.push(at_key(doc, path, "attach", message).suggest(Some(hint)))
            }
        }
    }
    match problems.is_empty() {
        true => Ok(chat),
        false => Err(problems),
    }
}

/// The role a heading names: built in or declared; an error otherwise,
/// with the nearest role.
fn role(
    name: &str,
    decl: &ChatDecl,
    span: Range<usize>,
    error: &impl Fn(String, Range<usize>, String) -> Diagnostic,
    problems: &mut Vec<Diagnostic>,
) -> Option<Role> {
    let known = || {
        BUILT_IN_ROLES
            .into_iter()
            .chain(decl.roles.iter().map(String::as_str))
    };
    if known().any(|r| r == name) {
        return Some(Role::named(name));
    }
    let listed: Vec<String> = known().map(|r| format!("`{r}`")).collect();
    let placeholder = (name == "history")
        .then(|| "a history placeholder names its history: `# history: conversation`".to_owned());
    let hint = placeholder
        .or_else(|| suggest::did_you_mean(name, known()))
        .unwrap_or_else(|| {
            format!(
                "the roles are {}; declare another with `roles: [{name}]` in the front matter",
                listed.join(", ")
            )
        });
    let message = match name.is_empty() {
        true => "a role heading without a role".to_owned(),
        false => format!("unknown role `{name}`"),
    };
    problems.push(error(message, span, hint));
    None
}

/// What is wrong with a `# history: NAME` section, if anything.
fn placeholder_problem(
    name: &str,
    seen: &[&str],
    section: &Section,
    text: &str,
    error: &impl Fn(String, Range<usize>, String) -> Diagnostic,
) -> Option<Diagnostic> {
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if name.is_empty() {
        return Some(error(
            "a history placeholder without a name".to_owned(),
            section.span.clone(),
            "name the history the caller passes: `# history: conversation`".to_owned(),
        ));
    }
    if !name.chars().all(valid) {
        return Some(error(
            format!(
                "history placeholder name `{name}` has characters other than letters, digits, `_` and `-`"
            ),
            section.span.clone(),
            "use a name such as `conversation`".to_owned(),
        ));
    }
    if seen.contains(&name) {
        return Some(error(
            format!("history placeholder `{name}` is declared twice"),
            section.span.clone(),
            "give each placeholder its own name".to_owned(),
        ));
    }
    let span = visible(text, section.content.clone())?;
    Some(error(
        format!("text below history placeholder `{name}` belongs to no message"),
        span,
        "start a message with a role heading (`# user`) before the text".to_owned(),
    ))
}

/// Declared roles are new names: not built in, letters, digits, `_`, `-`.
fn declared_roles_problems(doc: &Document<'_>, path: &Path, roles: &[String]) -> Vec<Diagnostic> {
    let valid = |r: &str| {
        r.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && r.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    let bad = roles.iter().find_map(|r| match r {
        r if BUILT_IN_ROLES.contains(&r.as_str()) => Some(format!(
            "`{r}` is a built-in role: `roles` declares custom ones"
        )),
        r if !valid(r) => Some(format!(
            "role `{r}` must start with a letter and hold only letters, digits, `_` and `-`"
        )),
        _ => None,
    });
    let hint = "list only custom roles, such as `roles: [critic]`".to_owned();
    bad.map(|message| at_key(doc, path, "roles", message).suggest(Some(hint)))
        .into_iter()
        .collect()
}

/// The message `attach` names, counted among messages from 0.
fn attach_index(chat: &Chat, attach: &Attach) -> Result<usize, (String, String)> {
    let count = chat.message_count();
    let hint = "name a role (`system`, `last-user`) or a message's number, from 1".to_owned();
    match attach {
        Attach::Number(n) if (1..=count).contains(n) => Ok(n - 1),
        Attach::Number(n) => Err((
            format!("`attach: {n}` names message {n}, but the file has {count}"),
            hint,
        )),
        Attach::Role(name) => {
            let (last, role) = match name.strip_prefix("last-") {
                Some(role) => (true, role),
                None => (false, name.as_str()),
            };
            let mut matching = chat
                .roles()
                .enumerate()
                .filter(|(_, r)| r.as_str() == role)
                .map(|(i, _)| i);
            let found = match last {
                true => matching.last(),
                false => matching.next(),
            };
            found.ok_or_else(|| {
                (
                    format!("`attach: {name}`: the file has no `{role}` message"),
                    hint,
                )
            })
        }
    }
}

/// The body's sections, after what precedes the first heading (its range).
fn sections(text: &str, body_start: usize) -> (Range<usize>, Vec<Section>) {
    let mut sections: Vec<Section> = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut offset = body_start;
    let mut before = body_start..text.len();
    for line in text[body_start..].split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        if let Some(marker) = fence_marker(content) {
            fence = match fence {
                None => Some(marker),
                Some((c, len)) if marker.0 == c && marker.1 >= len && is_closing(content) => None,
                open => open,
            };
            continue;
        }
        if fence.is_some() {
            continue;
        }
        let Some(heading) = role_heading(content) else {
            continue;
        };
        match sections.last_mut() {
            Some(last) => last.content.end = start,
            None => before.end = start,
        }
        let at = start + (content.len() - heading.len());
        let heading_text = heading.trim_end();
        sections.push(Section {
            heading: parse_heading(heading_text),
            span: at..at + heading_text.len(),
            content: offset..text.len(),
        });
    }
    (before, sections)
}

/// The text after `# ` of a level-one heading line; `Some("")` for a
/// bare `#`.
fn role_heading(line: &str) -> Option<&str> {
    if line == "#" {
        return Some("");
    }
    line.strip_prefix("# ").map(str::trim_start)
}

fn parse_heading(heading: &str) -> Heading {
    match heading.strip_prefix("history:") {
        Some(name) => Heading::History(name.trim().to_owned()),
        None => Heading::Role(heading.to_owned()),
    }
}

/// A code fence (three or more backticks or tildes, indented by at most
/// three spaces): its character and length.
fn fence_marker(line: &str) -> Option<(char, usize)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let c = trimmed.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = trimmed.chars().take_while(|x| *x == c).count();
    (len >= 3).then_some((c, len))
}

/// A closing fence has nothing after its marker.
fn is_closing(line: &str) -> bool {
    line.trim().chars().all(|c| c == '`' || c == '~')
}

/// The visible (non-blank) part of `range` in `text`, if any.
fn visible(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    let part = &text[range.clone()];
    let trimmed = part.trim_start();
    let start = range.start + (part.len() - trimmed.len());
    let end = start + trimmed.trim_end().len();
    (end > start).then_some(start..end)
}

/// An error at front matter `key` of the file.
fn at_key(doc: &Document<'_>, path: &Path, key: &str, message: String) -> Diagnostic {
    let d = Diagnostic::error(DiagnosticCode::Chat, message).in_file(path);
    match doc.key_span(key) {
        Some(span) => d.at(&LineIndex::new(doc.text()), span),
        None => d,
    }
}

/// The content renderers of a chat, for the warnings about its file.
pub(crate) fn contents(chat: &Chat) -> impl Iterator<Item = &Renderer> {
    chat.items().iter().filter_map(|item| match item {
        crate::chat::Item::Message(_, content) => Some(content),
        crate::chat::Item::History(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chat(text: &str) -> Result<Chat, Vec<Diagnostic>> {
        let path = Path::new("c.md");
        let doc = Document::parse(text, path).unwrap();
        parse(&doc, path, &[], &ChatDecl::of(&doc, None))
    }

    fn first_error(text: &str) -> Diagnostic {
        parse_chat(text).unwrap_err().remove(0)
    }

    #[test]
    fn headings_start_messages_but_not_inside_code_fences_or_deeper() {
        let chat = parse_chat(
            "---\nkind: chat\n---\n# system\nRules:\n## Tone\nBe calm.\n```md\n# user\n```\n~~~\n# assistant\n~~~\n# user\nHi\n\n# history: past\n",
        )
        .unwrap();
        let roles: Vec<&str> = chat.roles().map(Role::as_str).collect();
        assert_eq!(roles, ["system", "user"]);
        assert_eq!(chat.placeholders().collect::<Vec<_>>(), ["past"]);
    }

    #[test]
    fn an_unknown_role_suggests_the_closest_with_its_line_and_column() {
        let err = first_error("---\nkind: chat\n---\n# system\nA\n\n# asistant\nB\n");
        assert_eq!(err.code, DiagnosticCode::Chat);
        assert_eq!(err.message, "unknown role `asistant`");
        assert_eq!(err.suggestion.as_deref(), Some("did you mean `assistant`?"));
        let at = err.position.unwrap();
        assert_eq!((at.line, at.column), (7, 3));
        let err = first_error("---\nkind: chat\nroles: [critic]\n---\n# reviewer\nB\n");
        assert!(err.suggestion.unwrap().contains("`critic`"));
        let err = first_error("---\nkind: chat\n---\n# system\nS\n# history\n");
        assert!(
            err.suggestion
                .unwrap()
                .contains("`# history: conversation`")
        );
    }

    #[test]
    fn empty_messages_nameless_placeholders_and_stray_text_are_errors() {
        let err = first_error("---\nkind: chat\n---\n# system\n\n# user\nHi\n");
        assert_eq!(err.message, "the `system` message is empty");
        assert_eq!(err.position.unwrap().line, 4);
        let err = first_error("---\nkind: chat\n---\n# system\nS\n# history:\n");
        assert_eq!(err.message, "a history placeholder without a name");
        let err = first_error("---\nkind: chat\n---\nHello\n# system\nS\n");
        assert_eq!(
            err.message,
            "text before the first role heading belongs to no message"
        );
        assert_eq!(err.position.unwrap().line, 4);
        let err = first_error("---\nkind: chat\n---\n\n");
        assert_eq!(err.message, "a chat file needs at least one message");
    }

    #[test]
    fn attach_names_a_role_the_last_of_a_role_or_a_number() {
        let body = "# system\nS\n# user\nU1\n# assistant\nA\n# user\nU2\n";
        for (attach, expected) in [("system", 0), ("last-user", 3), ("user", 1), ("3", 2)] {
            let chat =
                parse_chat(&format!("---\nkind: chat\nattach: {attach}\n---\n{body}")).unwrap();
            let at = chat.attached().unwrap();
            let messages_before = chat.items()[..at].len();
            assert_eq!(messages_before, expected, "{attach}");
        }
        let err = first_error(&format!("---\nkind: chat\nattach: 9\n---\n{body}"));
        assert_eq!(
            err.message,
            "`attach: 9` names message 9, but the file has 4"
        );
        assert_eq!(err.position.unwrap().line, 3);
    }
}
