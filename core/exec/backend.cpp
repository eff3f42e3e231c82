// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/backend.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

namespace core {

namespace {

class CpuExecutor final : public ExecutorBackend {
public:
    std::string_view name() const override { return "cpu"; }
    bool available(std::string*) const override { return true; }
    std::string description() const override { return {}; }
    bool hasPool() const override { return false; }
    Expected<Measurement> run(const Graph& graph, const Schedule& schedule, const PlanProblem& problem, const Plan& plan,
        const std::vector<TensorIndex>& bufferTensor, const RunOptions& options, DeviceAllocation allocation) const override
    {
        if (allocation == DeviceAllocation::Pool)
            return makeError(ErrorCode::InvalidArgument, "device cpu has no stream-ordered pool");
        auto o = options;
        o.allocation = allocation == DeviceAllocation::PerTensor ? Allocation::PerTensor : Allocation::Arena;
        return runOnCpu(graph, schedule, problem, plan, bufferTensor, o);
    }
};

struct Registry {
    std::mutex mutex;
    std::map<std::string, const ExecutorBackend*, std::less<>> backends;
    std::map<std::string, Error, std::less<>> failures; // a plugin that did not load: asked once
};

Registry& registry()
{
    static Registry r;
    return r;
}

// Where the CUDA plugin is looked for: MEMPLAN_CUDA_PLUGIN, else next to the program, else ../lib.
std::vector<std::filesystem::path> pluginCandidates(const char* file)
{
    if (const char* path = std::getenv("MEMPLAN_CUDA_PLUGIN"); path && *path)
        return { path };
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
        return {};
    const auto dir = self.parent_path();
    return { dir / file, dir.parent_path() / "lib" / file };
}

Expected<const ExecutorBackend*> loadPlugin()
{
    const char* file = "libmemplan-cuda.so";
    const auto candidates = pluginCandidates(file);
    const bool named = std::getenv("MEMPLAN_CUDA_PLUGIN") && *std::getenv("MEMPLAN_CUDA_PLUGIN");
    for (const auto& path : candidates) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec)) {
            if (named)
                return makeError(ErrorCode::NoGpu, "MEMPLAN_CUDA_PLUGIN=" + path.string() + ": no such file");
            continue;
        }
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); // never closed: its code runs until exit
        if (!handle) {
            const char* why = dlerror();
            return makeError(ErrorCode::NoGpu, "the CUDA executor " + path.string() + " cannot be loaded: " + (why ? why : "unknown error"));
        }
        const auto entry = reinterpret_cast<ExecutorPluginEntry>(dlsym(handle, kExecutorPluginEntry));
        if (!entry)
            return makeError(ErrorCode::NoGpu, "the CUDA executor " + path.string() + " is not a MemPlan executor plugin (no "
                    + kExecutorPluginEntry + ")");
        const auto* backend = entry(kExecutorPluginAbi);
        if (!backend)
            return makeError(ErrorCode::NoGpu, "the CUDA executor " + path.string() + " was built from other sources than this program");
        return backend;
    }
    return makeError(ErrorCode::NoGpu, "this build has no CUDA executor");
}

} // namespace

std::string_view deviceAllocationName(DeviceAllocation allocation)
{
    switch (allocation) {
    case DeviceAllocation::Arena: return "arena";
    case DeviceAllocation::PerTensor: return "per-tensor";
    case DeviceAllocation::Pool: return "pool";
    }
    return "?";
}

const ExecutorBackend& cpuExecutor()
{
    static const CpuExecutor cpu;
    return cpu;
}

Expected<const ExecutorBackend*> executorBackend(std::string_view device)
{
    if (device == "cpu")
        return &cpuExecutor();
    if (device != "cuda" && device != "gpu")
        return makeError(ErrorCode::InvalidArgument, "device '" + std::string(device) + "': choose cpu or cuda");
    auto& r = registry();
    const std::lock_guard lock(r.mutex);
    if (const auto it = r.backends.find("cuda"); it != r.backends.end())
        return it->second;
    if (const auto it = r.failures.find("cuda"); it != r.failures.end())
        return it->second;
    auto loaded = loadPlugin();
    if (!loaded) {
        r.failures.emplace("cuda", loaded.error());
        return loaded.error();
    }
    r.backends.emplace("cuda", *loaded);
    return *loaded;
}

void registerExecutorBackend(const ExecutorBackend* backend)
{
    auto& r = registry();
    const std::lock_guard lock(r.mutex);
    r.failures.erase(std::string(backend->name()));
    r.backends[std::string(backend->name())] = backend;
}

} // namespace core
