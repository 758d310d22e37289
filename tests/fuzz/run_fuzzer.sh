#!/usr/bin/env bash
# Fuzzes the model loader and predictor: builds tests/fuzz/model_file_fuzzer.cpp with clang, libFuzzer and
# ASan+UBSan, runs it for SECONDS on each model kind's seed corpus (tests/fuzz/corpus/<kind>/, written by
# make_corpus.py), two kinds at a time, and prints per kind the executions per second, the edges covered
# and the peak memory. Any crash, sanitizer report, leak, timeout (> 10 s) or out-of-memory (> 2 GiB) is a
# finding: the input is saved under BUILD/findings/ and the script fails. Then (unless LINE_COVERAGE=0) the
# corpora the runs grew are replayed through a coverage build and llvm-cov prints the line coverage of the
# loader and predictor.
#
#   [LINE_COVERAGE=0] tests/fuzz/run_fuzzer.sh SECONDS [BUILD_DIR]
#   (needs clang-14, libclang-rt-14-dev, libomp-14-dev, llvm-14)
set -euo pipefail
seconds=${1:?usage: run_fuzzer.sh SECONDS [BUILD_DIR]}
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(realpath -m "${2:-$root/build/fuzz}")"
# The sanitizer build (sanitizer_build.sh: the flags live there); CI has already built its unit tests in it.
bash "$root/tests/fuzz/sanitizer_build.sh" "$build/sanitizers" rb_model_file_fuzzer
fuzzer="$build/sanitizers/tests/fuzz/rb_model_file_fuzzer"

kinds=$(cd "$root/tests/fuzz/corpus" && ls)
mkdir -p "$build/findings" "$build/logs"
for kind in $kinds; do rm -rf "$build/work/$kind" && mkdir -p "$build/work/$kind"; done
# New inputs go to work/<kind>; the committed seeds are only read.
printf '%s\n' $kinds | xargs -P 2 -I{} sh -c \
  "ASAN_OPTIONS=detect_leaks=1 '$fuzzer' '$build/work/{}' '$root/tests/fuzz/corpus/{}' -max_total_time=$seconds \
     -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix='$build/findings/{}-' \
     > '$build/logs/{}.log' 2>&1" || true

status=0
total=$(grep -m1 -o '[0-9]* inline 8-bit counters' "$build/logs/$(echo $kinds | cut -d' ' -f1).log" | cut -d' ' -f1)
printf '%-10s %8s %10s %12s %14s %8s\n' kind seconds runs "exec/s" "edges covered" "rss MB"
for kind in $kinds; do
  log="$build/logs/$kind.log"
  if ! grep -q '^Done [0-9]* runs' "$log"; then
    echo "FINDING in $kind (log $log):"; grep -E 'ERROR|FINDING|SUMMARY|Test unit written' "$log" | head -20; status=1; continue
  fi
  stat() { grep "stat::$1" "$log" | tr -dc 0-9; }
  printf '%-10s %8s %10s %12s %14s %8s\n' "$kind" "$seconds" "$(stat number_of_executed_units)" \
    "$(stat average_exec_per_sec)" "$(grep -o 'DONE *cov: [0-9]*' "$log" | tr -dc 0-9) of $total" "$(stat peak_rss_mb)"
done
[ "$status" = 0 ] || exit 1
[ "${LINE_COVERAGE:-1}" = 0 ] && exit 0

# Line coverage: replay every corpus (seeds and what the runs found) through an instrumented build.
SANITIZER_FLAGS="-fsanitize=fuzzer-no-link -fprofile-instr-generate -fcoverage-mapping" \
  bash "$root/tests/fuzz/sanitizer_build.sh" "$build/coverage" rb_model_file_fuzzer
rm -f "$build/coverage"/*.profraw
for kind in $kinds; do
  LLVM_PROFILE_FILE="$build/coverage/$kind.profraw" "$build/coverage/tests/fuzz/rb_model_file_fuzzer" -runs=0 \
    "$build/work/$kind" "$root/tests/fuzz/corpus/$kind" >/dev/null 2>&1
done
llvm-profdata-14 merge -o "$build/coverage/all.profdata" "$build/coverage"/*.profraw
llvm-cov-14 report "$build/coverage/tests/fuzz/rb_model_file_fuzzer" -instr-profile="$build/coverage/all.profdata" \
  "$root/cpp/src/io/model_file.cpp" "$root/cpp/src/model" "$root/cpp/src/predict" | sed "s|$root/||"
