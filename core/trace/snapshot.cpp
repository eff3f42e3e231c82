// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "trace/snapshot.h"

#include "planners/problem.h"

#include <algorithm>
#include <initializer_list>
#include <unordered_map>

namespace core {

std::string frameLabel(const StackFrame& frame)
{
    const auto slash = frame.filename.find_last_of('/');
    const auto file = slash == std::string::npos ? frame.filename : frame.filename.substr(slash + 1);
    return file + ":" + std::to_string(frame.line) + " " + frame.name;
}

namespace {
constexpr std::size_t kFramesScanned = 64;

class SnapshotReader {
public:
    SnapshotReader(const std::string& source, MemorySnapshot& snapshot, const LoadProgress& progress)
        : m_source(source), m_snapshot(snapshot), m_progress(progress)
    {
    }

    Error fail(const std::string& where, const std::string& what) const
    {
        return makeError(ErrorCode::InvalidModel, m_source + ": " + where + ": " + what);
    }

    // An integer field: `required` ones must be there; all must be ints within [0, most].
    Status integer(const PickleValue& dict, std::string_view key, const std::string& where, bool required, std::int64_t most,
        std::int64_t& value) const
    {
        const auto field = dict.find(key);
        if (!field || field->isNone()) {
            if (required)
                return fail(where, "'" + std::string(key) + "' is missing");
            return {};
        }
        if (!field->isInt())
            return fail(where, "'" + std::string(key) + "' is a " + std::string(field->typeName()) + ", not an integer");
        value = field->asInt();
        if (value < 0 || value > most)
            return fail(where, "'" + std::string(key) + "' is " + std::to_string(value) + ": out of range (0 to " + std::to_string(most) + ")");
        return {};
    }

    // Several integer fields at once, in order; the first refusal is returned.
    struct Field {
        std::string_view key;
        bool required;
        std::int64_t most;
        std::int64_t* value;
    };
    Status integers(const PickleValue& dict, const std::string& where, std::initializer_list<Field> fields) const
    {
        for (const auto& f : fields)
            if (auto st = integer(dict, f.key, where, f.required, f.most, *f.value); !st)
                return st;
        return {};
    }

    // The allocation site of a `frames` list (most recent frame first); -1 without frames.
    Expected<int> site(const PickleValue& dict, const std::string& where)
    {
        const auto frames = dict.find("frames");
        if (!frames || frames->isNone())
            return -1;
        if (!frames->isList())
            return fail(where, "'frames' is a " + std::string(frames->typeName()) + ", not a list");
        if (frames->size() == 0)
            return -1;
        // Only the first frames are looked at: a stack shared by every event through the memo must not
        // make the work grow with events x stack depth.
        std::size_t chosen = 0;
        for (std::size_t i = 0; i < std::min<std::size_t>(frames->size(), kFramesScanned); ++i) {
            const auto f = (*frames)[i];
            const auto file = f.isDict() ? f.find("filename") : std::nullopt;
            if (file && file->isString() && file->asString().ends_with(".py")) {
                chosen = i;
                break;
            }
        }
        const auto frame = (*frames)[chosen];
        if (!frame.isDict())
            return fail(where, "frame " + std::to_string(chosen) + " is a " + std::string(frame.typeName()) + ", not a dict");
        StackFrame parsed;
        const auto file = frame.find("filename");
        const auto name = frame.find("name");
        const auto line = frame.find("line");
        parsed.filename = file && file->isString() ? std::string(file->asString()) : "?";
        parsed.name = name && name->isString() ? std::string(name->asString()) : "?";
        parsed.line = line && line->isInt() ? line->asInt() : 0;
        auto key = parsed.filename + '\0' + std::to_string(parsed.line) + '\0' + parsed.name;
        const auto [it, inserted] = m_frames.emplace(std::move(key), int(m_snapshot.frames.size()));
        if (inserted)
            m_snapshot.frames.push_back(std::move(parsed));
        return it->second;
    }

