// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "buffercolors.h"

#include "graph/capture.h"
#include "io/breakdown.h"
#include "palette.h"

#include <algorithm>
#include <map>

namespace {
const core::Tensor* bufferTensor(const core::Workload& workload, int buffer)
{
    if (!workload.graph || buffer < 0 || buffer >= static_cast<int>(workload.bufferTensor.size()))
        return nullptr;
    const core::TensorIndex t = workload.bufferTensor[static_cast<std::size_t>(buffer)];
    return t >= 0 ? &workload.graph->tensors[static_cast<std::size_t>(t)] : nullptr;
}

QString qstr(const std::string& s) { return QString::fromStdString(s); }
} // namespace

int bufferCategorySlot(const core::Workload& workload, int buffer)
{
    const core::Tensor* tensor = bufferTensor(workload, buffer);
    const auto category = tensor ? core::tensorCategory(*tensor) : std::nullopt;
    return category ? static_cast<int>(*category) : core::kOtherSlot;
}

QString bufferModule(const core::Workload& workload, int buffer)
{
    if (const auto& recorded = workload.recorded; recorded && buffer >= 0 && static_cast<std::size_t>(buffer) < recorded->site.size()) {
        const int site = recorded->site[static_cast<std::size_t>(buffer)];
        return site >= 0 && static_cast<std::size_t>(site) < recorded->siteNames.size() ? qstr(recorded->siteNames[static_cast<std::size_t>(site)])
                                                                                         : QString();
    }
    if (const core::Tensor* tensor = bufferTensor(workload, buffer))
        return qstr(tensor->module);
    if (workload.graph && buffer >= 0 && buffer < static_cast<int>(workload.bufferOp.size()))
        if (const core::OpIndex op = workload.bufferOp[static_cast<std::size_t>(buffer)]; op >= 0)
            return qstr(workload.graph->ops[static_cast<std::size_t>(op)].module);
    return {};
}

QColor bufferColor(const core::Workload& workload, int buffer, BufferColoring how)
{
    switch (how) {
    case BufferColoring::Category:
        return ViewPalette::categoryColor(bufferCategorySlot(workload, buffer));
    case BufferColoring::Module:
        if (workload.recorded) // a site names one place in the code: no module path to cut
            return ViewPalette::nameColor(bufferModule(workload, buffer).toStdString());
        return ViewPalette::moduleColor(bufferModule(workload, buffer).toStdString());
    case BufferColoring::Kind:
        break;
    }
    return ViewPalette::kindColor(workload.problem.buffers[static_cast<std::size_t>(buffer)].kind);
}

std::vector<LegendSwatch> bufferLegend(const core::Workload& workload, BufferColoring how)
{
    std::vector<LegendSwatch> swatches;
    const int n = static_cast<int>(workload.problem.buffers.size());
    if (how == BufferColoring::Kind) {
        int count[core::kKindCount] = {};
        for (const auto& b : workload.problem.buffers)
            ++count[static_cast<int>(b.kind)];
        const core::TensorKind order[] = { core::TensorKind::Input, core::TensorKind::Activation, core::TensorKind::Output,
            core::TensorKind::Weight, core::TensorKind::Persistent, core::TensorKind::Workspace };
        for (const auto kind : order)
            if (count[static_cast<int>(kind)] > 0) {
                const auto name = core::kindName(kind);
                swatches.push_back({ ViewPalette::kindColor(kind), QString::fromUtf8(name.data(), static_cast<int>(name.size())),
                    count[static_cast<int>(kind)] });
            }
        return swatches;
    }
    if (how == BufferColoring::Category) {
        int count[core::kBreakdownSlots] = {};
        for (int b = 0; b < n; ++b)
            ++count[bufferCategorySlot(workload, b)];
        for (int slot = 0; slot < core::kBreakdownSlots; ++slot)
            if (count[slot] > 0) {
                const auto name = core::breakdownSlotName(slot);
                swatches.push_back({ ViewPalette::categoryColor(slot), QString::fromUtf8(name.data(), static_cast<int>(name.size())),
                    count[slot] });
            }
        return swatches;
    }
    const bool sites = workload.recorded.has_value();
    std::map<QString, int> modules; // top-level module (or allocation site) -> buffers
    for (int b = 0; b < n; ++b) {
        const QString module = bufferModule(workload, b);
        ++modules[sites ? module : module.section(QLatin1Char('.'), 0, 0)];
    }
    for (const auto& [module, count] : modules)
        swatches.push_back({ sites ? ViewPalette::nameColor(module.toStdString()) : ViewPalette::moduleColor(module.toStdString()),
            module.isEmpty() ? (sites ? QStringLiteral("(no frames)") : QStringLiteral("(top level)")) : module, count });
    std::stable_sort(swatches.begin(), swatches.end(), [](const LegendSwatch& a, const LegendSwatch& b) { return a.count > b.count; });
    return swatches;
}
