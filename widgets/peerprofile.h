// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "io/workload.h"
#include "trace/ortprofile.h"

#include <QString>

#include <memory>
#include <vector>

// What a peer runtime measured for the model on display (an ONNX Runtime profile), laid over one
// workload's schedule: the per-step records (core::OrtOverlay) and the two curves the memory curve
// draws. Plain value, made on any thread; PlanDocument shows it only over the workload it was laid
// over, and MainWindow lays the same profile again over each new workload of the same model.
struct PeerProfile {
    QString file;
    std::shared_ptr<const core::OrtProfile> profile;
    std::shared_ptr<const core::Workload> workload; // what `overlay` indexes
    core::OrtOverlay overlay;
    // Per step of `workload`: the arena's bytes in use and held after the step's ORT node, carried
    // over from the step before where no node ran the step (fused away) and 0 before the first
    // node. Empty when the profile has no memory numbers (ONNX Runtime before 1.17, arena off).
    std::vector<core::Bytes> inUse, arenaHeld;
    core::Bytes peakInUse = 0, peakHeld = 0; // of the whole pass, unmapped nodes included
};

// Lays `profile` over `workload` (a graph workload of the model the profile ran). Fails when the
// workload has no graph or no node of the profile maps onto its ops.
core::Expected<std::shared_ptr<const PeerProfile>> layPeerProfile(
    std::shared_ptr<const core::OrtProfile> profile, const QString& file, std::shared_ptr<const core::Workload> workload);
