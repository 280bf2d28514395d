#!/usr/bin/env bash
# Installs the Debian packages fedavg_mpi needs (only those missing) and builds it with Meson into
# ${BUILD_DIR:-build}. Safe to run again: it installs and rebuilds only what is missing or out of date.
#   bash scripts/setup.sh                  everything: the program, its Python module and the tests
#   bash scripts/setup.sh --program        only what a job runs: the program and its Python module (the demo)
#   bash scripts/setup.sh --packages-only [EXTRA_PACKAGE...]: install only, adding the extra Debian packages
#   (scripts/check.sh: its tools, and the build's packages for the sanitizer builds).
set -euo pipefail
cd "$(dirname "$0")/.."
packages_only=false
targets=()
if [ "${1:-}" = "--packages-only" ]; then
  packages_only=true
  shift
elif [ "${1:-}" = "--program" ] && [ $# -eq 1 ]; then
  targets=(src/fedavg_mpi src/kernels/fedavg_kernels.so)
  shift
elif [ $# -gt 0 ]; then
  echo "setup: unknown argument $1 (--program, or extra packages after --packages-only)" >&2
  exit 2
fi

packages=(
  g++ pkg-config meson ninja-build
  mpich libmpich-dev libucx-dev iproute2
  python3 python3-dev pybind11-dev
  python3-numpy python3-torch python3-h5py python3-pytest python3-gensim python3-matplotlib
  libopenblas0-pthread
  libhdf5-dev nlohmann-json3-dev libpcg-cpp-dev libgtest-dev libxxhash-dev
  bible-kjv
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: run as root (or install sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
$packages_only && exit 0

build=${BUILD_DIR:-build}
werror=false
[ "${CI:-}" = "true" ] && werror=true
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" --buildtype=release -Dwerror="$werror"
else
  meson configure "$build" -Dwerror="$werror" >/dev/null
fi
ninja -C "$build" "${targets[@]}"
