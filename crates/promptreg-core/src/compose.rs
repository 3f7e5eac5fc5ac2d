//! Composing one prompt from its parts, and the trace of where each part
//! came from.
//!
//! The rule, everywhere: pinned head blocks, the body, the user's block(s)
//! (which replace the body in mode `override` or when inline), pinned tail
//! blocks, then the appenders in registration order, joined by one blank
//! line. A
//! part's leading blank lines and trailing white space are dropped, and a
//! part that is left empty adds nothing.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;

use crate::contract::Contract;
use crate::error::{Error, ErrorKind};
use crate::id::PromptId;
use crate::json_object::JsonObject;
use crate::layer::{LayerChoice, LayerPart};
use crate::locale::Locale;
use crate::locale_match::{LocaleMatch, LocaleStep, LookupStep};
use crate::provenance::Provenance;
use crate::renderer::{Failure, RenderCx, Renderer, trimmed_range};

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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Origin {
    /// A pinned block before the body; `index` counts from 0 in
    /// registration order.
    PinnedHead {
        /// Position among the head blocks.
        index: usize,
        /// The locale variant whose text was used, `None` for the
        /// default's text.
        translation: Option<LocaleMatch>,
    },
    /// The registered default body.
    Default,
    /// A locale override of the body.
    Override {
        /// The locale the override was registered for: the render's locale
        /// or the variant that locale matching found.
        locale: Locale,
        /// The step of locale matching that found it.
        step: LocaleStep,
    },
    /// A block from a layer over the application's prompts, the user's
    /// configuration: an inline setting or a prompt file, after the body or
    /// in its place. [`Part::provenance`] says which.
    User {
        /// Whether the block takes the body's place (mode `override`, or
        /// inline text).
        replaces_body: bool,
    },
    /// A pinned block after the body.
    PinnedTail {
        /// Position among the tail blocks.
        index: usize,
        /// The locale variant whose text was used, `None` for the
        /// default's text.
        translation: Option<LocaleMatch>,
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
            Origin::PinnedHead { index, translation } => {
                write!(f, "pinned head block #{}", index + 1)?;
                write_translation(f, translation.as_ref())
            }
            Origin::Default => f.write_str("default"),
            Origin::Override { locale, .. } => write!(f, "override for `{locale}`"),
            Origin::User {
                replaces_body: true,
            } => f.write_str("user block in place of the body"),
            Origin::User { .. } => f.write_str("user block"),
            Origin::PinnedTail { index, translation } => {
                write!(f, "pinned tail block #{}", index + 1)?;
                write_translation(f, translation.as_ref())
            }
            Origin::Appender { index } => write!(f, "appender #{}", index + 1),
            Origin::GlobalAppender { index } => write!(f, "append_all rule #{}", index + 1),
        }
    }
}

fn write_translation(f: &mut fmt::Formatter<'_>, translation: Option<&LocaleMatch>) -> fmt::Result {
    match translation {
        Some(matched) => write!(f, " (`{}` translation)", matched.locale),
        None => Ok(()),
    }
}

/// One non-blank part of a rendered prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Part {
    /// Which part of the prompt it is.
    pub origin: Origin,
    /// Its byte range in [`Rendered::text`].
    pub range: Range<usize>,
    /// Which source supplied it, when the source recorded it: a file of
    /// the user's configuration, say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Arc<Provenance>>,
    /// The snippet files its template included in this render (the
    /// variants the locale picked), in the order first included.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub snippets: Vec<std::path::PathBuf>,
}

/// A rendered prompt with the provenance of every part, from
/// [`render_traced`](crate::PromptRegistry::render_traced): the "why" of a
/// render as data. `promptreg explain` prints it, and `explain --json` is
/// its serialisation, each part with its text.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rendered {
    /// The prompt rendered.
    pub id: PromptId,
    /// The final text, identical to what `render` returns.
    pub text: String,
    /// The locale the prompt was rendered for.
    pub locale: Locale,
    /// The steps of locale matching, in the order they were tried.
    pub lookup: Vec<LookupStep>,
    /// The parts in order; the separators between them are not parts.
    pub parts: Vec<Part>,
    /// The model settings for this locale, as
    /// [`Snapshot::model_settings`](crate::Snapshot::model_settings) gives
    /// them.
    pub model: Option<JsonObject>,
    /// The prompt's metadata (its default's).
    pub metadata: Option<JsonObject>,
    /// The tools and output schema for this locale, as
    /// [`Snapshot::contract`](crate::Snapshot::contract) gives them.
    pub contract: Option<Arc<Contract>>,
}

impl Rendered {
    /// The text of one part.
    pub fn part_text(&self, part: &Part) -> &str {
        self.text.get(part.range.clone()).unwrap_or_default()
    }
}

