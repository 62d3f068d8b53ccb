#!/bin/sh
# Build doppler from a clean tree and run every test suite (make check).
set -eu
cd "$(dirname "$0")/.."
[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure
make -j"$(nproc)"
make -j"$(nproc)" check
