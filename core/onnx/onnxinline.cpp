// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "onnx/onnxinline.h"

#include "onnx/onnxload.h"

#include <algorithm>
#include <deque>

#include <unordered_map>
#include <unordered_set>

namespace core::onnxdetail {

namespace {

using Renames = std::unordered_map<std::string, std::string>;

bool isDefaultDomain(const onnx::NodeProto& node) { return node.domain().empty() || node.domain() == "ai.onnx"; }

// Every name `g` and the graphs nested in it use for a value or a node.
void collectNames(const onnx::GraphProto& g, std::unordered_set<std::string>& names)
{
    for (const auto* list : { &g.input(), &g.output(), &g.value_info() })
        for (const auto& vi : *list)
            names.insert(vi.name());
    for (const auto& t : g.initializer())
        names.insert(t.name());
    for (const auto& s : g.sparse_initializer())
        names.insert(s.values().name());
    for (const auto& node : g.node()) {
        names.insert(node.name());
        names.insert(node.input().begin(), node.input().end());
        names.insert(node.output().begin(), node.output().end());
        for (const auto& a : node.attribute()) {
            if (a.has_g())
                collectNames(a.g(), names);
            for (const auto& sub : a.graphs())
                collectNames(sub, names);
        }
    }
}

void rename(std::string* name, const Renames& renames)
{
    if (const auto it = renames.find(*name); it != renames.end())
        *name = it->second;
}

// Applies `renames` to every value name of `g` and of the graphs nested in it. ONNX forbids a nested
// graph to define a name of its scope again, so a name there that matches is a use of the value.
void renameIn(onnx::GraphProto& g, const Renames& renames)
{
    for (auto* list : { g.mutable_input(), g.mutable_output(), g.mutable_value_info() })
        for (auto& vi : *list)
            rename(vi.mutable_name(), renames);
    for (auto& t : *g.mutable_initializer())
        rename(t.mutable_name(), renames);
    for (auto& s : *g.mutable_sparse_initializer())
        rename(s.mutable_values()->mutable_name(), renames);
    for (auto& node : *g.mutable_node()) {
        for (auto& in : *node.mutable_input())
            rename(&in, renames);
        for (auto& out : *node.mutable_output())
            rename(&out, renames);
        for (auto& a : *node.mutable_attribute()) {
            if (a.has_g())
                renameIn(*a.mutable_g(), renames);
            for (auto& sub : *a.mutable_graphs())
                renameIn(sub, renames);
        }
    }
}

const onnx::AttributeProto* branchOf(const onnx::NodeProto& node, bool thenBranch)
{
    for (const auto& a : node.attribute())
        if (a.name() == (thenBranch ? "then_branch" : "else_branch") && a.has_g())
            return &a;
    return nullptr;
}

} // namespace

void nameNodes(onnx::GraphProto& graph)
{
    for (int i = 0; i < graph.node_size(); ++i)
        if (graph.node(i).name().empty())
            graph.mutable_node(i)->set_name(opNameOf(graph.node(i), i));
}

bool inlineIf(onnx::ModelProto& model, const std::string& name, bool thenBranch,
    google::protobuf::RepeatedPtrField<onnx::TensorProto>& initializers)
{
    auto* g = model.mutable_graph();
    int at = -1;
    for (int i = 0; i < g->node_size() && at < 0; ++i)
        if (g->node(i).op_type() == "If" && isDefaultDomain(g->node(i)) && g->node(i).name() == name)
            at = i;
    if (at < 0)
        return false;
    const auto& node = g->node(at);
    const auto* attribute = branchOf(node, thenBranch);
    if (!attribute || attribute->g().output_size() != node.output_size())
        return false;
    onnx::GraphProto branch = attribute->g();

    std::unordered_set<std::string> defined, computed;
    for (const auto& t : branch.initializer())
        defined.insert(t.name());
    for (const auto& s : branch.sparse_initializer())
        defined.insert(s.values().name());
    for (const auto& n : branch.node())
        for (const auto& out : n.output())
            if (!out.empty()) {
                defined.insert(out);
                computed.insert(out);
            }

    std::unordered_set<std::string> used;
    collectNames(*g, used);
    for (const auto& t : initializers)
        used.insert(t.name());
    std::string prefix = name + "/";
    const auto clashes = [&](const std::string& p) {
        if (used.count(p))
            return true;
        for (const auto& d : defined)
            if (used.count(p + d))
                return true;
        for (const auto& n : branch.node())
            if (used.count(p + n.name()))
                return true;
        return false;
    };
    for (int k = 2; clashes(prefix); ++k)
        prefix = name + "_" + std::to_string(k) + "/";

    // A branch output a branch node computes takes the If output's name; any other (read from
    // outside, an initializer, an output listed twice) is copied into it by an Identity.
    Renames renames;
    std::vector<std::pair<std::string, std::string>> copies; // (source in the branch, If output)
    for (int k = 0; k < node.output_size(); ++k) {
        const std::string& source = branch.output(k).name();
        const std::string& target = node.output(k);
        if (target.empty())
            continue;
        if (computed.count(source) && !renames.count(source))
            renames[source] = target;
        else
            copies.emplace_back(source, target);
    }
    for (const auto& d : defined)
        renames.emplace(d, prefix + d);
    renameIn(branch, renames);
    for (int j = 0; j < branch.node_size(); ++j) {
        auto* n = branch.mutable_node(j);
        n->set_name(prefix + (n->name().empty() ? n->op_type() + "_" + std::to_string(j) : n->name()));
    }

    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i = 0; i < g->node_size(); ++i) {
        if (i != at) {
            nodes.Add()->Swap(g->mutable_node(i));
            continue;
        }
        for (auto& n : *branch.mutable_node())
            nodes.Add()->Swap(&n);
        for (const auto& [source, target] : copies) {
            auto* copy = nodes.Add();
            copy->set_op_type("Identity");
            copy->set_name(prefix + "Identity_" + target);
            const auto it = renames.find(source);
            copy->add_input(it != renames.end() ? it->second : source);
            copy->add_output(target);
        }
    }
    g->mutable_node()->Swap(&nodes);

