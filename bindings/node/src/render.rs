//! The arguments of a render, checked, and the one request they make: the
//! locale parsed once, the histories, and the options (`subject`).

use napi::bindgen_prelude::Unknown;
use napi::{Env, Result};
use napi_derive::napi;
use promptreg::{Form, Locale, Message, RenderRequest};

use crate::args;
use crate::chat;
use crate::errors::OrThrow;
use crate::js_renderer::JsRenderCx;

/// Options of a render, after its other arguments.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct RenderOptions {
    /// Whom the render is for: while a split runs on a followed label, the
    /// subjects its share picks (by the subject's key and the split's id,
    /// the same arm in every process and language) get its candidate, the
    /// others the label's own state. Text and chat prompts, any locale.
    pub subject: Option<String>,
}

/// A render's arguments, checked: what its request is made of.
pub(crate) struct Call {
    id: String,
    /// The locale asked for, parsed; `None`: the registry's.
    locale: Option<Locale>,
    histories: Vec<(String, Vec<Message>)>,
    subject: Option<String>,
}

impl Call {
    /// The arguments `id`, `locale`, `histories` (absent for a text
    /// render) and `options`, checked in that order.
    pub(crate) fn new(
        env: &Env,
        id: Unknown<'_>,
        locale: Option<Unknown<'_>>,
        histories: Option<Unknown<'_>>,
        options: Option<Unknown<'_>>,
    ) -> Result<Self> {
        let id = args::string(env, id, "id")?;
        let locale = match args::optional_string(env, locale, "locale")? {
            Some(locale) => Some(Locale::parse(&locale).or_throw(env)?),
            None => None,
        };
        let histories = chat::histories_arg(env, histories, "histories")?;
        let subject = subject_option(env, options)?;
        Ok(Call {
            id,
            locale,
            histories,
            subject,
        })
    }

    /// The arguments of a `…For` render: `subject` first, then `id` and
    /// `locale`.
    pub(crate) fn for_subject(
        env: &Env,
        subject: Unknown<'_>,
        id: Unknown<'_>,
        locale: Option<Unknown<'_>>,
    ) -> Result<Self> {
        let subject = args::string(env, subject, "subject")?;
        let mut call = Call::new(env, id, locale, None, None)?;
        call.subject = Some(subject);
        Ok(call)
    }

    /// Runs `render` with the request these arguments make, in `form`,
    /// traced when `traced`, with context `cx`.
    pub(crate) fn with_request<T>(
        &self,
        cx: &JsRenderCx,
        form: Form,
        traced: bool,
        render: impl FnOnce(&RenderRequest<'_, JsRenderCx>) -> T,
    ) -> T {
        let histories = chat::borrowed(&self.histories);
        let mut request = RenderRequest::new(&self.id, cx)
            .histories(&histories)
            .form(form);
        if let Some(locale) = &self.locale {
            request = request.locale(locale);
        }
        if let Some(subject) = &self.subject {
            request = request.subject(subject);
        }
        if traced {
            request = request.traced();
        }
        render(&request)
    }
}

/// The `subject` of a render's `options`.
fn subject_option(env: &Env, options: Option<Unknown<'_>>) -> Result<Option<String>> {
    let Some(options) = options.filter(|o| !args::is_absent(Some(o))) else {
        return Ok(None);
    };
    let options = args::plain_object(env, options, "options")?;
    args::optional_string(
        env,
        options.get::<Unknown<'_>>("subject")?,
        "options.subject",
    )
}
