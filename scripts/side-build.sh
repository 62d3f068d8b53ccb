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
# Progress goes to stdout, a line per phase (copying, configuring, building, then the targets)
# with the time since the start, and while building a line every DOPPLER_PROGRESS_FILES files
# compiled or linked (default 10): the first build of a copy takes minutes.
set -eu
t0=$(date +%s)
say() { echo "side build $dir: $* ($(($(date +%s) - t0)) s)"; }
src=$(cd "$1" && pwd)
dir=$2
shift 2
conf=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do conf="$conf '$1'"; shift; done
[ $# -gt 0 ] && shift
case $dir in /*) ;; *) dir=$src/$dir ;; esac
mkdir -p "$dir/src"
say "copying the sources of $src"
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
if [ ! -x configure ]; then say "autoreconf"; autoreconf -fi >/dev/null; fi
if [ ! -f Makefile ]; then say "configuring:$conf"; eval ./configure -q $conf; fi
ncpu=$(nproc 2>/dev/null || echo 2)
every=${DOPPLER_PROGRESS_FILES:-10}
say "building (make -j$ncpu; minutes the first time, seconds when little changed)"
# make's output: a progress line every $every files compiled or linked; any other line
# (a warning, an error) as it is. make's status comes back through a file (a pipe loses it).
rm -f "$dir/make.status"
{ make -j"$ncpu" 2>&1; echo $? > "$dir/make.status"; } | awk -v every="$every" -v d="$dir" '
    /^ *(CC|CCLD|CXX|CXXLD) / { n++; if (n % every == 0) { printf "side build %s: building: %d files compiled or linked\n", d, n; fflush() } next }
    /^make(\[[0-9]+\])?: (Entering|Leaving) directory/ { next }
    { print; fflush() }'
[ "$(cat "$dir/make.status" 2>/dev/null)" = 0 ] || { say "make failed"; exit 1; }
say "built"
[ $# -gt 0 ] && say "make $*"
if [ $# -gt 0 ] && ! make "$@"; then
    # a failing suite: show its logs here (CI keeps only what is printed)
    [ -f test-suite.log ] && cat test-suite.log
    say "make $* failed"
    exit 1
fi
[ $# -gt 0 ] && say "make $* done"
exit 0
