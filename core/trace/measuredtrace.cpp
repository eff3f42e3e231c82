// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "trace/measuredtrace.h"

#include "planners/metrics.h"
#include "planners/validate.h"
#include "util/format.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace core {

namespace {
std::string hex(std::int64_t value)
{
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
    return text;
}

const char* actionName(TraceAction action)
{
    switch (action) {
    case TraceAction::Alloc: return "alloc";
    case TraceAction::FreeRequested: return "free_requested";
    case TraceAction::FreeCompleted: return "free_completed";
    case TraceAction::SegmentAlloc: return "segment_alloc";
    case TraceAction::SegmentFree: return "segment_free";
    case TraceAction::SegmentMap: return "segment_map";
    case TraceAction::SegmentUnmap: return "segment_unmap";
    case TraceAction::Oom: return "oom";
    case TraceAction::Snapshot: return "snapshot";
    case TraceAction::Other: break;
    }
    return "?";
}

// The device to replay: the one asked for, else the one with the most events, else the one with
// the most segments (a snapshot without traces).
Expected<int> chooseDevice(const MemorySnapshot& snapshot, const std::string& source, std::optional<int> asked)
{
    std::map<int, std::size_t> segmentsOn;
    for (const auto& s : snapshot.segments)
        ++segmentsOn[std::max(s.device, 0)];
    if (asked) {
        const bool traced = *asked >= 0 && std::size_t(*asked) < snapshot.deviceTraces.size() && !snapshot.deviceTraces[std::size_t(*asked)].empty();
        if (!traced && !segmentsOn.count(*asked))
            return makeError(ErrorCode::InvalidArgument, source + ": no device " + std::to_string(*asked) + ": the snapshot has "
                    + std::to_string(snapshot.deviceTraces.size()) + " device traces and segments on " + std::to_string(segmentsOn.size()) + " devices");
        return *asked;
    }
    int best = -1;
    for (std::size_t d = 0; d < snapshot.deviceTraces.size(); ++d)
        if (!snapshot.deviceTraces[d].empty() && (best < 0 || snapshot.deviceTraces[d].size() > snapshot.deviceTraces[std::size_t(best)].size()))
            best = int(d);
    if (best >= 0)
        return best;
    for (const auto& [device, count] : segmentsOn)
        if (best < 0 || count > segmentsOn[best])
            best = device;
    if (best < 0)
        return makeError(ErrorCode::InvalidModel, source + ": the snapshot has no segments and no events: nothing was allocated");
    return best;
}
} // namespace

std::string MeasuredTrace::frameName(int frame) const
{
    return frame >= 0 && std::size_t(frame) < frames.size() ? frameLabel(frames[std::size_t(frame)]) : "(no frames)";
}

