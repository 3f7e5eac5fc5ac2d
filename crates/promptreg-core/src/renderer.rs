//! [`Renderer`]: one piece of prompt text, static or computed at render time.

use std::any::{Any, type_name};
use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;

use crate::locale::Locale;

type TypedFn = dyn Fn(&dyn Any, &Locale) -> Option<String> + Send + Sync;
type LocaleFn = dyn Fn(&Locale) -> String + Send + Sync;

/// One piece of a prompt: a default body, a locale override, a pinned block
/// or an appended rule.
///
/// Three kinds exist, and every registry method that takes a renderer takes
/// any of them through [`IntoRenderer`]:
///
/// | you pass | kind | context |
/// |---|---|---|
/// | `"text"`, `String` | static text, stored once | any |
/// | `\|\| ...` | computed per render | any (ignored) |
/// | `\|locale: &Locale\| ...` | computed per render | any (ignored) |
/// | `\|ctx: &MyCtx, locale: &Locale\| ...` | computed per render | must be `MyCtx` |
///
/// Renderers run on every render; nothing is cached. A typed renderer given
/// a context of another type makes the render fail with
/// [`ErrorKind::ContextType`](crate::ErrorKind::ContextType), never a panic.
/// Write the closure's parameter types out: they are how the registry knows
/// which kind of renderer it is.
///
/// ```
/// use promptreg_core::{Locale, Renderer};
///
/// struct Shop { brand: String }
///
/// let fixed = Renderer::text("Cite every source.");
/// let localised = Renderer::from_locale_fn(|locale: &Locale| format!("Answer in {locale}."));
/// let typed = Renderer::from_fn(|shop: &Shop, _: &Locale| format!("You work for {}.", shop.brand));
/// assert_eq!(typed.context_type(), Some(std::any::type_name::<Shop>()));
/// # let _ = (fixed, localised);
/// ```
#[derive(Clone)]
pub struct Renderer(Kind);

#[derive(Clone)]
enum Kind {
    Text(Arc<str>),
    Localised(Arc<LocaleFn>),
    Typed(Arc<Typed>),
    Computed(Arc<dyn Compute>),
}

/// A renderer kind computed by machinery above the core: a template
/// engine, for one. The core calls it with the render's context and
/// locales and never looks inside; the crate that made it can find it
/// again with [`Renderer::computed`].
///
/// A computed renderer that panics fails the render with
/// [`ErrorKind::RendererPanicked`](crate::ErrorKind::RendererPanicked), as
/// a closure does; one that returns an error fails it with
/// [`ErrorKind::Template`](crate::ErrorKind::Template) and the message.
pub trait Compute: Any + Send + Sync + fmt::Debug {
    /// The text for `cx`, or why there is none.
    fn render(&self, cx: &RenderCx<'_>) -> Result<String, String>;

    /// [`render`](Self::render), and the files it read from beside its
    /// source (a template's snippets), for a traced render's
    /// [`Part::snippets`](crate::Part::snippets). None by default.
    fn render_recording(&self, cx: &RenderCx<'_>) -> (Result<String, String>, Vec<PathBuf>) {
        (self.render(cx), Vec::new())
    }

    /// The source it computes from, what a page or a tool shows for a
    /// block computed at render time.
    fn source(&self) -> Option<String> {
        None
    }
}

/// A closure of a typed context, and the name of that type.
struct Typed {
    context: &'static str,
    render: Box<TypedFn>,
}

/// What a renderer is rendered with: the render's context and locales.
pub struct RenderCx<'a> {
    pub(crate) ctx: &'a dyn Any,
    pub(crate) ctx_type: &'static str,
    pub(crate) serialize: &'a dyn erased_serde::Serialize,
    pub(crate) locale: &'a Locale,
    pub(crate) fallback: &'a Locale,
    /// The context as a computed kind converted it, at most once per
    /// render.
    pub(crate) converted: OnceCell<Box<dyn Any>>,
}

