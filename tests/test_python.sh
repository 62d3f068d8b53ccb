#!/bin/sh
# The Python interface (python/doppler) under pytest (tests/python): makespans, schedules and traces
# equal to the command's to the last bit for every method, the environment, errors, examples.
# SKIP (77) when no Python 3 with NumPy and pytest is found (install: scripts/install-deps.sh);
# under CI=true that is a failure instead. The importers' tests (test_importers.py) skip, naming the
# Debian package, without python3-torch, python3-torchvision or python3-onnx, and fail under CI=true
# (-rs prints each skip's reason). Under a sanitizer build the ASan runtime is preloaded
# into Python (leak detection off: the interpreter's own allocations are not ours), with
# libstdc++ after it for the C++ libraries of the importers' tests.
set -u
: "${top_srcdir:=.}" "${top_builddir:=.}"
lib="$top_builddir/.libs/libdoppler.so"
[ -f "$lib" ] || { echo "FAIL: $lib not built"; exit 1; }
py=""
for p in ${PYTHON:-} python3 /usr/bin/python3; do
    [ "$p" = : ] && continue  # configure's value when it found no Python
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy, pytest' 2>/dev/null; then py=$p; break; fi
done
if [ -z "$py" ]; then
    if [ "${CI:-}" = true ]; then
        echo "FAIL: no python3 with numpy and pytest (scripts/install-deps.sh installs python3-numpy python3-pytest)"
        exit 1
    fi
    echo "SKIP: no python3 with numpy and pytest (sh scripts/install-deps.sh)"
    exit 77
fi
asan=$(ldd "$lib" 2>/dev/null | sed -n 's/.*libasan[^ ]* => \([^ ]*\) .*/\1/p' | head -n 1)
if [ -n "$asan" ]; then
    # libstdc++ right after it: a C++ library loaded later (torch, onnx) throws through ASan's
    # __cxa_throw interceptor, which finds no real __cxa_throw unless libstdc++ came first
    # ("CHECK failed: asan_interceptors.cpp ... real___cxa_throw")
    stdcxx=$(${CC:-gcc} -print-file-name=libstdc++.so.6 2>/dev/null)
    [ -f "$stdcxx" ] && asan="$asan $stdcxx"
    LD_PRELOAD="$asan${LD_PRELOAD:+ $LD_PRELOAD}"; export LD_PRELOAD
    ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"; export ASAN_OPTIONS
fi
DOPPLER_LIB="$lib"; export DOPPLER_LIB
PYTHONPATH="$top_srcdir/python${PYTHONPATH:+:$PYTHONPATH}"; export PYTHONPATH
PYTHONDONTWRITEBYTECODE=1; export PYTHONDONTWRITEBYTECODE
DOPPLER_DATA="${DOPPLER_DATA:-$top_srcdir/data}"; export DOPPLER_DATA
top_srcdir=$(cd "$top_srcdir" && pwd); top_builddir=$(cd "$top_builddir" && pwd); export top_srcdir top_builddir
exec "$py" -m pytest -q -rs -p no:cacheprovider -o addopts="" --rootdir="$top_srcdir/tests/python" "$top_srcdir/tests/python"
