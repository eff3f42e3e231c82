// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "peerprofile.h"

#include <algorithm>

core::Expected<std::shared_ptr<const PeerProfile>> layPeerProfile(
    std::shared_ptr<const core::OrtProfile> profile, const QString& file, std::shared_ptr<const core::Workload> workload)
{
    if (!profile || !workload)
        return core::makeError(core::ErrorCode::InvalidArgument, "no profile or no model to lay it over");
    auto overlay = core::overlayOrtProfile(*profile, *workload);
    if (!overlay)
        return overlay.error();
    if (overlay->mapped == 0)
        return core::makeError(core::ErrorCode::InvalidModel,
            file.toStdString() + ": none of its " + std::to_string(profile->nodes.size()) + " nodes is an op of " + workload->source
                + ": a profile of another model?");
    auto peer = std::make_shared<PeerProfile>();
    peer->file = file;
    peer->profile = std::move(profile);
    peer->workload = std::move(workload);
    peer->overlay = std::move(*overlay);
    if (peer->profile->hasMemory) {
        core::Bytes inUse = 0, held = 0;
        for (const auto& s : peer->overlay.steps) {
            if (s.inUse >= 0)
                inUse = s.inUse;
            if (s.arenaHeld >= 0)
                held = s.arenaHeld;
            peer->inUse.push_back(inUse);
            peer->arenaHeld.push_back(held);
        }
        peer->peakInUse = std::max<core::Bytes>(0, peer->profile->peak(&core::OrtNodeEvent::inUse));
        peer->peakHeld = std::max<core::Bytes>(0, peer->profile->peak(&core::OrtNodeEvent::arenaHeld));
    }
    return std::shared_ptr<const PeerProfile>(std::move(peer));
}