impl<'a> RenderCx<'a> {
    /// The context of the render `ctx`, in `locale`, with the registry's
    /// `fallback` locale.
    pub fn new<C: serde::Serialize + Any>(
        ctx: &'a C,
        locale: &'a Locale,
        fallback: &'a Locale,
    ) -> Self {
        RenderCx {
            ctx,
            ctx_type: type_name::<C>(),
            serialize: ctx,
            locale,
            fallback,
            converted: OnceCell::new(),
        }
    }

    /// The render's locale.
    pub fn locale(&self) -> &Locale {
        self.locale
    }

    /// The registry's fallback locale: a computed kind matches what it
    /// includes as the registry matches prompts.
    pub fn fallback(&self) -> &Locale {
        self.fallback
    }

    /// The render's context, to serialise.
    pub fn context(&self) -> &dyn erased_serde::Serialize {
        self.serialize
    }

    /// The context converted by `convert`, which runs at most once per
    /// render (several computed parts of one render share it), unless
    /// another kind converted it to another type first.
    pub fn converted<T: Any + Clone>(
        &self,
        convert: impl Fn(&dyn erased_serde::Serialize) -> T,
    ) -> T {
        let kept = self
            .converted
            .get_or_init(|| Box::new(convert(self.serialize)));
        match kept.downcast_ref::<T>() {
            Some(value) => value.clone(),
            None => convert(self.serialize),
        }
    }
}

/// Why a renderer produced no text.
#[derive(Debug)]
pub(crate) enum Failure {
    WrongContext { expected: &'static str },
    Panicked { message: String },
    Computed { message: String },
}

impl Renderer {
    /// Static text. It is stored once, without its leading blank lines and
    /// trailing white space (which a render drops anyway), and copied into
    /// each render.
    pub fn text(text: impl Into<Arc<str>>) -> Self {
        let text: Arc<str> = text.into();
        let kept = trimmed_range(&text);
        if kept.len() == text.len() {
            return Renderer(Kind::Text(text));
        }
        Renderer(Kind::Text(Arc::from(&text[kept])))
    }

    /// Text computed from the render's locale; usable with any context.
    pub fn from_locale_fn<F>(render: F) -> Self
    where
        F: Fn(&Locale) -> String + Send + Sync + 'static,
    {
        Renderer(Kind::Localised(Arc::new(render)))
    }

    /// Text computed from a context of type `C` and the locale.
    pub fn from_fn<C, F>(render: F) -> Self
    where
        C: Any,
        F: Fn(&C, &Locale) -> String + Send + Sync + 'static,
    {
        let erased = move |ctx: &dyn Any, locale: &Locale| {
            ctx.downcast_ref::<C>().map(|ctx| render(ctx, locale))
        };
        Renderer(Kind::Typed(Arc::new(Typed {
            context: type_name::<C>(),
            render: Box::new(erased),
        })))
    }

    /// A renderer of a kind computed above the core (see [`Compute`]).
    pub fn from_compute(compute: impl Compute) -> Self {
        Renderer(Kind::Computed(Arc::new(compute)))
    }

    /// The computed kind `T` this renderer is, `None` for the others.
    pub fn computed<T: Compute>(&self) -> Option<&T> {
        match &self.0 {
            Kind::Computed(compute) => (&**compute as &dyn Any).downcast_ref::<T>(),
            _ => None,
        }
    }

    /// Whether this renderer is computed above the core: a template.
    pub fn is_template(&self) -> bool {
        matches!(self.0, Kind::Computed(_))
    }

    /// The source of a computed renderer (a template's), `None` for the
    /// others: what a page or a tool shows for a block that is computed at
    /// render time.
    pub fn template_source(&self) -> Option<String> {
        match &self.0 {
            Kind::Computed(compute) => compute.source(),
            _ => None,
        }
    }

    /// The context type a typed renderer requires, `None` for the others.
    pub fn context_type(&self) -> Option<&'static str> {
        match &self.0 {
            Kind::Typed(typed) => Some(typed.context),
            _ => None,
        }
    }

