// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "trace/ortprofile.h"

#include "planners/metrics.h"
#include "util/memory.h"
#include "util/printable.h"
#include "util/readfile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

namespace core {

namespace {
using json = nlohmann::json;

constexpr std::string_view kKernelSuffix = "_kernel_time";
constexpr std::string_view kNchwcSuffix = "_nchwc";

std::string quote(std::string_view text) { return "'" + printable(text) + "'"; }

// N when `name` is "<type>_<N>", the name both ONNX Runtime and MemPlan give an unnamed node; else -1.
std::int64_t unnamedIndex(std::string_view name, std::string_view type)
{
    if (name.size() <= type.size() + 1 || name.size() > type.size() + 19 || !name.starts_with(type) || name[type.size()] != '_')
        return -1;
    std::int64_t index = 0;
    for (const char c : name.substr(type.size() + 1)) {
        if (c < '0' || c > '9')
            return -1;
        index = index * 10 + (c - '0');
    }
    return index;
}

// nlohmann's what(): "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..."
std::string parseErrorDetail(const char* what)
{
    std::string text = what;
    const auto bracket = text.find("] ");
    return bracket == std::string::npos ? text : text.substr(bracket + 2);
}

class Reader {
public:
    explicit Reader(std::string source) : m_source(std::move(source)) { }

    Error fail(std::size_t event, const std::string& what) const
    {
        return makeError(ErrorCode::InvalidModel, m_source + ": event " + std::to_string(event) + ": " + what);
    }
    Error failFile(const std::string& what) const { return makeError(ErrorCode::InvalidModel, m_source + ": " + what); }

    // A whole number of bytes or microseconds in [0, kMostProblemBytes]: a JSON integer, or (as ORT
    // writes its args) a string of decimal digits. Absent: nullopt with no error.
    Expected<std::optional<std::int64_t>> number(const json& object, const char* key, std::size_t event) const
    {
        const auto it = object.find(key);
        if (it == object.end())
            return std::optional<std::int64_t> {};
        std::int64_t value = 0;
        if (it->is_number_unsigned()) {
            if (it->get<std::uint64_t>() > std::uint64_t(kMostProblemBytes))
                return fail(event, quote(key) + " is " + std::to_string(it->get<std::uint64_t>()) + ", more than 2^60");
            value = std::int64_t(it->get<std::uint64_t>());
        } else if (it->is_number_integer()) {
            value = it->get<std::int64_t>();
        } else if (it->is_string()) {
            const auto& text = it->get_ref<const std::string&>();
            const bool negative = !text.empty() && text[0] == '-';
            auto digits = std::string_view(text).substr(negative ? 1 : 0);
            if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
                return fail(event, quote(key) + " is not a number (" + quote(text.substr(0, 40)) + ")");
            digits.remove_prefix(std::min(digits.find_first_not_of('0'), digits.size() - 1));
            if (negative)
                return fail(event, quote(key) + " is negative (" + printable(text.substr(0, 40)) + ")");
            // At most 19 digits fit an unsigned 64-bit number; 2^60 has 19.
            if (digits.size() > 19 || std::strtoull(std::string(digits).c_str(), nullptr, 10) > std::uint64_t(kMostProblemBytes))
                return fail(event, quote(key) + " is " + printable(text.substr(0, 40)) + (text.size() > 40 ? "..." : "") + ", more than 2^60");
            value = std::int64_t(std::strtoull(std::string(digits).c_str(), nullptr, 10));
        } else {
            return fail(event, quote(key) + " is not a number");
        }
        if (value < 0)
            return fail(event, quote(key) + " is negative (" + std::to_string(value) + ")");
        if (value > kMostProblemBytes)
            return fail(event, quote(key) + " is " + std::to_string(value) + ", more than 2^60");
        return std::optional<std::int64_t>(value);
    }

