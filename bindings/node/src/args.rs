//! Arguments from JavaScript, checked by hand so that a value of the wrong
//! type is a `TypeError` naming the argument, not a conversion failure.

use napi::bindgen_prelude::{
    ClassInstance, FromNapiValue, Function, JavaScriptClassExt, JsValue, Object, Unknown,
};
use napi::{Env, Status, ValueType};
use promptreg::Renderer;

use crate::errors::{OrThrow, throw_range_error, throw_type_error};
use crate::handle::PromptRegistry;
pub(crate) use crate::js::{is_absent, type_of};
use crate::js_renderer;

/// A string argument.
pub(crate) fn string(env: &Env, value: Unknown<'_>, name: &str) -> napi::Result<String> {
    if value.get_type()? != ValueType::String {
        return Err(throw_type_error(
            env,
            format!("`{name}` must be a string, not {}", type_of(&value)),
        ));
    }
    // SAFETY: the value was just checked to be a string.
    unsafe { String::from_napi_value(env.raw(), value.raw()) }
}

/// A position argument: a whole number from 0.
pub(crate) fn index(env: &Env, value: Unknown<'_>, name: &str) -> napi::Result<usize> {
    if value.get_type()? != ValueType::Number {
        return Err(throw_type_error(
            env,
            format!("`{name}` must be a number, not {}", type_of(&value)),
        ));
    }
    // SAFETY: the value was just checked to be a number.
    let number = unsafe { f64::from_napi_value(env.raw(), value.raw()) }?;
    if number < 0.0 || number.fract() != 0.0 || number > f64::from(u32::MAX) {
        return Err(throw_range_error(
            env,
            format!("`{name}` must be a whole number from 0, not {number}"),
        ));
    }
    Ok(number as usize)
}

/// A `PromptRegistry` argument.
pub(crate) fn registry<'env>(
    env: &Env,
    value: Unknown<'env>,
    name: &str,
) -> napi::Result<ClassInstance<'env, PromptRegistry>> {
    if !PromptRegistry::instance_of(env, &value)? {
        return Err(throw_type_error(
            env,
            format!("`{name}` must be a PromptRegistry, not {}", type_of(&value)),
        ));
    }
    // SAFETY: the value was just checked to be a `PromptRegistry`.
    unsafe { ClassInstance::from_napi_value(env.raw(), value.raw()) }
}

/// An optional string argument: `undefined` and `null` are `None`.
pub(crate) fn optional_string(
    env: &Env,
    value: Option<Unknown<'_>>,
    name: &str,
) -> napi::Result<Option<String>> {
    match value {
        Some(v) if !is_absent(Some(&v)) => string(env, v, name).map(Some),
        _ => Ok(None),
    }
}

/// An object argument converted to `T` (a `#[napi(object)]` struct); a
/// field of the wrong type is a `TypeError` naming the argument and the
/// field.
pub(crate) fn object<T: FromNapiValue>(
    env: &Env,
    value: Unknown<'_>,
    name: &str,
) -> napi::Result<T> {
    if value.get_type()? != ValueType::Object {
        return Err(throw_type_error(
            env,
            format!("`{name}` must be an object, not {}", type_of(&value)),
        ));
    }
    // SAFETY: `value` is an object of this environment.
    unsafe { T::from_napi_value(env.raw(), value.raw()) }.map_err(|e| {
        if e.status == Status::PendingException {
            return e;
        }
        throw_type_error(env, format!("`{name}` is invalid: {}", e.reason))
    })
}

/// An object argument, to read its properties one by one.
pub(crate) fn plain_object<'env>(
    env: &Env,
    value: Unknown<'env>,
    name: &str,
) -> napi::Result<Object<'env>> {
    if value.get_type()? != ValueType::Object || value.is_array()? {
        return Err(throw_type_error(
            env,
            format!("`{name}` must be an object, not {}", type_of(&value)),
        ));
    }
    // SAFETY: the value was just checked to be an object.
    unsafe { value.cast::<Object<'env>>() }
}

