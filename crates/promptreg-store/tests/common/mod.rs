//! The store's test helpers (feature `test-support`), and the example
//! packs of the repository.
#![allow(dead_code, unused_imports)]

use std::path::{Path, PathBuf};

pub use promptreg_store::test_support::*;

promptreg_store::postgres_half!();

/// The example pack folders of the repository.
pub fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}