    Status readNode(const json& e, std::size_t index, std::string name, OrtNodeEvent& node) const
    {
        node.event = int(index);
        node.name = std::move(name);
        const auto args = e.find("args");
        if (args == e.end() || !args->is_object())
            return fail(index, "node " + quote(node.name) + " has no 'args' object");
        const auto opName = args->find("op_name");
        if (opName == args->end() || !opName->is_string())
            return fail(index, "node " + quote(node.name) + " has no 'op_name'");
        node.opType = opName->get<std::string>();
        if (const auto provider = args->find("provider"); provider != args->end() && provider->is_string())
            node.provider = provider->get<std::string>();
        struct Field {
            const json* object;
            const char* key;
            std::int64_t OrtNodeEvent::*member;
            bool required;
        };
        const Field fields[] = {
            { &e, "ts", &OrtNodeEvent::tsUs, true },
            { &e, "dur", &OrtNodeEvent::durUs, true },
            { &*args, "node_index", &OrtNodeEvent::nodeIndex, true },
            { &*args, "output_size", &OrtNodeEvent::outputBytes, false },
            { &*args, "activation_size", &OrtNodeEvent::activationBytes, false },
            { &*args, "parameter_size", &OrtNodeEvent::parameterBytes, false },
            { &*args, "mem_bytes_in_use", &OrtNodeEvent::inUse, false },
            { &*args, "mem_bytes_requested_in_use", &OrtNodeEvent::requestedInUse, false },
            { &*args, "mem_arena_held", &OrtNodeEvent::arenaHeld, false },
            { &*args, "mem_in_use_peak", &OrtNodeEvent::inUsePeak, false },
        };
        for (const auto& field : fields) {
            auto value = number(*field.object, field.key, index);
            if (!value)
                return value.error();
            if (!*value && field.required)
                return fail(index, "node " + quote(node.name) + " has no " + quote(field.key));
            if (*value)
                node.*field.member = **value;
        }
        return {};
    }

