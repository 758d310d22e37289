#!/usr/bin/env bash
# Prints a PATH without any compiler or build tool: a folder of links to every program of the system PATH
# except C/C++/Fortran compilers, the preprocessor, cmake and ninja. CI installs the wheel and runs the tests
# under it, so nothing can be compiled on the way.
#
#   PATH="$venv/bin:$(bash .ci/no_compiler_path.sh DIR)"
set -euo pipefail
rm -rf "$1" && mkdir -p "$1"
dir="$(cd "$1" && pwd)"  # absolute: a relative PATH entry breaks in every process that changes folder
for folder in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
  [ -d "$folder" ] || continue
  for program in "$folder"/*; do
    name="$(basename "$program")"
    case "$name" in
      *gcc* | *g++* | cc | c++ | c89* | c99* | cpp* | *-cpp* | *clang* | gfortran* | *-gfortran* | tcc | icx | icpx | \
        cmake* | ctest* | cpack* | ccmake* | ninja* | pyenv | python*-config) continue ;;
    esac
    [ -x "$program" ] && [ ! -e "$dir/$name" ] && ln -s "$program" "$dir/$name"
  done
done
echo "$dir"
