//! JavaScript functions as renderers.
//!
//! A JavaScript renderer is a [`Renderer`] of the context type
//! [`JsRenderCx`], which only the binding's renders build, on the
//! JavaScript thread: so a JavaScript function is only ever called there,
//! with the environment of the call that rendered. Its reference is a
//! napi-rs `FunctionRef`, which may be dropped on any thread (a reload on
//! the watcher's thread can drop the last snapshot holding it): napi-rs
//! sends the release back to the JavaScript thread.
//!
//! A function that throws or returns something other than a string stops
//! the render: the failure is kept in the context and the renderer unwinds
//! with [`resume_unwind`], which the library turns into an error naming the
//! id and the part (`RendererPanicked`) without calling the panic hook, so
//! nothing is printed. The render's caller then throws the JavaScript
//! error, with the thrown value as its `cause`.

use std::cell::RefCell;
use std::panic::resume_unwind;
use std::ptr;

use napi::bindgen_prelude::{FromNapiValue, FunctionRef, JsValue, ToNapiValue, Unknown};
use napi::{Env, ValueType, sys};
use promptreg::{Locale, Renderer};
use serde::Serialize;

use crate::js::type_of;

/// A reference to a JavaScript function `(ctx, locale) => string`.
type JsFunction = FunctionRef<(), ()>;

/// A renderer calling `function` with the render's context and locale.
pub(crate) fn renderer(function: JsFunction) -> Renderer {
    Renderer::from_fn(move |cx: &JsRenderCx, locale: &Locale| cx.call(&function, locale))
}

/// The context of a render from JavaScript: the environment, the value
/// passed as `ctx`, and the first failure of a JavaScript renderer.
pub(crate) struct JsRenderCx {
    env: sys::napi_env,
    ctx: sys::napi_value,
    failure: RefCell<Option<Failure>>,
}

/// Why a JavaScript renderer produced no text.
pub(crate) enum Failure {
    /// It threw this value.
    Threw(sys::napi_value),
    /// It returned a value of this type instead of a string.
    NotAString(&'static str),
}

impl JsRenderCx {
    /// The context of a render in `env` with `ctx` (`undefined` when
    /// `None`).
    pub(crate) fn new(env: &Env, ctx: Option<Unknown<'_>>) -> napi::Result<Self> {
        let ctx = match ctx {
            Some(ctx) => ctx.raw(),
            // SAFETY: `env` is the live environment of this call.
            None => unsafe { <()>::to_napi_value(env.raw(), ()) }?,
        };
        Ok(JsRenderCx {
            env: env.raw(),
            ctx,
            failure: RefCell::new(None),
        })
    }

    /// The failure that stopped the render, if a JavaScript renderer
    /// caused it.
    pub(crate) fn take_failure(&self) -> Option<Failure> {
        self.failure.borrow_mut().take()
    }

    fn call(&self, function: &JsFunction, locale: &Locale) -> String {
        match self.try_call(function, locale) {
            Ok(text) => text,
            Err(failure) => {
                let message = failure.describe(self.env);
                self.failure.borrow_mut().get_or_insert(failure);
                resume_unwind(Box::new(message))
            }
        }
    }

    fn try_call(&self, function: &JsFunction, locale: &Locale) -> Result<String, Failure> {
        let env = Env::from_raw(self.env);
        let function = function
            .borrow_back(&env)
            .map_err(|_| self.pending_exception())?;
        // SAFETY: every value below belongs to `self.env`, the environment
        // of the synchronous call that is rendering on this thread.
        unsafe {
            let locale = <&str>::to_napi_value(self.env, locale.as_str())
                .map_err(|_| self.pending_exception())?;
            let this = <()>::to_napi_value(self.env, ()).map_err(|_| self.pending_exception())?;
            let argv = [self.ctx, locale];
            let mut result = ptr::null_mut();
            let status = sys::napi_call_function(
                self.env,
                this,
                function.raw(),
                argv.len(),
                argv.as_ptr(),
                &mut result,
            );
            if status != sys::Status::napi_ok {
                return Err(self.pending_exception());
            }
            let value = Unknown::from_raw_unchecked(self.env, result);
            if !matches!(value.get_type(), Ok(ValueType::String)) {
                return Err(Failure::NotAString(type_of(&value)));
            }
            String::from_napi_value(self.env, result).map_err(|_| self.pending_exception())
        }
    }

    /// The exception a failed call left pending, cleared so that the
    /// render can go on to report it.
    fn pending_exception(&self) -> Failure {
        let mut exception = ptr::null_mut();
        // SAFETY: `self.env` is live; with no exception pending this gives
        // `undefined`.
        unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut exception) };
        Failure::Threw(exception)
    }
}

impl Failure {
    /// The sentence that ends the library's message ("... failed while
    /// rendering for `en`: it threw Error: boom").
    fn describe(&self, env: sys::napi_env) -> String {
        match self {
            Failure::Threw(value) => format!("it threw {}", thrown_text(env, *value)),
            Failure::NotAString(type_name) => {
                format!("it returned {type_name}; a renderer must return a string")
            }
        }
    }

    /// The value thrown, if any, to be the error's `cause`.
    pub(crate) fn thrown<'env>(&self, env: &'env Env) -> Option<Unknown<'env>> {
        match self {
            // SAFETY: the value belongs to `env`, whose call is still running.
            Failure::Threw(value) if !value.is_null() => {
                Some(unsafe { Unknown::from_raw_unchecked(env.raw(), *value) })
            }
            _ => None,
        }
    }

    /// Whether the failure is a type error (a renderer returned a
    /// non-string).
    pub(crate) fn is_type_error(&self) -> bool {
        matches!(self, Failure::NotAString(_))
    }
}

/// `String(value)` of a thrown value, cut short: a nested render's error
/// already names its own parts, and the whole value stays in `cause`.
fn thrown_text(env: sys::napi_env, value: sys::napi_value) -> String {
    const MAX: usize = 300;
    let mut text = ptr::null_mut();
    // SAFETY: `value` belongs to `env`; coercion failures are reported as
    // a status, not thrown.
    let coerced = unsafe { sys::napi_coerce_to_string(env, value, &mut text) };
    if coerced != sys::Status::napi_ok {
        let mut ignored = ptr::null_mut();
        // SAFETY: as above; a failed coercion may leave an exception.
        unsafe { sys::napi_get_and_clear_last_exception(env, &mut ignored) };
        return "a value that cannot be shown as text".to_owned();
    }
    // SAFETY: `text` is a string of `env`.
    match unsafe { String::from_napi_value(env, text) } {
        Ok(text) => promptreg::abbreviate(&text, MAX).into_owned(),
        Err(_) => "a value that cannot be shown as text".to_owned(),
    }
}

/// Templates (a pack's prompt files) see the context as JSON; only they
/// serialise it, once per render.
impl Serialize for JsRenderCx {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let env = Env::from_raw(self.env);
        // SAFETY: `ctx` belongs to `env`, whose call is still running.
        let ctx = unsafe { Unknown::from_raw_unchecked(self.env, self.ctx) };
        if matches!(ctx.get_type(), Ok(ValueType::Undefined | ValueType::Null)) {
            return serializer.serialize_unit();
        }
        let json: serde_json::Value = env.from_js_value(ctx).map_err(|e| {
            serde::ser::Error::custom(format!("the context is not JSON data: {}", e.reason))
        })?;
        json.serialize(serializer)
    }
}
