//! Random tokens (session ids, CSRF tokens) and their constant-time check.

use axum::http::StatusCode;
use subtle::ConstantTimeEq;

use super::page::PageError;

/// 32 random bytes from the operating system, in hex; without a random
/// source no session would be safe, so the request fails (503).
pub(crate) fn token() -> Result<String, PageError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| {
        PageError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the operating system's random source failed ({e}): try again"),
        )
    })?;
    Ok(crate::cache::hex(&bytes))
}

/// Whether `given` is `expected`, in time independent of where they differ.
pub(crate) fn matches(expected: &str, given: &str) -> bool {
    !expected.is_empty() && bool::from(expected.as_bytes().ct_eq(given.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_and_compare_exactly() {
        let (a, b) = (token().unwrap(), token().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(matches(&a, &a.clone()));
        assert!(!matches(&a, &b));
        assert!(!matches(&a, &a[..63]));
        assert!(!matches("", ""));
    }
}
