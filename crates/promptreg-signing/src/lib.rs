//! Signed releases (the facade's feature `signing`): what a release's signature covers,
//! content digests, signing with the releaser's SSH key and verifying
//! against the keys a follower trusts.
//!
//! A revision of a label is signed as a [`Statement`]: a few lines naming
//! the pack, the label, the revision and the digest of the state it
//! holds. The signature is an SSH signature (the SSHSIG format git signs
//! commits with) in the namespace [`NAMESPACE`], so `ssh-keygen -Y verify`
//! checks it too. The digest is computed from the files themselves
//! ([`state_digest`] of each entry's [`files_digest`]), so a follower
//! recomputes it from what it received and trusts the key, not the server
//! that sent the files.
//!
//! ```
//! use promptreg_signing::{SigningKey, Statement, TrustedKeys};
//!
//! # let key_text = promptreg_signing::test_key_openssh(7);
//! let key = SigningKey::from_openssh(&key_text, None, "releaser.key")?;
//! let statement = Statement::revision("web-agent", "production", 12, "3f9c01ab");
//! let signature = key.sign(&statement)?;
//!
//! let mut trusted = TrustedKeys::new();
//! trusted.add_openssh(&key.public_key_openssh(), "team.pub:1")?;
//! assert_eq!(trusted.verify(&statement, &[signature.clone()])?, key.fingerprint());
//!
//! // The same signature does not vouch for another revision.
//! let replayed = Statement::revision("web-agent", "production", 13, "3f9c01ab");
//! assert!(trusted.verify(&replayed, &[signature]).is_err());
//! # Ok::<(), promptreg_core::Error>(())
//! ```

#![deny(missing_docs)]
#![warn(rustdoc::broken_intra_doc_links)]

// The core's errors, as this crate's own paths use them.
use promptreg_core::error;

mod digest;
mod keys;
mod statement;

pub use digest::{files_digest, state_digest};
pub use keys::{Signature, SigningKey, TrustedKeys};
pub use statement::{Statement, Subject};

/// The SSH signature namespace of promptreg's releases: a signature made
/// for anything else (a git commit, a file) never verifies as a release.
pub const NAMESPACE: &str = "promptreg-release";

/// An unencrypted OpenSSH Ed25519 private key made from `seed`, for
/// examples and tests only: anyone can make the same key.
#[doc(hidden)]
pub fn test_key_openssh(seed: u8) -> String {
    keys::test_key_openssh(seed)
}