    /// The text of a static renderer, `None` for computed ones.
    pub fn as_text(&self) -> Option<&str> {
        match &self.0 {
            Kind::Text(text) => Some(text),
            _ => None,
        }
    }

    /// The static text, shared, `None` for computed renderers.
    pub(crate) fn shared_text(&self) -> Option<Arc<str>> {
        match &self.0 {
            Kind::Text(text) => Some(Arc::clone(text)),
            _ => None,
        }
    }

    /// Length of the static text, 0 for computed renderers: a hint for
    /// sizing the output buffer.
    #[inline]
    pub(crate) fn static_len(&self) -> usize {
        self.as_text().map_or(0, str::len)
    }

    /// Runs the renderer. Static text is borrowed, not copied.
    #[inline]
    pub(crate) fn render(&self, cx: &RenderCx<'_>) -> Result<Cow<'_, str>, Failure> {
        match &self.0 {
            Kind::Text(text) => Ok(Cow::Borrowed(text)),
            Kind::Localised(render) => guard(|| render(cx.locale)).map(Cow::Owned),
            Kind::Typed(typed) => match guard(|| (typed.render)(cx.ctx, cx.locale))? {
                Some(text) => Ok(Cow::Owned(text)),
                None => Err(Failure::WrongContext {
                    expected: typed.context,
                }),
            },
            Kind::Computed(compute) => guard(|| compute.render(cx))?
                .map(Cow::Owned)
                .map_err(|message| Failure::Computed { message }),
        }
    }

    /// [`render`](Self::render), and the files a computed kind read from
    /// beside its source, for a traced render.
    pub(crate) fn render_recording(
        &self,
        cx: &RenderCx<'_>,
    ) -> (Result<Cow<'_, str>, Failure>, Vec<PathBuf>) {
        let Kind::Computed(compute) = &self.0 else {
            return (self.render(cx), Vec::new());
        };
        match guard(|| compute.render_recording(cx)) {
            Ok((text, files)) => (
                text.map(Cow::Owned)
                    .map_err(|message| Failure::Computed { message }),
                files,
            ),
            Err(failure) => (Err(failure), Vec::new()),
        }
    }
}

/// The part of `text` a render keeps: without leading blank lines and
/// trailing white space, keeping the indentation of the first line that has
/// text.
#[inline]
pub(crate) fn trimmed_range(text: &str) -> Range<usize> {
    let bytes = text.as_bytes();
    // The common case, a part that starts and ends with visible ASCII, costs
    // two byte reads.
    let visible = |b: &u8| b.is_ascii() && !b.is_ascii_whitespace();
    if bytes.first().is_some_and(visible) && bytes.last().is_some_and(visible) {
        return 0..text.len();
    }
    let end = text.trim_end().len();
    let body_start = end - text[..end].trim_start().len();
    let line_start = text[..body_start].rfind('\n').map_or(0, |i| i + 1);
    line_start..end
}

/// Runs user code, turning a panic into a [`Failure`] so that one broken
/// renderer cannot take down the caller's thread.
fn guard<T>(run: impl FnOnce() -> T) -> Result<T, Failure> {
    catch_unwind(AssertUnwindSafe(run)).map_err(|payload| Failure::Panicked {
        message: panic_message(payload.as_ref()),
    })
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-string panic payload".to_owned()
    }
}

impl fmt::Debug for Renderer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Kind::Text(text) => f.debug_tuple("Text").field(text).finish(),
            Kind::Localised(_) => f.write_str("LocaleFn"),
            Kind::Typed(typed) => write!(f, "Fn<{}>", typed.context),
            Kind::Computed(compute) => compute.fmt(f),
        }
    }
}

