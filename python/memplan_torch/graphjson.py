# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: MemPlan authors
"""Builds MemPlan's JSON graph from aten op calls, one tensor per storage.

Contract:
- A MemPlan tensor is a storage: an op's new output gets one; a view (an aten return with alias
  information that does not write) names its base's storage and adds no op; an in-place or out=
  write (alias information that writes) reads the updated storage and writes a zero-byte version
  token ``NAME@k``, which later readers of the updated value also read, so reordering keeps them after it.
- Values are (storage, token) pairs; callers map their own handles (fx nodes, live tensors) to them.
- Every op carries its aten name (``type``, domain ``aten``), its overload, its module path and its
  phase; ``flops`` when flops.py has a rule for it.
"""

import json

from . import flops as flops_rules

KIND_OF_CATEGORY = {
    "input": "input", "parameter": "weight", "buffer": "weight", "gradient": "persistent",
    "optimizer_state": "persistent", "saved": "activation", "temporary": "activation", "output": "output",
}

_DTYPE_NAMES = {
    "float32": "float32", "float": "float32", "float16": "float16", "half": "float16", "bfloat16": "bfloat16",
    "float64": "float64", "double": "float64", "int8": "int8", "uint8": "uint8", "int16": "int16",
    "short": "int16", "int32": "int32", "int": "int32", "int64": "int64", "long": "int64", "bool": "bool",
    "complex64": "complex64", "complex128": "complex128",
}


def dtype_name(dtype):
    """MemPlan's spelling of a torch dtype ("float32", "int64", ...)."""
    name = str(dtype).replace("torch.", "")
    return _DTYPE_NAMES.get(name, name)


class Storage:
    __slots__ = ("name", "dtype", "shape", "bytes", "category", "module", "itemsize")

    def __init__(self, name, dtype, shape, nbytes, category, module):
        self.name, self.dtype, self.shape, self.bytes = name, dtype, list(shape), int(nbytes)
        self.category, self.module = category, module


class Value:
    """What an op argument refers to: a storage and, after in-place writes, its latest version token."""
    __slots__ = ("storage", "token")

    def __init__(self, storage, token=None):
        self.storage, self.token = storage, token

    def names(self):
        return [self.storage] + ([self.token] if self.token else [])


class GraphBuilder:
    def __init__(self, name):
        self.name = name
        self.storages = {}  # name -> Storage, in creation order
        self.ops = []
        self.inputs = []
        self.outputs = []
        self.capture = {}
        self._versions = {}
        self._op_names = set()

    # --- tensors -----------------------------------------------------------------------------
    def unique_name(self, base, taken):
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        return name

    def add_storage(self, base_name, dtype, shape, nbytes, category, module=""):
        name = self.unique_name(base_name, self.storages)
        self.storages[name] = Storage(name, dtype, shape, nbytes, category, module)
        return Value(name)

    def new_token(self, value):
        """A version token for an in-place write to value's storage; returns the updated value."""
        base = self.storages[value.storage]
        k = self._versions.get(value.storage, 0) + 1
        self._versions[value.storage] = k
        token = self.unique_name(f"{value.storage}@{k}", self.storages)
        self.storages[token] = Storage(token, base.dtype, [0], 0, base.category, base.module)
        return Value(value.storage, token)

    def rename(self, old, new):
        """Renames storage `old` (and its tokens' base) to `new`, everywhere ops name it."""
        if old == new:
            return
        new = self.unique_name(new, self.storages)
        s = self.storages.pop(old)
        s.name = new
        self.storages[new] = s
        for op in self.ops:
            op["inputs"] = [new if n == old else n for n in op["inputs"]]
            op["outputs"] = [new if n == old else n for n in op["outputs"]]
        self.inputs = [new if n == old else n for n in self.inputs]
        self.outputs = [new if n == old else n for n in self.outputs]
        if old in self._versions:
            self._versions[new] = self._versions.pop(old)
        return new

    # --- ops ---------------------------------------------------------------------------------
    def add_op(self, name, aten, overload, inputs, outputs, module, phase, flop_count=None):
        """inputs: Values read; outputs: storage or token names written (at least one)."""
        op_name = self.unique_name(name, self._op_names)
        self._op_names.add(op_name)
        read = []
        for v in inputs:
            for n in v.names():
                if n not in read and n not in outputs:
                    read.append(n)
        op = {"name": op_name, "type": aten, "domain": "aten", "inputs": read, "outputs": list(outputs),
              "module": module or "", "phase": phase, "attributes": {"overload": overload}}
        if flop_count is not None:
            op["attributes"]["flops"] = int(flop_count)
        self.ops.append(op)
        return op

    # --- result ------------------------------------------------------------------------------
    def to_json(self):
        produced = {o for op in self.ops for o in op["outputs"]}
        read = {i for op in self.ops for i in op["inputs"]}
        tensors = []
        for s in self.storages.values():
            if s.name not in produced and s.name not in read and s.name not in self.outputs:
                continue  # a storage no op touches (an unused primal) has no lifetime
            entry = {"name": s.name, "dtype": s.dtype, "shape": s.shape, "bytes": s.bytes,
                     "kind": KIND_OF_CATEGORY[s.category], "category": s.category, "module": s.module or ""}
            tensors.append(entry)
        kept = {t["name"] for t in tensors}
        return {
            "name": self.name,
            "capture": self.capture,
            "tensors": tensors,
            "ops": self.ops,
            "inputs": [n for n in self.inputs if n in kept],
            "outputs": [n for n in self.outputs if n in kept],
        }

    def write(self, path):
        graph = self.to_json()
        with open(path, "w", encoding="utf-8") as f:
            f.write("{\n")
            f.write(f'  "name": {json.dumps(graph["name"])},\n')
            f.write(f'  "capture": {json.dumps(graph["capture"], sort_keys=True)},\n')
            for key in ("tensors", "ops"):
                f.write(f'  "{key}": [\n')
                rows = [json.dumps(e) for e in graph[key]]
                f.write(",\n".join("    " + r for r in rows))
                f.write("\n  ],\n")
            f.write(f'  "inputs": {json.dumps(graph["inputs"])},\n')
            f.write(f'  "outputs": {json.dumps(graph["outputs"])}\n')
            f.write("}\n")
        return graph


