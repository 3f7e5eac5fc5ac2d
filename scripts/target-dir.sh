#!/usr/bin/env bash
# Prints cargo's target directory for this workspace, as cargo itself
# resolves it (CARGO_TARGET_DIR, build.target-dir in a config file, or
# target/ beside Cargo.toml). Every script finds built binaries through it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo metadata --format-version 1 --no-deps --locked |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p'
