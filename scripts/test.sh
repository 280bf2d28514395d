#!/usr/bin/env bash
# Runs every test: C++ unit tests (meson test) and the Python and end-to-end suites (pytest, against Debian's
# /usr/bin/python3). Builds first if needed. Every mpiexec a test starts has a time limit.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build=${BUILD_DIR:-build}
meson test -C "$build" --print-errorlogs
# Separate runs: each suite has its own conftest.py, and one pytest process cannot import them all.
/usr/bin/python3 -m pytest tests/python -v "$@"
FEDAVG_BUILD_DIR="$build" /usr/bin/python3 -m pytest tests/e2e -v "$@"
# Hosts emulated with network namespaces: needs root (skipped with the reason otherwise).
FEDAVG_BUILD_DIR="$build" /usr/bin/python3 -m pytest tests/multihost -v -rs "$@"
