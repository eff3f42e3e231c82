#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One call on a machine with an NVIDIA GPU: build (or take a prebuilt pack), run the GPU tests, then
# run example:cnn (plain, with --fuse, with --workspaces), example:transformer, a swap (tests/data/swap_skip.json),
# the packed or present ONNX models and
# a ResNet-50 exported on the spot (when python3 has torch, torchvision and onnx; also run with --fuse) with
# `memplan run --device cuda`, and print one table: model, mode, peak, p50, p99, outputs.
# Exits non-zero when any step fails.
#
# Two ways:
# - Build here (the machine has this project's build dependencies): bash gpu/check.sh
# - Prebuilt (the device machines lent here have CUDA but no Qt, protobuf or ONNX C++ libraries):
#   bash gpu/pack.sh on the development machine, then PACK=gpu-pack bash gpu/check.sh there: it runs
#   the packed tst_cuda and tst_run_cuda, then the measurements.
# Environment: PACK, BUILD_DIR (default build-gpu), REPEAT (20), EXPORT (the scripts/make_models.py
# models to run, taken from tests/models or exported on the spot; default "resnet50 mobilenet_v2",
# empty: none), SANITIZE (non-empty: also run compute-sanitizer memcheck over example:cnn and
# example:transformer), CUDA_ARCHS
# (CMAKE_CUDA_ARCHITECTURES; default the project's "80;90"), JOBS (16), OUT (also copy the table
# and the JSON reports there).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-gpu}
repeat=${REPEAT:-20}
export=${EXPORT-resnet50 mobilenet_v2}
jobs=${JOBS:-16}
pack=${PACK:-}
out=$build/gpu-check
failed=0

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true

if [[ -n "$pack" ]]; then
[[ "$pack" = /* ]] || pack=$root/$pack
memplan=$pack/memplan
out=$pack/gpu-check
# cuBLAS from the machine's CUDA: the toolkit's lib64, or the nvidia-cublas Python wheel.
cuda_libs=""
for dir in /usr/local/cuda/lib64 /usr/local/cuda/lib; do [[ -d $dir ]] && cuda_libs=$cuda_libs:$dir; done
wheel=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null || true)
[[ -n "$wheel" && -d "$wheel" ]] && cuda_libs=$cuda_libs:$wheel
export LD_LIBRARY_PATH=$pack/lib$cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if ! "$memplan" --help >/dev/null 2>&1; then
    export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$pack/lib-fallback
    "$memplan" --help >/dev/null || { echo "check.sh: the packed memplan does not start here" >&2; exit 1; }
fi
echo "== prebuilt $memplan; tests"
# tst_cuda reads its fixtures from the source tree it was built in (this one, when the paths agree).
[[ -d "$pack/models/tricky" && ! -d "$root/tests/models/tricky" ]] && mkdir -p "$root/tests/models" \
    && cp -r "$pack/models/tricky" "$root/tests/models/"
for test in tst_cuda tst_run_cuda; do
    [[ -x "$pack/$test" ]] || continue
    if ! "$pack/$test" 2>&1 | tee "$pack/$test.log" | grep -E "^(FAIL|SKIP|Totals)"; then
        failed=1
    fi
    grep -q "^Totals: [0-9]* passed, 0 failed" "$pack/$test.log" || failed=1
    if grep -q "^SKIP" "$pack/$test.log"; then
        echo "check.sh: $test skipped tests (see $pack/$test.log)" >&2
        failed=1
    fi
done
else
memplan=$build/app/memplan
echo "== configure and build ($build)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMEMPLAN_CUDA=ON \
    ${CUDA_ARCHS:+-DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCHS} >/dev/null
cmake --build "$build" -j"$jobs" --target memplan tst_cuda tst_cli_cuda tst_run_cuda tst_executor

echo "== tests"
if ! QT_QPA_PLATFORM=offscreen "$build/tests/tst_cuda" 2>&1 | tee "$build/tst_cuda.log"; then
    failed=1
fi
if grep -q "^SKIP" "$build/tst_cuda.log"; then
    echo "check.sh: tst_cuda skipped: no usable CUDA device on this machine" >&2
    exit 1
fi
(cd "$build" && QT_QPA_PLATFORM=offscreen ctest -R '^(tst_executor|tst_cli_cuda|tst_run_cuda)$' --output-on-failure) || failed=1
fi

echo "== measurements (--repeat $repeat)"
mkdir -p "$out"
models=(example:cnn example:cnn+fuse example:cnn+workspaces example:transformer swap_skip)
for file in ${pack:+"$pack"/models/*.onnx}; do
    [[ -f "$file" ]] && models+=("$file")
done
for name in $export; do # tests/models' copy, else exported here when PyTorch is
    if [[ -f "$root/tests/models/$name.onnx" ]]; then
        models+=("$root/tests/models/$name.onnx")
    elif python3 -c 'import torch, torchvision, onnx' 2>/dev/null \
        && python3 "$root/scripts/make_models.py" --only "$name" "$out/models" >/dev/null 2>&1; then
        models+=("$out/models/$name.onnx")
    else
        echo "check.sh: could not export $name here" >&2
    fi
done
for entry in "${models[@]}"; do # ResNet-50 and the int8 MobileNetV2 fused too: fused bodies on the device
    [[ "$entry" == */resnet50.onnx || "$entry" == */qmobilenet_v2.onnx ]] && models+=("$entry+fuse")
