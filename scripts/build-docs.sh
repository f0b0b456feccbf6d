#!/usr/bin/env bash
# Builds the DocC catalogs of the documented modules (ModelStore, ModelStoreAdapterKit and
# ModelStoreTooling) with the toolchain's `docc`, and fails on any warning. The output is one
# static-hosting archive per module in $DOCS_SCRATCH/<Module>.doccarchive.
#
# The docc plugin package would make this `swift package generate-documentation`, but the main
# package takes no dependencies, so this script does the plugin's two steps itself:
#   1. read each module's symbol graph with `swift symbolgraph-extract` from the modules the debug
#      build (`swift build`, in .build) compiled, with no second compile (one in a scratch directory of
#      its own, with the compiler's symbol-graph output on, took 60-70 s of CI);
#   2. run `docc convert` on each catalog with that module's symbol graphs.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch="${DOCS_SCRATCH:-.build-docs}"
graphs="$scratch/symbol-graphs"
mkdir -p "$graphs"

docc="$(command -v docc || true)"
if [ -z "$docc" ]; then
    swift_path="$(command -v swift || true)"
    [ -n "$swift_path" ] && docc="$(dirname "$(readlink -f "$swift_path")")/docc"
fi
if [ ! -x "${docc:-}" ]; then
    echo "build-docs: cannot find docc; it ships with the Swift toolchain (next to 'swift')" >&2
    exit 1
fi

# The modules as `swift build` left them (nothing compiles when it has run), and the C modules' maps, so
# that the modules that import them load. Not host copies of the C modules (`*-tool.build`, built beside
# the target copies when a package with macros shares .build): they define the same module names again.
swift build --target ModelStoreAdapterKit >/dev/null
swift build --target ModelStoreTooling >/dev/null
bin="$(swift build --show-bin-path)"
maps=()
while IFS= read -r map; do maps+=(-Xcc "-fmodule-map-file=$(readlink -f "$map")"); done < <(
    find "$bin" -maxdepth 2 -name module.modulemap -not -path "*-tool.build/*"
    find Sources -name module.modulemap)
rm -rf "$graphs" && mkdir -p "$graphs"
for module in ModelStore ModelStoreAdapterKit ModelStoreTooling; do
    swift symbolgraph-extract -module-name "$module" -I "$bin/Modules" "${maps[@]}" \
        -target "$(uname -m)-unknown-linux-gnu" -minimum-access-level public -output-dir "$graphs"
done

# One archive per module, each from that module's graphs only (its own, and its extensions of
# other modules' types): docc documents one module per archive.
for module in ModelStore ModelStoreAdapterKit ModelStoreTooling; do
    module_graphs="$scratch/graphs-$module"
    archive="$scratch/$module.doccarchive"
    log="$scratch/docc-$module.log"
    rm -rf "$module_graphs" "$archive"
    mkdir -p "$module_graphs"
    cp "$graphs/$module.symbols.json" "$module_graphs/"
    cp "$graphs/$module"@*.symbols.json "$module_graphs/" 2>/dev/null || true
    status=0
    "$docc" convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$module_graphs" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.modelstore.$module" \
        --fallback-default-module-kind Framework \
        --output-path "$archive" \
        --warnings-as-errors > "$log" 2>&1 || status=$?
    if [ "$status" -ne 0 ] || grep -qE "(warning|error):" "$log"; then
        cat "$log" >&2
        echo "build-docs: docc reported problems in $module (see above); the catalog must build without warnings" >&2
        exit 1
    fi
    echo "build-docs: wrote $archive"
done
