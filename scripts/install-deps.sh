#!/bin/sh
# Install the Debian 12 packages doppler needs to build, test and plot (idempotent: only what is
# missing is installed). Needs root or sudo.
set -eu
PKGS="build-essential autoconf automake libtool pkg-config libgsl-dev libhdf5-dev hdf5-tools
libjansson-dev check libopenblas-dev gnuplot-nox"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends $missing
