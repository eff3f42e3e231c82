# SPDX-License-Identifier: MIT
"""Write the hostile model files tests/tst_invalidmodels.cpp reads (model_*.onnx, model_*.bin).

Usage: /usr/bin/python3 make_hostile.py [OUTDIR]   (default: this script's folder)

Each file is a small valid model with one defect that an earlier MemPlan accepted, crashed on or
answered wrongly: an untyped graph input, external data outside the model's folder or with bad
keys, and ops whose attributes or constant inputs the ONNX spec forbids. Uses only the onnx 1.12
helper API; the files are committed, the tests do not run this script.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def i64(name, values):
    return numpy_helper.from_array(np.asarray(values, dtype=np.int64), name)


def f32(name, *shape):
    return numpy_helper.from_array(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) * 0.01, name)


def inp(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def model(name, nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="memplan-make_hostile")
    m.ir_version = 8
    return m


def untyped_resize():
    """The project's opset-19 Resize test model with its input X left without a type."""
    nodes = [
        helper.make_node("Shape", ["X"], ["shape"]),
        helper.make_node("Slice", ["shape", "s0", "s2"], ["nc"]),
        helper.make_node("Slice", ["shape", "s2", "s4"], ["hw"]),
        helper.make_node("Mul", ["hw", "two"], ["hw2"]),
        helper.make_node("Concat", ["nc", "hw2"], ["sizes"], axis=0),
        helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], mode="linear"),
    ]
    x = onnx.ValueInfoProto()
    x.name = "X"  # no type at all
    return model("untyped_resize", nodes, [x], [helper.make_tensor_value_info("Y", F, None)],
                 [i64("s0", [0]), i64("s2", [2]), i64("s4", [4]), i64("two", [2, 2])], opset=19)