done
jsons=()
for entry in "${models[@]}"; do
    model=${entry%%+*} # example:cnn+fuse: run example:cnn with --fuse
    flags=()
    [[ "$entry" != "$model" ]] && flags=("--${entry#*+}")
    name=$(basename "${model#example:}" .onnx)${entry#"$model"} # cnn+fuse, resnet50+fuse
    # A quantized model rounds computed floats to integers: another summation order moves some
    # QuantizeLinear results by one step, which later layers carry on (qmobilenet_v2 on an H200:
    # max relative error 0.032 against the CPU executor), so its bound is wider than float rounding's.
    [[ "$model" == */qmobilenet_v2.onnx ]] && flags+=(--tolerance 0.05)
    if [[ "$entry" == swap_skip ]]; then # a swap on the copy stream, prefetched (tests/data)
        model=$root/tests/data/swap_skip.json
        flags=(--swap --profile "$root/tests/data/fast_link_profile.json")
    fi
    json="$out/$name.json"
    if "$memplan" run "$model" "${flags[@]}" --device cuda --repeat "$repeat" --json "$json" >"$out/$name.txt" 2>&1; then
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
"$python" - "${jsons[@]}" <<'PY' 2>&1 | tee "$out/table.txt" || failed=1
import json, sys
ok = True
# activations: the arena run's one allocation, the other modes' bytes held at their peak step;
# all: with the weights and the kernel scratch (the JSON's peak_bytes).
print(f"{'model':<16} {'mode':<11} {'activations':>13} {'all':>12} {'p50 ms':>10} {'p99 ms':>10}  outputs")
for path in sys.argv[1:]:
    j = json.load(open(path))
    name = path.split("/")[-1].removesuffix(".json")
    if j.get("device") != "cuda":
        print(f"{name}: ran on {j.get('device')}, not cuda", file=sys.stderr)
        ok = False
    modes = [("arena", j["arena_bytes"], j)]
    modes += [(mode, j[key]["activation_peak_bytes"], j[key]) for mode, key in (("per-tensor", "per_tensor"), ("pool", "pool")) if key in j]
    for mode, activations, m in modes:
        lat, match = m["latency_ms"], m["outputs_match_reference"]
        ok = ok and match
        print(f"{name:<16} {mode:<11} {activations/2**20:>9.2f} MiB {m['peak_bytes']/2**20:>8.2f} MiB {lat['p50']:>10.3f} {lat['p99']:>10.3f}  "
              f"{'bit-identical' if match else 'DIFFER'}")
    print(f"{'':<16} cpu check: {j.get('cpu_comparison', '-')}; {j.get('ops_on_host', '?')} of "
          f"{j['ops_real'] + j['ops_synthetic']} ops on the host, {j.get('ops_precomputed', '?')} precomputed")
    roofline = j.get("roofline_latency_ms", 0)
    if roofline > 0:
        print(f"{'':<16} roofline bound on {j.get('cost_profile', '?')}: {roofline:.3f} ms; arena median "
              f"{j['latency_ms']['median'] / roofline:.1f}x it")
    if j.get("outputs_match_cpu") is False:
        ok = False
sys.exit(0 if ok else 1)
PY
if [[ -n "${SANITIZE:-}" ]]; then # compute-sanitizer memcheck over the small examples, one repeat each
    if command -v compute-sanitizer >/dev/null; then
        for model in example:cnn example:transformer; do
            log="$out/memcheck-${model#example:}.txt"
            timeout 150 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 3 \
                "$memplan" run "$model" --device cuda --repeat 1 >"$log" 2>&1 || failed=1
            echo "memcheck $model: $(grep -m1 'ERROR SUMMARY' "$log" || echo 'no summary (see the log)')"
        done
    else
        echo "check.sh: SANITIZE set but compute-sanitizer not found" >&2
        failed=1
    fi
fi
if [[ -n "${OUT:-}" && -d "${OUT:-}" ]]; then
    cp "$out/table.txt" "$OUT/gpu-check-table.txt" 2>/dev/null || true
    tar -cf "$OUT/gpu-check-reports.tar" -C "$out" --exclude models . 2>/dev/null || true
fi
[[ $failed -eq 0 ]] && echo "check.sh: all passed" || echo "check.sh: FAILED" >&2
exit $failed
