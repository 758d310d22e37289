#!/usr/bin/env bash
# Consumer test of the installed C++ package: find_package(rebelboost) from examples/cpp, then predict.
#
#   tests/cmake/run_consumer_test.sh MODEL.rbm DATA.csv EXPECTED.csv [MODEL2.rbm DATA2.csv EXPECTED2.csv ...]
#
# 1. Unless REBELBOOST_CMAKE_PREFIX is set, configures, builds and installs the core with plain CMake into
#    a temporary prefix. With REBELBOOST_CMAKE_PREFIX (e.g. the CMake package inside an installed wheel)
#    that prefix is used as is and nothing is built from the source tree. For an installed wheel:
#      REBELBOOST_CMAKE_PREFIX=$(python -c "import os, rebelboost; print(os.path.dirname(rebelboost.__file__))")
# 2. Configures and builds examples/cpp against the prefix (-DCMAKE_PREFIX_PATH=<prefix>).
# 3. For each triple, runs predict_csv MODEL.rbm DATA.csv OUT.csv and compares OUT.csv with EXPECTED.csv
#    byte for byte (the core is built once for all triples).
#
# Environment: REBELBOOST_CMAKE_PREFIX (see above); KEEP_TMP=1 keeps the temporary folder; CMAKE_GENERATOR
# and CMAKE_BUILD_PARALLEL_LEVEL are honoured by cmake as usual. Exit status 0 only if every output matches.
set -euo pipefail

if [[ $# -eq 0 || $(($# % 3)) -ne 0 ]]; then
  echo "usage: $0 MODEL.rbm DATA.csv EXPECTED.csv [MODEL2.rbm DATA2.csv EXPECTED2.csv ...]" >&2
  exit 2
fi
abspath() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$1")"); }
for f in "$@"; do
  [[ -f "$f" ]] || { echo "error: no such file: $f" >&2; exit 2; }
done
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/rb-consumer.XXXXXX")
cleanup() {
  if [[ "${KEEP_TMP:-0}" == 1 ]]; then echo "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

generator=()
if [[ -z "${CMAKE_GENERATOR:-}" ]] && command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi

if [[ -n "${REBELBOOST_CMAKE_PREFIX:-}" ]]; then
  PREFIX=$REBELBOOST_CMAKE_PREFIX
  echo "== using the rebelboost package under $PREFIX (no build from source)"
else
  PREFIX=$TMP/prefix
  echo "== building and installing the core into $PREFIX"
  cmake -S "$REPO" -B "$TMP/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX="$PREFIX" -DREBELBOOST_BUILD_TESTS=OFF -DREBELBOOST_BUILD_PYTHON=OFF >"$TMP/core-configure.log" 2>&1 \
    || { cat "$TMP/core-configure.log" >&2; exit 1; }
  cmake --build "$TMP/build" --parallel >"$TMP/core-build.log" 2>&1 || { cat "$TMP/core-build.log" >&2; exit 1; }
  cmake --install "$TMP/build" >"$TMP/core-install.log" 2>&1 || { cat "$TMP/core-install.log" >&2; exit 1; }
fi

echo "== building examples/cpp against it"
# A fresh build folder and no package registry: the package can only come from PREFIX.
cmake -S "$REPO/examples/cpp" -B "$TMP/consumer" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$TMP/consumer-configure.log" 2>&1 \
  || { cat "$TMP/consumer-configure.log" >&2; exit 1; }
grep -h "rebelboost_DIR" "$TMP/consumer/CMakeCache.txt" || true
cmake --build "$TMP/consumer" --parallel >"$TMP/consumer-build.log" 2>&1 || { cat "$TMP/consumer-build.log" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
  MODEL=$(abspath "$1")
  DATA=$(abspath "$2")
  EXPECTED=$(abspath "$3")
  shift 3
  echo "== predict_csv $(basename "$MODEL") $(basename "$DATA")"
  "$TMP/consumer/predict_csv" "$MODEL" "$DATA" "$TMP/out.csv"
  if diff -u "$EXPECTED" "$TMP/out.csv" >"$TMP/diff.txt"; then
    echo "PASS: $(wc -l <"$TMP/out.csv") rows match $(basename "$EXPECTED")"
  else
    echo "FAIL: predict_csv output differs from $EXPECTED:" >&2
    head -40 "$TMP/diff.txt" >&2
    exit 1
  fi
done