impl Serialize for Rendered {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;

        /// A part with its text, for readers that cannot slice by bytes.
        #[derive(Serialize)]
        struct PartWithText<'a> {
            #[serde(flatten)]
            part: &'a Part,
            text: &'a str,
        }

        let parts: Vec<PartWithText<'_>> = self
            .parts
            .iter()
            .map(|part| PartWithText {
                part,
                text: self.part_text(part),
            })
            .collect();
        let mut out = serializer.serialize_struct("Rendered", 8)?;
        out.serialize_field("id", &self.id)?;
        out.serialize_field("locale", &self.locale)?;
        out.serialize_field("lookup", &self.lookup)?;
        out.serialize_field("text", &self.text)?;
        out.serialize_field("parts", &parts)?;
        // Present when the prompt has some.
        for (key, value) in [("model", &self.model), ("metadata", &self.metadata)] {
            match value {
                Some(value) => out.serialize_field(key, value)?,
                None => out.skip_field(key)?,
            }
        }
        match &self.contract {
            Some(contract) => out.serialize_field("contract", &**contract)?,
            None => out.skip_field("contract")?,
        }
        out.end()
    }
}

/// A locale variant found by locale matching, borrowed.
#[derive(Clone, Copy)]
pub(crate) struct Matched<'a> {
    pub(crate) locale: &'a Locale,
    pub(crate) step: LocaleStep,
    pub(crate) provenance: Option<&'a Arc<Provenance>>,
}

/// Borrowed form of an [`Origin`], so the untraced path clones nothing.
#[derive(Clone, Copy)]
pub(crate) enum Slot<'a> {
    /// A pinned block, its translation if any, and the provenance of the
    /// text used.
    Head(usize, Option<Matched<'a>>, Option<&'a Arc<Provenance>>),
    Default(Option<&'a Arc<Provenance>>),
    Override(Matched<'a>),
    User(&'a LayerPart<'a>, bool),
    Tail(usize, Option<Matched<'a>>, Option<&'a Arc<Provenance>>),
    Appender(usize),
    Global(usize),
}

impl Slot<'_> {
    fn origin(self) -> Origin {
        let translation = |matched: Option<Matched<'_>>| {
            matched.map(|m| LocaleMatch {
                locale: m.locale.clone(),
                step: m.step,
            })
        };
        match self {
            Slot::Head(index, matched, _) => Origin::PinnedHead {
                index,
                translation: translation(matched),
            },
            Slot::Default(_) => Origin::Default,
            Slot::Override(m) => Origin::Override {
                locale: m.locale.clone(),
                step: m.step,
            },
            Slot::User(_, replaces_body) => Origin::User { replaces_body },
            Slot::Tail(index, matched, _) => Origin::PinnedTail {
                index,
                translation: translation(matched),
            },
            Slot::Appender(index) => Origin::Appender { index },
            Slot::Global(index) => Origin::GlobalAppender { index },
        }
    }
}

impl Slot<'_> {
    fn provenance(self) -> Option<Arc<Provenance>> {
        let recorded = match self {
            Slot::Head(_, _, p) | Slot::Tail(_, _, p) | Slot::Default(p) => p,
            Slot::Override(m) => m.provenance,
            Slot::User(part, _) => Some(&part.provenance),
            Slot::Appender(_) | Slot::Global(_) => None,
        };
        recorded.cloned()
    }

    /// The part, for a person: its origin, and where it came from when the
    /// source said.
    fn describe(self) -> String {
        match self {
            Slot::User(part, _) => {
                let p = &part.provenance;
                let mut what = format!("user {}", p.what);
                if let Some(file) = &p.file {
                    what.push_str(&format!(" {}", file.display()));
                }
                if let Some(mode) = &p.mode {
                    what.push_str(&format!(" (mode {mode})"));
                }
                what
            }
            other => other.origin().to_string(),
        }
    }
}

/// The pinned blocks on one side of the body, as one render uses them.
pub(crate) enum Pins<'a> {
    /// The default's blocks: the prompt has no translated pins.
    Default(&'a [Renderer]),
    /// Each block with the translation locale matching chose, if any.
    Resolved(Vec<(Option<Matched<'a>>, &'a Renderer)>),
}

impl<'a> Pins<'a> {
    fn len(&self) -> usize {
        match self {
            Pins::Default(blocks) => blocks.len(),
            Pins::Resolved(blocks) => blocks.len(),
        }
    }

    /// Block `index` and the translation it comes from.
    #[inline]
    fn get(&self, index: usize) -> Option<(Option<Matched<'a>>, &'a Renderer)> {
        match self {
            Pins::Default(blocks) => blocks.get(index).map(|r| (None, r)),
            Pins::Resolved(blocks) => blocks.get(index).copied(),
        }
    }

