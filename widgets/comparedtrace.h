// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"
#include "planners/planner.h"
#include "trace/tracediff.h"

#include <QString>

#include <memory>

// Another snapshot or model set beside the workload on display (File > Compare With…): the diff of
// the other file (side A) against the workload on display (side B), so the common axis is the
// display's own steps (core::diffTraces). Plain value, made on any thread; PlanDocument shows it only
// over the workload it was made for.
struct ComparedTrace {
    QString file;                                   // the other side
    std::shared_ptr<const core::Workload> workload; // the display's side
    core::TraceDiff diff;                           // a = the other file, b = the workload on display
};

// Loads `file` (a snapshot, or anything the Studio opens, planned by `planner`) and diffs it against
// `workload`: a snapshot on display is measured again from its file (its frames are not kept in the
// workload), a model's workload is planned by `planner` as it is (strategies included). Errors name
// the file that failed.
core::Expected<std::shared_ptr<const ComparedTrace>> compareTraces(
    const QString& file, std::shared_ptr<const core::Workload> workload, const core::Planner& planner);
