// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to gpu/: device ops Pad, Resize (and Upsample), the Reduce* family, GlobalMaxPool and GridSample (4-D), added to the op table of
// ops.cpp. Shape arguments (pads, scales, axes, Pad's constant) must be weights
// with a host copy (DeviceCall::hostContents); computed ones leave the op to the host.

#include "ops.h"

#include <map>

namespace gpu {

void addResampleKernels(std::map<std::string, DeviceKernel>& table);

} // namespace gpu
