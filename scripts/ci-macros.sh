#!/usr/bin/env bash
# CI for the Macros package (SwiftData's spelling, Macros/): its format, its doc comments, a build
# of the package and its tests (golden expansions, diagnostics, and models on every built-in store), and a
# smoke run of its benchmark.
# Run from anywhere. The package builds in the main package's build directory (.build), where `swift build`
# compiles ModelStore and its stores with the same flags a dependency gets, so they are not compiled again;
# the package's graph also builds host copies of them (`*-tool.build`) and swift-syntax. Not in the
# directory the other companion packages share (Adapters/PostgreSQL/.build): resolving this package there
# removed their checkouts (its graph holds only swift-syntax), and the next package checked out and
# compiled SwiftNIO, swift-crypto and PostgresNIO again (the studio's build took 469 s instead of 150 s).
# In .build after `swift build`, this build took 275 s on the shared 2-core machine. The host copies are
# SwiftPM's: a test target here depends on the macro target, so the package's tests build for the host.
set -euo pipefail
cd "$(dirname "$0")/.."
# SQLite's headers, which the built-in adapters that the tests use link.
scripts/install-deps.sh
swift format lint --strict -r --parallel Macros/Sources Macros/Tests Macros/Samples Macros/Benchmarks Macros/Package.swift
python3 scripts/check-docs.py Macros/Sources Macros/Samples Macros/Benchmarks
scratch=.build
swift build --package-path Macros --scratch-path "$scratch" --build-tests
swift test --package-path Macros --scratch-path "$scratch" --skip-build
# The inmemory / inmemory-macro benchmark at a smoke size, in debug: it checks what both models store and
# fetch back (the timings are a release build's: see Macros/README.md).
swift run --package-path Macros --scratch-path "$scratch" --skip-build modelstore-macro-bench \
    --count 2000 --repetitions 3
