// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/branchrun.h"

#include "exec/runshape.h"

#include <algorithm>

namespace core::exec::graphrun {

bool evalSequenceMap(const Subgraphs& map, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel, const BodyArena& arena)
{
    const Branch& body = map.body;
    if (!body.unsupported.empty()) {
        why = body.unsupported;
        return false;
    }
    if (body.formals.size() != call.in.size() || body.results.size() != outputs) {
        why = "the body's inputs and outputs do not match the SequenceMap's";
        return false;
    }
    if (call.in.empty() || !call.has(0) || !call.in[0].sequence) {
        why = "input 0 is not a sequence";
        return false;
    }
    const auto length = std::int64_t(call.in[0].items.size());
    // Where each element of each sequence input starts, in bytes (elements lie packed in order).
    std::vector<std::vector<std::int64_t>> starts(call.in.size());
    for (std::size_t k = 0; k < call.in.size(); ++k) {
        const auto& x = call.in[k];
        if (!call.has(k)) {
            why = "input " + std::to_string(k) + " is left out";
            return false;
        }
        if (!x.sequence)
            continue;
        if (std::int64_t(x.items.size()) != length) {
            why = "input " + std::to_string(k) + " holds " + std::to_string(x.items.size()) + " elements, input 0 "
                + std::to_string(length);
            return false;
        }
        starts[k] = itemOffsets(x);
        const Bytes w = dtypeBytes(x.dtype);
        const std::int64_t elements = length == 0 || w <= 0 ? 0 : starts[k].back() / w + elementCount(x.items.back());
        if (w <= 0 || elements != x.count) {
            why = "input " + std::to_string(k) + "'s element shapes do not add up to its elements";
            return false;
        }
    }
    std::vector<Value> lists(outputs);
    for (std::size_t j = 0; j < outputs; ++j) {
        lists[j].sequence = true;
        if (const auto t = body.types.find(body.results[j]); t != body.types.end())
            lists[j].dtype = t->second; // the type of a list no iteration added to
    }
    for (std::int64_t i = 0; i < length; ++i) {
        Bytes held = 0;
        BranchRun run(body, outer, held, cancel, placeOf(arena, "body"));
        for (std::size_t k = 0; k < call.in.size(); ++k) {
            const auto& x = call.in[k];
            if (!x.sequence) {
                run.lend(body.formals[k], x); // a tensor input, whole
                continue;
            }
            TensorView element; // element i of the list, read where the list holds it
            element.dtype = x.dtype;
            element.shape = x.items[std::size_t(i)];
            element.count = elementCount(element.shape);
            element.data = x.data + starts[k][std::size_t(i)];
            run.lend(body.formals[k], element);
        }
        if (!run.runAll(why))
            return false;
        Bytes total = held;
        for (std::size_t j = 0; j < outputs; ++j) {
            TensorView v;
            if (!run.find(body.results[j], v)) {
                why = "the body's result '" + body.results[j] + "' was not computed";
                return false;
            }
            if (v.sequence) {
                why = "the body's result '" + body.results[j] + "' is a sequence, not one element";
                return false;
            }
            auto& list = lists[j];
            if (i > 0 && v.dtype != list.dtype) {
                why = "the body's result '" + body.results[j] + "' changes type between elements";
                return false;
            }
            list.dtype = v.dtype;
            list.items.push_back(v.shape);
            list.bytes.insert(list.bytes.end(), v.data, v.data + v.bytes());
            total += Bytes(list.bytes.size());
            const Bytes room = plannedRoom(call, j);
            if (room >= 0 && Bytes(list.bytes.size()) > room) {
                why = "output " + std::to_string(j) + " ('" + body.results[j] + "') outgrew the room the plan gives it ("
                    + std::to_string(room) + " bytes) at element " + std::to_string(i);
                return false;
            }
        }
        heldBytes = std::max(heldBytes, total);
    }
    for (auto& list : lists) {
        std::int64_t count = 0;
        for (const auto& item : list.items)
            count += elementCount(item);
        list.shape = { count };
        if (list.bytes.empty())
            list.bytes.resize(8); // never empty: an empty list is present
    }
    results = std::move(lists);
    return true;
}

} // namespace core::exec::graphrun
