#!/bin/sh
# test_opt_levels.sh: the engines' sources build at every optimisation level a user may choose
# (CFLAGS="-O1 -g" to debug, -Og, -Os), not only at configure's -O2. The exact engine's
# always_inline copy handler was passed through a chosen function pointer (conv ? a : b) into a
# helper inlined late at -O1, and GCC refused to build it there ("inlining failed in call to
# always_inline ...: indirect function call with a yet undetermined callee"). Compiles only (no
# link), each file at -O1 and -Og.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
cc=${CC:-cc}
command -v "$cc" > /dev/null 2>&1 || { echo "SKIP: no C compiler ($cc)"; exit 77; }
# every source directory with headers, the build directory (config.h), and jansson's flags
inc="-I$top_builddir"
for d in $(find "$top_srcdir" -name '*.h' -not -path '*/python/*' -not -path '*/.git/*' -exec dirname {} \; | sort -u); do
    inc="$inc -I$d"
done
extra=$(pkg-config --cflags jansson 2> /dev/null || true)
status=0
for f in sim/dp_sim.c sim/dp_hisim.c; do
    for o in -O1 -Og; do
        if ! out=$("$cc" -std=gnu11 $o -g $inc $extra -c "$top_srcdir/$f" -o /dev/null 2>&1); then
            echo "FAIL: $f does not build at $o:"
            printf '%s\n' "$out" | grep -m 3 error
            status=1
        else
            echo "ok: $f at $o"
        fi
    done
done
exit $status
