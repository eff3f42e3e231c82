// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/simplify.h"

#include "cost/opcost.h"
#include "schedule/schedule.h"
#include "strategies/training.h"
#include "util/format.h"

#include <algorithm>
#include <map>
#include <set>

namespace core {

namespace {

// Elementwise ops a Transpose passes through: each output element depends on the operands' elements
// at the same position (after broadcasting), and no attribute names an axis.
const std::set<std::string> kLayoutFree { "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mod", "PRelu", "Relu",
    "LeakyRelu", "Clip", "Abs", "Neg", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Exp", "Log", "Erf", "Gelu",
    "Sigmoid", "Tanh", "Softplus", "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish", "Mish", "Sin", "Cos", "Not", "And",
    "Or", "Xor", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Where", "Cast" };

// Ops whose outputs are folded into constants when every input is a weight. Not QuantizeLinear and
// DequantizeLinear: a quantized model keeps its weights 8-bit (the fuse strategy runs DQ inside its group).
const std::set<std::string> kFoldable { "Transpose", "Concat", "Slice", "Gather", "Expand", "Tile", "Pad", "Split", "MatMul",
    "Gemm", "ConstantOfShape", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "Reshape", "Flatten", "Squeeze",
    "Unsqueeze", "Identity" };

bool foldable(const std::string& type)
{
    return kFoldable.count(type) > 0 || (isElementwiseOp(type) && type != "QuantizeLinear" && type != "DequantizeLinear" && type != "Dropout");
}

bool isReshapeLike(const std::string& type) { return type == "Reshape" || type == "Flatten" || type == "Squeeze" || type == "Unsqueeze"; }

bool knownShape(const Tensor& t)
{
    return t.rankKnown && !t.estimated && !t.sequence && !t.optional && t.size >= 0
        && std::all_of(t.shape.begin(), t.shape.end(), [](std::int64_t d) { return d >= 0; });
}

// Same element type and shape: one can stand for the other.
bool sameLayout(const Tensor& a, const Tensor& b) { return knownShape(a) && knownShape(b) && a.dtype == b.dtype && a.shape == b.shape; }

// One element: broadcasts the same way under any permutation of the other operands' axes.
bool holdsOne(const Tensor& t)
{
    return knownShape(t) && std::all_of(t.shape.begin(), t.shape.end(), [](std::int64_t d) { return d == 1; });
}

// A Transpose's permutation for an input of `rank` (the reversed axes when perm is absent); empty when invalid.
std::vector<std::int64_t> permOf(const Op& op, std::size_t rank)
{
    std::vector<std::int64_t> perm;
    if (const auto a = op.attributes.find("perm"); a != op.attributes.end() && !a->second.ints.empty())
        perm = a->second.ints;
    else
        for (std::size_t i = 0; i < rank; ++i)
            perm.push_back(std::int64_t(rank - 1 - i));
    if (perm.size() != rank)
        return {};
    std::vector<bool> seen(rank, false);
    for (auto p : perm) {
        if (p < 0 || p >= std::int64_t(rank) || seen[std::size_t(p)])
            return {};
        seen[std::size_t(p)] = true;
    }
    return perm;
}

// Transpose(Transpose(x, p), q) = Transpose(x, r): r[i] = p[q[i]].
std::vector<std::int64_t> compose(const std::vector<std::int64_t>& p, const std::vector<std::int64_t>& q)
{
    std::vector<std::int64_t> r(q.size());
    for (std::size_t i = 0; i < q.size(); ++i)
        r[i] = p[std::size_t(q[i])];
    return r;
}

bool isIdentity(const std::vector<std::int64_t>& perm)
{
    for (std::size_t i = 0; i < perm.size(); ++i)
        if (perm[i] != std::int64_t(i))
            return false;
    return true;
}

// Ops a Transpose passes through: the layout-free elementwise ops, and Concat (its axis follows).
bool passesTranspose(const Op& op, std::size_t rank)
{
    if (op.type != "Concat")
        return kLayoutFree.count(op.type) > 0;
    const auto a = op.attributes.find("axis");
    if (a == op.attributes.end() || a->second.ints.size() != 1)
        return false;
    const auto axis = a->second.ints[0];
    return axis >= -std::int64_t(rank) && axis < std::int64_t(rank);
}

// A Concat's axis, normalised; the other ops have none (-1).
std::int64_t concatAxis(const Op& op, std::size_t rank)
{
    if (op.type != "Concat")
        return -1;
    const auto axis = op.attributes.at("axis").ints[0];
    return axis < 0 ? axis + std::int64_t(rank) : axis;
}

void setConcatAxis(Op& op, std::int64_t axis)
{
    op.attributes["axis"].ints = { axis };
    op.attributes["axis"].list = false;
}

std::string permText(const std::vector<std::int64_t>& perm)
{
    std::string text;
    for (auto p : perm)
        text += (text.empty() ? "" : ",") + std::to_string(p);
    return "[" + text + "]";
}

// The graph being rewritten: the schedule (ops removed leave it), who reads and writes each tensor,
// and the tensors whose names others rely on (graph inputs and outputs, tensors a subgraph captures).
struct Rewriter {
    Graph& g;
    std::vector<OpIndex> order;
    std::vector<bool> dead;
    std::vector<std::vector<OpIndex>> readers; // one entry per input slot (captured too)
    std::vector<OpIndex> producer;
    std::vector<bool> keep;
    std::set<std::string> names;

    Rewriter(Graph& graph, const Schedule& schedule)
        : g(graph)
        , order(schedule.order)
        , dead(graph.ops.size(), false)
        , readers(graph.tensors.size())
        , producer(graph.tensors.size(), -1)
        , keep(graph.tensors.size(), false)
    {
        for (auto o : order) {
            const auto& op = g.ops[std::size_t(o)];
            for (auto t : op.inputs)
                readers[std::size_t(t)].push_back(o);
            for (auto t : op.captured) {
                readers[std::size_t(t)].push_back(o);
                keep[std::size_t(t)] = true; // a subgraph reads it by name
            }
            for (auto t : op.outputs)
                producer[std::size_t(t)] = o;
        }
        for (const auto* list : { &g.inputs, &g.outputs })
            for (auto t : *list)
                keep[std::size_t(t)] = true;
        for (const auto& t : g.tensors)
            names.insert(t.name);
    }

    const Tensor& tensor(TensorIndex t) const { return g.tensors[std::size_t(t)]; }

    // An op the rewrites may touch: ONNX's own, no subgraph, no fused body, every tensor of known size.
    bool plain(OpIndex o) const
    {
        if (o < 0 || dead[std::size_t(o)])
            return false;
        const auto& op = g.ops[std::size_t(o)];
        const auto known = [&](TensorIndex t) { return knownShape(tensor(t)); };
        return op.domain.empty() && op.captured.empty() && op.body.empty() && std::all_of(op.inputs.begin(), op.inputs.end(), known)
            && std::all_of(op.outputs.begin(), op.outputs.end(), known);
    }

    // The live op producing t when it is a plain Transpose of one input; -1 otherwise.
    OpIndex transposeOf(TensorIndex t) const
    {
        const auto p = producer[std::size_t(t)];
        if (!plain(p))
            return -1;
        const auto& op = g.ops[std::size_t(p)];
        return op.type == "Transpose" && op.inputs.size() == 1 && op.outputs.size() == 1 ? p : -1;
    }

    // Whether o is t's only reader (once or more).
    bool onlyReader(TensorIndex t, OpIndex o) const
    {
        const auto& r = readers[std::size_t(t)];
        return !r.empty() && std::all_of(r.begin(), r.end(), [&](OpIndex x) { return x == o; });
    }

    std::string uniqueName(const std::string& base)
    {
        auto name = base;
        for (int k = 1; names.count(name); ++k)
            name = base + "_" + std::to_string(k);
        names.insert(name);
        return name;
    }

    TensorIndex addTensor(Tensor t)
    {
        t.name = uniqueName(t.name);
        g.tensors.push_back(std::move(t));
        readers.emplace_back();
        producer.push_back(-1);
        keep.push_back(false);
        return TensorIndex(g.tensors.size() - 1);
    }

    // Appends `op` and runs it at `position` of the schedule.
    OpIndex addOp(Op op, std::size_t position)
    {
        op.name = uniqueOpName(op.name);
        g.ops.push_back(std::move(op));
        const auto o = OpIndex(g.ops.size() - 1);
        dead.push_back(false);
        for (auto t : g.ops.back().inputs)
            readers[std::size_t(t)].push_back(o);
        for (auto t : g.ops.back().outputs)
            producer[std::size_t(t)] = o;
        order.insert(order.begin() + std::ptrdiff_t(position), o);
        return o;
    }

    std::string uniqueOpName(const std::string& base) const
    {
        auto taken = [&](const std::string& n) { return std::any_of(g.ops.begin(), g.ops.end(), [&](const Op& op) { return op.name == n; }); };
        auto name = base;
        for (int k = 1; taken(name); ++k)
            name = base + "_" + std::to_string(k);
        return name;
    }

    std::size_t position(OpIndex o) const { return std::size_t(std::find(order.begin(), order.end(), o) - order.begin()); }

    void dropRead(TensorIndex t, OpIndex o)
    {
        auto& r = readers[std::size_t(t)];
        if (const auto it = std::find(r.begin(), r.end(), o); it != r.end())
            r.erase(it);
    }

    void setInput(OpIndex o, std::size_t k, TensorIndex t)
    {
        auto& op = g.ops[std::size_t(o)];
        dropRead(op.inputs[k], o);
        op.inputs[k] = t;
        readers[std::size_t(t)].push_back(o);
    }

    void setOutput(OpIndex o, std::size_t k, TensorIndex t)
    {
        auto& op = g.ops[std::size_t(o)];
        if (producer[std::size_t(op.outputs[k])] == o)
            producer[std::size_t(op.outputs[k])] = -1;
        op.outputs[k] = t;
        producer[std::size_t(t)] = o;
    }

    void kill(OpIndex o)
    {
        auto& op = g.ops[std::size_t(o)];
        dead[std::size_t(o)] = true;
        for (auto t : op.inputs)
            dropRead(t, o);
        for (auto t : op.captured)
            dropRead(t, o);
        for (auto t : op.outputs)
            if (producer[std::size_t(t)] == o)
                producer[std::size_t(t)] = -1;
        order.erase(order.begin() + std::ptrdiff_t(position(o)));
    }

    // Removes o when nothing reads its outputs any more and none of them must keep its name.
    void killIfUnread(OpIndex o)
    {
        if (o < 0 || dead[std::size_t(o)])
            return;
        for (auto t : g.ops[std::size_t(o)].outputs)
            if (!readers[std::size_t(t)].empty() || keep[std::size_t(t)])
                return;
        kill(o);
    }

    // `from` holds the same value as `to` (same type and shape), and `remover`, which writes `from`,
    // is about to go: from's readers read `to`. When `from` must keep its name (a graph output), `to`'s
    // producer writes `from` instead and to's other readers read `from`. False when neither can be.
    bool redirect(TensorIndex from, TensorIndex to, OpIndex remover)
    {
        if (!keep[std::size_t(from)]) {
            const auto list = readers[std::size_t(from)];
            for (auto o : std::set<OpIndex>(list.begin(), list.end()))
                for (std::size_t k = 0; k < g.ops[std::size_t(o)].inputs.size(); ++k)
                    if (g.ops[std::size_t(o)].inputs[k] == from)
                        setInput(o, k, to);
            return true;
        }
        const auto p = producer[std::size_t(to)];
        if (keep[std::size_t(to)] || p < 0 || tensor(to).kind != TensorKind::Activation || !g.ops[std::size_t(p)].captured.empty()
            || !g.ops[std::size_t(p)].domain.empty())
            return false;
        const auto list = readers[std::size_t(to)];
        for (auto o : std::set<OpIndex>(list.begin(), list.end()))
            if (o != remover)
                for (std::size_t k = 0; k < g.ops[std::size_t(o)].inputs.size(); ++k)
                    if (g.ops[std::size_t(o)].inputs[k] == to)
                        setInput(o, k, from);
        auto& writer = g.ops[std::size_t(p)];
        for (std::size_t k = 0; k < writer.outputs.size(); ++k)
            if (writer.outputs[k] == to)
                setOutput(p, k, from);
        return true;
    }

    Op transposeOp(const std::string& name, TensorIndex in, TensorIndex out, const std::vector<std::int64_t>& perm, const Op& near) const
    {
        Op t;
        t.name = name;
        t.type = "Transpose";
        t.inputs = { in };
        t.outputs = { out };
        t.attributes["perm"].ints = perm;
        t.attributes["perm"].list = true;
        t.phase = near.phase;
        t.module = near.module;
        return t;
    }

    // A tensor like `like` with its axes permuted: shape[i] = like.shape[perm[i]].
    TensorIndex permutedTensor(TensorIndex like, const std::vector<std::int64_t>& perm, const std::string& name)
    {
        Tensor t = tensor(like);
        t.name = name;
        t.kind = TensorKind::Activation;
        for (std::size_t i = 0; i < perm.size(); ++i)
            t.shape[i] = tensor(like).shape[std::size_t(perm[i])];
        return addTensor(std::move(t));
    }
};

struct Counts {
    int removed = 0, views = 0, cancelled = 0, merged = 0, pushed = 0, hoisted = 0, folded = 0;
    int total() const { return removed + views + cancelled + merged + pushed + hoisted + folded; }
};

// Identity, inference Dropout, Cast to its own type, views that keep the shape: readers read the input.
bool removeNoOps(Rewriter& w, Counts& counts, std::vector<std::string>& details)
{
    bool changed = false;
    for (const auto o : std::vector<OpIndex>(w.order)) {
        if (!w.plain(o))
            continue;
        const auto& op = w.g.ops[std::size_t(o)];
        if (op.inputs.empty() || op.outputs.empty())
            continue;
        const auto x = op.inputs[0], y = op.outputs[0];
        bool noOp = false;
        if (op.type == "Identity" || op.type == "Cast" || op.type == "CastLike" || isReshapeLike(op.type))
            noOp = op.outputs.size() == 1;
        else if (op.type == "Dropout" && (op.outputs.size() == 1 || (w.readers[std::size_t(op.outputs[1])].empty() && !w.keep[std::size_t(op.outputs[1])]))) {
            noOp = true; // without training_mode, or with a constant false one, Dropout copies its input
            for (std::size_t k = 0; k < op.inputs.size(); ++k)
                if (inputSlot(op, k) == 2) {
                    const auto& mode = w.tensor(op.inputs[k]);
                    noOp = mode.kind == TensorKind::Weight && !mode.values.empty()
                        && std::all_of(mode.values.begin(), mode.values.end(), [](std::int64_t v) { return v == 0; });
                }
        }
        if (!noOp || !sameLayout(w.tensor(x), w.tensor(y)))
            continue;
        const auto name = op.name, type = op.type;
        if (!w.redirect(y, x, o))
            continue;
        const bool renamed = w.keep[std::size_t(y)];
        w.kill(o);
        ++counts.removed;
        details.push_back(type + " " + name + ": removed (" + (renamed ? w.tensor(y).name + " is written where " + w.tensor(x).name + " was"
                                                                       : "its readers read " + w.tensor(x).name) + ")");
        changed = true;
    }
    return changed;
}

// A view of a view: one Reshape of the first view's input, or nothing when the shapes agree.
bool collapseViews(Rewriter& w, Counts& counts, std::vector<std::string>& details)
{
    bool changed = false;
    for (const auto o : std::vector<OpIndex>(w.order)) {
        if (!w.plain(o) || !isReshapeLike(w.g.ops[std::size_t(o)].type) || w.g.ops[std::size_t(o)].outputs.size() != 1
            || w.g.ops[std::size_t(o)].inputs.empty())
            continue;
        const auto mid = w.g.ops[std::size_t(o)].inputs[0];
        const auto p = w.producer[std::size_t(mid)];
        if (!w.plain(p) || !isReshapeLike(w.g.ops[std::size_t(p)].type) || w.g.ops[std::size_t(p)].outputs.size() != 1
            || w.g.ops[std::size_t(p)].inputs.empty())
            continue;
        const auto x = w.g.ops[std::size_t(p)].inputs[0], y = w.g.ops[std::size_t(o)].outputs[0];
        const Tensor out = w.tensor(y); // a copy: addTensor below may move the tensors
        if (w.tensor(x).dtype != out.dtype || out.size <= 0)
            continue;
        const auto first = w.g.ops[std::size_t(p)].name, second = w.g.ops[std::size_t(o)].name;
        if (sameLayout(w.tensor(x), out)) {
            if (!w.redirect(y, x, o))
                continue;
            w.kill(o);
            details.push_back("views " + first + " -> " + second + ": removed (" + out.name + " has " + w.tensor(x).name + "'s shape)");
        } else {
            Tensor shape;
            shape.name = second + "/shape";
            shape.dtype = DType::Int64;
            shape.shape = { std::int64_t(out.shape.size()) };
            shape.rankKnown = true;
            shape.size = 8 * std::int64_t(out.shape.size());
            shape.kind = TensorKind::Weight;
            shape.values = out.shape;
            const auto s = w.addTensor(std::move(shape));
            auto& op = w.g.ops[std::size_t(o)];
            for (auto t : op.inputs)
                w.dropRead(t, o);
            op.type = "Reshape";
            op.attributes.clear();
            op.inputs = { x, s };
            op.inputSlots.clear();
            w.readers[std::size_t(x)].push_back(o);
            w.readers[std::size_t(s)].push_back(o);
            details.push_back("views " + first + " -> " + second + ": one Reshape of " + w.tensor(x).name + " to "
                + tensorTypeText(out).substr(tensorTypeText(out).find(' ') + 1));
        }
        w.killIfUnread(p);
        ++counts.views;
        changed = true;
    }
    return changed;
}

// Transpose of a Transpose: nothing when the permutations cancel, else one Transpose.
bool transposePairs(Rewriter& w, Counts& counts, std::vector<std::string>& details)
{
    bool changed = false;
    for (const auto o : std::vector<OpIndex>(w.order)) {
        if (!w.plain(o) || w.g.ops[std::size_t(o)].type != "Transpose" || w.g.ops[std::size_t(o)].inputs.size() != 1
            || w.g.ops[std::size_t(o)].outputs.size() != 1)
            continue;
        const auto t = w.g.ops[std::size_t(o)].inputs[0];
        const auto p = w.transposeOf(t);
        if (p < 0)
            continue;
        const auto x = w.g.ops[std::size_t(p)].inputs[0], y = w.g.ops[std::size_t(o)].outputs[0];
        const auto rank = w.tensor(x).shape.size();
        const auto first = permOf(w.g.ops[std::size_t(p)], rank), second = permOf(w.g.ops[std::size_t(o)], rank);
        if (first.empty() || second.empty())
            continue;
        const auto composed = compose(first, second);
        const auto firstName = w.g.ops[std::size_t(p)].name, secondName = w.g.ops[std::size_t(o)].name;
        if (isIdentity(composed)) {
            if (!sameLayout(w.tensor(x), w.tensor(y)) || !w.redirect(y, x, o))
                continue;
            w.kill(o);
            ++counts.cancelled;
            details.push_back("Transposes " + firstName + " " + permText(first) + " -> " + secondName + " " + permText(second)
                + ": cancelled (readers of " + w.tensor(y).name + " read " + w.tensor(x).name + ")");
        } else {
            w.g.ops[std::size_t(o)].attributes["perm"].ints = composed;
            w.g.ops[std::size_t(o)].attributes["perm"].list = true;
            w.setInput(o, 0, x);
            ++counts.merged;
            details.push_back("Transposes " + firstName + " " + permText(first) + " -> " + secondName + " " + permText(second)
                + ": one Transpose " + permText(composed) + " of " + w.tensor(x).name);
        }
        w.killIfUnread(p);
        changed = true;
    }
    return changed;
}

// An elementwise op or Concat whose operands are all transposed the same way (an elementwise op's
// may also hold one element), each Transpose read by it alone: it reads the untransposed operands
// (a Concat along the axis that follows) and one Transpose follows it.
bool pushTransposes(Rewriter& w, Counts& counts, std::vector<std::string>& details)
{
    bool changed = false;
    for (const auto o : std::vector<OpIndex>(w.order)) {
        if (!w.plain(o) || w.g.ops[std::size_t(o)].outputs.size() != 1)
            continue;
        const auto y = w.g.ops[std::size_t(o)].outputs[0];
        const auto rank = w.tensor(y).shape.size();
        if (!passesTranspose(w.g.ops[std::size_t(o)], rank))
            continue;
        const auto axis = concatAxis(w.g.ops[std::size_t(o)], rank);
        std::vector<std::int64_t> perm;
        std::vector<OpIndex> transposes(w.g.ops[std::size_t(o)].inputs.size(), -1);
        bool ok = true;
        for (std::size_t k = 0; k < transposes.size() && ok; ++k) {
            const auto in = w.g.ops[std::size_t(o)].inputs[k];
            if (axis < 0 && holdsOne(w.tensor(in)))
                continue;
            const auto p = w.transposeOf(in);
            const auto pp = p >= 0 ? permOf(w.g.ops[std::size_t(p)], rank) : std::vector<std::int64_t> {};
            ok = p >= 0 && !pp.empty() && w.tensor(in).shape.size() == rank && w.onlyReader(in, o) && !w.keep[std::size_t(in)]
                && (perm.empty() || perm == pp);
            perm = pp;
            transposes[k] = p;
        }
        if (!ok || perm.empty())
            continue;
        // Only where it can pay: it removes Transposes (two operands or more), or the Transpose it
        // moves below meets another one there, or goes on down a chain of ops it passes.
        const auto transposed = std::count_if(transposes.begin(), transposes.end(), [](OpIndex p) { return p >= 0; });
        const auto& readersOfY = w.readers[std::size_t(y)];
        const bool pays = transposed >= 2 || std::any_of(readersOfY.begin(), readersOfY.end(), [&](OpIndex r) {
            const auto& reader = w.g.ops[std::size_t(r)];
            return reader.type == "Transpose" || (readersOfY.size() == 1 && passesTranspose(reader, rank));
        });
        if (!pays)
            continue;
        // y'[perm[i]] = y[i]: the untransposed result, which the new Transpose turns into y.
        auto inverse = perm;
        for (std::size_t i = 0; i < rank; ++i)
            inverse[std::size_t(perm[i])] = std::int64_t(i);
        const auto untransposed = w.permutedTensor(y, inverse, w.tensor(y).name + "/untransposed");
        std::set<OpIndex> gone;
        std::string names;
        for (std::size_t k = 0; k < transposes.size(); ++k)
            if (transposes[k] >= 0) {
                w.setInput(o, k, w.g.ops[std::size_t(transposes[k])].inputs[0]);
                if (gone.insert(transposes[k]).second)
                    names += (names.empty() ? "" : ", ") + w.g.ops[std::size_t(transposes[k])].name;
            }
        for (auto p : gone)
            w.killIfUnread(p);
        w.setOutput(o, 0, untransposed);
        if (axis >= 0)
            setConcatAxis(w.g.ops[std::size_t(o)], perm[std::size_t(axis)]); // the output's axis a is the untransposed one's perm[a]
        const auto& op = w.g.ops[std::size_t(o)];
        w.addOp(w.transposeOp(op.name + "/transpose", untransposed, y, perm, op), w.position(o) + 1);
        ++counts.pushed;
        details.push_back("Transpose " + names + " " + permText(perm) + ": moved below " + w.g.ops[std::size_t(o)].type + " "
            + w.g.ops[std::size_t(o)].name);
        changed = true;
    }
    return changed;
}

// An elementwise op or Concat read only by a Transpose: it reads its operands transposed instead (an
// operand already transposed by the inverse reads the untransposed one) and writes the Transpose's
// output; only when that removes more Transposes than it adds.
bool hoistTransposes(Rewriter& w, Counts& counts, std::vector<std::string>& details)
{
    bool changed = false;
    for (const auto o : std::vector<OpIndex>(w.order)) {
        if (!w.plain(o) || w.g.ops[std::size_t(o)].outputs.size() != 1)
            continue;
        const auto y = w.g.ops[std::size_t(o)].outputs[0];
        if (w.keep[std::size_t(y)] || w.readers[std::size_t(y)].empty() || !passesTranspose(w.g.ops[std::size_t(o)], w.tensor(y).shape.size()))
            continue;
        const auto t = w.readers[std::size_t(y)][0];
        if (!w.onlyReader(y, t) || !w.plain(t) || w.g.ops[std::size_t(t)].type != "Transpose" || w.g.ops[std::size_t(t)].outputs.size() != 1)
            continue;
        const auto rank = w.tensor(y).shape.size();
        const auto perm = permOf(w.g.ops[std::size_t(t)], rank);
        if (perm.empty())
            continue;
        const auto& op = w.g.ops[std::size_t(o)];
        const auto axis = concatAxis(op, rank);
        std::set<TensorIndex> added;
        std::set<OpIndex> cancelled;
        bool ok = true;
        for (auto in : op.inputs) {
            if (axis < 0 && holdsOne(w.tensor(in)))
                continue;
            if (w.tensor(in).shape.size() != rank) {
                ok = false;
                break;
            }
            const auto p = w.transposeOf(in);
            if (p >= 0 && isIdentity(compose(permOf(w.g.ops[std::size_t(p)], rank), perm))) {
                if (w.onlyReader(in, o) && !w.keep[std::size_t(in)])
                    cancelled.insert(p);
            } else {
                added.insert(in);
            }
        }
        if (!ok || added.size() >= 1 + cancelled.size())
            continue;
        const auto z = w.g.ops[std::size_t(t)].outputs[0];
        const auto tName = w.g.ops[std::size_t(t)].name;
        std::map<TensorIndex, TensorIndex> replacement;
        for (std::size_t k = 0; k < w.g.ops[std::size_t(o)].inputs.size(); ++k) {
            const auto in = w.g.ops[std::size_t(o)].inputs[k];
            if (axis < 0 && holdsOne(w.tensor(in)))
                continue;
            if (!replacement.count(in)) {
                const auto p = w.transposeOf(in);
                if (!added.count(in)) {
                    replacement[in] = w.g.ops[std::size_t(p)].inputs[0];
                } else {
                    const auto moved = w.permutedTensor(in, perm, w.tensor(in).name + "/transposed");
                    const auto opCopy = w.g.ops[std::size_t(o)];
                    w.addOp(w.transposeOp(opCopy.name + "/transpose_in", in, moved, perm, opCopy), w.position(o));
                    replacement[in] = moved;
                }
            }
            w.setInput(o, k, replacement[in]);
        }
        for (const auto& [in, to] : replacement)
            if (const auto p = w.transposeOf(in); p >= 0 && !added.count(in))
                w.killIfUnread(p);
        w.kill(t);
        w.setOutput(o, 0, z);
        if (axis >= 0) // z = Transpose(y, perm): y's axis a is z's axis i where perm[i] = a
            setConcatAxis(w.g.ops[std::size_t(o)], std::find(perm.begin(), perm.end(), axis) - perm.begin());
        ++counts.hoisted;
        details.push_back("Transpose " + tName + " " + permText(perm) + ": moved above " + w.g.ops[std::size_t(o)].type + " "
            + w.g.ops[std::size_t(o)].name + " (" + std::to_string(cancelled.size()) + " inverse Transpose" + (cancelled.size() == 1 ? "" : "s")
            + " cancelled, " + std::to_string(added.size()) + " added)");
        changed = true;
    }
    return changed;
}

// Ops whose inputs are all weights write weights: their outputs leave the arena, as a runtime folds them at load.
void foldConstants(Rewriter& w, Counts& counts, std::vector<std::string>& details)
{
    for (const auto o : w.order) {
        const auto& op = w.g.ops[std::size_t(o)];
        if (!w.plain(o) || !foldable(op.type) || op.inputs.empty() || op.outputs.empty())
            continue;
        const auto weight = [&](TensorIndex t) { return w.tensor(t).kind == TensorKind::Weight; };
        const auto foldsOut = [&](TensorIndex t) { return w.tensor(t).kind == TensorKind::Activation && !w.keep[std::size_t(t)] && w.tensor(t).size > 0; };
        if (!std::all_of(op.inputs.begin(), op.inputs.end(), weight) || !std::all_of(op.outputs.begin(), op.outputs.end(), foldsOut))
            continue;
        Bytes bytes = 0;
        for (auto t : op.outputs) {
            w.g.tensors[std::size_t(t)].kind = TensorKind::Weight;
            bytes += w.tensor(t).size;
        }
        ++counts.folded;
        details.push_back(op.type + " " + op.name + ": reads only weights, folded into a constant (" + formatBytes(bytes)
            + " leave the arena for the weights region)");
    }
}

std::string countsLine(const Counts& c)
{
    std::vector<std::string> parts;
    const auto add = [&](int n, const std::string& what) {
        if (n > 0)
            parts.push_back(std::to_string(n) + " " + what);
    };
    add(c.removed, c.removed == 1 ? "no-op removed (Identity, Dropout, Cast, view)" : "no-ops removed (Identity, Dropout, Cast, views)");
    add(c.views, c.views == 1 ? "view chain collapsed" : "view chains collapsed");
    add(c.cancelled, c.cancelled == 1 ? "Transpose pair cancelled" : "Transpose pairs cancelled");
    add(c.merged, c.merged == 1 ? "Transpose pair merged" : "Transpose pairs merged");
    add(c.pushed, c.pushed == 1 ? "Transpose moved below an elementwise op" : "Transposes moved below elementwise ops");
    add(c.hoisted, c.hoisted == 1 ? "Transpose moved above an elementwise op" : "Transposes moved above elementwise ops");
    add(c.folded, c.folded == 1 ? "op folded into a constant" : "ops folded into constants");
    std::string line = std::to_string(c.total()) + (c.total() == 1 ? " rewrite: " : " rewrites: ");
    for (std::size_t i = 0; i < parts.size(); ++i)
        line += (i ? ", " : "") + parts[i];
    return line;
}

// The rewritten graph without the removed ops, and without the tensors only they wrote or read.
std::pair<Graph, Schedule> compact(const Rewriter& w, const Graph& before)
{
    std::vector<bool> usedBefore(before.tensors.size(), false);
    for (const auto& op : before.ops)
        for (const auto* list : { &op.inputs, &op.outputs, &op.captured })
            for (auto t : *list)
                usedBefore[std::size_t(t)] = true;
    std::vector<bool> used(w.g.tensors.size(), false);
    for (auto o : w.order)
        for (const auto* list : { &w.g.ops[std::size_t(o)].inputs, &w.g.ops[std::size_t(o)].outputs, &w.g.ops[std::size_t(o)].captured })
            for (auto t : *list)
                used[std::size_t(t)] = true;
    for (const auto* list : { &w.g.inputs, &w.g.outputs })
        for (auto t : *list)
            used[std::size_t(t)] = true;
    for (std::size_t t = 0; t < before.tensors.size(); ++t)
        if (!usedBefore[t])
            used[t] = true; // what the model itself leaves unread stays
    Graph out;
    out.name = w.g.name;
    out.notes = w.g.notes;
    out.opsets = w.g.opsets;
    out.capture = w.g.capture;
    std::vector<TensorIndex> index(w.g.tensors.size(), -1);
    for (std::size_t t = 0; t < w.g.tensors.size(); ++t)
        if (used[t]) {
            index[t] = TensorIndex(out.tensors.size());
            out.tensors.push_back(w.g.tensors[t]);
        }
    const auto renumber = [&](std::vector<TensorIndex>& list) {
        for (auto& t : list)
            t = index[std::size_t(t)];
    };
    Schedule schedule;
    for (auto o : w.order) {
        auto op = w.g.ops[std::size_t(o)];
        renumber(op.inputs);
        renumber(op.outputs);
        renumber(op.captured);
        schedule.order.push_back(OpIndex(out.ops.size()));
        out.ops.push_back(std::move(op));
    }
    out.inputs = w.g.inputs;
    out.outputs = w.g.outputs;
    renumber(out.inputs);
    renumber(out.outputs);
    return { std::move(out), std::move(schedule) };
}

} // namespace

Expected<Transformed> SimplifyStrategy::apply(Transformed state, const StrategyOptions&) const
{
    for (std::size_t t = 0; t < state.graph.tensors.size(); ++t)
        if (state.origin[t] != TensorIndex(t) || state.sharesWith[t] != TensorIndex(t) || state.onHost[t])
            return makeError(ErrorCode::InvalidArgument, "simplify runs first, on the model as loaded");
    StrategyReport report;
    report.name = std::string(name());
    Graph graph = state.graph;
    Rewriter w(graph, state.schedule);
    Counts counts;
    std::vector<std::string> details;
    // Each pass only removes ops or moves a Transpose below an op it passes (hoisting removes one
    // more than it adds), so the rounds end; the bound is a guard.
    for (int round = 0; round < 64; ++round) {
        bool changed = removeNoOps(w, counts, details);
        changed |= collapseViews(w, counts, details);
        changed |= transposePairs(w, counts, details);
        changed |= pushTransposes(w, counts, details);
        changed |= hoistTransposes(w, counts, details);
        if (!changed)
            break;
    }
    // A training step updates its weights: what is computed from them is not a constant there.
    if (backwardStart(state.graph, state.schedule) >= state.schedule.steps())
        foldConstants(w, counts, details);
    if (counts.total() == 0) {
        report.details.push_back("nothing to simplify");
        state.reports.push_back(std::move(report));
        return state;
    }
    auto [simplified, schedule] = compact(w, state.graph);
    if (!isTopological(simplified, schedule))
        return makeError(ErrorCode::InvalidModel, "simplify left a schedule that is not topological");
    auto next = startTransform(std::move(simplified), std::move(schedule));
    next.reports = std::move(state.reports);
    next.fusedOps = std::move(state.fusedOps);
    report.details.push_back(countsLine(counts));
    report.details.insert(report.details.end(), details.begin(), details.end());
    next.reports.push_back(std::move(report));
    return next;
}

} // namespace core
