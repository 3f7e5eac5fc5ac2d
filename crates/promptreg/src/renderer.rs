//! [`Renderer`]: one piece of prompt text, static or computed at render time.

use std::any::{Any, type_name};
use std::borrow::Cow;
#[cfg(feature = "templates")]
use std::cell::OnceCell;
use std::fmt;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use crate::locale::Locale;
#[cfg(feature = "templates")]
use crate::template::Template;

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
/// use promptreg::{Locale, Renderer};
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
    #[cfg(feature = "templates")]
    Template(Arc<Template>),
}

/// A closure of a typed context, and the name of that type.
struct Typed {
    context: &'static str,
    render: Box<TypedFn>,
}

/// What a renderer is rendered with.
pub(crate) struct RenderCx<'a> {
    pub(crate) ctx: &'a dyn Any,
    pub(crate) ctx_type: &'static str,
    pub(crate) locale: &'a Locale,
    /// The registry's fallback locale: templates match their snippets'
    /// variants as the registry matches prompts.
    #[cfg_attr(not(feature = "templates"), allow(dead_code))]
    pub(crate) fallback: &'a Locale,
    /// Serialises the context for templates; run at most once per render.
    #[cfg(feature = "templates")]
    pub(crate) serialize: &'a dyn Fn() -> minijinja::Value,
    #[cfg(feature = "templates")]
    pub(crate) template_ctx: OnceCell<minijinja::Value>,
}

#[cfg(feature = "templates")]
impl RenderCx<'_> {
    fn template_ctx(&self) -> &minijinja::Value {
        self.template_ctx.get_or_init(self.serialize)
    }
}

/// Why a renderer produced no text.
#[derive(Debug)]
pub(crate) enum Failure {
    WrongContext {
        expected: &'static str,
    },
    Panicked {
        message: String,
    },
    #[cfg_attr(not(feature = "templates"), allow(dead_code))]
    Template {
        message: String,
    },
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

    /// A minijinja template written in code (feature `templates`): it sees
    /// the render context by field name and `locale`, fails on an
    /// undefined variable, and runs at most
    /// [`TEMPLATE_FUEL`](crate::TEMPLATE_FUEL) instructions. `name` names
    /// it in errors.
    ///
    /// ```
    /// use promptreg::{PromptRegistry, Renderer};
    ///
    /// let registry = PromptRegistry::new();
    /// let greeting = Renderer::compile_template("greeting", "Greet {{ name }} in {{ locale }}.")?;
    /// registry.register_default("greeting.system", greeting)?;
    /// let ctx = serde_json::json!({ "name": "Ada" });
    /// assert_eq!(registry.render_in("greeting.system", &ctx, "ja")?, "Greet Ada in ja.");
    /// # Ok::<(), promptreg::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) with the syntax
    /// error's line when the template does not compile.
    #[cfg(feature = "templates")]
    #[cfg_attr(docsrs, doc(cfg(feature = "templates")))]
    pub fn compile_template(name: &str, source: &str) -> Result<Self, crate::Error> {
        let template = Template::compile(std::path::Path::new(name), source, 0, Vec::new())
            .map_err(|d| crate::Error::from_diagnostics(vec![d]))?;
        Ok(Renderer::from_template(template))
    }

    /// A compiled template.
    #[cfg(feature = "templates")]
    pub(crate) fn from_template(template: Template) -> Self {
        Renderer(Kind::Template(Arc::new(template)))
    }

    /// Whether this renderer is a template (feature `templates`).
    pub fn is_template(&self) -> bool {
        #[cfg(feature = "templates")]
        return matches!(self.0, Kind::Template(_));
        #[cfg(not(feature = "templates"))]
        false
    }

    #[cfg(feature = "templates")]
    pub(crate) fn template(&self) -> Option<&Template> {
        match &self.0 {
            Kind::Template(template) => Some(template),
            _ => None,
        }
    }

    /// The source of a template renderer, `None` for the others: what a
    /// page or a tool shows for a block that is computed at render time.
    #[cfg(feature = "templates")]
    #[cfg_attr(docsrs, doc(cfg(feature = "templates")))]
    pub fn template_source(&self) -> Option<String> {
        self.template().and_then(Template::source)
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
            #[cfg(feature = "templates")]
            Kind::Template(template) => template
                .render(cx.template_ctx(), cx.locale, cx.fallback)
                .map(Cow::Owned)
                .map_err(|message| Failure::Template { message }),
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
            #[cfg(feature = "templates")]
            Kind::Template(template) => template.fmt(f),
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
/// # use promptreg::PromptRegistry;
/// struct Page { title: String }
/// let registry = PromptRegistry::new();
/// // The locale's type is left out.
/// registry.register_default("planner.system", |page: &Page, _| format!("Plan {}.", page.title))?;
/// # Ok::<(), promptreg::Error>(())
/// ```
///
/// ```
/// # use promptreg::{Locale, PromptRegistry};
/// struct Page { title: String }
/// let registry = PromptRegistry::new();
/// registry.register_default("planner.system", |page: &Page, _: &Locale| format!("Plan {}.", page.title))?;
/// registry.register_default("clock.system", || "Mind the time.".to_owned())?;
/// # Ok::<(), promptreg::Error>(())
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
