#!/usr/bin/env bash
# Builds the DocC catalogs of the documented modules (ModelStore, ModelStoreAdapterKit and
# ModelStoreTooling) with the toolchain's `docc`, and fails on any warning. The output is one
# static-hosting archive per module in $DOCS_SCRATCH/<Module>.doccarchive.
#
# The docc plugin package would make this `swift package generate-documentation`, but the main
# package takes no dependencies, so this script does the plugin's two steps itself:
#   1. compile the modules with the compiler's symbol-graph output turned on;
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

# The graphs are rewritten whenever a module is recompiled; the dedicated scratch path keeps
# these compiler flags from invalidating other builds. Building the two wings compiles the core too.
for target in ModelStoreAdapterKit ModelStoreTooling; do
    swift build --scratch-path "$scratch" --target "$target" \
        -Xswiftc -emit-symbol-graph \
        -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs" \
        -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public
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
