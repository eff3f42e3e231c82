# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: MemPlan authors
"""capture(): the step PyTorch runs, as MemPlan's JSON graph.

Inference: the forward graph of aten ops traced with make_fx (in-place ops stay in place).
Training: AOTAutograd's joint graph split by its default partition: the forward graph, then the
backward graph, which reads exactly what the partition saved; then, with an optimizer, one real
optimizer step recorded op by op (optimizer.py). Shapes and dtypes are the traced ones.
"""

import copy
import operator
import sys
import traceback

import torch

from . import modules as module_info
from .graphjson import GraphBuilder, TensorMeta, Value, apply_call
from .optimizer import record_optimizer_step


class CaptureError(Exception):
    """The model could not be captured; the message names the module and what stopped the trace."""


def _element_size(dtype):
    return torch.empty((), dtype=dtype).element_size()


def _meta_of(m):
    if m is None or not hasattr(m, "shape"):
        return None
    shape = tuple(int(d) for d in m.shape)
    n = 1
    for d in shape:
        n *= d
    return TensorMeta(shape, m.dtype, n * _element_size(m.dtype))


def _result_metas(node):
    """Per aten return of node: a TensorMeta, a list of them, or None (from tensor_meta, or from
    the getitem nodes that read a tuple when the op has none)."""
    tm = node.meta.get("tensor_meta")
    returns = node.target._schema.returns
    if tm is not None and hasattr(tm, "shape"):
        return [_meta_of(tm)]
    if tm is not None:
        metas = [(_meta_of(x) if hasattr(x, "shape") or x is None else [_meta_of(y) for y in x]) for x in tm]
        return metas[: len(returns)] if len(returns) > 1 else ([metas] if str(returns[0].type).startswith("List") else metas)
    listed = len(returns) == 1 and str(returns[0].type).startswith("List")
    got = {user.args[1]: _meta_of(user.meta.get("tensor_meta")) for user in node.users
           if user.op == "call_function" and user.target is operator.getitem}
    if listed:
        return [[got.get(i) for i in range(max(got) + 1)] if got else None]
    return [got.get(i) for i in range(len(returns))]


def _walk(builder, graph, env, phase, category="temporary"):
    """Adds graph's aten calls. env maps fx nodes to Values (placeholders preset). Returns the
    output node's argument mapped through env."""
    for node in graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        if node.op == "get_attr":
            continue  # constants are preset by the caller
        if node.op != "call_function":
            raise CaptureError(f"unexpected fx node {node.format_node()}")
        if node.target is operator.getitem:
            source = env.get(node.args[0])
            env[node] = source[node.args[1]] if isinstance(source, (list, tuple)) else None
            continue
        if not isinstance(node.target, torch._ops.OpOverload):
            raise CaptureError(f"node {node.name} calls {node.target}, which is not an aten op")
        module = node.meta.get(module_info.META, "")

        def lookup(a):
            return env.get(a) if isinstance(a, torch.fx.Node) else None

        def shape_of(a):
            tm = a.meta.get("tensor_meta") if isinstance(a, torch.fx.Node) else None
            return tuple(int(d) for d in tm.shape) if tm is not None and hasattr(tm, "shape") else None

        results, op = apply_call(builder, node.name, node.target, node.args, node.kwargs, _result_metas(node),
                                 lookup, shape_of, module, phase, lambda i: category)
        env[node] = results[0] if len(results) == 1 else results
    out = next(n for n in graph.nodes if n.op == "output")
    return out.args[0]


def _as_tuple(example_inputs):
    if isinstance(example_inputs, torch.Tensor):
        return (example_inputs,)
    return tuple(example_inputs)


def _first_tensor(out):
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (list, tuple)):
        for x in out:
            t = _first_tensor(x)
            if t is not None:
                return t
    return None


def default_loss(output):
    """The loss when none is given: the output itself when it is a scalar, else the sum of its first tensor."""
    t = _first_tensor(output)
    return t if t.dim() == 0 else t.float().sum()


