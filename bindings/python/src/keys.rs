//! The keys a signed release is checked against (`Pack.from_bundle`,
//! `follow`'s `trust_keys`).

use std::path::Path;

use promptreg::signing::TrustedKeys;
use pyo3::prelude::*;

use crate::errors::OrRaise;

/// Trusted keys from a list of public keys (`ssh-ed25519 AAAA…`, an
/// `allowed_signers` line) and key files.
pub(crate) fn trusted_keys(keys: &[String], name: &str) -> PyResult<TrustedKeys> {
    let mut trusted = TrustedKeys::new();
    for (i, text) in keys.iter().enumerate() {
        let item = format!("{name}[{i}]");
        let added = if text.trim_start().starts_with("ssh-") || text.contains(" ssh-") {
            trusted.add_openssh(text, &item)
        } else {
            trusted.add_file(Path::new(text))
        };
        added.or_raise()?;
    }
    Ok(trusted)
}