    Expected<OrtProfile> read(const std::string& text, std::optional<int> pass) const
    {
        if (auto memory = checkAllocation(std::int64_t(text.size()) * 6, m_source + ": the parsed profile"); !memory)
            return memory.error();
        json root;
        try {
            root = json::parse(text);
        } catch (const json::exception& e) {
            return failFile("not an ONNX Runtime profile: invalid JSON: " + parseErrorDetail(e.what()));
        }
        const json* events = &root;
        if (root.is_object() && root.contains("traceEvents"))
            events = &root["traceEvents"];
        if (!events->is_array())
            return failFile("not an ONNX Runtime profile: expected a JSON array of trace events");

        OrtProfile profile;
        profile.source = m_source;
        std::vector<OrtNodeEvent> nodes;
        std::vector<std::pair<std::int64_t, std::int64_t>> runs; // model_run: ts, dur
        bool sessionSeen = false;
        for (std::size_t i = 0; i < events->size(); ++i) {
            const auto& e = (*events)[i];
            if (!e.is_object())
                return fail(i, "expected an object");
            const auto cat = e.find("cat");
            const auto name = e.find("name");
            if (cat == e.end() || !cat->is_string() || (*cat != "Node" && *cat != "Session")) {
                ++profile.skippedEvents;
                continue;
            }
            if (name == e.end() || !name->is_string())
                return fail(i, "a " + cat->get<std::string>() + " event without a 'name'");
            const auto& eventName = name->get_ref<const std::string&>();
            if (*cat == "Session") {
                sessionSeen = true;
                auto ts = number(e, "ts", i);
                auto dur = ts ? number(e, "dur", i) : ts;
                if (!dur)
                    return dur.error();
                if (eventName == "model_run") {
                    if (!*ts || !*dur)
                        return fail(i, "a model_run event without 'ts' and 'dur'");
                    runs.emplace_back(**ts, **dur);
                } else if ((eventName == "model_loading_uri" || eventName == "model_loading_array") && *dur) {
                    profile.loadUs = **dur;
                } else if (eventName == "session_initialization" && *dur) {
                    profile.initUs = **dur;
                }
                continue;
            }
            if (eventName.size() <= kKernelSuffix.size() || !eventName.ends_with(kKernelSuffix)) {
                ++profile.skippedEvents; // _fence_before, _fence_after
                continue;
            }
            OrtNodeEvent node;
            if (auto status = readNode(e, i, eventName.substr(0, eventName.size() - kKernelSuffix.size()), node); !status)
                return status.error();
            nodes.push_back(std::move(node));
        }
        if (nodes.empty() && !sessionSeen)
            return failFile("not an ONNX Runtime profile: no event has cat \"Node\" or \"Session\"");
        if (nodes.empty())
            return failFile("the profile holds no node event: no run was profiled (profiling ends before the first run?)");

        std::vector<std::vector<OrtNodeEvent>> passes;
        if (!runs.empty()) {
            std::sort(runs.begin(), runs.end());
            passes.resize(runs.size());
            for (auto& node : nodes) {
                // The last run starting at or before the node; ORT writes model_run after its nodes.
                auto it = std::upper_bound(runs.begin(), runs.end(), std::make_pair(node.tsUs, kMostProblemBytes));
                if (it == runs.begin() || node.tsUs > std::prev(it)->first + std::prev(it)->second) {
                    ++profile.skippedEvents;
                    continue;
                }
                passes[std::size_t(std::prev(it) - runs.begin())].push_back(std::move(node));
            }
        } else {
            profile.runsFromSessionEvents = false;
            std::vector<std::int64_t> seen;
            for (auto& node : nodes) {
                if (passes.empty() || std::find(seen.begin(), seen.end(), node.nodeIndex) != seen.end()) {
                    passes.emplace_back();
                    seen.clear();
                }
                seen.push_back(node.nodeIndex);
                passes.back().push_back(std::move(node));
            }
        }
        profile.runs = int(passes.size());
        const int chosen = pass.value_or(profile.runs - 1);
        if (chosen < 0 || chosen >= profile.runs)
            return makeError(ErrorCode::InvalidArgument, m_source + ": run " + std::to_string(chosen + 1) + " asked for; the profile holds "
                    + std::to_string(profile.runs) + (profile.runs == 1 ? " run" : " runs"));
        profile.pass = chosen;
        for (int p = 0; p < profile.runs; ++p)
            if (p != chosen)
                profile.skippedEvents += int(passes[std::size_t(p)].size());
        profile.nodes = std::move(passes[std::size_t(chosen)]);
        if (profile.nodes.empty())
            return failFile("run " + std::to_string(chosen + 1) + " executed no node");
        std::stable_sort(profile.nodes.begin(), profile.nodes.end(), [](const OrtNodeEvent& a, const OrtNodeEvent& b) { return a.tsUs < b.tsUs; });
        if (!runs.empty())
            profile.runUs = runs[std::size_t(chosen)].second;
        profile.hasMemory = std::all_of(profile.nodes.begin(), profile.nodes.end(),
            [](const OrtNodeEvent& n) { return n.inUse >= 0 && n.requestedInUse >= 0 && n.arenaHeld >= 0; });
        if (profile.runs > 1)
            profile.notes.push_back(std::to_string(profile.runs) + " runs in the profile (told apart by "
                + (profile.runsFromSessionEvents ? "its model_run events" : "node indices restarting") + "); run "
                + std::to_string(chosen + 1) + (pass ? " is used" : ", the last, is used"));
        if (!profile.hasMemory)
            profile.notes.push_back("the profile has no arena numbers (mem_bytes_in_use): ONNX Runtime before 1.17, or the CPU memory arena was off");
        return profile;
    }

private:
    std::string m_source;
};

} // namespace

int OrtProfile::peakIndex(std::int64_t OrtNodeEvent::*field) const
{
    int best = -1;
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].*field >= 0 && (best < 0 || nodes[i].*field > nodes[std::size_t(best)].*field))
            best = int(i);
    return best;
}

