#!/usr/bin/env bash
# Builds the DocC catalog of the ModelStore module with the toolchain's `docc`, and fails on any
# warning. The output is a static-hosting archive in $DOCS_SCRATCH/ModelStore.doccarchive.
#
# The docc plugin package would make this `swift package generate-documentation`, but the main
# package takes no dependencies, so this script does the plugin's two steps itself:
#   1. compile the module with the compiler's symbol-graph output turned on;
#   2. run `docc convert` on the catalog with those symbol graphs.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch="${DOCS_SCRATCH:-.build-docs}"
graphs="$scratch/symbol-graphs"
archive="$scratch/ModelStore.doccarchive"
log="$scratch/docc.log"
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

# The graphs are rewritten whenever the module is recompiled; the dedicated scratch path keeps
# these compiler flags from invalidating other builds.
swift build --scratch-path "$scratch" --target ModelStore \
    -Xswiftc -emit-symbol-graph \
    -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs" \
    -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public

rm -rf "$archive"
status=0
"$docc" convert Sources/ModelStore/ModelStore.docc \
    --additional-symbol-graph-dir "$graphs" \
    --fallback-display-name ModelStore \
    --fallback-bundle-identifier org.modelstore.ModelStore \
    --fallback-default-module-kind Framework \
    --output-path "$archive" \
    --warnings-as-errors > "$log" 2>&1 || status=$?

if [ "$status" -ne 0 ] || grep -qE "(warning|error):" "$log"; then
    cat "$log" >&2
    echo "build-docs: docc reported problems (see above); the catalog must build without warnings" >&2
    exit 1
fi
echo "build-docs: wrote $archive"