    for (auto& t : *branch.mutable_initializer())
        initializers.Add()->Swap(&t);
    for (auto& s : *branch.mutable_sparse_initializer())
        g->add_sparse_initializer()->Swap(&s);
    std::unordered_set<std::string> declared;
    for (const auto* list : { &g->output(), &g->value_info() })
        for (const auto& vi : *list)
            declared.insert(vi.name());
    for (auto& vi : *branch.mutable_value_info())
        if (declared.insert(vi.name()).second)
            g->add_value_info()->Swap(&vi);
    return true;
}

std::vector<KnownIf> knownIfs(const onnx::GraphProto& graph, const std::unordered_map<std::string, ValueFacts>& facts)
{
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < graph.node_size(); ++i)
        for (const auto& out : graph.node(i).output())
            producer.emplace(out, i);
    std::unordered_set<std::string> inputs;
    for (const auto& vi : graph.input())
        inputs.insert(vi.name());
    std::vector<KnownIf> known;
    for (const auto& node : graph.node()) {
        if (node.op_type() != "If" || !isDefaultDomain(node) || node.input_size() < 1 || node.name().empty())
            continue;
        const auto f = facts.find(node.input(0));
        if (f == facts.end() || !f->second.value || f->second.value->count() != 1 || f->second.estimated)
            continue;
        KnownIf k { node.name(), f->second.value->real(0) != 0, {} };
        if (f->second.value->given) { // the graph inputs it was computed from
            std::deque<std::string> open { node.input(0) };
            std::unordered_set<std::string> seen { node.input(0) };
            while (!open.empty()) {
                const std::string name = open.front();
                open.pop_front();
                const auto g = facts.find(name);
                if (inputs.count(name) && g != facts.end() && g->second.value && g->second.value->given)
                    k.given.push_back(name);
                if (const auto p = producer.find(name); p != producer.end())
                    for (const auto& in : graph.node(p->second).input())
                        if (!in.empty() && seen.insert(in).second)
                            open.push_back(in);
            }
            std::sort(k.given.begin(), k.given.end());
        }
        known.push_back(std::move(k));
    }
    return known;
}

Status reinlineIfs(onnx::ModelProto& model, const Graph& graph, const std::string& file)
{
    if (graph.inlinedIfs.empty())
        return {};
    nameNodes(*model.mutable_graph());
    for (const auto& inlined : graph.inlinedIfs)
        if (!inlineIf(model, inlined.op, inlined.thenBranch, *model.mutable_graph()->mutable_initializer()))
            return makeError(ErrorCode::InvalidModel,
                file + ": If '" + inlined.op + "', which import replaced by its "
                    + (inlined.thenBranch ? "then" : "else") + "-branch, is not in the model (did the file change since it was imported?)");
    return {};
}

} // namespace core::onnxdetail
