// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "nestedgraphs.h"

namespace {

void collect(const std::vector<core::NestedPlan>& plans, const core::PlanProblem& around, int parent,
    std::vector<NestedGraph>& out)
{
    for (const auto& plan : plans) {
        NestedGraph graph;
        graph.plan = &plan;
        graph.parent = parent;
        graph.reservation = reservationOf(around, plan);
        const QString here = QString::fromStdString(plan.op) + QStringLiteral(" / ") + QString::fromStdString(plan.body);
        if (parent < 0) {
            graph.path = here;
            graph.outerBuffer = graph.reservation;
        } else {
            const NestedGraph& up = out[static_cast<std::size_t>(parent)];
            graph.depth = up.depth + 1;
            graph.path = up.path + QStringLiteral(" / ") + here;
            graph.outerBuffer = up.outerBuffer;
            const auto& offsets = up.plan->plan.offsets;
            if (graph.reservation >= 0 && static_cast<std::size_t>(graph.reservation) < offsets.size())
                graph.baseInOuter = up.baseInOuter + offsets[static_cast<std::size_t>(graph.reservation)];
            else
                graph.baseInOuter = up.baseInOuter;
        }
        out.push_back(graph);
        const int self = static_cast<int>(out.size()) - 1;
        collect(plan.built.nested, plan.built.problem, self, out);
    }
}

} // namespace

int reservationOf(const core::PlanProblem& problem, const core::NestedPlan& plan)
{
    // makeProblem names it "<op> body", a workspace at the op's step (core/liveness/lifetimes.h).
    const std::string name = plan.op + " body";
    for (std::size_t b = 0; b < problem.buffers.size(); ++b) {
        const auto& buffer = problem.buffers[b];
        if (buffer.kind == core::TensorKind::Workspace && buffer.lifetime.start == plan.step && buffer.name == name)
            return static_cast<int>(b);
    }
    return -1;
}

std::vector<NestedGraph> nestedGraphs(const core::Workload& workload)
{
    std::vector<NestedGraph> graphs;
    collect(workload.nested, workload.problem, -1, graphs);
    return graphs;
}
