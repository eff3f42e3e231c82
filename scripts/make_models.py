# SPDX-License-Identifier: MIT
"""Export torchvision architectures (one at a small size, and a GPT-style decoder) to ONNX as MemPlan test fixtures.

Usage: make_models.py [--force] [--only NAME[,NAME...]] [--list] [OUTDIR]

Every model gets random weights (weights=None), eval mode, torch.no_grad,
opset 17, batch 1 and fixed input shapes unless noted. Each file is written to
a temporary name and renamed when complete, so an interrupted run never leaves
a half model behind. Models already present (non-empty, parseable, with their
external data file where they have one) are not exported again; use --force to
redo them. OUTDIR/models.txt lists the model file names, one per line.

Needs torch, torchvision and onnx (Debian: python3-torch, python3-torchvision,
python3-onnx, importable by /usr/bin/python3); scripts/make_models.sh finds
such an interpreter.
"""
import argparse
import os
import sys
import tempfile
import time
import warnings

OPSET = 17


def tracing_exporter(torch):
    """torch >= 2.9 exports through torch.export by default; the tracing exporter keeps the graphs
    the tests were written against (torch 1.13 has only that one and no `dynamo` argument)."""
    import inspect
    return {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}


# name -> (torchvision constructor, input shape, extra kwargs for the constructor,
#          dynamic batch?, external data?)
# DeepLabV3 at 520x520 (its reference size) is the largest activation footprint
# of the set; export stays a few seconds since tracing is one forward pass.
MODELS = [
    ("resnet50",           "resnet50",           (1, 3, 224, 224), False, False),
    ("mobilenet_v2",       "mobilenet_v2",       (1, 3, 224, 224), False, False),
    ("efficientnet_b0",    "efficientnet_b0",    (1, 3, 224, 224), False, False),
    ("densenet121",        "densenet121",        (1, 3, 224, 224), False, False),
    ("deeplabv3_resnet50", "deeplabv3_resnet50", (1, 3, 520, 520), False, False),
    ("vit_b_16",           "vit_b_16",           (1, 3, 224, 224), False, False),
    ("swin_t",             "swin_t",             (1, 3, 224, 224), False, False),
    # Batch is the symbolic dim "batch" on input and output (tests --dim batch=N).
    ("resnet50_dynbatch",  "resnet50",           (1, 3, 224, 224), True,  False),
    # Weights in mobilenet_v2_external.onnx.data (tests loading without external data).
    ("mobilenet_v2_external", "mobilenet_v2",    (1, 3, 224, 224), False, True),
    # A GPT-style decoder (not torchvision; built below): 64 token ids in, logits and the
    # greedy next token out; CumSum position ids, a Trilu causal mask, ArgMax.
    ("gpt_decoder",        "gpt_decoder",        (1, 64),          False, False),
    # torchvision's MaxViT architecture at a small size (64x64 input, two stages): its relative
    # attention exports as Einsum ("B G H I D, B G H J D -> B G H I J" and back).
    ("maxvit_small",       "maxvit_small",       (1, 3, 64, 64),   False, False),
    # torchvision's MViT video transformer at a small size (4 frames of 64x64, three blocks): its
    # attention pooling splits the class token from the patch tokens with tensor_split, exported as
    # a Loop of SequenceInserts read by SequenceAt, and squeezes in an If on a shape.
    ("mvit_small",         "mvit_small",         (1, 3, 4, 64, 64), False, False),
    # A video model: 3-D convolutions over 8 frames of 56x56 (its reference clip is 16 of 112x112).
    ("r3d_18",             "r3d_18",             (1, 3, 8, 56, 56), False, False),
    # A keyword-spotting style recurrent net (not torchvision; built below): 50 frames of 40
    # features through a 2-layer bidirectional LSTM, a GRU and a ReLU RNN. Exported with torch's
    # output for its input (speech_rnn.input_0.pb, speech_rnn.output_0.pb) as the reference.
    ("speech_rnn",         "speech_rnn",         (1, 50, 40),      False, False),
    # torchvision's quantizable MobileNetV2, int8 through eager-mode post-training quantization
    # (qnnpack, calibrated on random inputs), exported in QDQ form: uint8 activations between
    # DequantizeLinear -> Conv -> QuantizeLinear, int8 weights dequantized at run time.
    ("qmobilenet_v2",      "qmobilenet_v2",      (1, 3, 224, 224), False, False),
    # torchvision's SSDlite detector at its 320x320 size: per-level score thresholds (NonZero),
    # TopK, and batched NMS inside an If (empty when there are no boxes). Outputs boxes, scores, labels.
    ("ssdlite320",         "ssdlite320_mobilenet_v3_large", (1, 3, 320, 320), False, False),
    # MobileNetV2 in half precision, as a float16 deployment export holds it (see FLOAT16).
    ("mobilenet_v2_fp16",  "mobilenet_v2",       (1, 3, 224, 224), False, False),
    # A scripted model (torch.jit.script, not traced): a loop appends each row's Linear + ReLU to a
    # Python list and stacks it, exported as SequenceEmpty, a Loop of SequenceInsert and
    # ConcatFromSequence. With torch's output for its input as the reference.
    ("scripted_rows",      "scripted_rows",      (6, 16),          False, False),
    # torchvision's two-stage detector at its 320x320 size: RPN proposals (TopK, NMS in an If),
    # RoI pooling per FPN level over the proposals (NonZero, RoiAlign, ScatterElements), the box
    # head's Gemms on the bounded proposal count, per-class NMS. Backbone batch-norm statistics
    # calibrated and every detection kept (box_score_thresh 0), so the 100 outputs differ; with
    # torch's boxes, scores and labels for its input as the reference.
    ("fasterrcnn_320",     "fasterrcnn_mobilenet_v3_large_320_fpn", (1, 3, 320, 320), False, False),
]

