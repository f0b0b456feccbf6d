#!/usr/bin/env bash
# `modelstore sync LOCAL http://…` against a real modelstore-sync-server on loopback over the
# PostgreSQL server scripts/postgres.sh started (MODELSTORE_POSTGRES_URL): a client process saves
# notes and syncs them; the tool then creates a JSON store from the server's schema and pulls them
# with the token from the environment, then from --token-file; a wrong token fails with the server's
# message; neither the token nor the database password appears in any output or the server's log.
# Then PostgreSQL is restarted (pg_ctl restart) while a client pushes 400 notes through the running
# server: the round may fail (transient), the next one succeeds through the same server process, and
# the other client then pulls each note exactly once.
# MODELSTORE_SYNC_BIN is the SyncServer package's bin directory, MODELSTORE_TOOL the modelstore binary.
set -euo pipefail
bin="${MODELSTORE_SYNC_BIN:?}"
tool="${MODELSTORE_TOOL:?}"
dir="$(mktemp -d)"
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "syncserver-cli-test: $*" >&2; [ -f "$dir/server.log" ] && cat "$dir/server.log" >&2; exit 1; }

python3 -c 'import secrets; print(secrets.token_hex(32))' >"$dir/key"
"$bin/sync-test-client" schema "$dir/schema.json"
"$bin/modelstore-sync-server" --jwt-key-file "$dir/key" --mint-token alice >"$dir/token"
MODELSTORE_SYNC_STORE="$MODELSTORE_POSTGRES_URL?namespace=cli_$$" "$bin/modelstore-sync-server" \
    --schema "$dir/schema.json" --jwt-key-file "$dir/key" --port 0 --scope-attribute owner >"$dir/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 600); do
    grep -q "listening on" "$dir/server.log" && break
    kill -0 "$server_pid" 2>/dev/null || fail "the server exited"
    sleep 0.1
done
url="$(grep -o 'http://127.0.0.1:[0-9]*/sync' "$dir/server.log" | head -n 1)"
[ -n "$url" ] || fail "the server did not print its address"

"$bin/sync-test-client" "sqlite:$dir/phone.sqlite" "$url" "$dir/token" 10 add alice groceries books >/dev/null
out="$("$bin/sync-test-client" "sqlite:$dir/phone.sqlite" "$url" "$dir/token" 10 sync)"
[[ "$out" == synced* ]] || fail "the client's push failed: $out"

out="$(MODELSTORE_SYNC_TOKEN="$(cat "$dir/token")" "$tool" sync "json:$dir/laptop.json" "$url" 2>&1)" \
    || fail "modelstore sync with the token from the environment failed: $out"
echo "$out"
[[ "$out" == *"pulled 2 changes"* ]] || fail "expected 2 pulled changes: $out"
"$tool" sync "json:$dir/laptop.json" "$url" --token-file "$dir/token" --json >"$dir/second.json" 2>&1 \
    || fail "modelstore sync with --token-file failed: $(cat "$dir/second.json")"
grep -q '"pulled" *: *0' "$dir/second.json" || fail "the second sync pulled again: $(cat "$dir/second.json")"
echo "wrong" >"$dir/bad-token"
if out="$("$tool" sync "json:$dir/laptop.json" "$url" --token-file "$dir/bad-token" 2>&1)"; then
    fail "a wrong token was accepted: $out"
fi
[[ "$out" == *"401"* && "$out" == *"not a well-formed JWT"* ]] || fail "unexpected refusal: $out"
token="$(cat "$dir/token")"
password="$(python3 -c 'import sys, urllib.parse; print(urllib.parse.urlparse(sys.argv[1]).password)' "$MODELSTORE_POSTGRES_URL")"
if grep -qF -e "$token" -e "$password" "$dir/server.log" "$dir/second.json"; then
    fail "a token or the database password was printed"
fi

# PostgreSQL restarted mid-push: the same server process serves the next round.
pg_bin="$(dirname "$(command -v pg_ctl 2>/dev/null || ls /usr/lib/postgresql/*/bin/pg_ctl | head -n 1)")"
pg_data="${MODELSTORE_POSTGRES_SOCKET:?}/data"
restart() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_data" -m fast -w restart >/dev/null
    else sudo -u postgres "$pg_bin/pg_ctl" -D "$pg_data" -m fast -w restart >/dev/null; fi
}
titles=()
for i in $(seq 1 400); do titles+=("batch-$i"); done
"$bin/sync-test-client" "sqlite:$dir/phone.sqlite" "$url" "$dir/token" 10 add alice "${titles[@]}" >/dev/null
"$bin/sync-test-client" "sqlite:$dir/phone.sqlite" "$url" "$dir/token" 10 sync >"$dir/cut.txt" 2>&1 &
client_pid=$!
sleep 0.3
restart
wait "$client_pid" || true
echo "round during the restart: $(cat "$dir/cut.txt")"
out="$("$bin/sync-test-client" "sqlite:$dir/phone.sqlite" "$url" "$dir/token" 10 sync)"
if [[ "$out" != synced* ]]; then
    sleep 1
    out="$("$bin/sync-test-client" "sqlite:$dir/phone.sqlite" "$url" "$dir/token" 10 sync)"
fi
[[ "$out" == synced* ]] || fail "the round after PostgreSQL restarted failed: $out"
out="$("$tool" sync "json:$dir/laptop.json" "$url" --token-file "$dir/token" 2>&1)" || fail "the pull failed: $out"
[[ "$out" == *"pulled 400 changes"* ]] || fail "expected the 400 notes pulled once each: $out"
kill -0 "$server_pid" || fail "the server exited when PostgreSQL restarted"
echo "syncserver-cli-test: passed"
