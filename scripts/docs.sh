#!/usr/bin/env bash
# The book in docs/, built with a pinned mdBook installed once into cargo's
# target directory (so a warm run takes seconds).
#
#   scripts/docs.sh build   build it into <target>/book, fail on any warning,
#                           then check every link and anchor in it
#   scripts/docs.sh serve   serve it on http://127.0.0.1:3000, rebuilt as you
#                           edit (installs mdBook's `serve` feature on first use)
set -euo pipefail
cd "$(dirname "$0")/.."

MDBOOK_VERSION=0.5.4
target=$(scripts/target-dir.sh)
out="$target/book"

# Installs mdBook (with `features`) under `root` unless it is there; prints its path.
mdbook() {
    local root="$1" features="$2"
    if [ ! -x "$root/bin/mdbook" ]; then
        echo "installing mdbook $MDBOOK_VERSION ($features) into $root" >&2
        # In a temporary target directory of its own, removed after.
        env -u CARGO_TARGET_DIR cargo install mdbook --version "=$MDBOOK_VERSION" --locked --quiet \
            --no-default-features --features "$features" --root "$root" >&2
    fi
    echo "$root/bin/mdbook"
}

case "${1:-build}" in
build)
    bin=$(mdbook "$target/tools/mdbook-$MDBOOK_VERSION" search)
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    if ! "$bin" build docs --dest-dir "$out" 2>"$log"; then
        cat "$log" >&2
        exit 1
    fi
    if grep -E 'WARN|ERROR' "$log" >&2; then
        echo "mdbook warned: the book must build without warnings" >&2
        exit 1
    fi
    python3 scripts/check-book-links.py "$out"
    echo "the book is in $out/index.html"
    ;;
serve)
    bin=$(mdbook "$target/tools/mdbook-$MDBOOK_VERSION-serve" "search serve watch")
    exec "$bin" serve docs --dest-dir "$out" --hostname 127.0.0.1 --port 3000
    ;;
*)
    echo "usage: scripts/docs.sh [build|serve]" >&2
    exit 2
    ;;
esac
