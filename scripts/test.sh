#!/bin/sh
# Build doppler from a clean tree and run every test suite (make check), then the same suite
# under AddressSanitizer and UndefinedBehaviorSanitizer in a side build (_build-san, a copy of the
# sources configured with --enable-sanitizers; about 20 s more). DOPPLER_NO_SANITIZERS=1 skips it.
set -eu
cd "$(dirname "$0")/.."
[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure
make -j"$(nproc)"
make -j"$(nproc)" check
if [ "${DOPPLER_NO_SANITIZERS:-0}" != 1 ]; then
    echo "== the test suite under ASan + UBSan (_build-san) =="
    sh ./scripts/side-build.sh . _build-san --enable-sanitizers -- -j"$(nproc)" check
fi