std::int64_t OrtProfile::peak(std::int64_t OrtNodeEvent::*field) const
{
    const int i = peakIndex(field);
    return i < 0 ? -1 : nodes[std::size_t(i)].*field;
}

std::int64_t OrtProfile::kernelUs() const
{
    std::int64_t total = 0;
    for (const auto& node : nodes)
        total = std::min(total + node.durUs, kMostProblemBytes); // each at most 2^60: saturates, never overflows
    return total;
}

bool looksLikeJson(std::string_view head)
{
    const auto first = head.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && (head[first] == '[' || head[first] == '{');
}

std::string fileHead(const std::filesystem::path& file, std::size_t bytes)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
        return {};
    std::ifstream in(file, std::ios::binary);
    std::string head(bytes, '\0');
    in.read(head.data(), std::streamsize(bytes));
    head.resize(std::size_t(in.gcount()));
    return head;
}

Expected<OrtProfile> parseOrtProfile(const std::string& text, const std::string& source, std::optional<int> pass)
{
    try {
        return Reader(source).read(text, pass);
    } catch (const std::exception& e) { // std::bad_alloc on a document larger than memory
        return makeError(ErrorCode::Io, source + ": cannot read the profile: " + e.what());
    }
}

Expected<OrtProfile> loadOrtProfile(const std::filesystem::path& file, std::optional<int> pass)
{
    auto text = readFileCapped(file, kMaxOrtProfileBytes, "an ONNX Runtime profile");
    if (!text)
        return text.error();
    return parseOrtProfile(*text, file.string(), pass);
}

std::vector<Step> OrtOverlay::largestGaps(int top) const
{
    std::vector<Step> rows;
    for (const auto& s : steps)
        if (s.node >= 0 && s.inUse >= 0)
            rows.push_back(s.step);
    const auto gap = [&](Step s) { return std::llabs(steps[std::size_t(s)].inUse - steps[std::size_t(s)].liveBytes); };
    std::stable_sort(rows.begin(), rows.end(), [&](Step a, Step b) { return gap(a) > gap(b); });
    if (top > 0 && rows.size() > std::size_t(top))
        rows.resize(std::size_t(top));
    return rows;
}

