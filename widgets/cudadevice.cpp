// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "cudadevice.h"

#include "exec/backend.h"

namespace {

CudaDeviceStatus probe()
{
    CudaDeviceStatus status;
    std::string why;
    const auto backend = core::executorBackend("cuda"); // loads the CUDA executor plugin, when there is one
    if (!backend)
        why = backend.error().message;
    else if ((*backend)->available(&why)) {
        status.available = true;
        status.description = QString::fromStdString((*backend)->description());
        return status;
    }
    status.reason = QString::fromStdString(why);
    return status;
}

} // namespace

const CudaDeviceStatus& cudaDeviceStatus()
{
    static const CudaDeviceStatus status = probe(); // thread-safe initialisation
    return status;
}
