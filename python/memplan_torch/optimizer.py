# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: MemPlan authors
"""The optimizer step, recorded as it runs.

optimizer.step() is run once to create its state (Adam's moments, SGD's momentum buffers), then run
again under a TorchDispatchMode that sees every aten call with its real tensors. A tensor argument is
identified by its storage's address: parameters, their gradients and the optimizer state are mapped
to their captured storages beforehand, every new result gets a storage of its own (a temporary), and
an in-place update writes a version token (graphjson.apply_call).
"""

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .graphjson import TensorMeta, apply_call, dtype_name


def storage_address(t):
    """The address of t's storage (the same for every view of it); 0 for an empty one. A meta
    tensor (a capture with --shapes-only) has no data: its storage object's address stands in."""
    if t.device.type == "meta":
        return t.storage()._cdata
    if hasattr(t, "untyped_storage"):
        return t.untyped_storage().data_ptr()
    return t.storage().data_ptr()


class _Recorder(TorchDispatchMode):
    def __init__(self, builder, by_address, module_of):
        super().__init__()
        self.builder, self.by_address, self.module_of = builder, by_address, module_of
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func._schema.name.startswith("profiler::"):
            return out
        results = out if isinstance(out, (tuple, list)) and len(func._schema.returns) > 1 else (out,)
        metas = [_meta(r) for r in results]

        def lookup(a):
            if not isinstance(a, torch.Tensor):
                return None
            return self.by_address.get(storage_address(a)) if storage_address(a) else None

        def shape_of(a):
            return tuple(a.shape) if isinstance(a, torch.Tensor) else None

        reads = [lookup(a) for a in list(args) + list(kwargs.values())]
        module = next((self.module_of[v.storage] for v in reads if v is not None and v.storage in self.module_of), "")
        self.count += 1
        name = f"opt.{func._schema.name.split('::')[-1]}_{self.count}"
        values, _ = apply_call(self.builder, name, func, args, kwargs, metas, lookup, shape_of, module, "optimizer",
                               lambda i: "temporary")
        for r, v in zip(results, values):
            if isinstance(r, torch.Tensor) and v is not None and storage_address(r):
                self.by_address[storage_address(r)] = v
        return out


def _meta(r):
    if not isinstance(r, torch.Tensor):
        return None
    return TensorMeta(tuple(r.shape), r.dtype, r.numel() * r.element_size())


def record_optimizer_step(builder, model, optimizer, grads):
    """Adds the optimizer phase. grads: parameter name -> Value of its captured gradient."""
    names = {p: n for n, p in model.named_parameters()}
    by_address, module_of = {}, {}
    for p in model.parameters():
        if p.grad is None:
            p.grad = torch.zeros_like(p)
    optimizer.step()  # creates the state; the recorded step below is a steady-state one
    for p, n in names.items():
        v = builder.storages.get(n)
        if v is None:
            continue
        owner = v.module
        by_address[storage_address(p)] = _value(n)
        module_of[n] = owner
        if n in grads and p.grad is not None:
            by_address[storage_address(p.grad)] = grads[n]
            module_of[grads[n].storage] = owner
        for key, state in optimizer.state.get(p, {}).items():
            if isinstance(state, torch.Tensor) and storage_address(state):
                s = builder.add_storage(f"{n}.{key}", dtype_name(state.dtype), state.shape,
                                        state.numel() * state.element_size(), "optimizer_state", owner)
                by_address[storage_address(state)] = s
                module_of[s.storage] = owner
    recorder = _Recorder(builder, by_address, module_of)
    with torch.no_grad(), recorder:
        optimizer.step()
    return recorder.count


def _value(name):
    from .graphjson import Value
    return Value(name)
