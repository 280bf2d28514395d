#!/usr/bin/env bash
# The checks beside the tests (CONTRIBUTING.md, "Checking a change"); CI runs them all (.ci/run). Installs the Debian packages they
# need (only those missing, through scripts/setup.sh). Runs every check asked for and fails if any failed.
#   bash scripts/check.sh [style] [sanitize]          (no argument: both)
# style:    clang-format --dry-run --Werror (.clang-format) over src/, tests/cpp/ and bench/*.cpp; flake8 with
#           pyproject.toml's [tool.ruff] settings (scripts/lint.py); mypy over the interface modules
#           (pyproject.toml's [tool.mypy]); clang-tidy's readability-function-size (at most 60 lines a function)
#           over every .cpp of src/ and the src/ headers they include, with ${BUILD_DIR:-build}'s
#           compile_commands.json (configuring that build first if it has none).
# sanitize: the C++ unit tests built with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/ and run
#           there (meson test, MPI tests under mpiexec as in the normal build); any finding fails. Then the tests
#           of core::Workers and of the checkpoint writer's thread built with ThreadSanitizer in build-tsan/.
set -euo pipefail
cd "$(dirname "$0")/.."

checks=("$@")
((${#checks[@]})) || checks=(style sanitize)
for c in "${checks[@]}"; do
  case $c in style | sanitize) ;; *) echo "check: unknown check $c (style, sanitize)" >&2; exit 2 ;; esac
done

bash scripts/setup.sh --packages-only clang-format clang-tidy python3-flake8 python3-mypy
werror=false
[ "${CI:-}" = "true" ] && werror=true
failed=()

# Runs one named step and times it. A failure is recorded (and returned, so that `step a && step b` skips what
# depends on a), and the checks go on.
step() {
  local name=$1 start=$SECONDS
  shift
  echo "check: $name: $*"
  if "$@"; then
    echo "check: $name: ok ($((SECONDS - start)) s)"
  else
    echo "check: $name: FAILED ($((SECONDS - start)) s)"
    failed+=("$name")
    return 1
  fi
}

style() {
  local cpp
  mapfile -t cpp < <(find src tests/cpp \( -name '*.cpp' -o -name '*.hpp' \) | sort; ls bench/*.cpp)
  step clang-format clang-format --dry-run --Werror "${cpp[@]}" || true
  step flake8 /usr/bin/python3 scripts/lint.py || true
  step mypy /usr/bin/python3 -m mypy || true
  step function-size function_size || true
}

# Every function in src/ is at most 60 lines, as clang-tidy counts them (the line of the body's closing brace less
# that of its opening one). One clang-tidy per .cpp, two at a time; only that check runs, and any finding fails the
# step. The one exemption is the settings table (a NOLINTNEXTLINE in src/core/settings.cpp).
function_size() {
  local build=${BUILD_DIR:-build}
  if [ ! -f "$build/compile_commands.json" ]; then
    meson setup "$build" --buildtype=release -Dwerror="$werror" || return 1
  fi
  # The src/ headers, as the compiler names them: relative to the build folder (../src/...) or absolute.
  local rel headers
  rel=$(realpath --relative-to="$build" src)
  headers="^(${rel//./\\.}|${PWD//./\\.}/src)/"
  find src -name '*.cpp' -print0 | sort -z | xargs -0 -n1 -P2 bash -o pipefail -c '
    clang-tidy -p "$0" --quiet -checks="-*,readability-function-size" \
      -warnings-as-errors=readability-function-size \
      -config="{CheckOptions: [{key: readability-function-size.LineThreshold, value: 60}]}" \
      --header-filter="$1" "$2" 2>&1 | sed "/^[0-9]* warnings\? generated\.$/d"' "$build" "$headers"
}

# Configures a sanitizer build in $1 (Meson options after it) unless it is already there.
configure() {
  local dir=$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" --buildtype=debugoptimized -Dwerror="$werror" "$@"
  else
    meson configure "$dir" -Dwerror="$werror" >/dev/null
  fi
}

sanitize() {
  local here=$PWD
  # b_lundef=false: what Meson asks of sanitizer builds (with clang the runtime's symbols resolve at load time).
  # -fno-sanitize-recover=all: an UndefinedBehaviorSanitizer finding ends the process, so the test fails.
  {
    step asan-setup configure build-asan -Db_sanitize=address,undefined -Db_lundef=false \
      -Dcpp_args=-fno-sanitize-recover=all -Dcpp_link_args=-fno-sanitize-recover=all &&
      step asan-build ninja -C build-asan &&
      # mpiexec passes the environment on to every rank.
      step asan-test env ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1 \
        LSAN_OPTIONS="suppressions=$here/tests/sanitizers/lsan.supp" \
        UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1 \
        meson test -C build-asan --no-rebuild --print-errorlogs
  } || true
  {
    step tsan-setup configure build-tsan -Db_sanitize=thread -Db_lundef=false &&
      step tsan-build ninja -C build-tsan tests/cpp/test_workers tests/cpp/test_checkpoint_writer &&
      # Repeated: a race shows only when the threads interleave badly.
      step tsan-test-workers env TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        build-tsan/tests/cpp/test_workers --gtest_repeat=20 --gtest_brief=1 &&
      step tsan-test-checkpoint-writer env TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        build-tsan/tests/cpp/test_checkpoint_writer --gtest_repeat=20 --gtest_brief=1
  } || true
}

for c in "${checks[@]}"; do "$c"; done
if ((${#failed[@]})); then
  echo "check: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "check: all passed (${checks[*]})"
