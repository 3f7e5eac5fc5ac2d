//! Composing one prompt from its parts, and the trace of where each part
//! came from.
//!
//! The rule, everywhere: pinned head blocks, the body, pinned tail blocks,
//! then the appenders in registration order, joined by one blank line. A
//! part's leading blank lines and trailing white space are dropped, and a
//! part that is left empty adds nothing.

use std::fmt;
use std::ops::Range;

use crate::config::{UserChoice, UserOrigin, UserPart};
use crate::error::{Error, ErrorKind};
use crate::id::PromptId;
use crate::locale::Locale;
use crate::renderer::{Failure, RenderCx, Renderer};

const SEPARATOR: &str = "\n\n";

/// An appended rule and its place in the registration order, shared by
/// per-id appenders and rules for every prompt so the two interleave as they
/// were registered.
#[derive(Clone, Debug)]
pub(crate) struct Appender {
    pub(crate) seq: u64,
    pub(crate) renderer: Renderer,
}

/// Which part of a prompt a piece of text came from.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// A pinned block before the body; `index` counts from 0 in
    /// registration order.
    PinnedHead {
        /// Position among the head blocks.
        index: usize,
    },
    /// The registered default body.
    Default,
    /// A locale override of the body.
    Override {
        /// The locale the override was registered for: the render's locale
        /// or the entry of its fallback chain that matched.
        locale: Locale,
    },
    /// A block from the user's configuration: an inline setting or a prompt
    /// file, after the body or in its place.
    User(Box<UserOrigin>),
    /// A pinned block after the body.
    PinnedTail {
        /// Position among the tail blocks.
        index: usize,
    },
    /// A rule appended to this prompt with
    /// [`append`](crate::PromptRegistry::append).
    Appender {
        /// Position among this prompt's appenders.
        index: usize,
    },
    /// A rule appended to every prompt with
    /// [`append_all`](crate::PromptRegistry::append_all).
    GlobalAppender {
        /// Position among the rules for every prompt.
        index: usize,
    },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::PinnedHead { index } => write!(f, "pinned head block #{}", index + 1),
            Origin::Default => f.write_str("default"),
            Origin::Override { locale } => write!(f, "override for `{locale}`"),
            Origin::User(user) => write!(f, "{user}"),
            Origin::PinnedTail { index } => write!(f, "pinned tail block #{}", index + 1),
            Origin::Appender { index } => write!(f, "appender #{}", index + 1),
            Origin::GlobalAppender { index } => write!(f, "append_all rule #{}", index + 1),
        }
    }
}

/// One non-blank part of a rendered prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// Where the text came from.
    pub origin: Origin,
    /// Its byte range in [`Rendered::text`].
    pub range: Range<usize>,
}

/// A rendered prompt with the provenance of every part, from
/// [`render_traced`](crate::PromptRegistry::render_traced).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// The final text, identical to what `render` returns.
    pub text: String,
    /// The locale the prompt was rendered for.
    pub locale: Locale,
    /// The parts in order; the separators between them are not parts.
    pub parts: Vec<Part>,
}

impl Rendered {
    /// The text of one part.
    pub fn part_text(&self, part: &Part) -> &str {
        self.text.get(part.range.clone()).unwrap_or_default()
    }
}

/// Borrowed form of an [`Origin`], so the untraced path clones nothing.
#[derive(Clone, Copy)]
pub(crate) enum Slot<'a> {
    Head(usize),
    Default,
    Override(&'a Locale),
    User(UserPart<'a>),
    Tail(usize),
    Appender(usize),
    Global(usize),
}

impl Slot<'_> {
    fn origin(self) -> Origin {
        match self {
            Slot::Head(index) => Origin::PinnedHead { index },
            Slot::Default => Origin::Default,
            Slot::Override(locale) => Origin::Override {
                locale: locale.clone(),
            },
            Slot::User(part) => Origin::User(Box::new(part.origin())),
            Slot::Tail(index) => Origin::PinnedTail { index },
            Slot::Appender(index) => Origin::Appender { index },
            Slot::Global(index) => Origin::GlobalAppender { index },
        }
    }
}

/// The parts one render will run, chosen by the snapshot.
pub(crate) struct Plan<'a> {
    pub(crate) head: &'a [Renderer],
    pub(crate) body: (Slot<'a>, &'a Renderer),
    pub(crate) user: Option<UserChoice<'a>>,
    pub(crate) tail: &'a [Renderer],
    pub(crate) appenders: &'a [Appender],
    pub(crate) global: &'a [Appender],
}

