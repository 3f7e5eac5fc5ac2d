#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 30) and fails on any crash:
# settings, pack, template, locale, id, resolve, bundle (bundles, signatures
# and trusted keys), po and xliff (the translation file readers), contract
# (tools and output schemas: their checks, shapes, changes and samples).
#
#   scripts/fuzz-smoke.sh 60
#
# Needs cargo-fuzz (installed from crates.io when missing). cargo fuzz wants
# a nightly compiler; on a stable toolchain RUSTC_BOOTSTRAP=1 lets it pass
# its flags. Crashing inputs land in fuzz/artifacts/<target>/; add each as a
# regression test in crates/promptreg/tests/fuzz_regressions.rs.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-30}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

if ! rustc --version | grep -q nightly; then
    export RUSTC_BOOTSTRAP=1
fi

targets=$(cd fuzz && cargo fuzz list | tr "\n" " ")
for target in $targets; do
    echo "--- fuzzing $target for ${seconds}s"
    (cd fuzz && cargo fuzz run --sanitizer none "$target" -- \
        -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048)
done
echo "no crash in: $targets"
