#!/bin/sh
# test_install.sh: `make install` leaves a working command and Python package, with nothing run
# after it (no ldconfig, no LD_LIBRARY_PATH, no PYTHONPATH to the checkout).
#
# A copy of the sources (scripts/side-build.sh) is configured with --prefix=TMP/prefix and
# installed there. libtool is told that TMP/prefix/lib is one of the system's library folders
# (lt_cv_sys_lib_dlsearch_path_spec), as /usr/local/lib is on Debian, where it then leaves the
# library's folder out of the command (no rpath) and the command found libdoppler.so.1 only after
# `ldconfig` ("libdoppler.so.1: cannot open shared object file", exit 127). The installed
# `doppler --version`, `doppler topology list` (the installed data), `import doppler` from the
# installed package (the installed library) and `doppler graph import --help` (the installed
# package's importers) must work from a folder outside the checkout.
# About a minute and a half on 2 cores (one build). SKIP (77) in the sanitizer build (the main
# build tests installing) and when no Python 3 with NumPy is found for the package's part.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
fail() { echo "FAIL: $*"; exit 1; }
if grep -q -- '--enable-sanitizers' "$top_builddir/config.status" 2>/dev/null; then
    echo "SKIP: a sanitizer build (the main build tests make install)"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/doppler-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
prefix=$tmp/prefix
# the copy's own build; nothing of the environment that points at the checkout
unset DOPPLER_LIB DOPPLER_DATA LD_LIBRARY_PATH PYTHONPATH top_builddir 2>/dev/null || true
sh "$top_srcdir/scripts/side-build.sh" "$top_srcdir" "$tmp/build" --prefix="$prefix" \
    "lt_cv_sys_lib_dlsearch_path_spec=/lib /usr/lib /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu $prefix/lib" \
    -- install LDCONFIG=: > "$tmp/build.log" 2>&1 || { tail -n 40 "$tmp/build.log"; fail "configure, make or make install of a copy failed"; }
[ -x "$prefix/bin/doppler" ] || fail "make install put no doppler in $prefix/bin"
cd "$tmp"
"$prefix/bin/doppler" --version > "$tmp/version" 2>&1 || { cat "$tmp/version"; fail "the installed doppler --version failed"; }
cat "$tmp/version"
grep -q '^doppler ' "$tmp/version" || fail "doppler --version printed no version"
"$prefix/bin/doppler" topology list > "$tmp/topologies" 2>&1 || { cat "$tmp/topologies"; fail "the installed doppler does not find its data"; }
grep -q dgx1-v100 "$tmp/topologies" || fail "the installed data has no dgx1-v100 topology"
# the manual page: installed, and man-db (which shows it) among the packages install-deps installs
[ -f "$prefix/share/man/man1/doppler.1" ] || fail "make install put no doppler.1 in $prefix/share/man/man1"
sed -n '/^PKGS="/,/"$/p' "$top_srcdir/scripts/install-deps.sh" | grep -qw 'man-db' \
    || fail "scripts/install-deps.sh does not install man-db (man doppler needs it)"
if command -v man > /dev/null 2>&1; then
    MANPATH="$prefix/share/man" MANPAGER=cat PAGER=cat man doppler > "$tmp/man.txt" 2>&1 || { cat "$tmp/man.txt"; fail "man doppler failed"; }
    grep -q 'doppler' "$tmp/man.txt" || fail "man doppler showed nothing"
fi

py=""
for p in ${PYTHON:-} python3 /usr/bin/python3; do
    [ "$p" = : ] && continue
    if command -v "$p" > /dev/null 2>&1 && "$p" -c 'import numpy' 2> /dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "SKIP: no python3 with numpy: the command installs and runs; the package's part is not tested"; exit 77; }
pkg=$(find "$prefix" -name __init__.py -path '*/doppler/__init__.py' | head -n 1)
[ -n "$pkg" ] || fail "make install put no Python package doppler under $prefix"
pydir=$(dirname "$(dirname "$pkg")")
# importing sets no environment variable (it set DOPPLER_DATA), and still finds a topology by
# name in the installed data
PYTHONPATH=$pydir PYTHONDONTWRITEBYTECODE=1 "$py" -c '
import os, sys
before = dict(os.environ)
import doppler
assert doppler.__file__.startswith(sys.argv[1]), doppler.__file__
g = doppler.Graph.read(sys.argv[1] + "/share/doppler/graphs/chainmm-small.json")
e = doppler.Engine(g, doppler.Machine(topology="dgx1-v100"))
assert e.n_devices == 8
assert dict(os.environ) == before, "import doppler changed the environment"
print("the installed package:", doppler.__file__, g.n_ops, "ops")
' "$prefix" > "$tmp/py.log" 2>&1 || { cat "$tmp/py.log"; fail "import doppler from the installed package failed"; }
cat "$tmp/py.log"
# doppler graph import runs the installed package's importers (importers.py installed with it)
PYTHONPATH=$pydir PYTHONDONTWRITEBYTECODE=1 "$prefix/bin/doppler" graph import --help > "$tmp/import.log" 2>&1 \
    || { cat "$tmp/import.log"; fail "the installed doppler graph import --help failed"; }
grep -q 'usage: doppler graph import' "$tmp/import.log" || { cat "$tmp/import.log"; fail "doppler graph import --help printed no usage"; }
exit 0