def untyped_gather():
    """Shape of an untyped input -> Gather -> Unsqueeze -> ConstantOfShape."""
    nodes = [
        helper.make_node("Shape", ["X"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["d1"], axis=0),
        helper.make_node("Unsqueeze", ["d1", "zero"], ["d1v"]),
        helper.make_node("ConstantOfShape", ["d1v"], ["Y"]),
    ]
    x = onnx.ValueInfoProto()
    x.name = "X"
    return model("untyped_gather", nodes, [x], [helper.make_tensor_value_info("Y", F, None)],
                 [i64("one", 1), i64("zero", [0])])


def external(location, offset=None, length=None, name="bias"):
    """Y = X + bias, bias float[4] stored as external data at `location`."""
    t = TensorProto()
    t.name, t.data_type = name, F
    t.dims.append(4)
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            e = t.external_data.add()
            e.key, e.value = key, str(value)
    return model("external", [helper.make_node("Add", ["X", name], ["Y"])], [inp("X", [1, 4])],
                 [inp("Y", [1, 4])], [t])


def conv(name, **attrs):
    """Conv of X [1,4,8,8] with W [4,4/group,3,3]; attrs override the valid ones."""
    group = attrs.get("group", 1)
    wc = 4 // group if group and 4 % group == 0 else 2
    return model(name, [helper.make_node("Conv", ["X", "W"], ["Y"], name="conv1", **attrs)],
                 [inp("X", [1, 4, 8, 8])], [helper.make_tensor_value_info("Y", F, None)], [f32("W", 4, wc, 3, 3)])


def single(name, op, inputs, attrs, x_shape, inits=(), outputs=1, opset=13, elem=F):
    outs = ["Y"] if outputs == 1 else ["Y%d" % k for k in range(outputs)]
    return model(name, [helper.make_node(op, ["X"] + inputs, outs, name=name.replace("model_", ""), **attrs)],
                 [inp("X", x_shape, elem)], [helper.make_tensor_value_info(o, F, None) for o in outs], inits, opset)


def models():
    yield "model_untyped_input_resize", untyped_resize()
    yield "model_untyped_input_gather", untyped_gather()
    yield "model_extdata_ok", external("model_extdata_ok.bin")
    yield "model_extdata_traversal", external("../../../../../../etc/passwd")
    yield "model_extdata_absolute", external("/etc/passwd")
    yield "model_extdata_past_end", external("model_extdata_ok.bin", offset=8, length=16)
    yield "model_extdata_short", external("model_extdata_ok.bin", offset=0, length=8)
    yield "model_extdata_bad_offset", external("model_extdata_ok.bin", offset="12abc")
    yield "model_extdata_bad_length", external("model_extdata_ok.bin", length="99999999999999999999")
    yield "model_extdata_negative_length", external("model_extdata_ok.bin", length=-7)
    yield "model_conv_group0", conv("model_conv_group0", group=0)
    yield "model_conv_kernel0", conv("model_conv_kernel0", kernel_shape=[0, 0])
    yield "model_conv_group3", conv("model_conv_group3", group=3)
    yield "model_convtranspose_negstride", model(
        "model_convtranspose_negstride",
        [helper.make_node("ConvTranspose", ["X", "W"], ["Y"], name="up1", strides=[-2, -2])],
        [inp("X", [1, 4, 8, 8])], [helper.make_tensor_value_info("Y", F, None)], [f32("W", 4, 2, 3, 3)])
    yield "model_maxpool_stride0", single("model_maxpool_stride0", "MaxPool", [], dict(kernel_shape=[2, 2], strides=[0, 0]), [1, 4, 8, 8])
    yield "model_averagepool_kernel0", single("model_averagepool_kernel0", "AveragePool", [], dict(kernel_shape=[0, 2]), [1, 4, 8, 8])
    yield "model_softmax_axis99", single("model_softmax_axis99", "Softmax", [], dict(axis=99), [2, 5])
    yield "model_logsoftmax_axis99", single("model_logsoftmax_axis99", "LogSoftmax", [], dict(axis=99), [2, 5])
    yield "model_hardmax_axis99", single("model_hardmax_axis99", "Hardmax", [], dict(axis=-3), [2, 5])
    yield "model_concat_axis5", model(
        "model_concat_axis5", [helper.make_node("Concat", ["X", "X"], ["Y"], name="cat", axis=5)],
        [inp("X", [2, 5])], [helper.make_tensor_value_info("Y", F, None)])
    yield "model_flatten_axis9", single("model_flatten_axis9", "Flatten", [], dict(axis=9), [2, 5])
    yield "model_argmax_axis4", single("model_argmax_axis4", "ArgMax", [], dict(axis=4), [2, 5])
    yield "model_reducesum_axis7", single("model_reducesum_axis7", "ReduceSum", ["axes"], {}, [2, 5], [i64("axes", [7])])
    yield "model_transpose_perm", single("model_transpose_perm", "Transpose", [], dict(perm=[0, 2]), [2, 5])
    yield "model_gather_axis3", single("model_gather_axis3", "Gather", ["idx"], dict(axis=3), [2, 5], [i64("idx", [0])])
    yield "model_gather_index_oob", single("model_gather_index_oob", "Gather", ["idx"], dict(axis=1), [2, 5], [i64("idx", [0, 7])])
    yield "model_gather_runtime_index", model(
        "model_gather_runtime_index", [helper.make_node("Gather", ["X", "I"], ["Y"], name="gather", axis=0)],
        [inp("X", [3, 2]), inp("I", [2], I64)], [helper.make_tensor_value_info("Y", F, None)])
    yield "model_pad_negative", single("model_pad_negative", "Pad", ["pads"], {}, [2, 5], [i64("pads", [0, -3, 0, -3])])
    yield "model_range_delta0", range_delta0()
    yield "model_range_delta0_float", range_delta0_float()
    yield "model_split_sizes", single("model_split_sizes", "Split", ["split"], dict(axis=1), [2, 5], [i64("split", [2, 2])], outputs=2)
    yield "model_topk_k_large", topk_large()


def range_delta0():
    """Range(0, 10, 0): infinitely many elements."""
    nodes = [helper.make_node("Range", ["start", "limit", "delta"], ["R"], name="range"),
             helper.make_node("Cast", ["R"], ["Rf"], to=F),
             helper.make_node("Add", ["X", "Rf"], ["Y"])]
    return model("model_range_delta0", nodes, [inp("X", [1])], [helper.make_tensor_value_info("Y", F, None)],
                 [i64("start", 0), i64("limit", 10), i64("delta", 0)])


def range_delta0_float():
    """Range(0.0, 1.0, 0.0) of floats: infinitely many elements."""
    nodes = [helper.make_node("Range", ["start", "limit", "delta"], ["R"], name="range"),
             helper.make_node("Add", ["X", "R"], ["Y"])]
    return model("model_range_delta0_float", nodes, [inp("X", [1])], [helper.make_tensor_value_info("Y", F, None)],
                 [numpy_helper.from_array(np.asarray(v, dtype=np.float32), n) for n, v in
                  (("start", 0.0), ("limit", 1.0), ("delta", 0.0))])


def topk_large():
    """TopK with k = 2^40 on an axis of 5."""
    nodes = [helper.make_node("TopK", ["X", "k"], ["V", "I"], name="topk", axis=1)]
    return model("model_topk_k_large", nodes, [inp("X", [2, 5])],
                 [helper.make_tensor_value_info("V", F, None), helper.make_tensor_value_info("I", I64, None)],
                 [i64("k", [1 << 40])])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(out, "model_extdata_ok.bin"), "wb") as f:
        f.write(np.asarray([1, 2, 3, 4], dtype=np.float32).tobytes())
    # Indices for model_gather_runtime_index given by file: 3 lies outside X's axis 0 of size 3.
    with open(os.path.join(out, "model_gather_runtime_index_I_oob.pb"), "wb") as f:
        f.write(numpy_helper.from_array(np.asarray([0, 3], dtype=np.int64), "I").SerializeToString())
    for name, m in models():
        onnx.save(m, os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