namespace {
// measureTrace; with `owned` (the snapshot itself), the replayed events are released after the replay.
Expected<MeasuredTrace> measure(const MemorySnapshot& snapshot, MemorySnapshot* owned, const std::string& source, std::optional<int> asked,
    const LoadProgress& progress)
{
    const auto device = chooseDevice(snapshot, source, asked);
    if (!device)
        return device.error();
    MeasuredTrace t;
    t.source = source;
    t.device = *device;
    t.frames = snapshot.frames;
    static const std::vector<TraceEvent> none;
    const auto& events = std::size_t(t.device) < snapshot.deviceTraces.size() ? snapshot.deviceTraces[std::size_t(t.device)] : none;
    const int E = int(events.size()); // below 2^31 - 2: snapshotFromPickle refuses more
    t.eventCount = E;
    t.hasTrace = E > 0;
    const std::string dev = "device " + std::to_string(t.device);
    const auto fail = [&](const std::string& where, const std::string& what) {
        return makeError(ErrorCode::InvalidModel, source + ": " + where + ": " + what);
    };
    std::vector<TraceAction> actions; // the events' actions, once the events are released
    const auto eventWhere = [&](int e) {
        const auto action = actions.empty() ? events[std::size_t(e)].action : actions[std::size_t(e)];
        return dev + ", event " + std::to_string(e) + " (" + actionName(action) + ")";
    };

    std::vector<const SnapshotSegment*> segments;
    std::int64_t reservedAtEnd = 0;
    for (const auto& s : snapshot.segments)
        if (s.device == t.device || s.device < 0) {
            segments.push_back(&s);
            reservedAtEnd += s.totalSize;
        }
    for (std::size_t d = 0; d < snapshot.deviceTraces.size(); ++d)
        if (int(d) != t.device && !snapshot.deviceTraces[d].empty())
            t.notes.push_back("device " + std::to_string(d) + " has " + std::to_string(snapshot.deviceTraces[d].size())
                + " events too; this report is of device " + std::to_string(t.device) + " (--device N for another)");

    // Every range a segment covered, merged.
    for (const auto* s : segments)
        t.ranges.emplace_back(s->address, s->address + s->totalSize);
    for (const auto& ev : events)
        if (ev.action == TraceAction::SegmentAlloc || ev.action == TraceAction::SegmentMap)
            t.ranges.emplace_back(ev.addr, ev.addr + ev.size);
    std::sort(t.ranges.begin(), t.ranges.end());
    std::vector<std::pair<std::int64_t, std::int64_t>> merged;
    for (const auto& r : t.ranges) {
        if (r.first == r.second)
            continue;
        if (!merged.empty() && r.first <= merged.back().second)
            merged.back().second = std::max(merged.back().second, r.second);
        else
            merged.push_back(r);
    }
    t.ranges = std::move(merged);

    // Replay: allocations by address, from alloc to free.
    std::vector<int> requested;                 // per allocation: its free_requested event, -1
    std::vector<std::pair<int, int>> fromBlock; // per allocation: segment and block it came from, or -1
    std::unordered_map<std::int64_t, int> live;
    std::unordered_set<std::int64_t> touched;
    std::vector<std::int64_t> reservedDelta(std::size_t(E) + 2, 0);
    int beforeTrace = 0;
    const auto add = [&](TraceAllocation a, std::pair<int, int> block = { -1, -1 }) {
        t.allocations.push_back(a);
        requested.push_back(-1);
        fromBlock.push_back(block);
        return int(t.allocations.size() - 1);
    };
    for (int e = 0; e < E; ++e) {
        if (((e + 1) & 0xFFFF) == 0) {
            if (progress.cancelled())
                return makeError(ErrorCode::Cancelled, source + ": replaying was cancelled at event " + std::to_string(e));
            progress("replaying the events", double(e) / double(E));
        }
        const auto& ev = events[std::size_t(e)];
        switch (ev.action) {
        case TraceAction::Alloc: {
            const auto it = live.find(ev.addr);
            if (it != live.end()) {
                const auto& other = t.allocations[std::size_t(it->second)];
                return fail(eventWhere(e), "alloc at " + hex(ev.addr) + " while the allocation "
                        + (other.allocEvent >= 0 ? "of event " + std::to_string(other.allocEvent) : std::string("from before the trace"))
                        + " there is still live");
            }
            live[ev.addr] = add({ ev.addr, ev.size, ev.frame, e, -1, ev.stream });
            touched.insert(ev.addr);
            break;
        }
        case TraceAction::FreeRequested:
        case TraceAction::FreeCompleted: {
            auto it = live.find(ev.addr);
            if (it == live.end()) {
                if (touched.count(ev.addr))
                    return fail(eventWhere(e), "frees " + std::to_string(ev.size) + " bytes at " + hex(ev.addr)
                            + ", where no allocation is live: a free without an alloc");
                // The address's first event is a free: its alloc came before the trace's first event.
                // PyTorch gives a free the stack of its allocation (unless told to record frees' own).
                it = live.emplace(ev.addr, add({ ev.addr, ev.size, ev.frame, -1, -1, ev.stream })).first;
                touched.insert(ev.addr);
                ++beforeTrace;
            }
            auto& a = t.allocations[std::size_t(it->second)];
            if (a.size != ev.size)
                return fail(eventWhere(e), "frees " + std::to_string(ev.size) + " bytes at " + hex(ev.addr) + ", but the allocation there ("
                        + (a.allocEvent >= 0 ? "event " + std::to_string(a.allocEvent) : std::string("from before the trace")) + ") has "
                        + std::to_string(a.size));
            if (ev.action == TraceAction::FreeRequested) {
                if (requested[std::size_t(it->second)] < 0)
                    requested[std::size_t(it->second)] = e;
            } else {
                a.freeEvent = e;
                live.erase(it);
            }
            break;
        }
        case TraceAction::SegmentAlloc:
        case TraceAction::SegmentMap:
            reservedDelta[std::size_t(e) + 1] += ev.size;
            break;
        case TraceAction::SegmentFree:
        case TraceAction::SegmentUnmap:
            reservedDelta[std::size_t(e) + 1] -= ev.size;
            break;
        case TraceAction::Oom:
            t.ooms.push_back({ e, ev.size, ev.deviceFree });
            break;
        case TraceAction::Snapshot:
        case TraceAction::Other:
            break;
        }
    }
    // The events' times (annotations are placed by them) before the events may be released.
    t.stepSeconds = stepSeconds(events);
    if (!snapshot.annotations.empty()) {
        auto placed = placeAnnotations(snapshot.annotations, events, t.device);
        t.phases = std::move(placed.phases);
        t.notes.insert(t.notes.end(), placed.notes.begin(), placed.notes.end());
    }
    if (owned && E > 0) {
        actions.reserve(std::size_t(E));
        for (const auto& ev : events)
            actions.push_back(ev.action);
        std::vector<TraceEvent>().swap(owned->deviceTraces[std::size_t(t.device)]); // `events` is empty from here on
    }
    // Freed but never completed by the end: the request ends it.
    for (const auto& [address, index] : live)
        if (requested[std::size_t(index)] >= 0)
            t.allocations[std::size_t(index)].freeEvent = requested[std::size_t(index)];

    // Blocks still active when the snapshot was taken: those the trace never touched were allocated
    // before it began and live throughout (all of them, in a snapshot without a trace).
    int disagree = 0;
    for (std::size_t s = 0; s < segments.size(); ++s)
        for (std::size_t b = 0; b < segments[s]->blocks.size(); ++b) {
            const auto& block = segments[s]->blocks[b];
            if (block.state == BlockState::Inactive)
                continue;
            if (live.count(block.address)) {
                disagree += t.allocations[std::size_t(live[block.address])].size != block.size;
                continue;
            }
            if (touched.count(block.address)) {
                ++disagree;
                continue;
            }
            add({ block.address, block.size, block.frame, -1, -1, segments[s]->stream }, { int(s), int(b) });
            if (t.hasTrace)
                ++beforeTrace;
        }
    if (beforeTrace > 0)
        t.notes.push_back(std::to_string(beforeTrace) + " allocations were made before the trace's first event (PyTorch keeps the last "
            "events only): they count as live from its start");
    if (disagree > 0)
        t.notes.push_back(std::to_string(disagree) + " blocks active in the snapshot's segments disagree with the trace (another size, or "
            "freed in it); the trace is taken as it is");
    if (snapshot.unknownActions > 0)
        t.notes.push_back(std::to_string(snapshot.unknownActions) + " events of actions this reader does not know were skipped");
    if (!t.hasTrace)
        t.notes.push_back("the snapshot has no trace for this device (recorded without _record_memory_history()): one step, the "
            "allocator's state when it was taken");

    // The reserved curve from the segment events, made here in the deltas' own array (before the
    // problem is built, the largest part of a large trace), and the replay's maps released.
    std::int64_t reservedChange = 0;
    for (const auto d : reservedDelta)
        reservedChange += d;
    std::int64_t running = reservedAtEnd - reservedChange;
    if (running < 0) {
        t.notes.push_back("the trace's segment events add " + formatBytes(reservedChange) + " while the snapshot's segments hold "
            + formatBytes(reservedAtEnd) + ": the reserved curve starts at 0");
        running = 0;
    }
    for (std::size_t s = 0; s < std::size_t(E) + 1; ++s) {
        running += reservedDelta[s];
        reservedDelta[s] = running;
    }
    reservedDelta.pop_back(); // E + 1 steps
    t.reserved = std::move(reservedDelta);
    std::vector<int>().swap(requested);
    std::unordered_map<std::int64_t, int>().swap(live);
    std::unordered_set<std::int64_t>().swap(touched);

    // Every allocation inside a range a segment covered.
    const Step steps = Step(E + 1);
    std::vector<Bytes> rangeBase(t.ranges.size(), 0);
    for (std::size_t r = 1; r < t.ranges.size(); ++r)
        rangeBase[r] = rangeBase[r - 1] + (t.ranges[r - 1].second - t.ranges[r - 1].first);
    const Bytes arena = t.ranges.empty() ? 0 : rangeBase.back() + (t.ranges.back().second - t.ranges.back().first);
    std::vector<Bytes> offsets(t.allocations.size(), 0);
    for (std::size_t i = 0; i < t.allocations.size(); ++i) {
        const auto& a = t.allocations[i];
        auto r = std::upper_bound(t.ranges.begin(), t.ranges.end(), std::make_pair(a.address, INT64_MAX));
        if (r == t.ranges.begin() || a.address + a.size > std::prev(r)->second) {
            const std::string where = a.allocEvent >= 0 ? eventWhere(a.allocEvent)
                : a.freeEvent >= 0                      ? eventWhere(a.freeEvent)
                                                        : "segment " + std::to_string(fromBlock[i].first) + ", block " + std::to_string(fromBlock[i].second);
            return fail(where, std::to_string(a.size) + " bytes at " + hex(a.address)
                    + " lie outside every segment the snapshot and its trace name");
        }
        --r;
        offsets[i] = rangeBase[std::size_t(r - t.ranges.begin())] + (a.address - r->first);
    }

    // The allocation problem and PyTorch's placement.
    bool aligned = true;
    for (std::size_t i = 0; i < t.allocations.size(); ++i)
        aligned = aligned && t.allocations[i].size % 512 == 0 && offsets[i] % 512 == 0;
    t.problem.alignment = aligned ? 512 : 1; // the caching allocator's rounding, when every block keeps it
    t.problem.steps = steps;
    t.problem.buffers.reserve(t.allocations.size());
    for (std::size_t i = 0; i < t.allocations.size(); ++i) {
        const auto& a = t.allocations[i];
        Buffer buffer;
        buffer.name = "a" + std::to_string(i) + " " + t.frameName(a.frame);
        buffer.lifetime = { a.allocEvent < 0 ? 0 : a.allocEvent + 1, a.freeEvent < 0 ? steps : a.freeEvent + 1 };
        buffer.size = a.size;
        buffer.tensors.push_back(buffer.name);
        t.problem.buffers.push_back(std::move(buffer));
    }
    if (auto s = checkProblemSize(t.problem); !s)
        return makeError(s.error().code, source + ": " + s.error().message);
    // Curves per step: allocated from the lifetimes (an allocation found at its free adds to
    // earlier steps), reserved from the segment events.
    t.allocated = liveBytesCurve(t.problem);
    Step overReserved = -1;
    for (Step s = 0; s < steps; ++s) {
        const auto allocated = t.allocated[std::size_t(s)];
        const auto reserved = t.reserved[std::size_t(s)];
        if (allocated > t.allocated[std::size_t(t.peakAllocatedStep)])
            t.peakAllocatedStep = s;
        const auto peak = t.reserved[std::size_t(t.peakReservedStep)];
        if (reserved > peak || (reserved == peak && allocated > t.allocated[std::size_t(t.peakReservedStep)]))
            t.peakReservedStep = s;
        if (allocated > reserved && overReserved < 0)
            overReserved = s;
    }
    if (overReserved >= 0)
        t.notes.push_back("at step " + std::to_string(overReserved) + " allocations hold " + formatBytes(t.allocated[std::size_t(overReserved)])
            + " but segments reserve " + formatBytes(t.reserved[std::size_t(overReserved)]) + ": the snapshot's segments and its trace disagree");

    t.measured.planner = "pytorch";
    t.measured.offsets = std::move(offsets);
    t.measured.arenaSize = arena;
    if (const auto check = validatePlan(t.problem, t.measured); !check.ok())
        return fail(dev, "the snapshot places allocations live at the same time at overlapping addresses: " + check.message);
    return t;
}

namespace {
// One region per segment range, counting the allocations inside it.
std::vector<Region> segmentRegions(const MeasuredTrace& trace)
{
    std::vector<Region> regions;
    for (const auto& [begin, end] : trace.ranges)
        regions.push_back(Region { "segments at " + hex(begin), end - begin, 0 });
    for (const auto& a : trace.allocations) {
        const auto r = std::upper_bound(trace.ranges.begin(), trace.ranges.end(), std::make_pair(a.address, INT64_MAX));
        if (r != trace.ranges.begin()) // always, for a trace measureTrace made
            ++regions[std::size_t(r - trace.ranges.begin() - 1)].tensorCount;
    }
    return regions;
}
} // namespace

} // namespace

Expected<MeasuredTrace> measureTrace(const MemorySnapshot& snapshot, const std::string& source, std::optional<int> device, const LoadProgress& progress)
{
    return measure(snapshot, nullptr, source, device, progress);
}

Expected<MeasuredTrace> measureTrace(MemorySnapshot&& snapshot, const std::string& source, std::optional<int> device, const LoadProgress& progress)
{
    return measure(snapshot, &snapshot, source, device, progress);
}

Workload traceWorkload(const MeasuredTrace& trace)
{
    auto workload = workloadFromProblem(trace.problem, trace.source, {});
    workload.regions = segmentRegions(trace);
    workload.notes = trace.notes;
    return workload;
}

Workload traceWorkload(MeasuredTrace&& trace)
{
    auto regions = segmentRegions(trace);
    auto workload = workloadFromProblem(std::move(trace.problem), trace.source, {});
    workload.regions = std::move(regions);
    workload.notes = std::move(trace.notes);
    return workload;
}

} // namespace core
