// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "comparedtrace.h"

#include "trace/diffside.h"

core::Expected<std::shared_ptr<const ComparedTrace>> compareTraces(
    const QString& file, std::shared_ptr<const core::Workload> workload, const core::Planner& planner)
{
    if (!workload)
        return core::makeError(core::ErrorCode::InvalidArgument, "nothing on display to compare with");
    auto here = workload->recorded ? core::loadDiffSide(workload->source, std::nullopt, planner) : core::plannedSide(*workload, planner);
    if (!here)
        return here.error();
    auto other = core::loadDiffSide(file.toStdString(), std::nullopt, planner);
    if (!other)
        return other.error();
    auto compared = std::make_shared<ComparedTrace>();
    compared->file = file;
    compared->workload = std::move(workload);
    compared->diff = core::diffTraces(std::move(*other), std::move(*here));
    return std::shared_ptr<const ComparedTrace>(std::move(compared));
}
