// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/bodyslots.h"

#include <algorithm>

namespace core::exec {

namespace {

const Branch* branchOf(const Subgraphs& graphs, const std::string& attribute)
{
    if (attribute == "then_branch")
        return &graphs.then;
    if (attribute == "else_branch")
        return &graphs.otherwise;
    if (attribute == "body")
        return &graphs.body;
    return nullptr;
}

std::shared_ptr<OpSlots> opSlots(const std::string& where, const std::vector<const NestedPlan*>& plans, const Subgraphs& graphs,
    Bytes regionBytes, std::vector<std::string>& notes);

// The slots of one graph; false, with a note, when its plan is not the graph the run runs.
bool graphSlots(const std::string& where, const NestedPlan& nested, const Branch& branch, Bytes regionBytes, GraphSlots& out,
    std::vector<std::string>& notes)
{
    out.where = where;
    const auto refuse = [&](const std::string& why) {
        notes.push_back(where + ": its values run in allocations of their own: " + why);
        return false;
    };
    if (!nested.graph)
        return refuse("its plan has no graph");
    const Graph& g = *nested.graph;
    const auto& built = nested.built;
    const auto& plan = nested.plan;
    if (plan.arenaSize > regionBytes)
        return refuse("its plan's arena (" + std::to_string(plan.arenaSize) + " bytes) is larger than the op's region ("
            + std::to_string(regionBytes) + " bytes)");
    if (g.ops.size() != branch.ops.size())
        return refuse("its plan has " + std::to_string(g.ops.size()) + " ops, the graph run " + std::to_string(branch.ops.size()));
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        if (g.ops[i].name != branch.ops[i].name)
            return refuse("op " + std::to_string(i) + " is '" + g.ops[i].name + "' in its plan, '" + branch.ops[i].name + "' in the run");
        // The run takes the ops in the graph's order: so must the plan's lifetimes.
        if (!built.problem.buffers.empty() && (i >= nested.schedule.order.size() || nested.schedule.order[i] != OpIndex(i)))
            return refuse("its plan runs the ops in another order than the graph's");
    }
    if (plan.offsets.size() != built.problem.buffers.size() || built.bufferTensor.size() != built.problem.buffers.size()
        || built.bufferOp.size() != built.problem.buffers.size())
        return refuse("its plan does not give every buffer an offset");
    std::vector<bool> held(g.tensors.size(), false);
    for (const TensorIndex t : built.bufferTensor)
        if (t >= 0 && std::size_t(t) < held.size())
            held[std::size_t(t)] = true;
    // An If's branch results are the If's outputs (nested.cpp).
    if (nested.type == "If")
        for (std::size_t k = 0; k < branch.results.size(); ++k) {
            const auto t = g.findTensor(branch.results[k]);
            if (t && !held[std::size_t(*t)] && g.tensors[std::size_t(*t)].kind == TensorKind::Output)
                out.outputs.emplace(branch.results[k], k);
        }
    // makeProblem gives every tensor with bytes a buffer unless no op touches it (or a region holds it).
    for (std::size_t t = 0; t < g.tensors.size(); ++t)
        if (!held[t] && g.tensors[t].size > 0 && g.tensors[t].kind != TensorKind::Weight && g.tensors[t].kind != TensorKind::Persistent
            && !out.outputs.count(g.tensors[t].name))
            out.unread.insert(g.tensors[t].name);
    for (std::size_t b = 0; b < built.problem.buffers.size(); ++b) {
        const auto& buffer = built.problem.buffers[b];
        const Bytes offset = plan.offsets[b];
        if (offset < 0 || offset + buffer.size > regionBytes)
            return refuse("buffer '" + buffer.name + "' lies outside the op's region");
        if (const TensorIndex t = built.bufferTensor[b]; t >= 0 && std::size_t(t) < g.tensors.size()) {
            out.values[g.tensors[std::size_t(t)].name] = Slot { offset, buffer.size };
            continue;
        }
        // An op's workspace (the kernels inside keep theirs in scratch), or a control-flow op's region.
        const OpIndex o = built.bufferOp[b];
        if (o < 0 || std::size_t(o) >= g.ops.size() || buffer.name != g.ops[std::size_t(o)].name + " body")
            continue;
        const auto inner = branch.nested.find(std::size_t(o));
        if (inner == branch.nested.end() || !inner->second)
            continue;
        const Op& op = g.ops[std::size_t(o)];
        std::vector<const NestedPlan*> plans;
        for (const auto& n : built.nested)
            if (n.op == op.name && n.step == Step(o))
                plans.push_back(&n);
        auto region = opSlots(where + ", " + op.type + " '" + op.name + "'", plans, *inner->second, buffer.size, notes);
        region->offset = offset;
        out.ops[std::size_t(o)] = std::move(region);
    }
    return true;
}

std::shared_ptr<OpSlots> opSlots(const std::string& where, const std::vector<const NestedPlan*>& plans, const Subgraphs& graphs,
    Bytes regionBytes, std::vector<std::string>& notes)
{
    auto region = std::make_shared<OpSlots>();
    region->bytes = regionBytes;
    for (const auto* nested : plans) {
        const Branch* branch = branchOf(graphs, nested->body);
        if (!branch || !branch->unsupported.empty())
            continue; // a graph the run does not run: the op runs synthetic, or says why
        GraphSlots graph;
        if (graphSlots(where + " " + nested->body, *nested, *branch, regionBytes, graph, notes))
            region->graphs[nested->body] = std::move(graph);
    }
    return region;
}

} // namespace

std::shared_ptr<const OpSlots> bodySlots(const std::string& where, const std::vector<const NestedPlan*>& plans, const Subgraphs& graphs,
    Bytes regionBytes, std::vector<std::string>& notes)
{
    return opSlots(where, plans, graphs, regionBytes, notes);
}

void addBodyNote(const BodyArena& arena, const std::string& key, const std::string& note)
{
    if (!arena.notes)
        return;
    const auto same = std::find_if(arena.notes->begin(), arena.notes->end(), [&](const std::string& n) { return n.compare(0, key.size(), key) == 0; });
    if (same == arena.notes->end())
        arena.notes->push_back(note);
    else
        *same = note;
}

} // namespace core::exec
