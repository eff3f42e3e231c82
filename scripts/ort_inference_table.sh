#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: MemPlan authors
# The inference table of docs/BENCHMARKS.md: per model, MemPlan's planned arena (plain, with
# --fuse --inplace, and with --simplify --fuse --inplace) against ONNX Runtime's memory-pattern block
# (all optimizations, run 2 of scripts/ort_profile.js: the run takes one block from the pattern run 1
# recorded), as `memplan trace PROFILE --model MODEL --run 2` reads it.
# ORT's block as its arena counts it in use is rounded up to the arena's bins, and it also holds what
# the arena keeps for the whole run (weights its constant folding copied into the arena: ViT's
# Identity-aliased weights, a float16 model's weights cast to float). So the table also gives the
# bytes requested at the peak of run 2 less the least requested during run 1 (a conservative
# estimate of ORT's activations: that least also counts the few tensors live there).
#
# Usage: scripts/ort_inference_table.sh [--memplan BIN] [--out DIR] MODEL.onnx...
# Prints one Markdown row per model: model | plain | --fuse --inplace | --simplify --fuse --inplace |
# ORT block in use | ORT requested less held | the two ratios of the last MemPlan column to them.
# Needs node and onnxruntime-node (scripts/setup.sh installs them).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
memplan="$here/../build/app/memplan"
out="$(mktemp -d)"
models=()
while [ $# -gt 0 ]; do
  case "$1" in
    --memplan) memplan="$2"; shift 2 ;;
    --out) out="$2"; mkdir -p "$out"; shift 2 ;;
    -h|--help) sed -n '4,18p' "$0"; exit 0 ;;
    *) models+=("$1"); shift ;;
  esac
done
[ ${#models[@]} -gt 0 ] || { echo "ort_inference_table: name at least one MODEL.onnx" >&2; exit 2; }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d[sys.argv[2]])" "$1" "$2"; }
least() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(min(s[sys.argv[2]] for s in d['model']['per_step'] if s.get(sys.argv[2], -1) >= 0))" "$1" "$2"; }
echo "| model | MemPlan plain (MiB) | --fuse --inplace (MiB) | --simplify --fuse --inplace (MiB) | ORT block in use (MiB) | ORT requested less held (MiB) | ratio to block | ratio to requested less held |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for model in "${models[@]}"; do
  name="$(basename "$model" .onnx)"
  node "$here/ort_profile.js" "$model" "$out/$name.ort.json" all 2 >/dev/null
  "$memplan" trace "$out/$name.ort.json" --model "$model" --run 2 --json "$out/$name.trace.json" >/dev/null
  "$memplan" trace "$out/$name.ort.json" --model "$model" --run 1 --json "$out/$name.trace1.json" >/dev/null
  "$memplan" plan "$model" --json "$out/$name.plain.json" >/dev/null
  "$memplan" plan "$model" --fuse --inplace --json "$out/$name.fused.json" >/dev/null
  "$memplan" plan "$model" --simplify --fuse --inplace --json "$out/$name.simplified.json" >"$out/$name.simplified.txt"
  plain="$(field "$out/$name.plain.json" arena_bytes)"
  fused="$(field "$out/$name.fused.json" arena_bytes)"
  best="$(field "$out/$name.simplified.json" arena_bytes)"
  ort="$(field "$out/$name.trace.json" peak_in_use_bytes)"
  requested="$(field "$out/$name.trace.json" peak_requested_in_use_bytes)"
  held="$(least "$out/$name.trace1.json" requested_in_use_bytes)"
  python3 -c "
import sys
p, f, b, o, r, h = map(int, sys.argv[2:8])
m = 1 << 20
print(f'| {sys.argv[1]} | {p/m:.2f} | {f/m:.2f} | {b/m:.2f} | {o/m:.2f} | {(r-h)/m:.2f} | {b/o:.2f} | {b/(r-h):.2f} |')
" "$name" "$plain" "$fused" "$best" "$ort" "$requested" "$held"
done