# Exported only when named with --only (not by the test setup): models the inference table of
# docs/BENCHMARKS.md measures against ONNX Runtime beside the test models.
EXTRA_MODELS = [
    ("deeplabv3_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large", (1, 3, 520, 520), False, False),
    ("lraspp_mobilenet_v3_large",    "lraspp_mobilenet_v3_large",    (1, 3, 520, 520), False, False),
]

# Output names where a model has more than one output.
OUTPUT_NAMES = {"gpt_decoder": ["output", "next_token"], "ssdlite320": ["boxes", "scores", "labels"],
                "fasterrcnn_320": ["boxes", "scores", "labels"]}

# Models exported with torch's output for the export input beside them (NAME.input_0.pb,
# NAME.output_0.pb, ONNX TensorProto files as in the ONNX backend test data).
WITH_REFERENCE = {"speech_rnn", "scripted_rows", "fasterrcnn_320"}

# Models whose export input is an image's value range, [0, 1) (the detector scales it itself):
# on randn input Faster R-CNN's scores saturate at 1 and its boxes become float noise.
IMAGE_INPUT = {"fasterrcnn_320"}

# Models converted to float16 after export (torch cannot trace convolutions in half on the CPU).
# Exported with torch's float32 output for a float16-representable input as the reference (as
# WITH_REFERENCE; the input file holds float16).
FLOAT16 = {"mobilenet_v2_fp16"}


def with_measured_statistics(net, shape, batches, batch_size):
    """Batch-norm statistics measured on `batches` random batches, as training leaves them (a
    plain average over the batches), so activations keep their scale through the layers: with
    the initial statistics a random net's activations shrink layer by layer (MobileNetV2's
    logits to 1e-9, a MobileNetV3 detector backbone's features to 1e-7)."""
    import torch

    for m in net.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None
    net.train()
    with torch.no_grad():
        for _ in range(batches):
            net(torch.randn(batch_size, *shape[1:]))
    return net.eval()


def calibrated_for_half(net, shape):
    """Measured batch-norm statistics (below float16's smallest value otherwise), then every
    weight rounded to float16."""
    import torch

    net = with_measured_statistics(net, shape, 2, 8)
    with torch.no_grad():
        for t in net.state_dict().values():
            if t.is_floating_point():
                t.copy_(t.half().float())
    return net


