#!/usr/bin/env bash
# Installs what the studio's browser test needs: Debian's chromium and chromium-driver, and Selenium
# from PyPI in a virtual environment of its own (.build-browser/venv, outside git). A machine that
# already has them is left alone. Prints the venv's python on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "install-browser: chromium and chromedriver are missing; install Debian's chromium and" \
            "chromium-driver (or your system's equivalents)" >&2
        exit 1
    fi
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update >/dev/null
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium chromium-driver \
        fonts-dejavu-core >/dev/null
fi
venv=.build-browser/venv
if ! "$venv/bin/python" -c 'import selenium' >/dev/null 2>&1; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet 'selenium>=4.20,<5'
fi
echo "$PWD/$venv/bin/python"
