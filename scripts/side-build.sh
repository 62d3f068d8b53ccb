#!/bin/sh
# side-build.sh: configure and build a copy of the source tree in a side folder, then run make
# targets there. Used for the sanitizer build of the test suite (scripts/test.sh) and for the
# fuzzing build (make fuzz): an already configured source tree cannot host VPATH builds, so the
# sources (tracked and untracked-but-not-ignored files, or `make distdir` without git) are copied
# into DIR/src, keeping their times so that a second run rebuilds only what changed.
#
#   sh scripts/side-build.sh SRCDIR DIR [CONFIGURE-ARGS...] -- [MAKE-ARGS...]
#
# DOPPLER_SHARED_DATA defaults to SRCDIR/../shared/data (the copy has no ../shared beside it).
set -eu
src=$(cd "$1" && pwd)
dir=$2
shift 2
conf=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do conf="$conf '$1'"; shift; done
[ $# -gt 0 ] && shift
case $dir in /*) ;; *) dir=$src/$dir ;; esac
mkdir -p "$dir/src"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    # tracked and untracked-but-not-ignored files that exist (the index may list a deleted one)
    (cd "$src" && git ls-files -co --exclude-standard | while IFS= read -r f; do
        [ -f "$f" ] && printf '%s\n' "$f"; done) > "$dir/files.list"
    (cd "$src" && tar -cf - -T "$dir/files.list") | (cd "$dir/src" && tar -xf -)
else
    make -C "$src" distdir distdir="$dir/src" >/dev/null
fi
export DOPPLER_SHARED_DATA="${DOPPLER_SHARED_DATA:-$src/../shared/data}"
cd "$dir/src"
# the copy is a git checkout of its own, its sources committed before anything is built in it,
# so that the suites that need one (tests/test_reproduce.sh: a clean `git status` after
# reproduce.sh) run in the side build too instead of skipping
if command -v git >/dev/null 2>&1; then
    [ -d .git ] || git init -q .
    git add -A >/dev/null 2>&1 && git -c user.name=side-build -c user.email=side-build@localhost \
        commit -q --allow-empty -m "side-build snapshot of $src" >/dev/null 2>&1 || true
fi
[ -x configure ] || autoreconf -fi >/dev/null
[ -f Makefile ] || eval ./configure -q $conf
ncpu=$(nproc 2>/dev/null || echo 2)
make -j"$ncpu" >/dev/null
if [ $# -gt 0 ] && ! make "$@"; then
    # a failing suite: show its logs here (CI keeps only what is printed)
    [ -f test-suite.log ] && cat test-suite.log
    exit 1
fi
exit 0
