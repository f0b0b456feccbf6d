#!/usr/bin/env bash
# CI for the Macros package (SwiftData's spelling, Macros/): its format, its doc comments, a build
# of the package and its tests (golden expansions, diagnostics, and models on every built-in store), and a
# smoke run of its benchmark.
# Run from anywhere. The package builds in the PostgreSQL adapter's build directory, which the other
# companion packages share (.ci/run): ModelStore and its stores are a dependency there as here, built
# with the same flags, so after the adapter's build they are not compiled again. The package's graph
# also builds host copies of them and of swift-syntax (`*-tool.build`), which scripts/ci-studio.sh
# leaves out of its symbol graph. In a directory of its own, a cold build of swift-syntax and the
# package (ModelStore included, both copies) took 296 s on the shared 2-core machine, at a load of 8 to 11.
set -euo pipefail
cd "$(dirname "$0")/.."
# SQLite's headers, which the built-in adapters that the tests use link.
scripts/install-deps.sh
swift format lint --strict -r --parallel Macros/Sources Macros/Tests Macros/Samples Macros/Benchmarks Macros/Package.swift
python3 scripts/check-docs.py Macros/Sources Macros/Samples Macros/Benchmarks
scratch=Adapters/PostgreSQL/.build
swift build --package-path Macros --scratch-path "$scratch" --build-tests
swift test --package-path Macros --scratch-path "$scratch" --skip-build
# The inmemory / inmemory-macro benchmark at a smoke size, in debug: it checks what both models store and
# fetch back (the timings are a release build's: see Macros/README.md).
swift run --package-path Macros --scratch-path "$scratch" --skip-build modelstore-macro-bench \
    --count 2000 --repetitions 3
