# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: MemPlan authors
"""memplan_torch against PyTorch itself: what the capture says autograd saves is what autograd
saves; captured graphs plan with memplan (MEMPLAN_BIN) and their plans agree with the capture."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch
import torch.nn as nn
import torch.nn.functional as F

from memplan_torch import CaptureError, capture, models
from memplan_torch.measure import autograd_saved_bytes

MEMPLAN = os.environ.get("MEMPLAN_BIN")


def across_boundary(graph):
    """Bytes of the capture's tensors made before the first backward op and read at or after it,
    parameters, buffers and their gradients and state excluded."""
    ops = graph["ops"]
    start = next(k for k, op in enumerate(ops) if op["phase"] == "backward")
    made, last = {}, {}
    for k, op in enumerate(ops):
        for n in op["outputs"]:
            made[n] = k
        for n in op["inputs"]:
            last[n] = k
    return sum(t["bytes"] for t in graph["tensors"]
               if t["category"] not in ("parameter", "buffer", "gradient", "optimizer_state")
               and made.get(t["name"], -1) < start <= last.get(t["name"], -1))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class TokenAndPosition(nn.Module):
    """ViT's embedding: a class token joined to the sequence, then a position embedding added. At
    batch 1 both gradients are views of one backward result."""

    def __init__(self):
        super().__init__()
        self.token = nn.Parameter(torch.randn(1, 1, 8))
        self.position = nn.Parameter(torch.randn(1, 5, 8))

    def forward(self, x):
        x = torch.cat([self.token.expand(x.shape[0], -1, -1), x], dim=1) + self.position
        return (x * x).sum()


def check_consistent(test, graph):
    names = {t["name"] for t in graph["tensors"]}
    for op in graph["ops"]:
        for n in op["inputs"] + op["outputs"]:
            test.assertIn(n, names, f"op {op['name']} names {n}, which is not a tensor")


class Gate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # data-dependent control flow: cannot be traced
            return x * 2
        return x


class Gated(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.gate = Gate()

    def forward(self, x):
        return self.gate(self.fc(x))


class CaptureTest(unittest.TestCase):
    def test_training_step_categories_phases_modules(self):
        torch.manual_seed(0)
        model = MLP()
        opt = torch.optim.Adam(model.parameters())
        before = [p.detach().clone() for p in model.parameters()]
        g = capture(model, torch.randn(8, 16), loss_fn=lambda y: y.square().mean(), optimizer=opt)
        tensors = {t["name"]: t for t in g["tensors"]}
        cats = {t["category"] for t in g["tensors"]}
        self.assertTrue({"input", "parameter", "gradient", "optimizer_state", "saved", "temporary", "output"} <= cats, cats)
        for name, p in model.named_parameters():
            self.assertEqual(tensors[name]["category"], "parameter")
            self.assertEqual(tensors[name]["kind"], "weight")
            grad = tensors[name + ".grad"]
            self.assertEqual((grad["category"], grad["kind"], grad["bytes"]), ("gradient", "persistent", p.numel() * 4))
            for state in ("exp_avg", "exp_avg_sq"):
                self.assertEqual(tensors[f"{name}.{state}"]["category"], "optimizer_state")
        phases = [op["phase"] for op in g["ops"]]
        self.assertEqual(phases, sorted(phases, key=["forward", "backward", "optimizer"].index))
        self.assertEqual({op["module"] for op in g["ops"] if op["phase"] == "forward" and op["type"] == "addmm"}, {"fc1", "fc2"})
        self.assertIn("fc1", {op["module"] for op in g["ops"] if op["phase"] == "backward"})
        self.assertIn("threshold_backward", {op["type"] for op in g["ops"]})
        self.assertTrue(all(op["domain"] == "aten" for op in g["ops"]))
        # The optimizer updates in place: version tokens, no copy of the parameters.
        self.assertTrue(any(t["name"].startswith("fc1.weight@") and t["bytes"] == 0 for t in g["tensors"]))
        for p, b in zip(model.parameters(), before):
            self.assertTrue(torch.equal(p, b), "capture must leave the parameters as they were")
            self.assertIsNone(p.grad)
        self.assertEqual(g["capture"]["optimizer"], "Adam")

    def test_gradients_sharing_one_backward_result(self):
        for batch in (1, 2):
            model = TokenAndPosition()
            g = capture(model, (torch.randn(batch, 4, 8),), optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
            check_consistent(self, g)
            grads = {t["name"]: t for t in g["tensors"] if t["category"] == "gradient"}
            self.assertEqual(set(grads), {"token.grad", "position.grad"}, batch)
            for name, p in model.named_parameters():
                self.assertEqual(grads[name + ".grad"]["bytes"], p.numel() * p.element_size(), (batch, name))

    def test_saved_bytes_match_autograd_resnet18(self):
        model, inputs, loss = models.build("resnet18", 2, [3, 64, 64])
        model.train()
        g = capture(model, inputs, loss_fn=loss)
        saved = autograd_saved_bytes(model, inputs, loss)
        self.assertAlmostEqual(across_boundary(g) / saved, 1.0, delta=0.02)

    def test_saved_bytes_match_autograd_transformer(self):
        torch.manual_seed(0)
        model = models.SmallGPT(vocab=512, width=64, heads=4, layers=2, context=32)
        tokens = torch.randint(0, 512, (2, 32))
        loss = lambda logits: F.cross_entropy(logits.reshape(-1, 512), tokens.reshape(-1))  # noqa: E731
        g = capture(model, tokens, loss_fn=loss)
        saved = autograd_saved_bytes(model, (tokens,), loss)
        self.assertAlmostEqual(across_boundary(g) / saved, 1.0, delta=0.02)
        self.assertIn("bmm", {op["type"] for op in g["ops"]})
        self.assertIn("blocks.0.attn", {op["module"] for op in g["ops"] if op["type"] == "_softmax_backward_data"})

    def test_inference_keeps_in_place_ops(self):
        g = capture(nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True)), torch.randn(2, 4))
        relu = next(op for op in g["ops"] if op["type"] == "relu_")
        token = next(t for t in g["tensors"] if t["name"] == relu["outputs"][0])
        self.assertEqual(token["bytes"], 0)
        self.assertEqual({op["phase"] for op in g["ops"]}, {"forward"})

    def test_op_without_cost_rule_is_captured_with_cost_unknown(self):
        class Cumulative(nn.Module):
            def forward(self, x):
                return torch.cumsum(x, 0)
        g = capture(Cumulative(), torch.randn(3, 5))
        op = next(op for op in g["ops"] if op["type"] == "cumsum")
        self.assertNotIn("flops", op["attributes"])
        out = next(t for t in g["tensors"] if t["name"] == op["outputs"][0])
        self.assertEqual((out["shape"], out["bytes"]), ([3, 5], 60))

    def test_flops_of_convolution_and_matmul(self):
        g = capture(nn.Conv2d(3, 8, 3, padding=1), torch.randn(2, 3, 10, 10))
        conv = next(op for op in g["ops"] if op["type"] == "convolution")
        self.assertEqual(conv["attributes"]["flops"], 2 * (2 * 8 * 10 * 10) * 3 * 9)
        g = capture(nn.Linear(16, 32, bias=False), torch.randn(4, 16))
        mm = next(op for op in g["ops"] if op["type"] == "mm")
        self.assertEqual(mm["attributes"]["flops"], 2 * 4 * 16 * 32)

    def test_untraceable_model_names_the_module(self):
        for training in (False, True):
            with self.assertRaises(CaptureError) as e:
                capture(Gated(), torch.randn(2, 4), training=training)
            self.assertIn("module 'gate' (Gate)", str(e.exception))
            self.assertIn("test_capture.py", str(e.exception))

    def test_non_tensor_inputs_are_refused(self):
        with self.assertRaises(CaptureError) as e:
            capture(MLP(), (torch.randn(2, 16), 3))
        self.assertIn("example_inputs must be tensors", str(e.exception))

    def test_shapes_only_capture_is_the_real_one(self):
        # The meta device runs no kernel: the graph must still be the one a real run records, op
        # for op and byte for byte (convolution_backward's meta kernel, the optimizer's storages).
        with tempfile.TemporaryDirectory() as d:
            for model in ("resnet18", "gpt-small"):
                out = {}
                for shapes_only in (False, True):
                    path = os.path.join(d, f"{model}-{shapes_only}.json")
                    args = [sys.executable, "-m", "memplan_torch", "capture", "--model", model, "--batch", "2",
                            "--input-shape", "3,64,64", "--seq-len", "16", "--training", "--optimizer", "sgd", "--out", path]
                    r = subprocess.run(args + (["--shapes-only"] if shapes_only else []), capture_output=True, text=True)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    with open(path) as f:
                        out[shapes_only] = json.load(f)
                real, meta = out[False], out[True]
                self.assertEqual(meta["capture"].pop("traced"), "shapes only (meta device)")
                self.assertGreater(sum(op["phase"] == "optimizer" for op in meta["ops"]), 0, model)
                self.assertTrue(any(op["type"] == "convolution_backward" for op in meta["ops"]) or model != "resnet18")
                for key in ("tensors", "ops", "inputs", "outputs", "capture"):
                    self.assertEqual(real[key], meta[key], (model, key))

    def test_command_line_refuses_unknown_model(self):
        r = subprocess.run([sys.executable, "-m", "memplan_torch", "capture", "--model", "no_such_net", "--out", "x.json"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown model 'no_such_net'", r.stderr)


@unittest.skipUnless(MEMPLAN, "MEMPLAN_BIN is not set: the plan tests need the memplan binary")
class PlanTest(unittest.TestCase):
    def plan(self, graph_path, *extra):
        out = graph_path.replace(".json", ".plan.json")
        r = subprocess.run([MEMPLAN, "plan", graph_path, "--json", out, *extra], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            return r.stdout, json.load(f)

    def check_training_plan(self, name, batch, shape_args, extra_py):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, f"{name}.json")
            cmd = [sys.executable, "-m", "memplan_torch", "capture", "--model", name, "--batch", str(batch),
                   "--training", "--optimizer", "sgd", "--out", path, *shape_args]
            r = subprocess.run(cmd, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path) as f:
                graph = json.load(f)
            text, plan = self.plan(path)
            regions = {r["name"]: r["size_bytes"] for r in plan["regions"]}
            by_cat = {}
            for t in graph["tensors"]:
                by_cat[t["category"]] = by_cat.get(t["category"], 0) + t["bytes"]
            self.assertEqual(regions["parameters"], by_cat["parameter"])
            self.assertEqual(regions["gradients"], by_cat["gradient"])
            self.assertEqual(regions["optimizer state"], by_cat["optimizer_state"])
            phases = {p["name"]: p for p in plan["phases"]}
            self.assertLess(phases["forward"]["start"], phases["backward"]["start"])
            self.assertLess(phases["backward"]["start"], phases["optimizer"]["start"])
            boundary = phases["backward"]["start"]
            planned_across = sum(b["size_bytes"] for b in plan["buffers"] if b["start"] < boundary < b["end"])
            model, inputs, loss = extra_py()
            model.train()
            saved = autograd_saved_bytes(model, inputs, loss)
            self.assertAlmostEqual(planned_across / saved, 1.0, delta=0.02,
                                   msg=f"{name}: plan {planned_across} vs autograd {saved}")
            self.assertRegex(text, r"at the peak \(step \d+, op '[^']+'\): .* held, by category:\n  parameter ")
            self.assertRegex(text, r"\n  saved +[0-9.]+ [KMG]iB")
            self.assertIn("peak_breakdown", plan)
            _, in_arena = self.plan(path, "--grads-in-arena")
            self.assertNotIn("gradients", {r["name"] for r in in_arena["regions"]})
            self.assertGreater(in_arena["arena_bytes"], plan["arena_bytes"])

    def test_resnet18_training_step(self):
        self.check_training_plan("resnet18", 2, ["--input-shape", "3,64,64"],
                                 lambda: models.build("resnet18", 2, [3, 64, 64]))

    def test_transformer_training_step(self):
        self.check_training_plan("gpt-small", 2, ["--seq-len", "32"], lambda: models.build("gpt-small", 2, None, 32))

    def test_contradicting_capture_is_refused_naming_the_tensor(self):
        g = capture(MLP(), torch.randn(2, 16))
        g["ops"][0]["inputs"].append("no_such_tensor")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.json")
            with open(path, "w") as f:
                json.dump(g, f)
            r = subprocess.run([MEMPLAN, "plan", path], capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertIn("no_such_tensor", r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()
