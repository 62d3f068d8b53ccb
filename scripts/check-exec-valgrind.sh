#!/bin/sh
# Memory and thread checks of the real executor (slow: minutes; not part of make check).
#   memcheck: every buffer freed, no invalid access (tests/test_exec, tests/test_calib)
#   helgrind: no data race between the compute, copy and controlling threads
# Run from the build directory after make check-programs: scripts/check-exec-valgrind.sh
set -eu
top_srcdir=${top_srcdir:-$(dirname "$0")/..}
export top_srcdir CK_FORK=no
for t in tests/test_exec tests/test_calib; do
    ./libtool --mode=execute valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --error-exitcode=3 "./$t"
done
./libtool --mode=execute valgrind --tool=helgrind --suppressions="$top_srcdir/scripts/exec-helgrind.supp" \
    --error-exitcode=3 ./tests/test_exec
echo "valgrind: memcheck and helgrind clean"
