#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the store's tests.
#
#   eval "$(scripts/postgres-for-tests.sh start)"   # exports PROMPTREG_TEST_DATABASE_URL and PROMPTREG_TEST_PGDATA
#   cargo test -p promptreg-store
#   scripts/postgres-for-tests.sh stop              # stops it and removes its folder
#
# It listens on 127.0.0.1 on a free port, trusts local connections (the
# data folder is private to this run) and installs PostgreSQL with apt-get
# when initdb and pg_ctl are missing. PostgreSQL refuses to run as root, so
# as root the cluster runs as the `postgres` user.
set -euo pipefail

find_bin() {
    local dir
    # Debian keeps the server tools out of PATH, under a folder per version.
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r) "$(dirname "$(command -v pg_ctl || echo /nonexistent/x)")"; do
        if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && [ -x "$dir/createdb" ]; then
            echo "$dir"
            return
        fi
    done
    return 1
}

install_postgres() {
    echo "installing PostgreSQL with apt-get" >&2
    apt-get update >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >&2
}

# Runs a command as the cluster's owner.
as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

free_port() {
    local port
    for _ in $(seq 50); do
        port=$((20000 + RANDOM % 20000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
    echo "no free port found" >&2
    return 1
}

start() {
    local bin data port owner
    bin="$(find_bin)" || { install_postgres; bin="$(find_bin)"; }
    data="$(mktemp -d "${TMPDIR:-/tmp}/promptreg-pg.XXXXXX")"
    owner="$(id -un)"
    if [ "$(id -u)" = 0 ]; then
        owner=postgres
        chown postgres: "$data"
    fi
    chmod 700 "$data"
    as_owner "$bin/initdb" -D "$data/cluster" -U "$owner" --auth=trust --no-sync -E UTF8 >"$data/initdb.log" 2>&1 ||
        { cat "$data/initdb.log" >&2; exit 1; }
    port="$(free_port)"
    # Durability is not tested here: fsync off keeps the tests fast.
    as_owner "$bin/pg_ctl" -D "$data/cluster" -l "$data/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $data -c fsync=off -c max_connections=200" start >&2 ||
        { cat "$data/server.log" >&2; exit 1; }
    as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$owner" promptreg_test >&2
    echo "export PROMPTREG_TEST_PGDATA=$data"
    echo "export PROMPTREG_TEST_PGBIN=$bin"
    echo "export PROMPTREG_TEST_DATABASE_URL=postgres://$owner@127.0.0.1:$port/promptreg_test"
}

stop() {
    local data="${PROMPTREG_TEST_PGDATA:-}" bin="${PROMPTREG_TEST_PGBIN:-}"
    if [ -z "$data" ] || [ ! -d "$data" ]; then
        return 0
    fi
    [ -n "$bin" ] || bin="$(find_bin)"
    as_owner "$bin/pg_ctl" -D "$data/cluster" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$data"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
