#!/bin/sh
# Build doppler from a clean tree with warnings as errors (--enable-werror) and run every test
# suite (make check), then the same suite under AddressSanitizer and UndefinedBehaviorSanitizer
# in a side build (_build-san, a copy of the sources configured with --enable-sanitizers).
# DOPPLER_NO_SANITIZERS=1 skips it. How long: on 2 cores the build and the suite take several
# minutes, and the sanitizer pass 7 to 19 minutes more (its first build of the copy alone takes
# minutes; a second run rebuilds only what changed). It says so at its start and prints a line per
# phase (copying, configuring, building with a count of files compiled, running the suite) and
# automake's line per suite as it ends.
# Ends with one line "N passed, N failed, N skipped" over both builds (from automake's .trs
# files), after the reason of each skipped suite; exit status 1 when a suite failed.
#
# On CI (CI=true) DOPPLER_REQUIRE_SHARED_DATA=1 is exported: the suites that read the public
# reference data ($DOPPLER_SHARED_DATA, default ../shared/data) then fail instead of skipping
# when it is absent, so they cannot silently vanish from CI.
set -eu
cd "$(dirname "$0")/.."
if [ "${CI:-}" = true ]; then
    DOPPLER_REQUIRE_SHARED_DATA=${DOPPLER_REQUIRE_SHARED_DATA:-1}
    export DOPPLER_REQUIRE_SHARED_DATA
fi
t0=$(date +%s)
phase() { echo "== $* ($(($(date +%s) - t0)) s since the start) =="; }
if [ "${DOPPLER_NO_SANITIZERS:-0}" != 1 ]; then
    echo "scripts/test.sh: build and test suite (several minutes on 2 cores), then the suite again under"
    echo "ASan + UBSan in _build-san (7 to 19 minutes more: a second build, then a slower run;"
    echo "DOPPLER_NO_SANITIZERS=1 skips it)"
else
    echo "scripts/test.sh: build and test suite (several minutes on 2 cores; the sanitizer pass is skipped)"
fi
phase "building"
[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure --enable-werror
make -j"$(nproc)"
# the .trs files of an earlier run must not count
rm -f tests/*.trs _build-san/src/tests/*.trs
rc=0
phase "the test suite (make check)"
make -j"$(nproc)" check || rc=1
if [ "${DOPPLER_NO_SANITIZERS:-0}" != 1 ]; then
    phase "the test suite under ASan + UBSan (_build-san): copy, configure, build (minutes), run"
    sh ./scripts/side-build.sh . _build-san --enable-sanitizers --enable-werror -- -j"$(nproc)" check || rc=1
fi

# the verdict: each suite's :test-result: line; a skipped suite's reason is the first line of
# its log that starts with "SKIP" (shell suites print "SKIP: why"; Check suites their message)
pass=0 failed=0 skipped=0 reasons=""
for dir in tests _build-san/src/tests; do
    [ -d "$dir" ] || continue
    build=main
    [ "$dir" = tests ] || build=sanitizers
    for trs in "$dir"/*.trs; do
        [ -f "$trs" ] || continue
        name=${trs%.trs}
        name=${name#"$dir"/}
        for res in $(sed -n 's/^:test-result: *//p' "$trs"); do
            case $res in
            PASS|XFAIL) pass=$((pass + 1)) ;;
            SKIP)
                skipped=$((skipped + 1))
                why=$(grep -m1 '^SKIP' "${trs%.trs}.log" 2>/dev/null | grep -v '(exit status: 77)' || true)
                reasons="$reasons
  skipped ($build): $name: ${why:-no reason given}" ;;
            *) failed=$((failed + 1)) ;;
            esac
        done
    done
done
[ -n "$reasons" ] && printf '%s\n' "$reasons" | sed '/^$/d'
phase "done"
echo "$pass passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] || rc=1
exit $rc
