//! Plain JavaScript values and numbers: the leaf every other module may
//! use, importing none of them.

use napi::bindgen_prelude::Unknown;
use napi::{Env, ValueType};

/// The `typeof` of a JavaScript value, as a JavaScript developer reads it
/// (`null` apart, since `typeof null` misleads).
pub(crate) fn type_of(value: &Unknown<'_>) -> &'static str {
    match value.get_type() {
        Ok(ValueType::Undefined) => "undefined",
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Boolean) => "boolean",
        Ok(ValueType::Number) => "number",
        Ok(ValueType::String) => "string",
        Ok(ValueType::Symbol) => "symbol",
        Ok(ValueType::Object) => "object",
        Ok(ValueType::Function) => "function",
        Ok(ValueType::BigInt) => "bigint",
        _ => "an unknown value",
    }
}

/// Whether `value` is `undefined` or `null`: an optional argument left out.
pub(crate) fn is_absent(value: Option<&Unknown<'_>>) -> bool {
    value.is_none_or(|v| matches!(v.get_type(), Ok(ValueType::Undefined | ValueType::Null)))
}

/// `undefined`, for a field left out.
pub(crate) fn undefined(env: &Env) -> napi::Result<Unknown<'_>> {
    // SAFETY: `env` is the live environment of this call.
    let raw = unsafe { <() as napi::bindgen_prelude::ToNapiValue>::to_napi_value(env.raw(), ()) }?;
    // SAFETY: `raw` was just made in `env`.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), raw) })
}

/// `n`, or `u32::MAX` when it does not fit.
pub(crate) fn saturating_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `n`, or `i64::MAX` when it does not fit.
pub(crate) fn saturating_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The UTF-16 offset of byte offset `byte` of `text`.
pub(crate) fn utf16_offset(text: &str, byte: usize) -> u32 {
    let prefix = text.get(..byte).unwrap_or(text);
    saturating_u32(prefix.encode_utf16().count())
}

#[cfg(test)]
mod tests {
    use super::utf16_offset;

    #[test]
    fn offsets_count_utf16_code_units() {
        let text = "あa😀b";
        assert_eq!(utf16_offset(text, 0), 0);
        assert_eq!(utf16_offset(text, "あ".len()), 1);
        assert_eq!(utf16_offset(text, "あa".len()), 2);
        // An emoji is two code units in JavaScript.
        assert_eq!(utf16_offset(text, "あa😀".len()), 4);
    }
}
