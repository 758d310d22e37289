#!/usr/bin/env bash
# Configures and builds the library with clang-14, ASan+UBSan and libFuzzer's coverage instrumentation
# (fuzzer-no-link): the one sanitizer build. run_fuzzer.sh builds its fuzzer in it; CI also builds the C++
# unit tests in the same tree (extra CMake arguments, e.g. -DREBELBOOST_BUILD_TESTS=ON), so one compile of
# the library serves the sanitized unit tests and the fuzzer. Later calls keep the cached options.
#
#   tests/fuzz/sanitizer_build.sh BUILD_DIR TARGET [CMAKE_ARG...]   (TARGET "all" builds everything configured)
#   (needs clang-14, libclang-rt-14-dev, libomp-14-dev)
set -euo pipefail
build="$(realpath -m "${1:?usage: sanitizer_build.sh BUILD_DIR TARGET [CMAKE_ARG...]}")"
target=${2:?usage: sanitizer_build.sh BUILD_DIR TARGET [CMAKE_ARG...]}
shift 2
root="$(cd "$(dirname "$0")/../.." && pwd)"
flags=${SANITIZER_FLAGS:-"-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
      -DREBELBOOST_BUILD_FUZZERS=ON -DCMAKE_CXX_FLAGS="$flags" -DPython_EXECUTABLE="$(command -v python3)" "$@" >/dev/null
cmake --build "$build" --target "$target" >/dev/null
