#!/usr/bin/env bash
# CI for the Macros package (SwiftData's spelling, Macros/): its format, its doc comments, a build
# of the package and its tests (golden expansions, diagnostics, and models on every built-in store).
# Run from anywhere; the package builds in Macros/.build. A cold build of swift-syntax and the
# package (ModelStore included) took 296 s on the shared 2-core machine, at a load of 8 to 11.
set -euo pipefail
cd "$(dirname "$0")/.."
# SQLite's headers, which the built-in adapters that the tests use link.
scripts/install-deps.sh
swift format lint --strict -r --parallel Macros/Sources Macros/Tests Macros/Samples Macros/Package.swift
python3 scripts/check-docs.py Macros/Sources Macros/Samples
swift build --package-path Macros --build-tests
swift test --package-path Macros --skip-build
