#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sanitizer pass of the tests (scripts/test.sh runs it after the normal tests): configures
# build-asan with clang, AddressSanitizer and UndefinedBehaviorSanitizer (-DMEMPLAN_SANITIZE=ON
# -DMEMPLAN_FUZZ=ON, no CUDA), builds the core tests below and the fuzz targets, runs those tests and
# the fuzz targets' replays of tests/fuzz/seeds and tests/fuzz/regressions with ctest, then fuzzes each
# target from the committed seeds (scripts/fuzz.sh). Any sanitizer report fails it.
#
# Usage: scripts/sanitize.sh [--fuzz-runs N | --fuzz-seconds N] [--all-tests]
#   --fuzz-runs N     N executions per target with a fixed seed: reproducible (default 5000; CI's)
#   --fuzz-seconds N  N seconds per target instead, from the corpus grown so far (0 skips the fuzzing)
#   --all-tests       also the slow core tests (tst_exact, tst_executor: about 15 minutes more)
# Environment: MEMPLAN_SANITIZE_TESTS overrides the list of core tests (space-separated ctest names).
# The tests that read tests/models need scripts/make_models.sh first (scripts/test.sh runs it).
# Exit: 0 clean; 1 a test failed or the fuzzing found something; 2 the build failed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

fuzz=(--runs 5000) alltests=0
while (($#)); do
    case "$1" in
        --fuzz-seconds) [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "sanitize.sh: --fuzz-seconds needs a whole number" >&2; exit 2; }
                        fuzz=(--seconds "$2"); [[ "$2" == 0 ]] && fuzz=(); shift ;;
        --fuzz-runs) [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "sanitize.sh: --fuzz-runs needs a whole number" >&2; exit 2; }
                     fuzz=(--runs "$2"); [[ "$2" == 0 ]] && fuzz=(); shift ;;
        --all-tests) alltests=1 ;;
        -h|--help) sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "sanitize.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

# The tests that exercise core (planners, readers, import, hostile input, executor paths, strategies)
# without the GUI, chosen so that the build and the run stay within about 20 minutes on 2 cores;
# tst_exact (3 min) and tst_executor (over 5 min: past QtTest's limit for one function) only with --all-tests.
defaulttests="tst_planners tst_io tst_onnximport tst_mutations tst_invalidmodels tst_limits tst_strategies tst_training tst_sequences"
((alltests)) && defaulttests+=" tst_exact tst_executor"
tests=(${MEMPLAN_SANITIZE_TESTS:-$defaulttests})
fuzztargets=(onnx jsongraph problemcsv device planjson tensorfile snapshot ortprofile)
build=build-asan
start=$SECONDS

command -v clang++ >/dev/null || { echo "sanitize.sh: clang++ not found (scripts/setup.sh --with-sanitizers installs it)" >&2; exit 2; }
if [[ ! -f "$build/CMakeCache.txt" ]]; then
    launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMEMPLAN_SANITIZE=ON -DMEMPLAN_FUZZ=ON \
        -DMEMPLAN_CUDA=OFF "${launcher[@]}" >"$build.configure.log" 2>&1 \
        || { tail -n 20 "$build.configure.log" >&2; echo "sanitize.sh: configuring $build failed" >&2; exit 2; }
fi
if ! cmake --build "$build" -j"$(nproc)" --target memplan "${tests[@]}" "${fuzztargets[@]/#/fuzz_}" \
        "${fuzztargets[@]/#/fuzz_replay_}" >"$build/sanitize-build.log" 2>&1; then
    grep -E "error" "$build/sanitize-build.log" | head -20 >&2 || true
    echo "sanitize.sh: the sanitizer build failed; the log is $build/sanitize-build.log" >&2
    exit 2
fi
echo "sanitize: built in $((SECONDS - start)) s"

export QT_QPA_PLATFORM=offscreen
export QTEST_FUNCTION_TIMEOUT=1800000 # ASan runs the slow tests several times slower than QtTest expects
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS="abort_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
pattern="^($(IFS='|'; echo "${tests[*]}")|fuzz_replay_.*)\$"
status=0
ctest --test-dir "$build" -R "$pattern" --output-on-failure -j2 || status=1
echo "sanitize: tests done at $((SECONDS - start)) s"

if ((${#fuzz[@]})); then
    scripts/fuzz.sh --build-dir "$build" "${fuzz[@]}" --seeds-only || status=1
fi
echo "sanitize: $( ((status)) && echo FAILED || echo clean ) after $((SECONDS - start)) s"
exit "$status"
