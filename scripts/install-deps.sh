#!/usr/bin/env bash
# Installs the C libraries the package links: SQLite's headers and library (ModelStoreSQLite's
# CSQLite system-library target). A machine that already has them is left alone.
set -euo pipefail
if [ -f /usr/include/sqlite3.h ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: /usr/include/sqlite3.h is missing; install SQLite's development files" \
        "(Debian/Ubuntu: libsqlite3-dev; macOS: the SDK has them)" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
$SUDO apt-get install -y libsqlite3-dev