    Status segments(const PickleValue& list);
    Status traces(const PickleValue& list);
    Status annotations(const PickleValue& list);

private:
    const std::string& m_source;
    MemorySnapshot& m_snapshot;
    const LoadProgress& m_progress;
    std::unordered_map<std::string, int> m_frames;
};

Status SnapshotReader::segments(const PickleValue& list)
{
    if (!list.isList())
        return fail("'segments'", "is a " + std::string(list.typeName()) + ", not a list");
    m_snapshot.segments.reserve(list.size());
    for (std::size_t s = 0; s < list.size(); ++s) {
        const auto value = list[s];
        const std::string where = "segment " + std::to_string(s);
        if (!value.isDict())
            return fail(where, "is a " + std::string(value.typeName()) + ", not a dict");
        SnapshotSegment segment;
        std::int64_t device = -1;
        if (auto st = integers(value, where,
                { { "device", false, 1 << 20, &device }, { "address", true, kMostSnapshotAddress, &segment.address },
                    { "total_size", true, kMostProblemBytes, &segment.totalSize }, { "stream", false, INT64_MAX, &segment.stream } });
            !st)
            return st;
        segment.device = int(device);
        if (const auto type = value.find("segment_type"); type && type->isString())
            segment.large = type->asString() != "small";
        const auto blocks = value.find("blocks");
        if (blocks && !blocks->isList())
            return fail(where, "'blocks' is a " + std::string(blocks->typeName()) + ", not a list");
        std::int64_t next = segment.address; // where a block without an address starts
        for (std::size_t b = 0; blocks && b < blocks->size(); ++b) {
            const auto block = (*blocks)[b];
            const std::string at = where + ", block " + std::to_string(b);
            if (!block.isDict())
                return fail(at, "is a " + std::string(block.typeName()) + ", not a dict");
            SnapshotBlock parsed;
            parsed.address = next;
            if (auto st = integers(block, at,
                    { { "size", true, kMostProblemBytes, &parsed.size }, { "requested_size", false, kMostProblemBytes, &parsed.requestedSize },
                        { "address", false, kMostSnapshotAddress, &parsed.address } });
                !st)
                return st;
            if (parsed.address < segment.address || parsed.address - segment.address + parsed.size > segment.totalSize)
                return fail(at, "its " + std::to_string(parsed.size) + " bytes at " + std::to_string(parsed.address)
                        + " lie outside the segment's " + std::to_string(segment.totalSize) + " bytes at " + std::to_string(segment.address));
            next = parsed.address + parsed.size;
            const auto state = block.find("state");
            const auto text = state && state->isString() ? state->asString() : std::string_view();
            if (text == "active_allocated")
                parsed.state = BlockState::ActiveAllocated;
            else if (text == "active_pending_free" || text == "active_awaiting_free")
                parsed.state = BlockState::ActivePendingFree;
            else if (text == "inactive")
                parsed.state = BlockState::Inactive;
            else
                return fail(at, "'state' must be active_allocated, active_pending_free (or active_awaiting_free) or inactive");
            auto frame = site(block, at);
            if (!frame)
                return frame.error();
            parsed.frame = *frame;
            segment.blocks.push_back(parsed);
        }
        m_snapshot.segments.push_back(std::move(segment));
    }
    return {};
}

Status SnapshotReader::traces(const PickleValue& list)
{
    if (!list.isList())
        return fail("'device_traces'", "is a " + std::string(list.typeName()) + ", not a list");
    static const std::unordered_map<std::string_view, TraceAction> actions {
        { "alloc", TraceAction::Alloc }, { "free_requested", TraceAction::FreeRequested },
        { "free_completed", TraceAction::FreeCompleted }, { "free", TraceAction::FreeCompleted }, // "free": snapshots before PyTorch 2.1
        { "segment_alloc", TraceAction::SegmentAlloc }, { "segment_free", TraceAction::SegmentFree },
        { "segment_map", TraceAction::SegmentMap }, { "segment_unmap", TraceAction::SegmentUnmap },
        { "oom", TraceAction::Oom }, { "snapshot", TraceAction::Snapshot },
    };
    m_snapshot.deviceTraces.resize(list.size());
    std::size_t total = 0, done = 0;
    for (std::size_t d = 0; d < list.size(); ++d)
        total += list[d].isList() ? list[d].size() : 0;
    for (std::size_t d = 0; d < list.size(); ++d) {
        const auto events = list[d];
        if (!events.isList())
            return fail("device " + std::to_string(d), "its trace is a " + std::string(events.typeName()) + ", not a list");
        // Steps are 32-bit (core::Step): one before the first event, one after each.
        if (events.size() > std::size_t(INT32_MAX - 2))
            return fail("device " + std::to_string(d), std::to_string(events.size()) + " events: more than MemPlan reads (2^31 - 2)");
        auto& out = m_snapshot.deviceTraces[d];
        out.reserve(events.size());
        for (std::size_t e = 0; e < events.size(); ++e) {
            if ((++done & 0xFFFF) == 0) {
                if (m_progress.cancelled())
                    return makeError(ErrorCode::Cancelled, m_source + ": reading was cancelled at event " + std::to_string(e));
                m_progress("reading the events", double(done) / double(total));
            }
            const auto event = events[e];
            std::string where = "device " + std::to_string(d) + ", event " + std::to_string(e);
            if (!event.isDict())
                return fail(where, "is a " + std::string(event.typeName()) + ", not a dict");
            const auto action = event.find("action");
            if (!action || !action->isString())
                return fail(where, "'action' is missing or not a string");
            const auto known = actions.find(action->asString());
            if (known == actions.end()) {
                ++m_snapshot.unknownActions; // a newer PyTorch's action: skipped, counted in the notes
                continue;
            }
            where += " (" + std::string(action->asString()) + ")";
            TraceEvent parsed;
            parsed.action = known->second;
            const bool memory = parsed.action != TraceAction::Oom && parsed.action != TraceAction::Snapshot;
            if (auto st = integers(event, where,
                    { { "addr", memory, kMostSnapshotAddress, &parsed.addr }, { "size", memory, kMostProblemBytes, &parsed.size },
                        { "stream", false, INT64_MAX, &parsed.stream }, { "time_us", false, INT64_MAX, &parsed.timeUs },
                        { "device_free", false, INT64_MAX, &parsed.deviceFree } });
                !st)
                return st;
            auto frame = site(event, where);
            if (!frame)
                return frame.error();
            parsed.frame = *frame;
            out.push_back(parsed);
        }
    }
    return {};
}
Status SnapshotReader::annotations(const PickleValue& list)
{
    if (!list.isList())
        return fail("'external_annotations'", "is a " + std::string(list.typeName()) + ", not a list");
    m_snapshot.annotations.reserve(std::min<std::size_t>(list.size(), 1 << 20));
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto value = list[i];
        const std::string where = "annotation " + std::to_string(i);
        if (!value.isDict())
            return fail(where, "is a " + std::string(value.typeName()) + ", not a dict");
        SnapshotAnnotation a;
        std::int64_t device = -1;
        if (auto st = integers(value, where, { { "device", false, 1 << 20, &device }, { "time_us", false, INT64_MAX, &a.timeUs } }); !st)
            return st;
        a.device = int(device);
        // The metadata PyTorch records are strings; other values (a newer field) are left out.
        for (std::size_t k = 0; k < value.entryCount(); ++k) {
            const auto key = value.entryKey(k);
            const auto field = value.entryValue(k);
            if (!key.isString() || !field.isString())
                continue;
            const auto name = key.asString();
            if (name == "name")
                a.name = std::string(field.asString().substr(0, 256));
            else if (name == "stage")
                a.stage = std::string(field.asString().substr(0, 16));
            else if (a.text.size() < 256)
                a.text += (a.text.empty() ? "" : ", ") + std::string(name.substr(0, 64)) + "=" + std::string(field.asString().substr(0, 128));
        }
        if (a.name.empty())
            a.name = a.text.empty() ? "annotation " + std::to_string(i) : a.text;
        m_snapshot.annotations.push_back(std::move(a));
    }
    return {};
}
} // namespace