/// A renderer argument: a string, or a function `(ctx, locale) => string`.
pub(crate) fn renderer(env: &Env, value: Unknown<'_>, name: &str) -> napi::Result<Renderer> {
    match value.get_type()? {
        ValueType::String => string(env, value, name).map(Renderer::text),
        ValueType::Function => {
            // SAFETY: the value was just checked to be a function.
            let function = unsafe { value.cast::<Function<'_, (), ()>>() }?;
            Ok(js_renderer::renderer(function.create_ref()?))
        }
        _ => Err(throw_type_error(
            env,
            format!(
                "`{name}` must be a string or a function `(ctx, locale) => string`, not {}",
                type_of(&value)
            ),
        )),
    }
}

/// A list of renderers (pinned blocks), each checked.
pub(crate) fn renderers(
    env: &Env,
    value: Option<Unknown<'_>>,
    name: &str,
) -> napi::Result<Vec<Renderer>> {
    let Some(value) = value.filter(|v| !is_absent(Some(v))) else {
        return Ok(Vec::new());
    };
    if !value.is_array()? {
        return Err(throw_type_error(
            env,
            format!(
                "`{name}` must be an array of strings or functions, not {}",
                type_of(&value)
            ),
        ));
    }
    // SAFETY: `value` is an array of this environment.
    let items = unsafe { Vec::<Unknown<'_>>::from_napi_value(env.raw(), value.raw()) }?;
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| renderer(env, item, &format!("{name}[{i}]")))
        .collect()
}

/// An array argument, its items to check one by one.
pub(crate) fn array<'env>(
    env: &Env,
    value: Unknown<'env>,
    name: &str,
    of: &str,
) -> napi::Result<Vec<Unknown<'env>>> {
    if !value.is_array()? {
        return Err(throw_type_error(
            env,
            format!("`{name}` must be an array of {of}, not {}", type_of(&value)),
        ));
    }
    // SAFETY: `value` is an array of this environment.
    unsafe { Vec::<Unknown<'env>>::from_napi_value(env.raw(), value.raw()) }
}

/// The keys of an optional `trustKeys` option: each string a public key
/// (`ssh-ed25519 AAAA…`, an `allowed_signers` line) or the path of a file
/// of them. `None` when absent.
pub(crate) fn optional_trusted_keys(
    env: &Env,
    value: Option<Unknown<'_>>,
    name: &str,
) -> napi::Result<Option<promptreg::signing::TrustedKeys>> {
    let Some(value) = value.filter(|v| !is_absent(Some(v))) else {
        return Ok(None);
    };
    let mut trusted = promptreg::signing::TrustedKeys::new();
    for (i, item) in array(env, value, name, "public keys or key files")?
        .into_iter()
        .enumerate()
    {
        let item_name = format!("{name}[{i}]");
        let text = string(env, item, &item_name)?;
        let added = match text.trim_start().starts_with("ssh-") || text.contains(" ssh-") {
            true => trusted.add_openssh(&text, &item_name),
            false => trusted.add_file(std::path::Path::new(&text)),
        };
        added.or_throw(env)?;
    }
    Ok(Some(trusted))
}

/// An optional whole number from 0 (a count of milliseconds, a position):
/// `undefined` and `null` are `None`.
pub(crate) fn optional_index(
    env: &Env,
    value: Option<Unknown<'_>>,
    name: &str,
) -> napi::Result<Option<usize>> {
    match value {
        Some(v) if !is_absent(Some(&v)) => index(env, v, name).map(Some),
        _ => Ok(None),
    }
}

/// An optional boolean argument: `undefined` and `null` are `None`.
pub(crate) fn optional_bool(
    env: &Env,
    value: Option<Unknown<'_>>,
    name: &str,
) -> napi::Result<Option<bool>> {
    let Some(value) = value.filter(|v| !is_absent(Some(v))) else {
        return Ok(None);
    };
    if value.get_type()? != ValueType::Boolean {
        return Err(throw_type_error(
            env,
            format!("`{name}` must be a boolean, not {}", type_of(&value)),
        ));
    }
    // SAFETY: the value was just checked to be a boolean.
    unsafe { bool::from_napi_value(env.raw(), value.raw()) }.map(Some)
}

/// An optional plain-data object (model settings, metadata), as JSON.
pub(crate) fn optional_json_object(
    env: &Env,
    value: Option<Unknown<'_>>,
    name: &str,
) -> napi::Result<Option<promptreg::JsonObject>> {
    let Some(value) = value.filter(|v| !is_absent(Some(v))) else {
        return Ok(None);
    };
    let object = plain_object(env, value, name)?;
    let json: serde_json::Value = env
        .from_js_value(object)
        .map_err(|e| throw_type_error(env, format!("`{name}` must be JSON data: {}", e.reason)))?;
    Ok(promptreg::JsonObject::from_value(json))
}
