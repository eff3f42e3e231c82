// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "planners/planner.h"
#include "trace/ortprofile.h"
#include "trace/tracereport.h"

#include <string>
#include <vector>

namespace core {

// MemPlan's plan of the model a profile ran: the workload's lower bound and `planner`'s plan,
// checked by the independent validator (an invalid plan is an error, never reported).
Expected<TraceReplan> planForProfile(const Workload& workload, const Planner& planner);

// What a profile laid over a model's plan says. `workload`, `overlay` and `plan` are all given
// (`memplan trace PROFILE --model MODEL`) or all null (the profile alone: its peaks, kernel time by op
// type, session times).
struct OrtComparison {
    const Workload* workload = nullptr;
    const OrtOverlay* overlay = nullptr;
    const TraceReplan* plan = nullptr;
};

// The profile's notes, and what a flat in-use curve means: ONNX Runtime with a memory pattern
// (enableMemPattern, on by default) allocates one block for the whole run from the second run on;
// `firstRunHint` is appended to that note when the pass shown is not the first.
std::vector<std::string> ortProfileNotes(const OrtProfile& profile, const std::string& firstRunHint = {});

// The `memplan trace PROFILE.json [--model MODEL]` report: ORT's peaks of bytes in use, requested and
// arena held with the node (and step) at each, kernel time; with a model, MemPlan's lower bound and
// planned arena, their ratios to ORT's peaks, mapped and unmapped counts, and the `top` steps with
// the largest gap between ORT's bytes in use and MemPlan's live bytes.
std::string formatOrtReport(const OrtProfile& profile, const OrtComparison& with = {}, int top = 10);
// The same as JSON with exact bytes and, with a model, every step (docs/FILE_FORMATS.md).
std::string ortReportJson(const OrtProfile& profile, const OrtComparison& with = {}, int top = 10);

} // namespace core