# Ops whose result shares its input's storage although their schema does not say so.
_UNDECLARED_VIEWS = {"_unsafe_view", "lift_fresh"}


def _return_alias(schema, index):
    """For return `index`: ("view"|"write", argument index it aliases) or (None, None)."""
    if schema.name.split("::")[-1] in _UNDECLARED_VIEWS:
        return "view", 0
    ret = schema.returns[index] if index < len(schema.returns) else None
    info = ret.alias_info if ret is not None else None
    if info is None:
        return None, None
    sets = set(info.before_set)
    for k, arg in enumerate(schema.arguments):
        if arg.alias_info is not None and set(arg.alias_info.before_set) & sets:
            return ("write" if info.is_write else "view"), k
    return ("write" if info.is_write else "view"), 0


def apply_call(builder, node_name, func, args, kwargs, result_metas, lookup, shape_of, module, phase, categories):
    """Adds one aten call. func: an OpOverload; args/kwargs: its arguments in the caller's handles;
    result_metas: per return, None, a TensorMeta or a list of them; lookup(handle) -> Value or None;
    shape_of(handle) -> the argument's shape as the op sees it (a view's own shape) or None. categories(i) -> the category for new storage i. Returns per return the
    Value(s) it produced (a Value, a list of Values or None)."""
    schema = func._schema
    bound = list(args) + [kwargs[a.name] for a in schema.arguments[len(args):] if kwargs and a.name in kwargs]
    named = {}
    for k, a in enumerate(schema.arguments):
        if k < len(args):
            named[k] = args[k]
        elif kwargs and a.name in kwargs:
            named[k] = kwargs[a.name]

    def values_of(x):
        if isinstance(x, (list, tuple)):
            out = []
            for y in x:
                out += values_of(y)
            return out
        v = lookup(x)
        if isinstance(v, (list, tuple)):
            return [y for y in v if isinstance(y, Value)]
        return [v] if isinstance(v, Value) else []

    inputs = []
    for x in bound:
        inputs += values_of(x)

    written, results, new_outputs = [], [], []
    for i, meta in enumerate(result_metas):
        kind, arg = _return_alias(schema, i)
        if kind is not None:
            base = values_of(named.get(arg))
            if kind == "write" and base:
                updated = builder.new_token(base[0])
                written.append(updated.token)
                results.append(updated)
            elif isinstance(meta, list):
                results.append([base[0] if base else None for _ in meta])
            else:
                results.append(base[0] if base else None)
            continue
        if meta is None:
            results.append(None)
            continue
        metas = meta if isinstance(meta, list) else [meta]
        made = []
        for j, m in enumerate(metas):
            if m is None:
                made.append(None)
                continue
            suffix = "" if len(result_metas) == 1 and not isinstance(meta, list) else f".{i}" + (f".{j}" if isinstance(meta, list) else "")
            v = builder.add_storage(node_name + suffix, dtype_name(m.dtype), tuple(m.shape), m.nbytes, categories(len(new_outputs)), module)
            new_outputs.append(v)
            written.append(v.storage)
            made.append(v)
        results.append(made if isinstance(meta, list) else made[0])
    # Arguments the schema says the op writes without returning them (running statistics in training).
    for k, a in enumerate(schema.arguments):
        if a.alias_info is not None and a.alias_info.is_write and k in named:
            if any(_return_alias(schema, i) == ("write", k) for i in range(len(schema.returns))):
                continue
            for v in values_of(named[k]):
                written.append(builder.new_token(v).token)
    if not written:
        return results, None  # a pure view: no op, no memory
    fl = flops_rules.flops(func._schema.name.split("::")[-1], bound, shape_of, result_metas)
    op = builder.add_op(node_name, func._schema.name.split("::")[-1], func._overloadname, inputs, written, module, phase, fl)
    return results, op


class TensorMeta:
    """Shape, dtype and byte size of one op result."""
    __slots__ = ("shape", "dtype", "nbytes")

    def __init__(self, shape, dtype, nbytes):
        self.shape, self.dtype, self.nbytes = tuple(int(d) for d in shape), dtype, int(nbytes)