def to_float16(model):
    """Every float32 tensor of the graph in float16: weights, Constant values, the graph's
    inputs and outputs; Cast to float casts to float16; value_info is dropped for
    inference to redo. Enough for CNNs without subgraphs or Resize scales."""
    import numpy as np
    from onnx import AttributeProto, TensorProto, numpy_helper

    def half(t):
        return numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name)

    g = model.graph
    for t in g.initializer:
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(half(t))
    for node in g.node:
        for a in node.attribute:
            if a.type == AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(half(a.t))
            if node.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    for vi in list(g.input) + list(g.output):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.FLOAT16
    del g.value_info[:]
    return model


def log(msg):
    print(msg, flush=True)


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024.0


def data_file_name(name):
    return f"{name}.onnx.data"


def external_data_end(model):
    """Largest offset+length over the model's external tensors, per location."""
    ends = {}
    for init in model.graph.initializer:
        if init.data_location != 1:  # TensorProto.EXTERNAL
            continue
        kv = {e.key: e.value for e in init.external_data}
        loc = kv.get("location")
        off = int(kv.get("offset", 0))
        length = int(kv.get("length", 0))
        ends[loc] = max(ends.get(loc, 0), off + length)
    return ends


def reference_files(outdir, name):
    """The input file, then one file per graph output (NAME.output_K.pb)."""
    outputs = len(OUTPUT_NAMES.get(name, ["output"]))
    return [os.path.join(outdir, f"{name}.input_0.pb")] + [os.path.join(outdir, f"{name}.output_{k}.pb") for k in range(outputs)]


def roi_align_as_torch_computes(model):
    """torchvision's roi_align(aligned=False) samples without the half-pixel shift. Its exporter
    (torchvision 0.14) writes RoiAlign without coordinate_transformation_mode, which opset 16 on
    reads as half_pixel, so the file would compute other features than the model it came from;
    state output_half_pixel explicitly (what RoiAlign-10 meant)."""
    from onnx import helper

    for node in model.graph.node:
        if node.op_type == "RoiAlign" and not any(a.name == "coordinate_transformation_mode" for a in node.attribute):
            node.attribute.append(helper.make_attribute("coordinate_transformation_mode", "output_half_pixel"))
    return model


def is_valid(outdir, name, external):
    """True when OUTDIR/name.onnx is complete and parseable (no re-export needed)."""
    import onnx
    path = os.path.join(outdir, name + ".onnx")
    try:
        if os.path.getsize(path) == 0:
            return False
        model = onnx.load(path, load_external_data=False)
    except Exception:
        return False
    g = model.graph
    if len(g.node) == 0 or len(g.input) == 0 or len(g.output) == 0:
        return False
    if not any(o.domain in ("", "ai.onnx") and o.version == OPSET for o in model.opset_import):
        return False
    if (name in WITH_REFERENCE or name in FLOAT16) and not all(os.path.getsize(p) > 0 if os.path.exists(p) else False
                                          for p in reference_files(outdir, name)):
        return False
    if external:
        ends = external_data_end(model)
        if not ends:
            return False
        for loc, end in ends.items():
            dp = os.path.join(outdir, loc)
            if not os.path.isfile(dp) or os.path.getsize(dp) < end:
                return False
    return True


