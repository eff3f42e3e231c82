// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// renderViews for `memplan`: the drawing lives in the render module (render.cpp), loaded from next
// to the program on first use; the command line itself links no Qt.
#include "render.h"
#include "renderabi.h"

#include <dlfcn.h>

namespace {

// The module's entry point, or null with `error` saying why.
RenderEntry loadRenderModule(std::string& error)
{
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const auto path = (ec ? std::filesystem::path() : self.parent_path()) / kRenderModule;
    if (!std::filesystem::is_regular_file(path, ec)) {
        error = "the views' drawing module " + path.string() + " is missing (it is built and installed with memplan-studio)";
        return nullptr;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); // never closed: Qt's state lives until exit
    if (!handle) {
        const char* why = dlerror();
        error = path.string() + ": cannot load the views' drawing module: " + (why ? why : "unknown error");
        return nullptr;
    }
    const auto entry = reinterpret_cast<RenderEntry>(dlsym(handle, kRenderEntry));
    if (!entry)
        error = path.string() + ": not a MemPlan render module (no " + kRenderEntry + ")";
    return entry;
}

} // namespace

bool renderViews(const core::Workload& workload, const core::Plan& plan, const RenderOptions& options,
    std::vector<std::filesystem::path>& written, std::string& error, const StrategyMarking& marking)
{
    const auto entry = loadRenderModule(error);
    if (!entry)
        return false;
    const RenderCall call { &workload, &plan, &options, &written, &error, &marking };
    if (entry(kRenderAbi, &call))
        return true;
    if (error.empty())
        error = std::string(kRenderModule) + " was built from other sources than this memplan";
    return false;
}
