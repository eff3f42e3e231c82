# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: MemPlan authors
"""What PyTorch itself does, measured on this machine, to hold a capture against.

- autograd_saved_bytes: one eager forward under torch.autograd.graph.saved_tensors_hooks; every
  tensor autograd packs for backward is counted once per storage (by address), parameters excluded.
- allocator_peak: one steady-state step (after a warm-up step that creates the optimizer state),
  run under torch.profiler with profile_memory=True. Its raw memory events (every CPU allocation
  and free with its byte count, in order) are summed; the highest running sum is the step's own
  peak. What was allocated before the step (parameters, buffers, optimizer state, inputs) is added
  as the baseline. Frees of blocks allocated before profiling carry no size and are not counted,
  which is why the step starts with the gradients already released (zero_grad(set_to_none=True)).
"""

import torch

from .optimizer import storage_address


def _storage_bytes(t):
    if hasattr(t, "untyped_storage"):
        return t.untyped_storage().nbytes()
    s = t.storage()
    return s.nbytes() if hasattr(s, "nbytes") else s.size() * t.element_size()


def autograd_saved_bytes(model, inputs, loss_fn):
    """Bytes of the unique storages autograd saves for backward in one forward, parameters excluded."""
    params = {storage_address(p) for p in model.parameters()}
    seen = {}

    def pack(t):
        a = storage_address(t)
        if a and a not in params:
            seen[a] = max(seen.get(a, 0), _storage_bytes(t))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = loss_fn(model(*inputs))
    loss.backward()
    for p in model.parameters():
        p.grad = None
    return sum(seen.values())


def _live_bytes(tensors):
    seen = {}
    for t in tensors:
        if isinstance(t, torch.Tensor) and storage_address(t):
            seen[storage_address(t)] = _storage_bytes(t)
    return sum(seen.values())


def _profiled_peak(fn):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_us())
    current = peak = 0
    for e in events:
        current += e.nbytes()
        peak = max(peak, current)
    return peak


def allocator_peak(model, inputs, loss_fn=None, optimizer=None, training=True):
    """(baseline bytes, peak bytes during the step above the baseline) of one steady-state step."""
    def step():
        if not training:
            with torch.no_grad():
                model(*inputs)
            return
        if optimizer is not None:
            optimizer.zero_grad(set_to_none=True)
        else:
            for p in model.parameters():
                p.grad = None
        loss = loss_fn(model(*inputs))
        loss.backward()
        if optimizer is not None:
            optimizer.step()

    step()  # warm-up: creates the optimizer state and the allocator's own caches
    if training:
        if optimizer is not None:
            optimizer.zero_grad(set_to_none=True)
        for p in model.parameters():
            p.grad = None
    state = list(model.parameters()) + list(model.buffers()) + list(inputs)
    if optimizer is not None:
        for s in optimizer.state.values():
            state += [v for v in s.values() if isinstance(v, torch.Tensor)]
    baseline = _live_bytes(state)
    return baseline, _profiled_peak(step)