def gpt_decoder(vocab=1000, width=128, heads=4, layers=2, context=64):
    """Pre-norm decoder blocks (nn.MultiheadAttention with a causal mask, GELU MLP) and a tied-size head."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

        def forward(self, x, mask):
            y = self.ln1(x)
            x = x + self.attn(y, y, y, attn_mask=mask, need_weights=False)[0]
            return x + self.mlp(self.ln2(x))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens, self.positions = nn.Embedding(vocab, width), nn.Embedding(context, width)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)

        def forward(self, ids):
            steps = ids.shape[1]
            positions = torch.cumsum(torch.ones_like(ids), 1) - 1
            mask = torch.triu(torch.full((steps, steps), float("-inf")), diagonal=1)
            x = self.tokens(ids) + self.positions(positions)
            for block in self.blocks:
                x = block(x, mask)
            logits = self.head(self.ln(x))
            return logits, torch.argmax(logits[:, -1], dim=-1)

    return Decoder().eval()


def speech_rnn(features=40, classes=12):
    """nn.LSTM (2 layers, bidirectional), nn.GRU and nn.RNN (ReLU), batch first, then a linear head."""
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(features, 64, num_layers=2, batch_first=True, bidirectional=True)
            self.gru = nn.GRU(128, 32, batch_first=True)
            self.rnn = nn.RNN(32, 32, batch_first=True, nonlinearity="relu")
            self.head = nn.Linear(32, classes)

        def forward(self, x):
            y, _ = self.lstm(x)
            y, _ = self.gru(y)
            y, _ = self.rnn(y)
            return self.head(y[:, -1])

    return Net().eval()


def qmobilenet_v2(shape=(1, 3, 224, 224)):
    """Post-training static quantization of a randomly initialised MobileNetV2.

    Random weights with the default BatchNorm statistics shrink the activations to ~1e-9 by the
    last layer, so every quantized value would be 0; the BatchNorm statistics are first estimated on
    random batches (train mode, cumulative average), which keeps the activations at unit scale."""
    import torch
    from torchvision.models.quantization import mobilenet_v2

    net = with_measured_statistics(mobilenet_v2(weights=None, quantize=False), shape, 4, 2)
    net.fuse_model()
    torch.backends.quantized.engine = "qnnpack"
    net.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
    torch.ao.quantization.prepare(net, inplace=True)
    with torch.no_grad():
        for _ in range(4):
            net(torch.randn(*shape))
    torch.ao.quantization.convert(net, inplace=True)
    return net


def scripted_rows(features=16):
    import torch
    from typing import List

    class Rows(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(features, features)

        def forward(self, x):
            outs: List[torch.Tensor] = []
            for i in range(x.size(0)):
                outs.append(torch.relu(self.lin(x[i])))
            return torch.stack(outs)

    return torch.jit.script(Rows().eval())


def build(ctor_name):
    import torch
    import torchvision

    if ctor_name == "gpt_decoder":
        return gpt_decoder()
    if ctor_name == "speech_rnn":
        return speech_rnn()
    if ctor_name == "scripted_rows":
        return scripted_rows()
    if ctor_name == "qmobilenet_v2":
        return qmobilenet_v2()
    if ctor_name == "maxvit_small":
        from torchvision.models.maxvit import MaxVit
        return MaxVit(input_size=(64, 64), stem_channels=16, partition_size=4, block_channels=[32, 64], block_layers=[1, 1],
                      head_dim=16, stochastic_depth_prob=0.0, num_classes=100).eval()

    if ctor_name == "mvit_small":
        from torchvision.models.video.mvit import MViT, MSBlockConfig
        blocks = [MSBlockConfig(num_heads=1, input_channels=48, output_channels=48, kernel_q=[], kernel_kv=[3, 3, 3],
                                stride_q=[], stride_kv=[1, 4, 4]),
                  MSBlockConfig(num_heads=2, input_channels=48, output_channels=96, kernel_q=[3, 3, 3], kernel_kv=[3, 3, 3],
                                stride_q=[1, 2, 2], stride_kv=[1, 2, 2]),
                  MSBlockConfig(num_heads=2, input_channels=96, output_channels=96, kernel_q=[], kernel_kv=[3, 3, 3],
                                stride_q=[], stride_kv=[1, 2, 2])]
        return MViT(spatial_size=(64, 64), temporal_size=4, block_setting=blocks, residual_pool=False,
                    residual_with_cls_embed=False, rel_pos_embed=False, proj_after_attn=False, num_classes=10).eval()

    if ctor_name.startswith("ssdlite") or ctor_name.startswith("fasterrcnn"):
        class Detections(torch.nn.Module):
            """The detector takes a list of images and returns one dict per image; export one image's tensors."""

            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, x):
                found = self.inner(list(x))[0]
                return found["boxes"], found["scores"], found["labels"]

        kwargs = {"box_score_thresh": 0.0} if ctor_name.startswith("fasterrcnn") else {}
        detector = getattr(torchvision.models.detection, ctor_name)(weights=None, weights_backbone=None, **kwargs)
        if ctor_name.startswith("fasterrcnn"):
            # Without them every RoI scores the same: the detections would be ties in any order.
            with_measured_statistics(detector.backbone, (1, 3, 320, 320), 2, 8)
        return Detections(detector.eval()).eval()

    ctor = getattr(torchvision.models, ctor_name, None)
    if ctor is None:
        ctor = getattr(torchvision.models.segmentation, ctor_name, None)
    if ctor is None:
        ctor = getattr(torchvision.models.video, ctor_name)
    kwargs = {"weights": None}
    segmentation = ctor_name.startswith("deeplab") or ctor_name.startswith("lraspp")
    if segmentation:
        # No backbone download, no auxiliary head: one output named "output".
        kwargs.update(weights_backbone=None)
        if ctor_name.startswith("deeplab"):
            kwargs.update(aux_loss=False)
    net = ctor(**kwargs).eval()
    if segmentation:
        class OutOnly(torch.nn.Module):
            """DeepLab and LR-ASPP return {'out': tensor}; export the tensor alone."""

            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, x):
                return self.inner(x)["out"]

        net = OutOnly(net).eval()
    return net


