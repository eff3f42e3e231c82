// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "cudadevice.h"

#ifdef MEMPLAN_HAVE_CUDA
#include "cudaexecutor.h"
#endif

#include <QCoreApplication>

namespace {

CudaDeviceStatus probe()
{
    CudaDeviceStatus status;
#ifdef MEMPLAN_HAVE_CUDA
    std::string why;
    status.available = gpu::cudaAvailable(&why);
    if (status.available)
        status.description = QString::fromStdString(gpu::cudaDeviceDescription());
    else
        status.reason = QString::fromStdString(why);
#else
    status.reason = QCoreApplication::translate("CudaDevice", "this build has no CUDA executor");
#endif
    return status;
}

} // namespace

const CudaDeviceStatus& cudaDeviceStatus()
{
    static const CudaDeviceStatus status = probe(); // thread-safe initialisation
    return status;
}
