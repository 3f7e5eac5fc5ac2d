//! Random tokens (session ids, CSRF tokens) and their constant-time check.

use subtle::ConstantTimeEq;

/// 32 random bytes from the operating system, in hex.
pub(crate) fn token() -> String {
    let mut bytes = [0u8; 32];
    // Without a random source no session is safe: fail the request loudly.
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    crate::cache::hex(&bytes)
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
        let (a, b) = (token(), token());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(matches(&a, &a.clone()));
        assert!(!matches(&a, &b));
        assert!(!matches(&a, &a[..63]));
        assert!(!matches("", ""));
    }
}