def export_one(outdir, name, ctor_name, shape, dynbatch, external):
    import onnx
    import torch

    torch.manual_seed(0)
    net = build(ctor_name)
    decoder = ctor_name == "gpt_decoder"
    if decoder:
        x = torch.randint(0, 1000, shape)
    elif name in IMAGE_INPUT:
        x = torch.rand(*shape)
    else:
        x = torch.randn(*shape)
    if name in FLOAT16:
        net = calibrated_for_half(net, shape)
        x = x.half().float()
    final = os.path.join(outdir, name + ".onnx")
    dynamic_axes = None
    if dynbatch:
        dynamic_axes = {"input": {0: "batch"}, "output": {0: "batch"}}

    # Temporary folder inside OUTDIR so the final rename stays on one filesystem.
    with tempfile.TemporaryDirectory(prefix=f".tmp-{name}-", dir=outdir) as tmp:
        tmp_model = os.path.join(tmp, name + ".onnx")
        # nn.MultiheadAttention (ViT) takes a fused fast path under no_grad whose
        # aten::_native_multi_head_attention has no ONNX symbolic in torch 1.13;
        # with grad enabled (still eval mode, so identical math) it traces the
        # plain MatMul/Softmax path instead.
        has_mha = any(isinstance(m, torch.nn.MultiheadAttention) for m in net.modules())
        grad_ctx = torch.enable_grad() if has_mha else torch.no_grad()
        with grad_ctx:
            torch.onnx.export(
                net, (x,), tmp_model,
                export_params=True,
                opset_version=OPSET,
                do_constant_folding=True,
                input_names=["input"],
                output_names=OUTPUT_NAMES.get(name, ["output"]),
                dynamic_axes=dynamic_axes,
                **tracing_exporter(torch),
            )
        if name in FLOAT16:
            model = to_float16(onnx.load(tmp_model))
            onnx.checker.check_model(model)
            onnx.save_model(model, tmp_model)
        if ctor_name.startswith("fasterrcnn"):
            onnx.save_model(roi_align_as_torch_computes(onnx.load(tmp_model)), tmp_model)
        if external:
            model = onnx.load(tmp_model)
            os.remove(tmp_model)
            onnx.save_model(
                model, tmp_model,
                save_as_external_data=True,
                all_tensors_to_one_file=True,
                location=data_file_name(name),
                size_threshold=1024,
            )
            # Data first, model last: the model file is the completion marker and
            # is_valid() checks the data file is long enough.
            os.replace(os.path.join(tmp, data_file_name(name)),
                       os.path.join(outdir, data_file_name(name)))
        if name in WITH_REFERENCE or name in FLOAT16:
            # torch's own output for the export input: what the executor must compute.
            from onnx import numpy_helper
            with torch.no_grad():
                y = net(x)
            if name in FLOAT16:
                x = x.half()
            ys = list(y) if isinstance(y, (tuple, list)) else [y]
            for array, path in zip([x] + ys, reference_files(outdir, name)):
                tmp_pb = os.path.join(tmp, os.path.basename(path))
                with open(tmp_pb, "wb") as f:
                    f.write(numpy_helper.from_array(array.numpy()).SerializeToString())
                os.replace(tmp_pb, path)
        os.replace(tmp_model, final)

    size = os.path.getsize(final)
    if external:
        size_data = os.path.getsize(os.path.join(outdir, data_file_name(name)))
        return f"{human(size)} + {human(size_data)} external data"
    return human(size)


