// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// `memplan compare MODEL --frontier`: the frontier of peak memory against extra time.
#include "frontiercli.h"

#include "progressline.h"
#include "strategycli.h"

#include "strategies/frontier.h"
#include "util/format.h"
#include "util/printable.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

namespace {

std::string milliseconds(double seconds)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
    return text;
}

// "12 recomputed (a, b, c, ...), 3 swapped (x, ...)", or "-".
std::string decisions(const core::FrontierPoint& p)
{
    const auto some = [](const std::vector<std::string>& names) {
        std::string text;
        for (std::size_t i = 0; i < names.size() && i < 3; ++i)
            text += (i ? ", " : "") + core::printable(names[i]);
        if (names.size() > 3)
            text += ", ...";
        return text;
    };
    std::string text;
    if (!p.recomputed.empty())
        text += std::to_string(p.recomputed.size()) + " recomputed (" + some(p.recomputed) + ")";
    if (!p.swapped.empty())
        text += (text.empty() ? "" : ", ") + std::to_string(p.swapped.size()) + " swapped (" + some(p.swapped) + ")";
    return text.empty() ? "-" : text;
}

void printRows(const std::vector<core::FrontierPoint>& points, const core::Frontier& frontier)
{
    std::printf("%12s %7s %12s %7s %12s  %-11s %s\n", "peak", "less", "extra time", "extra", "step time", "method", "strategies: what");
    for (const auto& p : points) {
        const double less = p.peakBytes > 0 ? static_cast<double>(frontier.baseArena) / static_cast<double>(p.peakBytes) : 0;
        const double percent = frontier.baseSeconds > 0 ? 100.0 * p.extraSeconds / frontier.baseSeconds : 0;
        std::printf("%12s %6.2fx %12s %6.1f%% %12s  %-11s %s: %s\n", core::formatBytes(p.peakBytes).c_str(), less,
            milliseconds(p.extraSeconds).c_str(), percent, milliseconds(p.seconds).c_str(), p.method.c_str(), p.label.c_str(),
            decisions(p).c_str());
    }
}

nlohmann::ordered_json pointJson(const core::FrontierPoint& p)
{
    nlohmann::ordered_json j;
    j["peak_bytes"] = p.peakBytes;
    j["lower_bound_bytes"] = p.lowerBound;
    j["extra_time_s"] = p.extraSeconds;
    j["time_s"] = p.seconds;
    j["extra_flops"] = p.extraFlops;
    j["swapped_bytes"] = p.swappedBytes;
    j["method"] = p.method;
    j["label"] = p.label;
    j["strategies"] = p.names;
    j["checkpoints"] = p.checkpoints;
    j["recomputed"] = p.recomputed;
    j["swapped"] = p.swapped;
    return j;
}
} // namespace

int compareFrontier(const CliArgs& args, const core::Workload& workload)
{
    auto device = deviceFrom(args);
    if (!device) {
        std::cerr << "memplan: compare: " << device.error().message << "\n";
        return 2;
    }
    if (!workload.graph) {
        std::cerr << "memplan: compare: " << core::printable(workload.source)
                  << " is an allocation problem (buffers, no graph); --frontier needs a model whose graph the strategies rewrite\n";
        return 1;
    }
    std::optional<long long> budget;
    if (const auto text = args.value("budget"); text && !(budget = parseByteSize(*text))) {
        std::cerr << "memplan: compare: --budget '" << core::printable(*text) << "': expected a size such as 1048576, 512KiB, 24MiB or 2GiB\n";
        return 2;
    }
    core::FrontierOptions options;
    if (const auto text = args.value("milp-time-limit")) {
        char* end = nullptr;
        const double seconds = std::strtod(text->c_str(), &end);
        if (text->empty() || end != text->c_str() + text->size() || !std::isfinite(seconds) || seconds < 0 || seconds > 3600) {
            std::cerr << "memplan: compare: --milp-time-limit '" << core::printable(*text)
                      << "': expected seconds per MILP solve, such as 2 or 0.5, at most 3600 (0: no MILP)\n";
            return 2;
        }
        options.milp = seconds > 0;
        options.milpTimeLimitSeconds = seconds;
        options.milpTotalSeconds = std::max(options.milpTotalSeconds, 15 * seconds);
    }
    options.strategy.device = *device;
    options.strategy.alignment = workload.problem.alignment;
    ProgressLine line("frontier of " + core::printable(workload.source), 1000);
    auto frontier = core::computeFrontier(workload, options, [&](double fraction, std::string_view) {
        line.update(static_cast<int>(fraction * 1000), 1000);
    });
    line.finish();
    if (!frontier) {
        std::cerr << "memplan: compare: " << core::printable(frontier.error().message) << "\n";
        return 1;
    }
    const auto& f = *frontier;
    std::printf("%s: frontier on %s, planner %s: %zu points of %d candidates (%d dropped)%s\n", core::printable(workload.source).c_str(),
        options.strategy.device.name.c_str(), options.planner.c_str(), f.points.size(), f.candidates, f.dropped,
        f.training ? "" : ", no backward pass");
    std::printf("no strategy: arena %s, step %s\n", core::formatBytes(f.baseArena).c_str(), milliseconds(f.baseSeconds).c_str());
    printRows(f.points, f);
    std::printf("heuristics (for contrast; greedy recompute is the combination 'recompute'):\n");
    printRows(core::nonDominated(f.heuristics), f);
    for (const auto& note : f.notes)
        std::printf("note: %s\n", note.c_str());
    nlohmann::ordered_json pick;
    if (budget) {
        if (const auto* p = core::pickForBudget(f, *budget)) {
            std::printf("budget %s: %s (%s), peak %s, step %s (%+.1f %%)\n", core::formatBytes(*budget).c_str(), p->label.c_str(),
                p->method.c_str(), core::formatBytes(p->peakBytes).c_str(), milliseconds(p->seconds).c_str(),
                f.baseSeconds > 0 ? 100.0 * p->extraSeconds / f.baseSeconds : 0.0);
            pick["fits"] = true;
            pick["point"] = pointJson(*p);
        } else {
            std::printf("budget %s: no frontier point fits; the smallest peak is %s (%s)\n", core::formatBytes(*budget).c_str(),
                f.points.empty() ? "-" : core::formatBytes(f.points.front().peakBytes).c_str(),
                f.points.empty() ? "-" : f.points.front().label.c_str());
            pick["fits"] = false;
        }
        pick["budget_bytes"] = *budget;
    }
    if (const auto path = args.value("json")) {
        nlohmann::ordered_json j;
        j["model"] = workload.source;
        j["device"] = options.strategy.device.name;
        j["planner"] = options.planner;
        j["training"] = f.training;
        j["base_arena_bytes"] = f.baseArena;
        j["base_time_s"] = f.baseSeconds;
        j["candidates"] = f.candidates;
        j["dropped"] = f.dropped;
        auto points = nlohmann::ordered_json::array();
        for (const auto& p : f.points)
            points.push_back(pointJson(p));
        j["frontier"] = std::move(points);
        auto heuristics = nlohmann::ordered_json::array();
        for (const auto& p : f.heuristics)
            heuristics.push_back(pointJson(p));
        j["heuristics"] = std::move(heuristics);
        if (budget)
            j["budget"] = std::move(pick);
        j["notes"] = f.notes;
        std::ofstream out(*path, std::ios::binary);
        if (out)
            out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
        if (!out) {
            std::cerr << "memplan: compare: " << core::printable(*path) << ": cannot write the file\n";
            return 1;
        }
    }
    return 0;
}
