# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: MemPlan authors
"""Which module made each traced node.

While a model runs under tracing, global forward hooks keep the stack of module paths being run
and every fx node created meanwhile gets the innermost one (node.meta["memplan_module"]). AOTAutograd
traces twice (the second time by interpreting the first graph under functionalization), so a node
created while an interpreted node runs inherits that node's module. Backward nodes are created by
the autograd engine, outside any module: attribute_backward gives them the module of what they read.
"""

import contextlib

import torch
import torch.fx
import torch.nn.modules.module as nn_module

META = "memplan_module"


@contextlib.contextmanager
def module_tracking(model):
    names = {m: n for n, m in model.named_modules()}
    stack = []
    running = []  # fx nodes an Interpreter is running, innermost last

    def pre(mod, _inputs):
        stack.append(names.get(mod, stack[-1] if stack else ""))

    def post(_mod, _inputs, _output):
        if stack:
            stack.pop()

    original_create = torch.fx.Graph.create_node
    original_run_node = torch.fx.Interpreter.run_node

    def create_node(graph, *args, **kwargs):
        node = original_create(graph, *args, **kwargs)
        if stack:
            node.meta[META] = stack[-1]
        elif running and META in running[-1].meta:
            node.meta[META] = running[-1].meta[META]
        return node

    def run_node(interp, node):
        running.append(node)
        try:
            return original_run_node(interp, node)
        finally:
            running.pop()

    h1 = nn_module.register_module_forward_pre_hook(pre)
    h2 = nn_module.register_module_forward_hook(post)
    torch.fx.Graph.create_node = create_node
    torch.fx.Interpreter.run_node = run_node
    try:
        yield stack
    finally:
        torch.fx.Graph.create_node = original_create
        torch.fx.Interpreter.run_node = original_run_node
        h1.remove()
        h2.remove()


def copy_modules(source_graph, target_graph):
    """Copies module attribution from source to target by node name (the partitioner keeps names)."""
    by_name = {n.name: n.meta[META] for n in source_graph.nodes if META in n.meta}
    for n in target_graph.nodes:
        if META not in n.meta and n.name in by_name:
            n.meta[META] = by_name[n.name]
