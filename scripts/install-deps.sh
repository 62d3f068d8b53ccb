#!/bin/sh
# Install the Debian 12 packages doppler needs to build, test and plot (idempotent: only what is
# missing is installed). Needs root or sudo. OpenMPI (libopenmpi-dev openmpi-bin) is among them:
# configure then builds the MPI runner (`mpirun doppler sweep`) and make check tests it. The Python
# interface's tests need python3-numpy and python3-pytest, its tables python3-pandas and
# python3-h5py (70 MB together); man-db shows the manual page (`man doppler` after make install);
# valgrind runs the environment's suite under memcheck (tests/test_valgrind_env.sh); time (GNU
# time, /usr/bin/time) gives the benches' CPU seconds and peak memory (bench/scale.sh,
# tests/test_bench_scale.sh, which fails under CI=true without it);
# python3-venv, python3-pip and python3-setuptools make a virtual environment and pip-install the
# package into it (python/pyproject.toml; tests/python/test_setup.py).
# python3-torch, python3-torchvision and python3-onnx (PyTorch 1.13 with torch.fx, torchvision
# 0.14, ONNX 1.12: 613 MB with their 170 dependencies on Debian 12) are the model importers'
# (`doppler graph import`, doppler.Graph.from_torch; tests/python/test_importers.py fails under
# CI=true without them) and examples/reinforce_torch.py's.
#   --fuzz   also the tools of `make fuzz` (clang with libFuzzer); make check does not need them
set -eu
PKGS="build-essential autoconf automake libtool pkg-config libgsl-dev libhdf5-dev hdf5-tools
libjansson-dev check libopenblas-dev gnuplot-nox libopenmpi-dev openmpi-bin python3 python3-numpy python3-pytest
python3-pandas python3-h5py python3-venv python3-pip python3-setuptools python3-torch python3-torchvision python3-onnx
git man-db valgrind time"
for a in "$@"; do
    case $a in
    --fuzz) PKGS="$PKGS clang libclang-rt-14-dev" ;;
    *) echo "install-deps.sh: unknown option $a (--fuzz)" >&2; exit 2 ;;
    esac
done
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
