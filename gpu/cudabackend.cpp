// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "cudabackend.h"

#include "cudaexecutor.h"

namespace gpu {

namespace {

class CudaBackend final : public core::ExecutorBackend {
public:
    std::string_view name() const override { return "cuda"; }
    bool available(std::string* why) const override { return cudaAvailable(why); }
    std::string description() const override { return cudaDeviceDescription(); }
    bool hasPool() const override { return true; }
    core::Expected<core::Measurement> run(const core::Graph& graph, const core::Schedule& schedule, const core::PlanProblem& problem,
        const core::Plan& plan, const std::vector<core::TensorIndex>& bufferTensor, const core::RunOptions& options,
        core::DeviceAllocation allocation) const override
    {
        const auto mode = allocation == core::DeviceAllocation::Pool ? CudaAllocation::Pool
            : allocation == core::DeviceAllocation::PerTensor        ? CudaAllocation::PerTensor
                                                                     : CudaAllocation::Arena;
        return runOnCuda(graph, schedule, problem, plan, bufferTensor, options, mode);
    }
};

} // namespace

const core::ExecutorBackend& cudaBackend()
{
    static const CudaBackend backend;
    return backend;
}

} // namespace gpu
