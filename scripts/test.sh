#!/usr/bin/env bash
# Runs the tests: C++ unit tests (meson test) and the Python and end-to-end suites (pytest, against Debian's
# /usr/bin/python3). Builds first if needed. Every mpiexec a test starts has a time limit.
#   scripts/test.sh [PYTEST ARGS]           every test
#   scripts/test.sh --quick [PYTEST ARGS]   the unit tests, the Python suite and the smoke end-to-end tests
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [[ ${1:-} == --quick ]]; then
  quick=1
  shift
fi
bash scripts/setup.sh
build=${BUILD_DIR:-build}
meson test -C "$build" --print-errorlogs
# Separate runs: each suite has its own conftest.py, and one pytest process cannot import them all.
/usr/bin/python3 -m pytest tests/python -v "$@"
if ((quick)); then
  FEDAVG_BUILD_DIR="$build" /usr/bin/python3 -m pytest tests/e2e -v -m smoke "$@"
  exit 0
fi
FEDAVG_BUILD_DIR="$build" /usr/bin/python3 -m pytest tests/e2e -v --durations=15 "$@"
# Hosts emulated with network namespaces: needs root (skipped with the reason otherwise).
FEDAVG_BUILD_DIR="$build" /usr/bin/python3 -m pytest tests/multihost -v -rs --durations=5 "$@"