    fn static_len(&self) -> usize {
        (0..self.len())
            .filter_map(|i| self.get(i))
            .map(|(_, r)| r.static_len())
            .sum()
    }
}

/// The parts one render will run, chosen by the snapshot.
pub(crate) struct Plan<'a> {
    pub(crate) head: Pins<'a>,
    /// The provenance of the default, whose pinned blocks are used where
    /// no translation is.
    pub(crate) pins_provenance: Option<&'a Arc<Provenance>>,
    pub(crate) body: (Slot<'a>, &'a Renderer),
    pub(crate) user: Option<LayerChoice<'a>>,
    pub(crate) tail: Pins<'a>,
    pub(crate) appenders: &'a [Appender],
    pub(crate) global: &'a [Appender],
}

impl<'a> Plan<'a> {
    /// Visits every part in composition order.
    #[inline]
    fn for_each<'p, E>(
        &'p self,
        mut visit: impl FnMut(Slot<'p>, &'p Renderer) -> Result<(), E>,
    ) -> Result<(), E> {
        for i in 0..self.head.len() {
            if let Some((matched, r)) = self.head.get(i) {
                let provenance = matched.map_or(self.pins_provenance, |m| m.provenance);
                visit(Slot::Head(i, matched, provenance), r)?;
            }
        }
        let user = self.user.as_ref();
        if !user.is_some_and(|u| u.replaces_body) {
            visit(self.body.0, self.body.1)?;
        }
        if let Some(u) = user {
            for part in u.parts.iter().flatten() {
                visit(Slot::User(part, u.replaces_body), part.renderer)?;
            }
        }
        for i in 0..self.tail.len() {
            if let Some((matched, r)) = self.tail.get(i) {
                let provenance = matched.map_or(self.pins_provenance, |m| m.provenance);
                visit(Slot::Tail(i, matched, provenance), r)?;
            }
        }
        self.for_each_appender(visit)
    }

    /// Per-id and global appenders merged by registration order.
    #[inline]
    fn for_each_appender<'p, E>(
        &'p self,
        mut visit: impl FnMut(Slot<'p>, &'p Renderer) -> Result<(), E>,
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
        let mut len = self.body.1.static_len() + self.head.static_len() + self.tail.static_len();
        let mut parts =
            1 + self.head.len() + self.tail.len() + self.appenders.len() + self.global.len();
        for appender in self.appenders.iter().chain(self.global) {
            len += appender.renderer.static_len();
        }
        for part in self.user.iter().flat_map(|u| u.parts.iter().flatten()) {
            len += part.renderer.static_len();
            parts += 1;
        }
        len + parts * SEPARATOR.len()
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
        let (text, snippets) = match trace {
            Some(_) => renderer.render_recording(cx),
            None => (renderer.render(cx), Vec::new()),
        };
        let text = text.map_err(|failure| part_failed(id, slot.describe(), cx, failure))?;
        let Some(start) = append(&mut out, text) else {
            return Ok(());
        };
        if let Some(parts) = trace.as_deref_mut()
            && out.len() > start
        {
            parts.push(Part {
                origin: slot.origin(),
                range: start..out.len(),
                provenance: slot.provenance(),
                snippets,
            });
        }
        Ok(())
    })?;
    Ok(out)
}

/// Appends a rendered part to `out`, trimmed, after a separator; returns
/// where it starts, `None` for a part left blank.
#[inline]
fn append(out: &mut String, text: Cow<'_, str>) -> Option<usize> {
    match text {
        // The first computed part becomes the output: no copy.
        Cow::Owned(owned) if out.is_empty() => {
            *out = owned;
            let kept = trimmed_range(out);
            out.truncate(kept.end);
            out.drain(..kept.start);
            Some(0)
        }
        // Static text was trimmed once, when it was stored.
        Cow::Borrowed(part) => push(out, part),
        Cow::Owned(owned) => push(out, &owned[trimmed_range(&owned)]),
    }
}

/// Appends a non-blank part after a separator; returns where it starts.
#[inline]
fn push(out: &mut String, part: &str) -> Option<usize> {
    if part.is_empty() {
        return None;
    }
    if !out.is_empty() {
        out.push_str(SEPARATOR);
    }
    out.push_str(part);
    Some(out.len() - part.len())
}

/// The parts of a [`Plan`] in composition order, owned, and the output's
/// starting capacity: what a published snapshot keeps for an id and a
/// locale, so that a render only runs the computed parts and copies the
/// others.
///
/// Adjacent static parts are joined once, with their separators, into one
/// text, so that a composition with no computed part is one copy; a
/// [`JoinBudget`] bounds what the joined texts of one snapshot hold. A
/// single static part stays shared with the prompt it comes from.
pub(crate) struct Prepared {
    steps: Box<[Step]>,
    capacity: usize,
}

