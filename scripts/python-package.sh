#!/usr/bin/env bash
# Builds the Python package (bindings/python) into a virtual environment in
# cargo's target directory, with the test tools pinned by hash in
# bindings/python/requirements-dev.txt, and prints the environment's path.
#
#   scripts/python-package.sh [--release]   # default: a debug build
#
# The package is built by maturin (from the lock file) with this
# repository's Rust toolchain; `pip install ./bindings/python` does the
# same with the newest maturin from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=dev
[ "${1:-}" = "--release" ] && profile=release
venv="$(scripts/target-dir.sh)/python-venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" >&2
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes \
    -r bindings/python/requirements-dev.txt >&2
# maturin runs cargo: the environment's tools come first on PATH.
PATH="$venv/bin:$PATH" MATURIN_PEP517_ARGS="--profile $profile --locked" \
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-build-isolation --no-deps \
    --force-reinstall ./bindings/python >&2
echo "$venv"
