#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: MemPlan authors
"""Holds MemPlan's plans of captured PyTorch steps against PyTorch itself, on this machine.

For each model, batch and mode: captures the step (python3 -m memplan_torch capture), measures it
(python3 -m memplan_torch measure: autograd's saved bytes, the CPU allocator's peak), plans the
capture with `memplan plan --json` (training: --grads-in-arena, as PyTorch holds .grad from the
backward op that makes it to the end of the step) and prints a Markdown table:
- saved: bytes live across the forward/backward boundary in the plan (arena buffers alive at the
  first backward step, parameters and their regions excluded) vs the bytes autograd saves;
- peak: the plan's arena plus its regions vs the allocator's peak for the same step.

Usage: scripts/compare_torch.py --memplan build/app/memplan [--out DIR] [--models a,b] [--batches 8,32]
       [--modes inference,training] [--optimizer sgd]
Files are kept in DIR (default build/torch-compare) and reused when present.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(HERE, "..", "python")


def run(cmd, env=None):
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"compare_torch: {' '.join(cmd)} failed:\n{result.stderr.strip()}")
    return result.stdout


def mib(b):
    return f"{b / 2**20:.1f}"


def plan_figures(plan):
    regions = {r["name"]: r["size_bytes"] for r in plan.get("regions", [])}
    phases = {p["name"]: p for p in plan.get("phases", [])}
    boundary = phases["backward"]["start"] if "backward" in phases else None
    across = None
    if boundary is not None:
        across = sum(b["size_bytes"] for b in plan["buffers"] if b["start"] < boundary < b["end"])
    return plan["arena_bytes"], sum(regions.values()), across


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--memplan", required=True)
    p.add_argument("--out", default="build/torch-compare")
    p.add_argument("--models", default="resnet18,resnet50,mobilenet_v2,vit_b_16,gpt-small")
    p.add_argument("--batches", default="8,32")
    p.add_argument("--modes", default="inference,training")
    p.add_argument("--optimizer", default="sgd")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(PYTHON_DIR))
    py = sys.executable
    rows = []
    for model in args.models.split(","):
        for batch in args.batches.split(","):
            for mode in args.modes.split(","):
                training = mode == "training"
                stem = os.path.join(args.out, f"{model}-b{batch}-{mode}")
                common = ["--model", model, "--batch", batch] + (["--training", "--optimizer", args.optimizer] if training else [])
                if not os.path.exists(stem + ".json"):
                    run([py, "-m", "memplan_torch", "capture", *common, "--out", stem + ".json"], env)
                if not os.path.exists(stem + ".measured.json"):
                    run([py, "-m", "memplan_torch", "measure", *common, "--out", stem + ".measured.json"], env)
                run([args.memplan, "plan", stem + ".json", "--json", stem + ".plan.json"]
                    + (["--grads-in-arena"] if training else []))
                with open(stem + ".plan.json") as f:
                    plan = json.load(f)
                with open(stem + ".measured.json") as f:
                    measured = json.load(f)
                arena, regions, across = plan_figures(plan)
                row = {"model": model, "batch": int(batch), "mode": mode, "plan_peak": arena + regions,
                       "arena": arena, "regions": regions, "measured_peak": measured["peak_bytes"],
                       "across": across, "saved": measured.get("autograd_saved_bytes")}
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)
    print("| model | batch | mode | saved for backward: plan / autograd (MiB) | diff | planned peak (arena + regions, MiB) | PyTorch CPU allocator peak (MiB) | plan / measured |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        saved = f"{mib(r['across'])} / {mib(r['saved'])}" if r["saved"] else "-"
        diff = f"{100 * (r['across'] - r['saved']) / r['saved']:+.2f} %" if r["saved"] else "-"
        print(f"| {r['model']} | {r['batch']} | {r['mode']} | {saved} | {diff} | {mib(r['plan_peak'])} "
              f"({mib(r['arena'])} + {mib(r['regions'])}) | {mib(r['measured_peak'])} | {r['plan_peak'] / r['measured_peak']:.3f} |")
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
