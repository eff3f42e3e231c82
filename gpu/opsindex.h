// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to gpu/: device ops ArgMax, ArgMin, CumSum, Trilu, GatherElements, ScatterElements, GatherND, ScatterND,
// TopK, Hardmax, OneHot, And, Or and Xor, added to the op table of ops.cpp. CumSum's axis, Trilu's
// k, TopK's k and OneHot's depth must be weights with a host copy (DeviceCall::hostContents); computed ones leave the op to the host.

#include "ops.h"

#include <map>

namespace gpu {

void addIndexKernels(std::map<std::string, DeviceKernel>& table);

} // namespace gpu
