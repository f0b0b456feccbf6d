#!/usr/bin/env bash
# Installs the C libraries the package links: SQLite's headers and library (ModelStoreSQLite's
# CSQLite system-library target) and OpenSSL's libcrypto (ModelStoreCrypto's CModelStoreCrypto).
# A machine that already has them is left alone.
set -euo pipefail
if [ -f /usr/include/sqlite3.h ] && [ -f /usr/include/openssl/evp.h ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: /usr/include/sqlite3.h or /usr/include/openssl/evp.h is missing; install the" \
        "development files of SQLite and OpenSSL (Debian/Ubuntu: libsqlite3-dev libssl-dev;" \
        "macOS: the SDK has SQLite, Homebrew's openssl@3 has OpenSSL)" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
$SUDO apt-get install -y libsqlite3-dev libssl-dev