Expected<OrtOverlay> overlayOrtProfile(const OrtProfile& profile, const Workload& workload)
{
    if (!workload.graph)
        return makeError(ErrorCode::InvalidArgument, workload.source + ": has no graph to lay the profile " + profile.source + " over (an ONNX model is needed)");
    const auto& graph = *workload.graph;
    const auto& order = workload.schedule.order;
    const auto live = liveBytesCurve(workload.problem);
    OrtOverlay overlay;
    overlay.steps.resize(order.size());
    std::map<std::string, std::vector<Step>> byName; // steps of each op name, in schedule order
    for (std::size_t s = 0; s < order.size(); ++s) {
        auto& step = overlay.steps[s];
        step.step = Step(s);
        step.op = order[s];
        step.liveBytes = s < live.size() ? live[s] : 0;
        const auto& op = graph.ops[std::size_t(step.op)];
        for (const auto t : op.outputs) {
            const auto size = graph.tensors[std::size_t(t)].size;
            step.plannedOutputBytes = size == kUnknownSize || step.plannedOutputBytes < 0 ? -1 : step.plannedOutputBytes + size;
        }
        byName[op.name].push_back(Step(s));
    }
    const auto map = [&](int n, Step s) {
        const auto& node = profile.nodes[std::size_t(n)];
        auto& step = overlay.steps[std::size_t(s)];
        step.node = n;
        step.kernelUs = node.durUs;
        step.inUse = node.inUse;
        step.requestedInUse = node.requestedInUse;
        step.arenaHeld = node.arenaHeld;
        step.ortOutputBytes = node.outputBytes;
        ++overlay.mapped;
    };
    // Names of unnamed nodes ("<type>_<index>") on both sides are paired by type and index order
    // below, not by name: the indices differ once ORT has turned Constant nodes into initializers.
    std::vector<int> ortUnnamed, pending; // pending: named, but no op has the name
    std::map<std::string, std::size_t> used; // how many steps of each name are taken
    for (std::size_t n = 0; n < profile.nodes.size(); ++n) {
        const auto& node = profile.nodes[n];
        if (unnamedIndex(node.name, node.opType) == node.nodeIndex) {
            ortUnnamed.push_back(int(n));
            continue;
        }
        const auto it = byName.find(node.name);
        auto& next = used[node.name];
        if (it == byName.end() || next >= it->second.size())
            pending.push_back(int(n));
        else
            map(int(n), it->second[next++]);
    }
    // Per op type, the unnamed ops left (index from the name, step) in index order; each unnamed ORT
    // node, in node-index order, takes the first of its type whose index is not below its own (ORT
    // only ever lowers an index, by the Constant nodes before it).
    std::map<std::string, std::vector<std::pair<std::int64_t, Step>>> opsUnnamed;
    for (const auto& step : overlay.steps) {
        const auto& op = graph.ops[std::size_t(step.op)];
        if (step.node < 0)
            if (const auto index = unnamedIndex(op.name, op.type); index >= 0)
                opsUnnamed[op.type].emplace_back(index, step.step);
    }
    for (auto& [type, ops] : opsUnnamed)
        std::sort(ops.begin(), ops.end());
    std::stable_sort(ortUnnamed.begin(), ortUnnamed.end(),
        [&](int a, int b) { return profile.nodes[std::size_t(a)].nodeIndex < profile.nodes[std::size_t(b)].nodeIndex; });
    std::map<std::string, std::size_t> cursor;
    for (const int n : ortUnnamed) {
        const auto& node = profile.nodes[std::size_t(n)];
        auto& ops = opsUnnamed[node.opType];
        auto& next = cursor[node.opType];
        while (next < ops.size() && ops[next].first < node.nodeIndex)
            ++next;
        if (next < ops.size())
            map(n, ops[next++].second);
        else
            overlay.unmappedNodes.push_back(n);
    }
    // Nodes ORT's optimizer made, named after what they replace: its layout transformer's
    // "<tensor>_nchwc" computes that tensor, a fusion's "<op>/<Kind>Fusion/" ends in that op. Each
    // takes the step that produces the tensor (runs the op) when no node ran it under its own name.
    std::map<std::string, Step> producer;
    for (const auto& step : overlay.steps)
        for (const auto t : graph.ops[std::size_t(step.op)].outputs)
            producer.emplace(graph.tensors[std::size_t(t)].name, step.step);
    for (const int n : pending) {
        const auto& name = profile.nodes[std::size_t(n)].name;
        Step target = -1;
        if (name.ends_with(kNchwcSuffix)) {
            if (const auto it = producer.find(name.substr(0, name.size() - kNchwcSuffix.size())); it != producer.end())
                target = it->second;
        } else if (name.size() > 1 && name.back() == '/') {
            const auto slash = name.rfind('/', name.size() - 2);
            if (slash != std::string::npos && std::string_view(name).substr(0, name.size() - 1).ends_with("Fusion"))
                if (const auto it = byName.find(name.substr(0, slash)); it != byName.end() && it->second.size() == 1)
                    target = it->second.front();
        }
        if (target >= 0 && overlay.steps[std::size_t(target)].node < 0) {
            map(n, target);
            overlay.steps[std::size_t(target)].fused = true;
            ++overlay.fused;
        } else {
            overlay.unmappedNodes.push_back(n);
        }
    }
    std::sort(overlay.unmappedNodes.begin(), overlay.unmappedNodes.end());
    for (const auto& step : overlay.steps)
        if (step.node >= 0 && !step.fused && graph.ops[std::size_t(step.op)].type != profile.nodes[std::size_t(step.node)].opType)
            overlay.typeMismatches.push_back(step.step);
    for (const auto& step : overlay.steps)
        if (step.node < 0)
            overlay.unrunSteps.push_back(step.step);
    return overlay;
}

} // namespace core
