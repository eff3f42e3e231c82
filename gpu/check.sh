#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One call on a machine with an NVIDIA GPU (and this project's build dependencies): configure and
# build in Release, run the GPU tests (tst_cuda, which must not skip) and the CPU executor's tests,
# then run example:cnn, example:transformer and tests/models/resnet50.onnx (when present) with
# `memplan run --device cuda` and print one table: model, mode, peak, p50, p99.
# Exits non-zero when any step fails. Environment: BUILD_DIR (default build-gpu), REPEAT (20),
# CUDA_ARCHS (CMAKE_CUDA_ARCHITECTURES; default the project's "80;90"), JOBS (16).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-gpu}
repeat=${REPEAT:-20}
jobs=${JOBS:-16}
out=$build/gpu-check
failed=0

echo "== configure and build ($build)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMEMPLAN_CUDA=ON \
    ${CUDA_ARCHS:+-DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCHS} >/dev/null
cmake --build "$build" -j"$jobs" --target memplan tst_cuda tst_executor

echo "== tests"
if ! QT_QPA_PLATFORM=offscreen "$build/tests/tst_cuda" 2>&1 | tee "$build/tst_cuda.log"; then
    failed=1
fi
if grep -q "^SKIP" "$build/tst_cuda.log"; then
    echo "check.sh: tst_cuda skipped: no usable CUDA device on this machine" >&2
    exit 1
fi
(cd "$build" && QT_QPA_PLATFORM=offscreen ctest -R '^tst_executor$' --output-on-failure) || failed=1

echo "== measurements (--repeat $repeat)"
mkdir -p "$out"
models=(example:cnn example:transformer)
[[ -f "$root/tests/models/resnet50.onnx" ]] && models+=("$root/tests/models/resnet50.onnx")
jsons=()
for model in "${models[@]}"; do
    name=$(basename "${model#example:}" .onnx)
    json="$out/$name.json"
    if "$build/app/memplan" run "$model" --device cuda --repeat "$repeat" --json "$json" >"$out/$name.txt" 2>&1; then
        jsons+=("$json")
    else
        echo "check.sh: memplan run $model failed:" >&2
        tail -n 20 "$out/$name.txt" >&2
        failed=1
    fi
done

python=$(command -v python3 || true)
if [[ -z "$python" ]]; then
    echo "check.sh: python3 not found: the per-model reports are in $out" >&2
    exit 1
fi
"$python" - "${jsons[@]}" <<'PY' || failed=1
import json, sys
ok = True
print(f"{'model':<16} {'mode':<11} {'peak':>12} {'p50 ms':>10} {'p99 ms':>10}  outputs")
for path in sys.argv[1:]:
    j = json.load(open(path))
    name = j["model"].split("/")[-1]
    if j.get("device") != "cuda":
        print(f"{name}: ran on {j.get('device')}, not cuda", file=sys.stderr)
        ok = False
    modes = [("arena", j["peak_bytes"], j["latency_ms"], j["outputs_match_reference"]),
             ("per-tensor", j["per_tensor"]["peak_bytes"], j["per_tensor"]["latency_ms"], j["per_tensor"]["outputs_match_reference"])]
    if "pool" in j:
        modes.append(("pool", j["pool"]["peak_bytes"], j["pool"]["latency_ms"], j["pool"]["outputs_match_reference"]))
    for mode, peak, lat, match in modes:
        ok = ok and match
        print(f"{name:<16} {mode:<11} {peak/2**20:>9.2f} MiB {lat['p50']:>10.3f} {lat['p99']:>10.3f}  "
              f"{'bit-identical' if match else 'DIFFER'}")
    print(f"{'':<16} cpu check: {j.get('cpu_comparison', '-')}; {j.get('ops_on_host', '?')} of "
          f"{j['ops_real'] + j['ops_synthetic']} ops on the host")
    if j.get("outputs_match_cpu") is False:
        ok = False
sys.exit(0 if ok else 1)
PY
[[ $failed -eq 0 ]] && echo "check.sh: all passed" || echo "check.sh: FAILED" >&2
exit $failed