def remove_stale_temporaries(outdir, age_s=3600):
    """Delete .tmp-* folders a killed run left behind (older than age_s, so a
    concurrent run's folder is not pulled from under it)."""
    import shutil
    now = time.time()
    for entry in os.listdir(outdir):
        path = os.path.join(outdir, entry)
        if entry.startswith(".tmp-") and os.path.isdir(path):
            try:
                if now - os.path.getmtime(path) > age_s:
                    shutil.rmtree(path, ignore_errors=True)
            except OSError:
                pass


def write_manifest(outdir, names):
    path = os.path.join(outdir, "models.txt")
    text = "".join(n + ".onnx\n" for n in names)
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", nargs="?",
                    default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         "..", "tests", "models"))
    ap.add_argument("--force", action="store_true", help="re-export even if present")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--list", action="store_true", help="print model names and exit")
    args = ap.parse_args(argv)

    names = [m[0] for m in MODELS]
    if args.list:
        print("\n".join(names))
        print("\n".join(m[0] + " (only with --only)" for m in EXTRA_MODELS))
        return 0
    wanted = set(filter(None, args.only.split(",")))
    everything = MODELS + [m for m in EXTRA_MODELS if m[0] in wanted]
    names = [m[0] for m in everything]
    unknown = wanted - set(names)
    if unknown:
        log(f"make_models: unknown model(s): {', '.join(sorted(unknown))}; "
            f"known: {', '.join(names)}")
        return 2

    outdir = os.path.normpath(args.outdir)
    os.makedirs(outdir, exist_ok=True)
    remove_stale_temporaries(outdir)

    valid = {m[0]: is_valid(outdir, m[0], m[4]) for m in everything}
    selected = [m for m in everything if not wanted or m[0] in wanted]
    todo = [m for m in selected if args.force or not valid[m[0]]]

    def manifest():
        # Only models that are complete on disk are listed.
        # The test models only: the tests read the manifest.
        write_manifest(outdir, [m[0] for m in MODELS if valid[m[0]]])

    if not todo:
        manifest()
        log(f"make_models: all {len(selected)} models present in {outdir}")
        return 0

    import torch
    torch.set_num_threads(2)
    warnings.filterwarnings("ignore")

    log(f"make_models: exporting {len(todo)} model(s) to {outdir} "
        f"(torch {torch.__version__}, opset {OPSET}, {torch.get_num_threads()} threads)")
    t_all = time.monotonic()
    failed = []
    for name, ctor_name, shape, dynbatch, external in todo:
        t0 = time.monotonic()
        try:
            size = export_one(outdir, name, ctor_name, shape, dynbatch, external)
        except Exception as e:  # keep going; report at the end
            failed.append(name)
            valid[name] = is_valid(outdir, name, external)  # old copy may remain
            log(f"  {name:24s} FAILED after {time.monotonic() - t0:5.1f} s: "
                f"{type(e).__name__}: {e}")
            continue
        valid[name] = True
        log(f"  {name:24s} {time.monotonic() - t0:5.1f} s  {size}")

    manifest()
    log(f"make_models: {len(todo) - len(failed)} exported, "
        f"{len(selected) - len(todo)} already present, {len(failed)} failed, "
        f"{time.monotonic() - t_all:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
