# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: MemPlan authors
"""python3 -m memplan_torch capture|measure ...

capture: writes MemPlan's JSON graph of a model's inference pass or training step.
measure: what PyTorch itself does on this machine for the same step (autograd's saved bytes, the
CPU allocator's peak), as JSON, to hold a plan against.
"""

import argparse
import json
import sys
import time


def _parse(argv):
    p = argparse.ArgumentParser(prog="python3 -m memplan_torch", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("capture", "measure"):
        s = sub.add_parser(name)
        s.add_argument("--torchvision", dest="model", metavar="NAME",
                       help="a torchvision model (resnet18, mobilenet_v2, vit_b_16, ...) with random weights")
        s.add_argument("--model", dest="model", metavar="NAME", help="the same; also gpt-small, a small GPT-style decoder")
        s.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
        s.add_argument("--input-shape", metavar="C,H,W", help="one sample's shape (default 3,224,224)")
        s.add_argument("--seq-len", type=int, default=128, help="gpt-small: tokens per sample (default 128)")
        s.add_argument("--training", action="store_true", help="a training step (forward, backward) instead of inference")
        s.add_argument("--optimizer", choices=("sgd", "adam"), help="with --training: add the optimizer step")
        s.add_argument("--out", metavar="FILE", required=True, help="the JSON file to write")
        if name == "capture":
            s.add_argument("--shapes-only", action="store_true",
                           help="trace on PyTorch's meta device: the same ops and sizes as a real run, without "
                                "computing or allocating them (a step too large or too slow for this machine)")
    args = p.parse_args(argv)
    if not args.model:
        p.error("give a model: --torchvision NAME or --model gpt-small")
    if args.batch < 1:
        p.error("--batch must be at least 1")
    if args.optimizer and not args.training:
        p.error("--optimizer needs --training")
    if args.input_shape:
        try:
            args.input_shape = [int(v) for v in args.input_shape.split(",")]
            if not args.input_shape or min(args.input_shape) < 1:
                raise ValueError
        except ValueError:
            p.error(f"--input-shape must be positive integers separated by commas, found '{args.input_shape}'")
    return args


def _optimizer(name, model):
    import torch
    if name == "sgd":
        return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    if name == "adam":
        return torch.optim.Adam(model.parameters(), lr=1e-3)
    return None


def main(argv=None):
    args = _parse(sys.argv[1:] if argv is None else argv)
    import torch

    from . import models
    from .capture import CaptureError, capture
    try:
        model, inputs, loss_fn = models.build(args.model, args.batch, args.input_shape, args.seq_len,
                                              device="meta" if getattr(args, "shapes_only", False) else None)
    except ValueError as e:
        print(f"memplan_torch: {e}", file=sys.stderr)
        return 2
    model.train(args.training)
    optimizer = _optimizer(args.optimizer, model)
    label = f"{args.model} batch {args.batch}" + (" training" if args.training else "")
    if args.command == "capture":
        try:
            start = time.time()
            graph = capture(model, inputs, loss_fn=loss_fn if args.training else None, optimizer=optimizer,
                            path=args.out, training=args.training, name=args.model,
                            metadata={"batch": args.batch, **({"traced": "shapes only (meta device)"} if args.shapes_only else {})})
        except CaptureError as e:
            print(f"memplan_torch: {e}", file=sys.stderr)
            return 1
        print(f"{label}: {len(graph['ops'])} ops, {len(graph['tensors'])} tensors captured in "
              f"{time.time() - start:.1f} s -> {args.out}")
        return 0

    from .measure import allocator_peak, autograd_saved_bytes
    result = {"model": args.model, "batch": args.batch, "training": args.training, "optimizer": args.optimizer,
              "torch_version": torch.__version__, "threads": torch.get_num_threads()}
    if args.training:
        result["autograd_saved_bytes"] = autograd_saved_bytes(model, inputs, loss_fn)
    baseline, peak = allocator_peak(model, inputs, loss_fn, optimizer, training=args.training)
    result.update({"baseline_bytes": baseline, "step_peak_above_baseline_bytes": peak, "peak_bytes": baseline + peak})
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(f"{label}: peak {(baseline + peak) / 2**20:.1f} MiB (baseline {baseline / 2**20:.1f} MiB)"
          + (f", autograd saves {result['autograd_saved_bytes'] / 2**20:.1f} MiB" if args.training else "")
          + f" -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
