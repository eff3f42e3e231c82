#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Coverage-guided fuzzing of MemPlan's readers of untrusted input (tests/fuzz/README.md): configures
# a clang build with libFuzzer, ASan and UBSan, builds only the fuzz targets and the libraries they
# need, and runs each target for N seconds, one process at a time.
#
# Usage: scripts/fuzz.sh [--seconds N | --runs N] [--build-dir DIR] [--seeds-only] [TARGET...]
#   TARGET       onnx jsongraph problemcsv device planjson tensorfile snapshot ortprofile (default: all)
#   --seconds N  fuzzing time per target (default 60)
#   --runs N     instead: exactly N executions per target from the committed seeds with a fixed
#                random seed and a fresh corpus, so a run is reproducible (what CI runs); at most
#                300 s per target all the same
#   --build-dir  build folder (default build-fuzz); scripts/sanitize.sh passes build-asan
#   --seeds-only start from the committed seeds only, not DIR/seeds (tests/fuzz/make_seeds.py)
# The corpus of each target grows in DIR/corpus/<target>/ from run to run; findings (inputs that
# crash, leak, time out after 10 s or pass 2 GiB) land in DIR/findings/<target>/. A crash does not
# stop the run (libFuzzer's fork mode with one job): the others of the same target are collected too.
# Prints one line per target (executions, exec/s, coverage, findings) and each finding's path.
# Exit: 0 no finding, 1 a finding, 2 bad usage or a failed build.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

all=(onnx jsongraph problemcsv device planjson tensorfile snapshot ortprofile)
seconds=60 runs=0 build=build-fuzz seedsonly=0 targets=()
while (($#)); do
    case "$1" in
        --seconds) [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: --seconds needs a whole number" >&2; exit 2; }
                   seconds="$2"; shift ;;
        --runs) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --runs needs a positive whole number" >&2; exit 2; }
                runs="$2"; seedsonly=1; shift ;;
        --build-dir) [[ -n "${2:-}" ]] || { echo "fuzz.sh: --build-dir needs a folder" >&2; exit 2; }
                     build="$2"; shift ;;
        --seeds-only) seedsonly=1 ;;
        -h|--help) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) [[ " ${all[*]} " == *" $1 "* ]] || { echo "fuzz.sh: unknown target $1; targets: ${all[*]}" >&2; exit 2; }
           targets+=("$1") ;;
    esac
    shift
done
((${#targets[@]})) || targets=("${all[@]}")

command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (scripts/setup.sh --with-sanitizers installs it)" >&2; exit 2; }
if [[ ! -f "$build/CMakeCache.txt" ]]; then
    launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMEMPLAN_FUZZ=ON -DMEMPLAN_CUDA=OFF \
        "${launcher[@]}" >"$build.configure.log" 2>&1 \
        || { tail -n 20 "$build.configure.log" >&2; echo "fuzz.sh: configuring $build failed" >&2; exit 2; }
fi
mkdir -p "$build"
if ! cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}" >"$build/fuzz-build.log" 2>&1; then
    grep -E "error" "$build/fuzz-build.log" | head -20 >&2 || true
    echo "fuzz.sh: building the fuzz targets failed; the log is $build/fuzz-build.log" >&2
    exit 2
fi

# UBSan findings abort with a stack (the build already makes them fatal); ASan's leak check stays on.
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS="abort_on_error=1:symbolize=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
found=0
# One line per target; every new finding listed (and `found` set). Reads t, execs, rate, cov, ft,
# corpus, findings, stamp and log.
summarize() {
    local new
    new=$(find "$findings" -type f -newer "$stamp" | wc -l)
    printf 'fuzz %-10s %10s executions %7s exec/s  cov %6s  ft %7s  corpus %5d  findings %d (log %s)\n' \
        "$t" "${execs:-0}" "${rate:-0}" "${cov:-0}" "${ft:-0}" "$(find "$corpus" -type f | wc -l)" "$new" "$log"
    if ((new > 0)); then
        found=1
        find "$findings" -type f -newer "$stamp" | sort | sed "s/^/finding: $t /"
    fi
    return 0
}
for t in "${targets[@]}"; do
    corpus="$build/corpus/$t" findings="$build/findings/$t" log="$build/fuzz-$t.log"
    mkdir -p "$corpus" "$findings"
    seeds=("tests/fuzz/seeds/$t")
    ((seedsonly)) || [[ ! -d "$build/seeds/$t" ]] || seeds+=("$build/seeds/$t")
    stamp="$build/findings/.$t.start"
    touch "$stamp"
    if ((runs)); then
        # Reproducible: one process, a fixed seed, a corpus that starts empty; the first finding ends it.
        rm -rf "$corpus" && mkdir -p "$corpus"
        "$build/tests/fuzz/fuzz_$t" -seed=1 -runs="$runs" -max_total_time=300 -rss_limit_mb=2048 -timeout=10 \
            -artifact_prefix="$findings/" -print_final_stats=1 "$corpus" "${seeds[@]}" >"$log" 2>&1 || true
        # Its status lines: "#EXECS <kind> cov: C ft: F corp: N/S ... exec/s: R ..."; the last one is the run's.
        last=$(grep -E '^#[0-9]+[[:space:]]+[A-Z]+' "$log" | tail -n 1 || true)
        execs=$(sed -nE 's/^stat::number_of_executed_units:[[:space:]]+([0-9]+)/\1/p' "$log")
        cov=$(sed -nE 's/.* cov: ([0-9]+) .*/\1/p' <<<"$last")
        ft=$(sed -nE 's/.* ft: ([0-9]+) .*/\1/p' <<<"$last")
        rate=$(sed -nE 's/^stat::average_exec_per_sec:[[:space:]]+([0-9]+)/\1/p' "$log")
        before=$found found=0
        summarize
        if ((found)); then
            tail -n 30 "$log" >&2 # the finding's stack
        elif [[ -z "$execs" ]]; then
            echo "fuzz.sh: fuzz_$t did not finish its runs; the end of $log:" >&2
            tail -n 15 "$log" >&2
            found=1
        fi
        ((before)) && found=1
        continue
    fi
    # Fork mode with one job: one process fuzzes at a time, and a crash restarts it instead of ending the run.
    "$build/tests/fuzz/fuzz_$t" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$findings/" \
        "$corpus" "${seeds[@]}" >"$log" 2>&1 || true
    # Fork mode's status lines: "#EXECS: cov: C ft: F corp: N exec/s R oom/timeout/crash: O/T/C time: Ss ...".
    last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -n 1 || true)
    execs=$(sed -nE 's/^#([0-9]+):.*/\1/p' <<<"$last")
    cov=$(sed -nE 's/.* cov: ([0-9]+) .*/\1/p' <<<"$last")
    ft=$(sed -nE 's/.* ft: ([0-9]+) .*/\1/p' <<<"$last")
    rate=$(sed -nE 's/.* exec\/s:? ([0-9]+) .*/\1/p' <<<"$last")
    summarize
    if [[ -z "$last" ]] && ! grep -q "INFO: exiting: 0" "$log"; then
        echo "fuzz.sh: fuzz_$t did not start; the end of $log:" >&2
        tail -n 15 "$log" >&2
        found=1
    fi
done
exit "$found"
