#!/usr/bin/env bash
# Throughput of `promptreg serve` beside a minimal axum server answering
# the same bytes from memory (crates/promptreg-server/examples/baseline.rs),
# measured with wrk on loopback in one run. See BENCHMARKS.md.
#
#   scripts/bench-server.sh              # 10 s per measurement, 2 rounds
#   DURATION=5s ROUNDS=1 scripts/bench-server.sh
#
# Needs wrk (Debian: `apt-get install wrk`) and curl. Both servers get the
# same wrk threads and connections; the rounds alternate which one goes
# first, and the table shows the median of the rounds.
set -euo pipefail

DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-2}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-64}
SERVER_PORT=${SERVER_PORT:-17878}
BASELINE_PORT=${BASELINE_PORT:-17879}
PROMPTS=100

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
for tool in wrk curl; do
    command -v "$tool" >/dev/null || { echo "bench-server: $tool is needed" >&2; exit 2; }
done

cargo build --release --quiet -p promptreg-cli
cargo build --release --quiet -p promptreg-server --example baseline
target_dir=$(scripts/target-dir.sh)
promptreg="$target_dir/release/promptreg"
baseline="$target_dir/release/examples/baseline"

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# A pack of 100 prompts, pushed and released to production.
pack="$work/pack"
mkdir -p "$pack/defaults"
ids=$(for i in $(seq 0 $((PROMPTS - 1))); do printf 'p%03d ' "$i"; done)
keys=$(for id in $ids; do printf '"%s", ' "$id"; done)
printf 'name = "bench"\nkeys = [%s]\n[user]\nprompts_dir = ".bench/prompts"\n' "${keys%, }" >"$pack/promptreg.toml"
for id in $ids; do
    printf -- '---\ndescription: prompt %s\n---\nYou are assistant %s. Answer in one paragraph, citing your sources, and say so when you do not know.\n' \
        "$id" "$id" >"$pack/defaults/$id.md"
done
db="$work/bench.db"
"$promptreg" store --database "$db" push "$pack" --message bench >/dev/null
"$promptreg" store --database "$db" release latest production >/dev/null

# The server logs warnings only: a log line per request would measure the
# terminal, not the server.
RUST_LOG=warn "$promptreg" serve --database "$db" --listen "127.0.0.1:$SERVER_PORT" 2>"$work/serve.log" &
pids+=($!)
server="http://127.0.0.1:$SERVER_PORT"
for _ in $(seq 100); do curl -sf "$server/readyz" >/dev/null && break; sleep 0.1; done

prompt_path="/v1/packs/bench/prompts/p042?label=production"
bundle_path="/v1/packs/bench/labels/production"
"$baseline" "$server" "127.0.0.1:$BASELINE_PORT" "$prompt_path" "$bundle_path" &
pids+=($!)
base="http://127.0.0.1:$BASELINE_PORT"
for _ in $(seq 100); do curl -sf "$base$bundle_path" >/dev/null && break; sleep 0.1; done

etag=$(curl -sfI "$server$prompt_path" | tr -d '\r' | sed -n 's/^etag: //Ip')
prompt_bytes=$(curl -sf "$server$prompt_path" | wc -c)
bundle_bytes=$(curl -sf "$server$bundle_path" | wc -c)
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$server$prompt_path")" = 304 ] ||
    { echo "bench-server: the server did not answer 304 to its own ETag" >&2; exit 1; }

# Requests per second of one wrk run; fails on any non-2xx/3xx answer.
rate() {
    local out
    out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" "$@")
    if grep -q 'Non-2xx or 3xx' <<<"$out"; then
        echo "bench-server: errors in: wrk $*" >&2
        echo "$out" >&2
        exit 1
    fi
    sed -n 's/^Requests\/sec: *//p' <<<"$out"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $ROUNDS round(s)"
printf '| request | bytes | promptreg serve (req/s) | baseline (req/s) | ratio |\n|---|---|---|---|---|\n'
measure() {
    local name=$1 bytes=$2 path=$3
    shift 3
    local ours=() theirs=()
    for round in $(seq "$ROUNDS"); do
        if ((round % 2)); then
            ours+=("$(rate "$@" "$server$path")")
            theirs+=("$(rate "$@" "$base$path")")
        else
            theirs+=("$(rate "$@" "$base$path")")
            ours+=("$(rate "$@" "$server$path")")
        fi
    done
    local a b
    a=$(printf '%s\n' "${ours[@]}" | median)
    b=$(printf '%s\n' "${theirs[@]}" | median)
    printf '| %s | %s | %.0f | %.0f | %.0f %% |\n' "$name" "$bytes" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {print 100 * a / b}')"
}
measure "prompt at a label, 200" "$prompt_bytes" "$prompt_path"
measure "prompt at a label, 304" 0 "$prompt_path" -H "If-None-Match: $etag"
measure "bundle of $PROMPTS prompts, 200" "$bundle_bytes" "$bundle_path"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