/// Conversion into a [`Renderer`]: implemented for static text, for
/// `Fn() -> String`, `Fn(&Locale) -> String` and `Fn(&C, &Locale) -> String`.
///
/// The `Marker` parameter only tells the implementations apart; it is
/// inferred and never written by callers. Closures must write their
/// parameter types out (`|locale: &Locale| ...`): Rust infers a closure's
/// signature from the one trait it must implement, and here it may
/// implement three. Without them the compiler says the closure "cannot be a
/// prompt renderer" and lists the accepted shapes:
///
/// ```compile_fail
/// # use promptreg_core::PromptRegistry;
/// struct Page { title: String }
/// let registry = PromptRegistry::new();
/// // The locale's type is left out.
/// registry.register_default("planner.system", |page: &Page, _| format!("Plan {}.", page.title))?;
/// # Ok::<(), promptreg_core::Error>(())
/// ```
///
/// ```
/// # use promptreg_core::{Locale, PromptRegistry};
/// struct Page { title: String }
/// let registry = PromptRegistry::new();
/// registry.register_default("planner.system", |page: &Page, _: &Locale| format!("Plan {}.", page.title))?;
/// registry.register_default("clock.system", || "Mind the time.".to_owned())?;
/// # Ok::<(), promptreg_core::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a prompt renderer",
    label = "expected text or a closure returning `String`",
    note = "a renderer is text (`&str`, `String`, `Arc<str>`, `Renderer`) or a closure: `|| -> String`, `|locale: &Locale| -> String` or `|ctx: &MyContext, locale: &Locale| -> String`",
    note = "write the closure's parameter types out: `|ctx: &MyContext, _: &Locale| ...`, not `|ctx, _| ...`"
)]
pub trait IntoRenderer<Marker> {
    /// Performs the conversion.
    fn into_renderer(self) -> Renderer;
}

/// Marker types that tell the [`IntoRenderer`] implementations apart.
pub mod markers {
    use std::marker::PhantomData;

    /// Marks static text and ready-made renderers.
    pub struct Text;
    /// Marks `Fn() -> String` closures.
    pub struct NoArgs;
    /// Marks `Fn(&Locale) -> String` closures.
    pub struct LocaleFn;
    /// Marks `Fn(&C, &Locale) -> String` closures.
    pub struct TypedFn<C>(PhantomData<fn(&C)>);
}

impl IntoRenderer<markers::Text> for Renderer {
    fn into_renderer(self) -> Renderer {
        self
    }
}

impl IntoRenderer<markers::Text> for &str {
    fn into_renderer(self) -> Renderer {
        Renderer::text(self)
    }
}

impl IntoRenderer<markers::Text> for String {
    fn into_renderer(self) -> Renderer {
        Renderer::text(self)
    }
}

impl IntoRenderer<markers::Text> for Arc<str> {
    fn into_renderer(self) -> Renderer {
        Renderer::text(self)
    }
}

impl<F> IntoRenderer<markers::NoArgs> for F
where
    F: Fn() -> String + Send + Sync + 'static,
{
    fn into_renderer(self) -> Renderer {
        Renderer::from_locale_fn(move |_: &Locale| self())
    }
}

impl<F> IntoRenderer<markers::LocaleFn> for F
where
    F: Fn(&Locale) -> String + Send + Sync + 'static,
{
    fn into_renderer(self) -> Renderer {
        Renderer::from_locale_fn(self)
    }
}

impl<C, F> IntoRenderer<markers::TypedFn<C>> for F
where
    C: Any,
    F: Fn(&C, &Locale) -> String + Send + Sync + 'static,
{
    fn into_renderer(self) -> Renderer {
        Renderer::from_fn(self)
    }
}

#[cfg(test)]
mod tests {
    use super::trimmed_range;

    fn trim_part(text: &str) -> &str {
        &text[trimmed_range(text)]
    }

    #[test]
    fn trim_drops_blank_lines_around_a_part_but_keeps_indentation() {
        assert_eq!(trim_part("\n- rule\n"), "- rule");
        assert_eq!(trim_part("\n \n    code\n  \n"), "    code");
        assert_eq!(trim_part("  indented"), "  indented");
        assert_eq!(trim_part(" \n\t\n "), "");
        assert_eq!(trim_part(""), "");
    }
}
