#!/usr/bin/env bash
# Runs the tests: C++ unit tests (meson test) and the Python and end-to-end suites (pytest, against Debian's
# /usr/bin/python3). Builds first if needed. Every mpiexec a test starts has a time limit. Every tier runs even
# when an earlier one fails; the failures of all tiers are listed together at the end, and then the script fails.
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
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
failed=()
start=$SECONDS

# Runs one tier, its output both shown and kept; a failure is recorded and the next tier still runs.
tier() {
  local name=$1 t0=$SECONDS rc=0
  shift
  echo "test: $name: $*"
  "$@" 2>&1 | tee "$logs/$name.log" || rc=$?
  echo "test: $name: $([ "$rc" -eq 0 ] && echo ok || echo "FAILED (exit $rc)") in $((SECONDS - t0)) s"
  ((rc == 0)) || failed+=("$name")
}

# Separate pytest runs: each suite has its own conftest.py, and one pytest process cannot import them all.
tier meson meson test -C "$build" --print-errorlogs
tier python /usr/bin/python3 -m pytest tests/python -v -rfE "$@"
if ((quick)); then
  tier smoke env FEDAVG_BUILD_DIR="$build" /usr/bin/python3 -m pytest tests/e2e -v -rfE -m smoke "$@"
else
  tier e2e env FEDAVG_BUILD_DIR="$build" /usr/bin/python3 -m pytest tests/e2e -v -rfE --durations=15 "$@"
  # Hosts emulated with network namespaces: needs root (skipped with the reason otherwise).
  tier multihost env FEDAVG_BUILD_DIR="$build" /usr/bin/python3 -m pytest tests/multihost -v -rsfE --durations=5 "$@"
fi

echo "test: all tiers ran in $((SECONDS - start)) s"
if ((${#failed[@]})); then
  echo "test: FAILED tiers: ${failed[*]}" >&2
  for name in "${failed[@]}"; do
    echo "--- $name:" >&2
    # meson's and pytest's own summary lines of each failure.
    grep -E '^(FAILED|ERROR) |^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|ERROR)' "$logs/$name.log" >&2 || tail -n 20 "$logs/$name.log" >&2
  done
  exit 1
fi
echo "test: all passed"
