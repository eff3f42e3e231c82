#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sanitizer pass of the tests (scripts/test.sh runs it after the normal tests): configures
# build-asan with clang, AddressSanitizer and UndefinedBehaviorSanitizer (-DMEMPLAN_SANITIZE=ON
# -DMEMPLAN_FUZZ=ON, no CUDA), builds the core tests below and the fuzz targets, runs those tests and
# the fuzz targets' replays of tests/fuzz/seeds and tests/fuzz/regressions with ctest, then fuzzes each
# target briefly from the committed seeds (scripts/fuzz.sh). Any sanitizer report fails it.
#
# Usage: scripts/sanitize.sh [--fuzz-seconds N]   (default 20 per target; 0 skips the fuzzing)
# Environment: MEMPLAN_SANITIZE_TESTS overrides the list of core tests (space-separated ctest names).
# Exit: 0 clean; 1 a test failed or the fuzzing found something; 2 the build failed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

fuzzseconds=20
while (($#)); do
    case "$1" in
        --fuzz-seconds) [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "sanitize.sh: --fuzz-seconds needs a whole number" >&2; exit 2; }
                        fuzzseconds="$2"; shift ;;
        -h|--help) sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "sanitize.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

# The tests that exercise core (planners, readers, import, executor, strategies) without the GUI;
# chosen so that the build and the run stay within about 15 minutes on 2 cores.
tests=(${MEMPLAN_SANITIZE_TESTS:-tst_planners tst_io tst_exact tst_onnximport tst_mutations tst_executor tst_strategies
       tst_training tst_sequences})
fuzztargets=(onnx jsongraph problemcsv device planjson tensorfile snapshot)
build=build-asan
start=$SECONDS

command -v clang++ >/dev/null || { echo "sanitize.sh: clang++ not found (scripts/setup.sh --with-sanitizers installs it)" >&2; exit 2; }
if [[ ! -f "$build/CMakeCache.txt" ]]; then
    CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMEMPLAN_SANITIZE=ON -DMEMPLAN_FUZZ=ON \
        -DMEMPLAN_CUDA=OFF -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >"$build.configure.log" 2>&1 \
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
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS="abort_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
pattern="^($(IFS='|'; echo "${tests[*]}")|fuzz_replay_.*)\$"
status=0
ctest --test-dir "$build" -R "$pattern" --output-on-failure -j2 || status=1
echo "sanitize: tests done at $((SECONDS - start)) s"

if ((fuzzseconds > 0)); then
    scripts/fuzz.sh --build-dir "$build" --seconds "$fuzzseconds" --seeds-only || status=1
fi
echo "sanitize: $( ((status)) && echo FAILED || echo clean ) after $((SECONDS - start)) s"
exit "$status"
