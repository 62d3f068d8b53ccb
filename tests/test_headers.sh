#!/bin/sh
# The library's headers as a user meets them:
# - every name a library header declares carries the header's module word (dp_graph.h declares
#   dp_graph_*, DP_GRAPH_*; scripts/check-names.py states the rule and its few exceptions);
# - every installed header compiles on its own, as C and as C++ (each has its extern "C" block
#   right: dp_alloc.h once closed it twice, which a C++ user saw as a syntax error).
set -u
: "${top_srcdir:=.}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

PY=""
for p in ${PYTHON:-} python3 /usr/bin/python3; do
    command -v "$p" >/dev/null 2>&1 && { PY=$p; break; }
done
if [ -n "$PY" ]; then
    out=$("$PY" "$top_srcdir/scripts/check-names.py" --srcdir "$top_srcdir") || fail "names without their module word:
$out"
    echo "$out" | tail -n 1
    # the checker itself: a name without its word is found (a header it has not seen before)
    for f in models machine sim exec nn policy; do mkdir -p "$tmp/$f"; done
    printf '#ifndef DP_WIDGET_H\n#define DP_WIDGET_H\ntypedef struct dp_widget { int n; } dp_widget;\nint dp_widget_count(const dp_widget *w);\nint dp_gadget_count(const dp_widget *w);\n#define WIDGET_MAX 4\nenum { DP_WIDGET_A, DP_B };\n#endif\n' >"$tmp/models/dp_widget.h"
    out=$("$PY" "$top_srcdir/scripts/check-names.py" --srcdir "$tmp") && fail "check-names.py passed a header with foreign names"
    for n in dp_gadget_count WIDGET_MAX DP_B; do
        echo "$out" | grep -q " $n does not start with dp_widget_" || fail "check-names.py did not report $n: $out"
    done
    echo "$out" | grep -q "dp_widget_count\|DP_WIDGET_A\| dp_widget " && fail "check-names.py reported a correct name: $out"
else
    echo "SKIP (names): no python3"
fi

# installed headers: the *_headers lists of Makefile.am
headers=$(sed -n 's/^[a-z]*_headers +*= *\([a-z]*\/dp_[a-z0-9_]*\.h\)$/\1/p' "$top_srcdir/Makefile.am")
[ -n "$headers" ] || fail "no installed header found in $top_srcdir/Makefile.am"
incs=""
for f in models machine sim exec nn policy; do incs="$incs -I$top_srcdir/$f"; done
CC=${CC:-cc}
CXX_FOUND=""
for c in ${CXX:-} g++ clang++; do command -v "$c" >/dev/null 2>&1 && { CXX_FOUND=$c; break; }; done
n=0
for h in $headers; do
    n=$((n + 1))
    printf '#include "%s"\n' "$(basename "$h")" | $CC -fsyntax-only -Wall -Werror $incs ${DP_HEADER_CFLAGS:-} -x c - \
        || fail "$h does not compile alone as C"
    [ -n "$CXX_FOUND" ] || continue
    printf '#include "%s"\n' "$(basename "$h")" | $CXX_FOUND -fsyntax-only $incs ${DP_HEADER_CFLAGS:-} -x c++ - 2>"$tmp/cxx.err" \
        || fail "$h does not compile alone as C++: $(head -n 3 "$tmp/cxx.err")"
done
echo "$n installed headers compiled alone (C${CXX_FOUND:+ and C++ with $CXX_FOUND})"

# the fuzz harnesses compile against the library's present API (only the fuzzing build, not make
# check, builds them: fuzz_assignment.c called dp_cli_read_assignment with its old arguments for a
# session, found when `make fuzz` failed)
nf=0
for h in "$top_srcdir"/fuzz/fuzz_*.c; do
    nf=$((nf + 1))
    $CC -fsyntax-only -std=gnu11 -Wall -Werror -I"${top_builddir:-.}" -I"$top_srcdir" $incs -I"$top_srcdir/experiments" \
        -I"$top_srcdir/fuzz" ${DP_HEADER_CFLAGS:-} "$h" 2>"$tmp/fz.err" ||
        fail "$(basename "$h") does not compile against the present API: $(head -n 3 "$tmp/fz.err")"
done
echo "$nf fuzz harnesses compiled (syntax only)"
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "PASS"
