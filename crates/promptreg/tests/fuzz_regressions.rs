//! Inputs the fuzz targets in `fuzz/` found crashing, each kept as the
//! test it became: every one must now read or fail with an error, never
//! panic. A crash input lives in `tests/fuzz/<target>-<what>` as the
//! fuzzer wrote it.

/// A kept crash input, by name.
#[cfg(feature = "signing")]
fn input(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A trusted key's line with a non-breaking space (two bytes in UTF-8)
/// before the key: the search for the key sliced inside the character.
#[cfg(feature = "signing")]
#[test]
fn a_trusted_key_line_with_a_multibyte_space_is_an_error_not_a_panic() {
    use promptreg::signing::{SigningKey, TrustedKeys, test_key_openssh};

    let crash = String::from_utf8_lossy(&input("bundle-nbsp-before-key")).into_owned();
    let why = TrustedKeys::new()
        .add_openssh(&crash, "team.pub:1")
        .unwrap_err();
    assert!(why.to_string().contains("team.pub:1"), "{why}");

    // A key whose comment holds one, and a key after one, still read.
    let public = SigningKey::from_openssh(&test_key_openssh(1), None, "test.key")
        .unwrap()
        .public_key_openssh();
    let mut trusted = TrustedKeys::new();
    trusted
        .add_openssh(&format!("{public} release\u{a0}key"), "a.pub")
        .unwrap();
    trusted
        .add_openssh(&format!("releaser\u{a0}{public}"), "allowed_signers:1")
        .unwrap();
    assert_eq!(trusted.len(), 2);
}
