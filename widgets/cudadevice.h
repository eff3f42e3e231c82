// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <QString>

// Whether the Studio can run on a CUDA device: the CUDA executor plugin must load
// (core::executorBackend("cuda")) and find a device. Asked once per process (the
// answer does not change while it runs), so menus and buttons can ask freely on the UI thread.
struct CudaDeviceStatus {
    bool available = false;
    QString description; // device name and memory ("NVIDIA H100 80GB HBM3, 79.1 GiB") when available
    QString reason;      // why not, when not available
};

const CudaDeviceStatus& cudaDeviceStatus();