/// One part of a [`Prepared`] composition.
enum Step {
    /// Static text, trimmed and not blank.
    Text(Arc<str>),
    /// A computed part, and its place in the plan.
    Computed(usize, Renderer),
}

impl Prepared {
    pub(crate) fn of(plan: &Plan<'_>, budget: &JoinBudget) -> Self {
        let mut steps: Vec<Step> = Vec::new();
        // Adjacent static parts not yet in `steps`.
        let mut run: Vec<Arc<str>> = Vec::new();
        let mut index = 0;
        let _ = plan.for_each(|_, renderer| {
            match renderer.shared_text() {
                Some(text) if text.is_empty() => {}
                Some(text) => run.push(text),
                None => {
                    join(&mut run, budget, &mut steps);
                    steps.push(Step::Computed(index, renderer.clone()));
                }
            }
            index += 1;
            Ok::<_, std::convert::Infallible>(())
        });
        join(&mut run, budget, &mut steps);
        Prepared {
            steps: steps.into_boxed_slice(),
            capacity: plan.capacity_hint(),
        }
    }

    /// The text, when the composition is one static text (or none): a
    /// copy.
    #[inline]
    pub(crate) fn copy_static(&self) -> Option<String> {
        match &*self.steps {
            [] => Some(String::new()),
            [Step::Text(text)] => Some(String::from(&**text)),
            _ => None,
        }
    }

    /// Renders the parts into one string, as [`compose`] does untraced;
    /// a part that fails gives its place in the plan, for [`failed_at`].
    pub(crate) fn compose(&self, cx: &RenderCx<'_>) -> Result<String, (usize, Failure)> {
        let mut out = String::with_capacity(self.capacity);
        for step in &self.steps {
            match step {
                Step::Text(text) => {
                    push(&mut out, text);
                }
                Step::Computed(index, renderer) => {
                    let text = renderer.render(cx).map_err(|failure| (*index, failure))?;
                    append(&mut out, text);
                }
            }
        }
        Ok(out)
    }
}

/// Moves the adjacent static parts of `run` to `steps`: as one text, what
/// [`push`] makes of them, when `budget` allows it; else each as it is.
fn join(run: &mut Vec<Arc<str>>, budget: &JoinBudget, steps: &mut Vec<Step>) {
    let len = run.iter().map(|text| text.len()).sum::<usize>()
        + SEPARATOR.len() * run.len().saturating_sub(1);
    if run.len() < 2 || !budget.take(len) {
        steps.extend(run.drain(..).map(Step::Text));
        return;
    }
    let mut joined = String::with_capacity(len);
    for text in run.drain(..) {
        push(&mut joined, &text);
    }
    steps.push(Step::Text(joined.into()));
}

/// The bytes of joined static text one snapshot's [`Prepared`]
/// compositions may still hold; beyond them, static parts are kept apart
/// and copied one by one (the same text, a little slower).
pub(crate) struct JoinBudget(AtomicUsize);

impl JoinBudget {
    /// What a snapshot starts with: 8 MiB.
    const BYTES: usize = 8 << 20;

    /// Takes `bytes` from the budget, if it has them.
    fn take(&self, bytes: usize) -> bool {
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(bytes)
            })
            .is_ok()
    }
}

impl Default for JoinBudget {
    fn default() -> Self {
        JoinBudget(AtomicUsize::new(Self::BYTES))
    }
}

/// The error for part `index` of `plan` failing: what [`compose`] says
/// for the same failure.
pub(crate) fn failed_at(
    id: &PromptId,
    plan: &Plan<'_>,
    index: usize,
    cx: &RenderCx<'_>,
    failure: Failure,
) -> Error {
    let mut at = 0;
    let mut failed = None;
    let _ = plan.for_each(|slot, _| {
        if at == index {
            failed = Some(slot);
            return Err(());
        }
        at += 1;
        Ok(())
    });
    // The plan is the one the parts were prepared from, so `index` is in it.
    let origin = failed.map_or_else(|| format!("part #{}", index + 1), Slot::describe);
    part_failed(id, origin, cx, failure)
}

fn part_failed(id: &PromptId, origin: String, cx: &RenderCx<'_>, failure: Failure) -> Error {
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
        Failure::Computed { message } => Error::new(
            ErrorKind::Template,
            format!("the {origin} of prompt `{id}` failed: {message}"),
        ),
    }
    .with_id(id.as_str())
    .with_locale(cx.locale.as_str())
}
