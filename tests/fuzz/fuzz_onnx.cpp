// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// An ONNX model file, as `memplan plan` and the Studio read it: the inputs the Studio offers
// (openInputs), import + schedule + lifetimes (loadWorkload), every planner, and the weight and
// constant contents that `memplan run` reads back from the same file (loadTensorData).
#include "fuzzcommon.h"

#include "exec/tensordata.h"
#include "io/workload.h"
#include "onnx/onnximport.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto file = fuzz::writeScratch(".onnx", data, size);
    if (auto inputs = core::openInputs(file); !inputs)
        fuzz::checkError(inputs.error(), "openInputs");
    auto workload = core::loadWorkload(file.string(), core::LoadOptions {});
    if (!workload) {
        fuzz::checkError(workload.error(), "ONNX import");
        return 0;
    }
    fuzz::planAndValidate(workload->problem, "ONNX model");
    if (workload->graph && workload->problem.buffers.size() <= fuzz::kMostPlannedBuffers)
        if (auto contents = core::loadTensorData(file, *workload->graph); !contents)
            fuzz::checkError(contents.error(), "loadTensorData");
    return 0;
}