class _Tracking:
    """Runs `fn` under module tracking; a failure becomes a CaptureError naming the module."""

    def __init__(self, model, what):
        self.model, self.what = model, what

    def run(self, fn):
        with module_info.module_tracking(self.model) as stack:
            try:
                return fn()
            except CaptureError:
                raise
            except Exception as e:  # noqa: BLE001: every trace failure becomes one message
                where = stack[-1] if stack else ""
                frame = traceback.extract_tb(e.__traceback__)
                user = [f for f in frame if "/torch/" not in f.filename and "/functorch/" not in f.filename
                        and "memplan_torch" not in f.filename]
                line = f" at {user[-1].filename}:{user[-1].lineno}" if user else ""
                module = f"module '{where}' ({type(self.model.get_submodule(where)).__name__})" if where else \
                    f"model {type(self.model).__name__}"
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise CaptureError(f"cannot trace {self.what}: {module}{line}: {first}") from e


def capture(model, example_inputs, loss_fn=None, optimizer=None, path=None, training=None, name=None, metadata=None):
    """Captures one inference pass or one training step of `model` on `example_inputs`.

    training: None means True when loss_fn or optimizer is given. loss_fn(outputs) -> scalar
    (default_loss when None). optimizer: a torch.optim optimizer over model's parameters; its step
    is run twice for real (the first creates its state) and the second recorded; the model's and
    the optimizer's state are restored afterwards. metadata: more entries for the graph's
    "capture" object (strings or numbers). Returns the JSON graph (a dict); writes it to
    `path` when given. Raises CaptureError with the module and what stopped the trace."""
    if training is None:
        training = loss_fn is not None or optimizer is not None
    inputs = _as_tuple(example_inputs)
    if not all(isinstance(x, torch.Tensor) for x in inputs):
        kinds = ", ".join(type(x).__name__ for x in inputs)
        raise CaptureError(f"example_inputs must be tensors (found {kinds}); wrap other arguments in the model")
    builder = GraphBuilder(name or type(model).__name__)
    builder.capture = {"framework": "pytorch", "torch_version": torch.__version__, "model": name or type(model).__name__,
                       "mode": "training" if training else "inference",
                       "inputs": "; ".join("x".join(str(d) for d in x.shape) + " " + str(x.dtype).replace("torch.", "")
                                           for x in inputs)}
    if optimizer is not None:
        builder.capture["optimizer"] = type(optimizer).__name__
    builder.capture.update(metadata or {})
    saved_state = copy.deepcopy(model.state_dict())
    saved_opt = copy.deepcopy(optimizer.state_dict()) if optimizer is not None else None
    try:
        if training:
            _capture_training(builder, model, inputs, loss_fn or default_loss, optimizer)
        else:
            _capture_inference(builder, model, inputs)
    finally:
        model.load_state_dict(saved_state)
        if optimizer is not None:
            optimizer.load_state_dict(saved_opt)
            for p in model.parameters():
                p.grad = None
    graph = builder.write(path) if path else builder.to_json()
    return graph


_META_LIBRARY = None


def enable_meta_tracing():
    """Lets a step run on PyTorch's meta device (shapes, no data) where this PyTorch lacks a meta
    kernel the capture needs: convolution_backward (torch 1.13 has none; its gradients have the
    shapes of the convolution's input, weight and bias). Idempotent; left alone where PyTorch has one."""
    global _META_LIBRARY
    if _META_LIBRARY is not None:
        return
    probe = torch.empty(1, 1, 3, 3, device="meta")
    try:
        torch.ops.aten.convolution_backward(probe, probe, probe, [1], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                            [True, True, True])
        _META_LIBRARY = False
        return
    except (NotImplementedError, RuntimeError):
        pass
    _META_LIBRARY = torch.library.Library("aten", "IMPL", "Meta")

    def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                             output_padding, groups, output_mask):
        return (input.new_empty(input.shape) if output_mask[0] else None,
                weight.new_empty(weight.shape) if output_mask[1] else None,
                grad_output.new_empty(bias_sizes) if output_mask[2] and bias_sizes is not None else None)

    _META_LIBRARY.impl("convolution_backward", convolution_backward)


def _functional(model, names, inputs_count):
    try:
        from torch.func import functional_call  # torch 2.x
    except ImportError:
        from torch.nn.utils.stateless import functional_call  # torch 1.13

    def call(*flat):
        state = dict(zip(names, flat[: len(names)]))
        return functional_call(model, state, tuple(flat[len(names):]))

    return call


