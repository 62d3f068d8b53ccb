#!/bin/sh
# coverage.sh: line and function coverage of the library and the command by the test suite
# (`make coverage`). A side build in DIR (default _build-cov; a copy of the sources, see
# side-build.sh) compiled with gcc's --coverage at -O0, its `make check` (TESTS="..." to run a
# part of the suite; default all of it), then lcov's summary of the library's and the command's
# sources (tests/, fuzz/, bench/ and system headers left out) and an HTML report in DIR/html.
#
#   sh scripts/coverage.sh SRCDIR [DIR] [TESTS]
#
# Exit status: the suite's (the figures are printed either way), 1 when lcov is missing
# (Debian package lcov).
set -eu
src=$(cd "$1" && pwd)
dir=${2:-_build-cov}
tests=${3:-}
case $dir in /*) ;; *) dir=$src/$dir ;; esac
command -v lcov > /dev/null || { echo "coverage: lcov not found (Debian package lcov)"; exit 1; }
# the copy has no ../shared beside it: the suites that need the reference data read it from here
DOPPLER_SHARED_DATA="${DOPPLER_SHARED_DATA:-$src/../shared/data}"; export DOPPLER_SHARED_DATA
sh "$src/scripts/side-build.sh" "$src" "$dir" --enable-werror CFLAGS="-O0 -g --coverage" LDFLAGS="--coverage" --
cd "$dir/src"
lcov -q -z -d . 2> /dev/null || true
rc=0
if [ -n "$tests" ]; then make -k check TESTS="$tests" || rc=$?; else make -k check || rc=$?; fi
lcov -q -c -d . -o "$dir/all.info" 2> "$dir/lcov.log"
lcov -q -r "$dir/all.info" '/usr/*' '*/tests/*' '*/fuzz/*' '*/bench/*' -o "$dir/coverage.info" 2>> "$dir/lcov.log"
echo "coverage of the library and the command by make check${tests:+ TESTS=\"$tests\"} (lcov; HTML in $dir/html):"
lcov --summary "$dir/coverage.info" 2>&1 | grep -E '^ *(lines|functions)'
genhtml -q -o "$dir/html" "$dir/coverage.info" >> "$dir/lcov.log" 2>&1 || echo "coverage: genhtml failed (see $dir/lcov.log)"
exit "$rc"