Expected<MemorySnapshot> snapshotFromPickle(const PickleValue& root, const std::string& source, const LoadProgress& progress)
{
    if (!root.isDict())
        return makeError(ErrorCode::InvalidModel, source + ": the pickle holds a " + std::string(root.typeName())
                + ", not a memory snapshot (a dict with 'segments' and 'device_traces')");
    MemorySnapshot snapshot;
    SnapshotReader reader(source, snapshot, progress);
    const auto segments = root.find("segments");
    const auto traces = root.find("device_traces");
    if (!segments && !traces)
        return makeError(ErrorCode::InvalidModel, source + ": a dict without 'segments' or 'device_traces': not a PyTorch memory snapshot");
    if (segments)
        if (auto st = reader.segments(*segments); !st)
            return st.error();
    if (traces && !traces->isNone())
        if (auto st = reader.traces(*traces); !st)
            return st.error();
    for (const char* key : { "external_annotations", "annotations" })
        if (const auto list = root.find(key); list && !list->isNone()) {
            if (auto st = reader.annotations(*list); !st)
                return st.error();
            break;
        }
    return snapshot;
}

Expected<MemorySnapshot> loadSnapshot(const std::filesystem::path& file, const LoadProgress& progress)
{
    auto document = readPickleFile(file, progress);
    if (!document)
        return document.error();
    return snapshotFromPickle((*document)->root(), file.string(), progress);
}

} // namespace core
