#!/usr/bin/env bash
# ModelStore Studio (the Server/ package): the house format, the build, the package's tests (pages
# through the real router, the filter language, keyset paging, the change watcher, and the pages over a
# real PostgreSQL 15 store from scripts/postgres.sh), then the browser test: Debian's chromium driven by
# Selenium (scripts/install-browser.sh installs both) against the real modelstore-studio on loopback, on a
# real SQLite store and on a PostgreSQL namespace, with a change made by another process (also one made
# between a page's render and its subscription, and while a page waits in the back-forward cache) and a class
# hierarchy (diagram, class filter, model class). Also the studio's DocC catalog, which must build without
# warnings. Screenshots and the studios' debug logs go to .ci/artifacts/studio/ (and studio/postgres/).
# 118 s here warm at load 16-21.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
swift format lint --strict -r --parallel Server/Sources Server/Tests Server/Package.swift
python3 scripts/check-docs.py Server/Sources
# The PostgreSQL adapter's build directory, where .ci/run's earlier steps already built SwiftNIO,
# BoringSSL, swift-crypto and ModelStore in debug (same versions, same flags): then only Hummingbird,
# AsyncHTTPClient and the studio compile (80 s here at load ~12, against about 13 min for the adapter's
# own cold build of those packages). A machine without that build gets a cold one there.
scratch=Adapters/PostgreSQL/.build
swift build --package-path Server --scratch-path "$scratch" --build-tests
python="$(scripts/install-browser.sh | tail -n 1)"
bin="$(swift build --package-path Server --scratch-path "$scratch" --show-bin-path)"
# The studio's DocC catalog, without warnings: the symbol graph is read from the module just built
# (no second compile; the C modules' maps let it load), then the toolchain's docc converts (3 s here).
docs=.build-docs/studio
rm -rf "$docs" && mkdir -p "$docs/graphs"
# Not host copies of the C modules (`*-tool.build`, which a package with macros builds beside the target
# copies), should there be any: they define the same module names a second time.
maps=()
while IFS= read -r map; do maps+=(-Xcc "-fmodule-map-file=$(readlink -f "$map")"); done < <(
    find "$bin" -maxdepth 2 -name module.modulemap -not -path "*-tool.build/*"
    find "$scratch/checkouts" -name module.modulemap
    find Sources Adapters -name .build -prune -o -name module.modulemap -print)
swift symbolgraph-extract -module-name ModelStoreStudio -I "$bin/Modules" "${maps[@]}" \
    -target "$(uname -m)-unknown-linux-gnu" -minimum-access-level public -output-dir "$docs/graphs"
"$(dirname "$(readlink -f "$(command -v swift)")")/docc" convert Server/Sources/ModelStoreStudio/ModelStoreStudio.docc \
    --additional-symbol-graph-dir "$docs/graphs" --fallback-display-name ModelStoreStudio \
    --fallback-bundle-identifier org.modelstore.ModelStoreStudio --fallback-default-module-kind Framework \
    --output-path "$docs/ModelStoreStudio.doccarchive" --warnings-as-errors >"$docs/docc.log" 2>&1 \
    && ! grep -qE "(warning|error):" "$docs/docc.log" || { cat "$docs/docc.log" >&2; exit 1; }
# One throwaway server for the package's tests and the browser test on PostgreSQL (each browser test
# takes 10-25 s at load ~20).
# shellcheck disable=SC2016 # expanded by the inner shell, where postgres.sh has set the URL
scripts/postgres.sh run -- sh -c '
    swift test --package-path Server --scratch-path "$1" --skip-build &&
    "$2" Server/BrowserTests/studio_browser_test.py "$3" .ci/artifacts/studio/postgres \
        "$MODELSTORE_POSTGRES_URL?namespace=studio_browser"' sh "$scratch" "$python" "$bin"
"$python" Server/BrowserTests/studio_browser_test.py "$bin" .ci/artifacts/studio
# The speed script at a small size, so it never rots (its goals are for a million models:
# `Server/BrowserTests/studio_speed.py "$bin" 1000000`, about 2 min with the store's creation).
"$python" Server/BrowserTests/studio_speed.py "$bin" 20000
echo "ci-studio: passed in $((SECONDS - started)) s"
