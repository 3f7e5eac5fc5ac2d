//! Errors thrown into JavaScript.
//!
//! Each is thrown where it is made and handed back to napi-rs as a pending
//! exception, so that its class (`TypeError` or `Error`) and its properties
//! survive: `code` (the library's kebab-case kind, `invalid-id`,
//! `unknown-id`, `config`, ...), and when known `id`, `locale`,
//! `suggestion` and `diagnostics`.

use napi::bindgen_prelude::{Object, Unknown};
use napi::{Env, JsError, Status};

use crate::diagnostic::Diagnostic;

/// The `code` of a `TypeError` for an argument of the wrong type, as
/// Node.js's own functions name it.
pub(crate) const INVALID_ARG_TYPE: &str = "ERR_INVALID_ARG_TYPE";

/// What napi-rs receives after an exception was thrown: it leaves the
/// pending exception as it is.
fn pending(message: impl Into<String>) -> napi::Error {
    napi::Error::new(Status::PendingException, message.into())
}

/// Throws a `TypeError` with code `ERR_INVALID_ARG_TYPE`.
pub(crate) fn throw_type_error(env: &Env, message: String) -> napi::Error {
    match env.throw_type_error(&message, Some(INVALID_ARG_TYPE)) {
        Ok(()) => pending(message),
        Err(e) => e,
    }
}

/// The `code` of a `RangeError` for a number out of range.
pub(crate) const OUT_OF_RANGE: &str = "ERR_OUT_OF_RANGE";

/// Throws a `RangeError` with code `ERR_OUT_OF_RANGE`.
pub(crate) fn throw_range_error(env: &Env, message: String) -> napi::Error {
    match env.throw_range_error(&message, Some(OUT_OF_RANGE)) {
        Ok(()) => pending(message),
        Err(e) => e,
    }
}

/// Throws `error` as a JavaScript `Error` with its code, id, locale,
/// suggestion and diagnostics as properties.
pub(crate) fn throw(env: &Env, error: &promptreg::Error) -> napi::Error {
    throw_as(env, error, error.to_string(), None)
}

/// Throws `error` with `message`, and `cause` (a value JavaScript threw)
/// as its `cause`.
pub(crate) fn throw_as(
    env: &Env,
    error: &promptreg::Error,
    message: String,
    cause: Option<Unknown<'_>>,
) -> napi::Error {
    let built = error_object(env, error, &message, cause).and_then(|object| env.throw(object));
    match built {
        Ok(()) => pending(message),
        Err(e) => e,
    }
}

fn error_object<'env>(
    env: &'env Env,
    error: &promptreg::Error,
    message: &str,
    cause: Option<Unknown<'_>>,
) -> napi::Result<Object<'env>> {
    let code = error.kind().as_str().to_owned();
    let value = JsError::from(napi::Error::new(code, message)).into_unknown(*env);
    // SAFETY: `napi_create_error` made an object.
    let mut object = unsafe { value.cast::<Object<'env>>() }?;
    if let Some(id) = error.id() {
        object.set("id", id)?;
    }
    if let Some(locale) = error.locale() {
        object.set("locale", locale)?;
    }
    if let Some(suggestion) = error.suggestion() {
        object.set("suggestion", suggestion)?;
    }
    if !error.diagnostics().is_empty() {
        let diagnostics: Vec<Diagnostic> =
            error.diagnostics().iter().map(Diagnostic::from).collect();
        object.set("diagnostics", diagnostics)?;
    }
    if let Some(cause) = cause {
        object.set("cause", cause)?;
    }
    Ok(object)
}

/// Turns a library result into a napi-rs one, throwing the error.
pub(crate) trait OrThrow<T> {
    /// The value, or the error thrown into JavaScript.
    fn or_throw(self, env: &Env) -> napi::Result<T>;
}

impl<T> OrThrow<T> for Result<T, promptreg::Error> {
    fn or_throw(self, env: &Env) -> napi::Result<T> {
        self.map_err(|e| throw(env, &e))
    }
}
