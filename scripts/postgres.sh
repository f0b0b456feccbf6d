#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster on loopback, for tests and benchmarks that need a real server.
#
#   scripts/postgres.sh start            start a cluster; prints `export MODELSTORE_POSTGRES_URL=…` lines
#   scripts/postgres.sh stop             stop it and remove its directory
#   scripts/postgres.sh run -- COMMAND   start, run COMMAND with the URL exported, then stop and remove
#
# It installs Debian's postgresql-15 when the server binaries are missing, creates the cluster with
# initdb in a temporary directory owned by the `postgres` user (the server refuses to run as root),
# listens on 127.0.0.1 on a free port and on a socket in that directory (max_prepared_transactions=64,
# so stores can take part in two-phase saves), waits until the server
# accepts connections, and creates a database `modelstore` owned by the role `modelstore`
# (password authentication on TCP; the password is random and only in the exported URL).
# Exported: MODELSTORE_POSTGRES_URL (postgres://modelstore:…@127.0.0.1:PORT/modelstore),
# PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE.
#
# With MODELSTORE_POSTGRES_TLS=1 (for start and run) the server also speaks TLS, with a self-signed
# certificate made by openssl for 127.0.0.1 and localhost, and a second database `modelstore_tls`
# accepts TCP connections over TLS only (`hostnossl … reject` in pg_hba.conf). Also exported:
# MODELSTORE_POSTGRES_TLS_URL (that database, sslmode=require, sslrootcert=the certificate).
# Without the variable nothing changes.
set -euo pipefail

state_file="${MODELSTORE_POSTGRES_STATE:-${TMPDIR:-/tmp}/modelstore-postgres.state}"

find_bin() {
    local dir
    for dir in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
        if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; return 0; fi
    done
    return 1
}

install_server() {
    local packages=""
    find_bin >/dev/null || packages="postgresql-15"
    # The TLS server's certificate is made with openssl.
    if [ "${MODELSTORE_POSTGRES_TLS:-0}" = 1 ] && ! command -v openssl >/dev/null; then packages="$packages openssl"; fi
    [ -n "$packages" ] || return 0
    echo "postgres.sh: installing${packages} from Debian's packages" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -q
    # shellcheck disable=SC2086 # the list is meant to split
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q $packages >&2
}

as_postgres() {
    if [ "$(id -un)" = postgres ]; then "$@"; return; fi
    if [ "$(id -u)" -eq 0 ]; then
        if command -v runuser >/dev/null; then runuser -u postgres -- "$@"; else su postgres -s /bin/sh -c "$(printf '%q ' "$@")"; fi
    else
        sudo -u postgres "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
    if [ -f "$state_file" ]; then
        echo "postgres.sh: a cluster is already running (state in $state_file); run 'scripts/postgres.sh stop' first" >&2
        exit 1
    fi
    install_server
    local bin dir port password
    bin="$(find_bin)"
    dir="$(mktemp -d "${TMPDIR:-/tmp}/modelstore-pg.XXXXXX")"
    chmod 755 "$dir"
    chown postgres: "$dir" 2>/dev/null || true
    port="$(free_port)"
    password="$(python3 -c 'import secrets; print(secrets.token_hex(12))')"
    as_postgres "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
        --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    # max_prepared_transactions lets stores take part in saves across stores (PREPARE TRANSACTION).
    # max_connections: the test suites run in parallel, each store with a pool of up to 8 connections,
    # and together they outgrew the default 100 ("remaining connection slots are reserved", SQLSTATE
    # 53300, seen in a full run of the PostgreSQL package's tests).
    local server_options="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=on"
    server_options="$server_options -c max_prepared_transactions=64 -c max_connections=400"
    local tls="${MODELSTORE_POSTGRES_TLS:-0}"
    if [ "$tls" = 1 ]; then
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=localhost" \
            -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
            -keyout "$dir/server.key" -out "$dir/server.crt" >"$dir/openssl.log" 2>&1 \
            || { cat "$dir/openssl.log" >&2; exit 1; }
        chmod 600 "$dir/server.key"
        chmod 644 "$dir/server.crt"
        chown postgres: "$dir/server.key" "$dir/server.crt" 2>/dev/null || true
        server_options="$server_options -c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key"
        # The first matching line decides: plain TCP to modelstore_tls is refused, TLS falls through.
        as_postgres sh -c "{ echo 'hostnossl modelstore_tls all all reject'; cat '$dir/data/pg_hba.conf'; } \
            >'$dir/data/pg_hba.new' && mv '$dir/data/pg_hba.new' '$dir/data/pg_hba.conf'"
    fi
    as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "$server_options" start >/dev/null \
        || { cat "$dir/server.log" >&2; exit 1; }
    as_postgres "$bin/psql" -h "$dir" -p "$port" -U postgres -d postgres -q -v ON_ERROR_STOP=1 \
        -c "CREATE ROLE modelstore LOGIN PASSWORD '$password' CREATEDB" \
        -c "CREATE DATABASE modelstore OWNER modelstore" >/dev/null
    if [ "$tls" = 1 ]; then
        as_postgres "$bin/psql" -h "$dir" -p "$port" -U postgres -d postgres -q -v ON_ERROR_STOP=1 \
            -c "CREATE DATABASE modelstore_tls OWNER modelstore" >/dev/null
    fi
    printf 'dir=%s\nport=%s\npassword=%s\nbin=%s\ntls=%s\n' "$dir" "$port" "$password" "$bin" "$tls" >"$state_file"
    chmod 600 "$state_file"
    exports
}

exports() {
    # shellcheck disable=SC1090
    . "$state_file"
    echo "export MODELSTORE_POSTGRES_URL='postgres://modelstore:$password@127.0.0.1:$port/modelstore'"
    echo "export PGHOST=127.0.0.1 PGPORT=$port PGUSER=modelstore PGPASSWORD='$password' PGDATABASE=modelstore"
    echo "export MODELSTORE_POSTGRES_SOCKET='$dir'"
    if [ "${tls:-0}" = 1 ]; then
        echo "export MODELSTORE_POSTGRES_TLS_URL='postgres://modelstore:$password@127.0.0.1:$port/modelstore_tls?sslmode=require&sslrootcert=$dir/server.crt'"
    fi
}

stop() {
    [ -f "$state_file" ] || return 0
    # shellcheck disable=SC1090
    . "$state_file"
    as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    rm -f "$state_file"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    run)
        shift
        [ "${1:-}" = "--" ] && shift
        [ $# -gt 0 ] || { echo "usage: scripts/postgres.sh run -- COMMAND" >&2; exit 2; }
        # A cluster of its own, whatever else runs: its state in a file no other run uses.
        if [ -z "${MODELSTORE_POSTGRES_STATE:-}" ]; then
            state_file="$(mktemp "${TMPDIR:-/tmp}/modelstore-postgres-run.XXXXXX")"
            rm -f "$state_file"
        fi
        # A failed start ends the run (the command never runs without its server), and stops nothing.
        environment="$(start)" || exit 1
        trap stop EXIT
        eval "$environment"
        export MODELSTORE_POSTGRES_REQUIRED=1
        "$@"
        ;;
    *)
        echo "usage: scripts/postgres.sh start | stop | run -- COMMAND" >&2
        exit 2
        ;;
esac