def _primal_storages(builder, model, inputs):
    """Storages for parameters, buffers and inputs, in the order of the flat arguments."""
    values, names = [], []
    for n, p in model.named_parameters():
        names.append(n)
        values.append(builder.add_storage(n, _dtype(p), p.shape, p.numel() * p.element_size(), "parameter", _owner(n)))
    for n, b in model.named_buffers():
        names.append(n)
        values.append(builder.add_storage(n, _dtype(b), b.shape, b.numel() * b.element_size(), "buffer", _owner(n)))
    for k, x in enumerate(inputs):
        v = builder.add_storage("input" if len(inputs) == 1 else f"input_{k}", _dtype(x), x.shape,
                                x.numel() * x.element_size(), "input", "")
        builder.inputs.append(v.storage)
        values.append(v)
    return names, values


def _dtype(t):
    from .graphjson import dtype_name
    return dtype_name(t.dtype)


def _owner(path):
    return path.rsplit(".", 1)[0] if "." in path else ""


def _constants(builder, gm, graph, env):
    for node in graph.nodes:
        if node.op == "get_attr":
            t = getattr(gm, node.target)
            if isinstance(t, torch.Tensor):
                v = builder.add_storage(node.name, _dtype(t), t.shape, t.numel() * t.element_size(), "input", "")
                builder.inputs.append(v.storage)
                env[node] = v


def _capture_inference(builder, model, inputs):
    from torch.fx.experimental.proxy_tensor import make_fx
    names, values = _primal_storages(builder, model, inputs)
    flat = [p for _, p in model.named_parameters()] + [b for _, b in model.named_buffers()] + list(inputs)
    fn = _functional(model, names, len(inputs))
    with torch.no_grad():
        gm = _Tracking(model, "the forward pass").run(lambda: make_fx(fn)(*flat))
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    env = dict(zip(placeholders, values))
    _constants(builder, gm, gm.graph, env)
    out = _walk(builder, gm.graph, env, "forward")
    for v in _flatten([env.get(n) if isinstance(n, torch.fx.Node) else None for n in _flatten(out)]):
        if not isinstance(v, Value):
            continue
        if builder.storages[v.storage].category == "temporary":
            builder.storages[v.storage].category = "output"
        if v.storage not in builder.outputs:
            builder.outputs.append(v.storage)


def _flatten(x):
    if isinstance(x, (list, tuple)):
        out = []
        for y in x:
            out += _flatten(y)
        return out
    return [x]


