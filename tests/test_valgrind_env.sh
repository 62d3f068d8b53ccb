#!/bin/sh
# test_valgrind_env.sh: the assignment environment's suite (tests/test_env: both states, the
# checked estimates, steps that must leave the state unchanged when refused) under valgrind's
# memcheck, every error and every definite leak a failure (issue 33: Env.est_start of an op not
# in the ready set read past a heap buffer, which valgrind found). `make check-valgrind` runs
# every Check suite so. SKIP in the sanitizer build (valgrind and ASan do not mix) and without
# valgrind (scripts/install-deps.sh installs it); under CI=true a missing valgrind fails.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
if grep -q -- '--enable-sanitizers' "$top_builddir/config.status" 2>/dev/null; then
    echo "SKIP: a sanitizer build (valgrind runs in the main build)"
    exit 77
fi
if ! command -v valgrind > /dev/null 2>&1; then
    if [ "${CI:-}" = true ]; then echo "FAIL: valgrind not found (scripts/install-deps.sh installs it)"; exit 1; fi
    echo "SKIP: valgrind not found (sh scripts/install-deps.sh)"
    exit 77
fi
log=$(mktemp "${TMPDIR:-/tmp}/doppler-valgrind-env.XXXXXX")
trap 'rm -f "$log"' EXIT
CK_FORK=no "$top_builddir/libtool" --mode=execute valgrind -q --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite --suppressions="$top_srcdir/tests/valgrind.supp" "$top_builddir/tests/test_env" \
    > "$log" 2>&1
rc=$?
tail -n 3 "$log"
[ "$rc" -eq 0 ] || { cat "$log"; echo "FAIL: tests/test_env under valgrind: exit $rc"; exit 1; }
exit 0
