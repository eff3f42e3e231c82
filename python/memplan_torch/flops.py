# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: MemPlan authors
"""FLOPs of common aten ops from their real arguments (the shapes the op sees, its int arguments).

Rules (a multiply-add counts 2):
- convolution: 2 · output elements · C_in/groups · kernel elements (transposed: input elements
  · C_out/groups · kernel elements); convolution_backward: that per gradient asked (input, weight)
  plus the bias gradient's reduction;
- mm, addmm, bmm, baddbmm: 2 · M · K · N (· batch), plus the added term;
- native_batch_norm 5, its backward 8; native_layer_norm 8, backward 12; native_group_norm 8,
  backward 12; _softmax/_log_softmax 5, backward 4; FLOPs per element;
- max/avg pooling: output elements · kernel elements; their backward: input-gradient elements;
- elementwise arithmetic 1 per output element, transcendental ones (exp, tanh, gelu, erf, sigmoid,
  sqrt, rsqrt, pow, log) 8; reductions (sum, mean, amax, nll_loss, ...): input elements;
- data movement and creation (cat, clone, copy_, zeros, index_select, embedding, ...): 0 FLOPs.
Any other op returns None: "cost unknown".
"""

import math

_ELEMENTWISE = {
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "neg", "relu", "relu_", "threshold_backward",
    "where", "maximum", "minimum", "clamp", "clamp_", "clamp_min", "hardtanh", "hardtanh_", "hardtanh_backward",
    "addcmul", "addcmul_", "addcdiv", "addcdiv_", "lerp_", "abs", "sign", "masked_fill", "masked_fill_",
    "leaky_relu", "leaky_relu_backward", "hardswish", "hardswish_", "hardswish_backward", "hardsigmoid",
    "hardsigmoid_backward", "le", "lt", "ge", "gt", "eq", "ne", "logical_not", "bitwise_not", "reciprocal",
    "rsub", "square", "native_dropout_backward", "fill_", "zero_", "_foreach_add_", "_foreach_mul_",
}
_TRANSCENDENTAL = {
    "exp", "tanh", "tanh_backward", "sigmoid", "sigmoid_backward", "gelu", "gelu_backward", "erf", "sqrt",
    "sqrt_", "rsqrt", "pow", "log", "silu", "silu_", "silu_backward", "softplus", "elu", "elu_backward",
    "native_dropout", "bernoulli_",
}
_REDUCTION = {"sum", "mean", "amax", "amin", "max", "min", "nll_loss_forward", "nll_loss_backward", "var", "var_mean",
              "norm", "linalg_vector_norm", "argmax", "mse_loss", "mse_loss_backward", "_log_softmax_backward"}
_MOVEMENT = {
    "cat", "clone", "copy_", "_to_copy", "zeros", "zeros_like", "ones", "ones_like", "empty", "empty_like",
    "empty_strided", "full", "full_like", "new_zeros", "new_empty", "new_empty_strided", "new_ones", "scalar_tensor",
    "index_select", "gather", "scatter", "scatter_add", "embedding", "embedding_dense_backward", "index",
    "index_put", "index_put_", "slice_backward", "select_backward", "_unsafe_view", "constant_pad_nd",
    "stack", "arange", "upsample_nearest2d", "upsample_nearest2d_backward", "_reshape_alias_copy", "lift_fresh_copy",
    "_local_scalar_dense", "repeat", "roll", "flip", "tril", "triu", "bernoulli", "rand", "randn", "randint",
    "new_full", "detach_", "split_with_sizes_copy", "clone_", "col2im", "im2col",
}
_PER_ELEMENT = {
    "native_batch_norm": 5, "_native_batch_norm_legit": 5, "native_batch_norm_backward": 8,
    "native_layer_norm": 8, "native_layer_norm_backward": 12, "native_group_norm": 8,
    "native_group_norm_backward": 12, "_softmax": 5, "_log_softmax": 5, "_softmax_backward_data": 4,
    "_log_softmax_backward_data": 4, "upsample_bilinear2d": 8, "upsample_bilinear2d_backward": 8,
}


def _numel(shape):
    return math.prod(shape) if shape is not None else 0


def _conv(out_shape, in_shape, weight_shape, transposed):
    if weight_shape is None or len(weight_shape) < 2:
        return None
    kernel = math.prod(weight_shape[2:])
    if transposed:
        return 2 * _numel(in_shape) * weight_shape[1] * kernel
    return 2 * _numel(out_shape) * weight_shape[1] * kernel


def _kernel_elements(args, index, default_dims):
    k = args[index] if len(args) > index else None
    if isinstance(k, (list, tuple)) and k:
        return math.prod(int(v) for v in k) * (1 if len(k) > 1 else int(k[0]) ** (default_dims - 1))
    return 1


def flops(name, args, shape_of, result_metas):
    """FLOPs of aten op `name` called with `args` (shape_of gives a tensor argument's shape); None
    when no rule covers it."""
    shapes = [shape_of(a) if not isinstance(a, (list, tuple, int, float, bool, type(None), str)) else None for a in args]
    out = result_metas[0] if result_metas else None
    if isinstance(out, list):
        out = out[0] if out else None
    out_elems = _numel(out.shape) if out is not None else 0

    def arg_shape(i):
        return shapes[i] if i < len(shapes) else None

    if name == "convolution":
        transposed = bool(args[6]) if len(args) > 6 else False
        return _conv(out.shape if out else None, arg_shape(0), arg_shape(1), transposed)
    if name == "convolution_backward":
        transposed = bool(args[7]) if len(args) > 7 else False
        mask = args[10] if len(args) > 10 else [True, True, True]
        one = _conv(arg_shape(0), arg_shape(1), arg_shape(2), transposed)
        if one is None:
            return None
        return one * (int(bool(mask[0])) + int(bool(mask[1]))) + (_numel(arg_shape(0)) if mask[2] else 0)
    if name in ("mm", "bmm"):
        a, b = arg_shape(0), arg_shape(1)
        if a is None or b is None:
            return None
        return 2 * _numel(a) * b[-1]
    if name in ("addmm", "baddbmm"):
        a, b = arg_shape(1), arg_shape(2)
        if a is None or b is None:
            return None
        return 2 * _numel(a) * b[-1] + out_elems
    if name in _PER_ELEMENT:
        return _PER_ELEMENT[name] * max(out_elems, _numel(arg_shape(0)))
    if name in ("max_pool2d_with_indices", "avg_pool2d", "max_pool3d_with_indices", "avg_pool3d"):
        return out_elems * _kernel_elements(args, 1, 2 if "2d" in name else 3)
    if name in ("_adaptive_avg_pool2d", "adaptive_avg_pool2d"):
        return _numel(arg_shape(0))
    if name.endswith("pool2d_with_indices_backward") or name.endswith("pool2d_backward") or name.endswith("pool3d_backward"):
        return _numel(arg_shape(1))
    if name in _ELEMENTWISE:
        return out_elems if out_elems else _numel(arg_shape(0))
    if name in _TRANSCENDENTAL:
        return 8 * (out_elems if out_elems else _numel(arg_shape(0)))
    if name in _REDUCTION:
        return _numel(arg_shape(0))
    if name in _MOVEMENT:
        return 0
    return None
