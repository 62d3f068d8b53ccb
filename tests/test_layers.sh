#!/bin/sh
# test_layers.sh: the build's include paths enforce the layers (issue 28 item 6; Makefile.am
# DP_LAYER_*). With each layer's include path (as the build compiles that layer), a file that
# includes a header of its own layer or of a lower one compiles, and one that includes a header
# of a layer it may not see fails to compile: models < machine < sim < policy, exec over models
# and machine only, nn over models only, policy over all but exec. Also every #include "..." of
# the sources of a layer names a header its include path holds (a wrong-way include that a
# header of the same name in the layer's own folder would hide).
set -u
top_srcdir=${top_srcdir:-.}
CC=${CC:-cc}
[ -n "${DP_LAYER_models:-}" ] || { echo "SKIP: run through make check (DP_LAYER_* from Makefile.am)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
layers="models machine sim exec nn policy"
header() { case $1 in models) echo dp_graph.h ;; machine) echo dp_cost.h ;; sim) echo dp_sim.h ;;
    exec) echo dp_exec.h ;; nn) echo dp_nn.h ;; policy) echo dp_place.h ;; esac; }
sees() { case "$1:$2" in
    models:models|machine:models|machine:machine|sim:models|sim:machine|sim:sim) return 0 ;;
    exec:models|exec:machine|exec:exec|nn:models|nn:nn) return 0 ;;
    policy:models|policy:machine|policy:sim|policy:nn|policy:policy) return 0 ;;
    *) return 1 ;; esac; }
flags() { eval "echo \$DP_LAYER_$1"; }
for l in $layers; do
    for h in $layers; do
        printf '#include "%s"\nint dp_probe(void);\n' "$(header "$h")" > "$tmp/probe.c"
        # shellcheck disable=SC2046
        if $CC -fsyntax-only $(flags "$l") ${DP_HEADER_CFLAGS:-} "$tmp/probe.c" 2> "$tmp/err"; then
            sees "$l" "$h" || bad "$l/ compiles an include of $h/$(header "$h") (a wrong-way include)"
        else
            sees "$l" "$h" && { bad "$l/ cannot include $h/$(header "$h")"; sed 3q "$tmp/err"; }
            sees "$l" "$h" || grep -q "No such file" "$tmp/err" || { bad "$l/ -> $h/: failed, but not for the include path"; sed 3q "$tmp/err"; }
        fi
    done
    # every local include of the layer's sources is found on its own include path
    for f in "$top_srcdir/$l"/*.c "$top_srcdir/$l"/*.h; do
        for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
            found=0
            for d in $(flags "$l"); do
                dir=${d#-I}
                [ -f "$dir/$inc" ] && { found=1; break; }
            done
            [ "$found" = 1 ] || bad "${f#"$top_srcdir"/} includes \"$inc\", outside the $l layer's include path"
        done
    done
done
[ "$fails" -eq 0 ] && echo "layers: 36 include probes and every local include of the library's sources as the layers allow"
[ "$fails" -eq 0 ]