def _capture_training(builder, model, inputs, loss_fn, optimizer):
    from functorch.compile import aot_function, default_partition, make_boxed_func

    params = [(n, p) for n, p in model.named_parameters()]
    names, values = _primal_storages(builder, model, inputs)
    flat = [p for _, p in params] + [b for _, b in model.named_buffers()] + [x.detach() for x in inputs]
    call = _functional(model, names, len(inputs))
    graphs = {}

    def partition(joint, joint_inputs, **kwargs):
        graphs["joint"] = joint
        return default_partition(joint, joint_inputs, **kwargs)

    def keep(key):
        def compiler(gm, _args):
            graphs[key] = gm
            return make_boxed_func(gm.forward)
        return compiler

    def step():
        compiled = aot_function(lambda *a: loss_fn(call(*a)), keep("forward"), keep("backward"), partition_fn=partition)
        loss = compiled(*flat)
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise CaptureError(f"the loss must be a one-element tensor (found {type(loss).__name__}"
                               + (f" of shape {tuple(loss.shape)}" if isinstance(loss, torch.Tensor) else "") + ")")
        for p in model.parameters():
            p.grad = None
        loss.backward()

    _Tracking(model, "the training step").run(step)
    fw, bw, joint = graphs["forward"], graphs["backward"], graphs["joint"]
    module_info.copy_modules(joint.graph, fw.graph)
    module_info.copy_modules(joint.graph, bw.graph)

    # Forward.
    fw_placeholders = [n for n in fw.graph.nodes if n.op == "placeholder"]
    if len(fw_placeholders) != len(values):
        raise CaptureError(f"the forward graph has {len(fw_placeholders)} inputs for {len(values)} parameters, buffers "
                           "and inputs (shared parameters passed twice?)")
    env = dict(zip(fw_placeholders, values))
    _constants(builder, fw, fw.graph, env)
    forward_storages = set(builder.storages)
    fw_out = _walk(builder, fw.graph, env, "forward")
    loss_value = env[fw_out[0]] if isinstance(fw_out[0], torch.fx.Node) else None
    by_name = {n.name: env.get(n) for n in fw.graph.nodes}

    # Backward: the saved values come from the forward by name; the tangent is what backward() seeds.
    bw_env = {}
    for n in bw.graph.nodes:
        if n.op != "placeholder":
            continue
        if n.name.startswith("tangents"):
            seed = builder.add_storage("loss.grad", _dtype(torch.empty(0)), (), 4, "temporary", "")
            builder.add_op("backward_seed", "ones_like", "default", [loss_value] if loss_value else [], [seed.storage], "",
                           "backward", 1)
            bw_env[n] = seed
        else:
            bw_env[n] = by_name.get(n.name)
    _constants(builder, bw, bw.graph, bw_env)
    first_backward = len(builder.ops) - 1
    bw_out = _walk(builder, bw.graph, bw_env, "backward")

    # Categories: what the backward reads of the forward's own results is saved; the loss is the output.
    for n, v in list(bw_env.items()):
        if n.op == "placeholder" and isinstance(v, Value) and v.storage in builder.storages and builder.storages[v.storage].category == "temporary" \
                and v.storage not in forward_storages and not n.name.startswith("tangents"):
            builder.storages[v.storage].category = "saved"
    if loss_value is not None:
        builder.storages[loss_value.storage].category = "output"
        builder.outputs.append(loss_value.storage)
    grads = {}
    renamed = {}  # storage -> its gradient name, for gradients that share one backward result
    for k, g in enumerate(bw_out[: len(params)]):
        v = bw_env.get(g) if isinstance(g, torch.fx.Node) else None
        if not isinstance(v, Value):
            continue
        v = Value(renamed.get(v.storage, v.storage), v.token)
        name = f"{params[k][0]}.grad"
        param = params[k][1]
        nbytes = param.numel() * param.element_size()
        held = builder.storages.get(v.storage)
        if held is not None and held.category == "temporary" and held.bytes == nbytes and v.storage not in forward_storages:
            renamed[v.storage] = name = builder.rename(v.storage, name)
        else:
            # The backward's result is not a storage of its own (another parameter's gradient, a view
            # into a larger tensor, a forward value): AccumulateGrad stores a copy as .grad.
            copy = builder.add_storage(name, _dtype(param), tuple(param.shape), nbytes, "gradient")
            builder.add_op("accumulate_grad", "clone", "default", [v], [copy.storage], "", "backward", 0)
            name = copy.storage
        s = builder.storages[name]
        s.category, s.module = "gradient", _owner(params[k][0])
        grads[params[k][0]] = Value(name)
    _attribute_backward(builder, first_backward)

    if optimizer is not None:
        record_optimizer_step(builder, model, optimizer, grads)


def _attribute_backward(builder, first):
    """Backward ops have no module: the parameter whose gradient they write names it, else a
    parameter they read, else the latest-made saved tensor they read, else the producer of their
    first input (gradient sums along a residual stream)."""
    producer_module = {}
    order = {}
    for k, op in enumerate(builder.ops):
        for o in op["outputs"]:
            order[o] = k
            if k < first or op["module"]:
                producer_module[o] = op["module"]
    for k in range(first, len(builder.ops)):
        op = builder.ops[k]
        if not op["module"]:
            reads = [builder.storages[i] for i in op["inputs"] if i in builder.storages]
            grads = [builder.storages[o] for o in op["outputs"]
                     if o in builder.storages and builder.storages[o].category == "gradient"]
            params = grads + [s for s in reads if s.category == "parameter"]
            saved = sorted((s for s in reads if s.category == "saved"), key=lambda s: order.get(s.name, -1))
            if params:
                op["module"] = params[0].module
            elif saved:
                op["module"] = producer_module.get(saved[-1].name, saved[-1].module)
            else:
                op["module"] = next((producer_module[i] for i in op["inputs"] if producer_module.get(i)), "")
        for o in op["outputs"]:
            producer_module[o] = op["module"]
            s = builder.storages.get(o)
            if s is not None and s.category in ("temporary",) and not s.module:
                s.module = op["module"]


def main_error(message):
    print(f"memplan_torch: {message}", file=sys.stderr)
    return 1