impl<'a> Plan<'a> {
    /// Visits every part in composition order.
    fn for_each<E>(
        &self,
        mut visit: impl FnMut(Slot<'a>, &'a Renderer) -> Result<(), E>,
    ) -> Result<(), E> {
        for (i, r) in self.head.iter().enumerate() {
            visit(Slot::Head(i), r)?;
        }
        let user = self.user.as_ref();
        if !user.is_some_and(|u| u.replaces_body) {
            visit(self.body.0, self.body.1)?;
        }
        for part in user.iter().flat_map(|u| u.parts.iter().flatten()) {
            visit(Slot::User(*part), part.renderer)?;
        }
        for (i, r) in self.tail.iter().enumerate() {
            visit(Slot::Tail(i), r)?;
        }
        self.for_each_appender(visit)
    }

    /// Per-id and global appenders merged by registration order.
    fn for_each_appender<E>(
        &self,
        mut visit: impl FnMut(Slot<'a>, &'a Renderer) -> Result<(), E>,
    ) -> Result<(), E> {
        let (mut own, mut global) = (0, 0);
        loop {
            let next_own = self.appenders.get(own);
            let next_global = self.global.get(global);
            match (next_own, next_global) {
                (Some(a), Some(g)) if a.seq < g.seq => {
                    visit(Slot::Appender(own), &a.renderer)?;
                    own += 1;
                }
                (_, Some(g)) => {
                    visit(Slot::Global(global), &g.renderer)?;
                    global += 1;
                }
                (Some(a), None) => {
                    visit(Slot::Appender(own), &a.renderer)?;
                    own += 1;
                }
                (None, None) => return Ok(()),
            }
        }
    }

    /// Bytes of static text plus separators: the output's starting capacity.
    fn capacity_hint(&self) -> usize {
        let mut len = 0;
        let _ = self.for_each::<()>(|_, r| {
            len += r.static_len() + SEPARATOR.len();
            Ok(())
        });
        len
    }
}

/// Renders `plan` into one string, recording parts when `trace` is given.
pub(crate) fn compose(
    id: &PromptId,
    plan: &Plan<'_>,
    cx: &RenderCx<'_>,
    mut trace: Option<&mut Vec<Part>>,
) -> Result<String, Error> {
    let mut out = String::with_capacity(plan.capacity_hint());
    plan.for_each(|slot, renderer| {
        let text = renderer
            .render(cx)
            .map_err(|failure| part_failed(id, slot, cx, failure))?;
        let part = trim_part(&text);
        if part.is_empty() {
            return Ok(());
        }
        if !out.is_empty() {
            out.push_str(SEPARATOR);
        }
        let start = out.len();
        out.push_str(part);
        if let Some(parts) = trace.as_deref_mut() {
            parts.push(Part {
                origin: slot.origin(),
                range: start..out.len(),
            });
        }
        Ok(())
    })?;
    Ok(out)
}

/// Drops leading blank lines and trailing white space, keeping the
/// indentation of the first line that has text.
fn trim_part(text: &str) -> &str {
    let text = text.trim_end();
    let body_start = text.len() - text.trim_start().len();
    let line_start = text[..body_start].rfind('\n').map_or(0, |i| i + 1);
    &text[line_start..]
}

fn part_failed(id: &PromptId, slot: Slot<'_>, cx: &RenderCx<'_>, failure: Failure) -> Error {
    let origin = slot.origin();
    match failure {
        Failure::WrongContext { expected } => Error::new(
            ErrorKind::ContextType,
            format!(
                "the {origin} of prompt `{id}` expects a context of type `{expected}`, but was rendered with `{}`",
                cx.ctx_type
            ),
        )
        .with_suggestion(format!("render `{id}` with a `{expected}`")),
        Failure::Panicked { message } => Error::new(
            ErrorKind::RendererPanicked,
            format!("the {origin} of prompt `{id}` panicked while rendering for `{}`: {message}", cx.locale),
        ),
        Failure::Template { message } => Error::new(
            ErrorKind::Template,
            format!("the {origin} of prompt `{id}` failed: {message}"),
        ),
    }
    .with_id(id.as_str())
    .with_locale(cx.locale.as_str())
}

#[cfg(test)]
mod tests {
    use super::trim_part;

    #[test]
    fn trim_drops_blank_lines_around_a_part_but_keeps_indentation() {
        assert_eq!(trim_part("\n- rule\n"), "- rule");
        assert_eq!(trim_part("\n \n    code\n  \n"), "    code");
        assert_eq!(trim_part("  indented"), "  indented");
        assert_eq!(trim_part(" \n\t\n "), "");
        assert_eq!(trim_part(""), "");
    }
}
