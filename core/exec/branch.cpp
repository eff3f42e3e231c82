// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/branch.h"

#include "exec/branchrun.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

namespace core::exec {

namespace graphrun {

bool evalIf(const Subgraphs& branches, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel, const BodyArena& arena)
{
    if (!call.has(0) || call.in[0].count != 1 || call.in[0].dtype != DType::Bool) {
        why = "the condition is not one bool";
        return false;
    }
    const bool then = call.in[0].data[0] != std::byte { 0 };
    const Branch& branch = then ? branches.then : branches.otherwise;
    if (!branch.unsupported.empty()) {
        why = branch.unsupported;
        return false;
    }
    if (branch.results.size() != outputs) {
        why = "the branch returns " + std::to_string(branch.results.size()) + " values for " + std::to_string(outputs) + " outputs";
        return false;
    }
    auto place = placeOf(arena, then ? "then_branch" : "else_branch");
    place.outputs = &call.out;
    BranchRun run(branch, outer, heldBytes, cancel, place);
    if (!run.runAll(why))
        return false;
    for (std::size_t k = 0; k < branch.results.size(); ++k) {
        TensorView r;
        if (!run.find(branch.results[k], r)) {
            why = "the branch result '" + branch.results[k] + "' was not computed";
            return false;
        }
        // Written in the If's output already (GraphSlots::outputs), else copied out of the run.
        const bool inOutput = k < call.out.size() && r.data && r.data == call.out[k].data && !r.sequence;
        results.push_back(inOutput ? placedValue(r.dtype, r.shape, r.data) : copyOf(r));
    }
    return true;
}

bool evalLoop(const Subgraphs& loop, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel, const BodyArena& arena)
{
    const Branch& body = loop.body;
    if (!body.unsupported.empty()) {
        why = body.unsupported;
        return false;
    }
    const std::size_t carriedCount = call.in.size() > 2 ? call.in.size() - 2 : 0;
    if (body.formals.size() != 2 + carriedCount || body.results.size() < 1 + carriedCount || outputs != body.results.size() - 1) {
        why = "the body's inputs and outputs do not match the Loop's";
        return false;
    }
    const std::size_t scans = body.results.size() - 1 - carriedCount;
    std::int64_t trips = kMaxLoopIterations;
    if (call.has(0)) {
        if (call.in[0].count != 1) {
            why = "the trip count is not one integer";
            return false;
        }
        trips = intAt(call.in[0], 0);
    }
    bool keepGoing = true;
    if (call.has(1)) {
        if (call.in[1].count != 1 || call.in[1].dtype != DType::Bool) {
            why = "the condition is not one bool";
            return false;
        }
        keepGoing = call.in[1].data[0] != std::byte { 0 };
    }
    std::vector<Value> carried;
    for (std::size_t k = 0; k < carriedCount; ++k) {
        // Without data: an optional holding nothing, which only an optional formal may take.
        if (!call.has(2 + k) && !body.optionals.count(body.formals[2 + k])) {
            why = "a carried value is left out";
            return false;
        }
        carried.push_back(copyOf(call.in[2 + k]));
    }
    // A scan output the plan gives room (a Loop of the model's graph) is stacked straight into that
    // room, slice by slice; one without (a Loop inside a graph) in a host allocation.
    std::vector<std::vector<std::byte>> scanBytes(scans);
    std::vector<std::byte*> scanInto(scans, nullptr);
    std::vector<Bytes> scanSize(scans, 0);
    for (std::size_t k = 0; k < scans; ++k)
        if (const auto* room = plannedOutput(call, carriedCount + k))
            scanInto[k] = room->data;
    std::vector<Shape> scanShape(scans);
    std::vector<DType> scanType(scans, DType::Undefined);
    for (std::size_t k = 0; k < scans; ++k)
        if (const auto t = body.types.find(body.results[1 + carriedCount + k]); t != body.types.end())
            scanType[k] = t->second; // the type of a scan output no iteration produced
    const GraphPlace place = placeOf(arena, "body");
    std::int64_t done = 0;
    Bytes written = 0; // by the body, over all iterations
    for (; done < trips && keepGoing; ++done) {
        if (done == kMaxLoopIterations) {
            why = "more than " + std::to_string(kMaxLoopIterations) + " iterations";
            return false;
        }
        Bytes held = 0;
        BranchRun run(body, outer, held, cancel, place);
        Value iteration = allocate(DType::Int64, {}, 1);
        std::memcpy(iteration.bytes.data(), &done, sizeof done);
        Value condition = allocate(DType::Bool, {}, 1);
        condition.bytes[0] = std::byte { 1 };
        run.bind(body.formals[0], std::move(iteration));
        run.bind(body.formals[1], std::move(condition));
        Bytes entering = 0; // the carried values the run holds in allocations of their own while it runs
        for (std::size_t k = 0; k < carriedCount; ++k)
            entering += run.bind(body.formals[2 + k], std::move(carried[k]));
        if (!run.runAll(why))
            return false;
        TensorView v;
        if (!run.find(body.results[0], v) || v.count != 1 || v.dtype != DType::Bool) {
            why = "the body's condition is not one bool";
            return false;
        }
        keepGoing = v.data[0] != std::byte { 0 };
        // Scan slices are read first: carried results are then moved out of the run (a result
        // named twice, read from outside the body, or at its planned offset in the body's region,
        // which the next iteration reuses, is copied).
        for (std::size_t k = 0; k < scans; ++k) {
            if (!run.find(body.results[1 + carriedCount + k], v)) {
                why = "the body's result '" + body.results[1 + carriedCount + k] + "' was not computed";
                return false;
            }
            if (done > 0 && (v.shape != scanShape[k] || v.dtype != scanType[k])) {
                why = "scan output '" + body.results[1 + carriedCount + k] + "' changes shape between iterations";
                return false;
            }
            scanShape[k] = v.shape;
            scanType[k] = v.dtype;
            const Bytes room = plannedRoom(call, carriedCount + k);
            if (scanInto[k] && scanSize[k] + v.bytes() > room) {
                why = "output " + std::to_string(carriedCount + k) + " ('" + body.results[1 + carriedCount + k]
                    + "') outgrew the room the plan gives it (" + std::to_string(room) + " bytes) in iteration " + std::to_string(done + 1);
                return false;
            }
            if (scanInto[k])
                std::memcpy(scanInto[k] + scanSize[k], v.data, std::size_t(v.bytes()));
            else
                scanBytes[k].insert(scanBytes[k].end(), v.data, v.data + v.bytes());
            scanSize[k] += v.bytes();
        }
        Bytes copies = 0; // carried results copied out of the run
        for (std::size_t k = 0; k < carriedCount; ++k) {
            const auto& name = body.results[1 + k];
            const bool namedAgain = std::find(body.results.begin() + 2 + std::ptrdiff_t(k), body.results.begin() + 1 + std::ptrdiff_t(carriedCount), name)
                != body.results.begin() + 1 + std::ptrdiff_t(carriedCount);
            bool copied = false;
            if (!namedAgain && run.take(name, carried[k], &copied)) {
                copies += copied ? carried[k].ownBytes() : 0;
                continue;
            }
            if (!run.find(name, v)) {
                why = "the body's result '" + name + "' was not computed";
                return false;
            }
            carried[k] = copyOf(v);
            copies += carried[k].ownBytes();
        }
        Bytes total = held + entering + copies; // carried results moved out of the run are among the values it held
        for (const auto& b : scanBytes)
            total += Bytes(b.size());
        heldBytes = std::max(heldBytes, total);
        // A result that outgrew its planned room cannot fit it at the end: a scan output only grows,
        // and so, in practice, does a carried one (a tensor a Loop with no trip count concatenates
        // to would otherwise grow for kMaxLoopIterations iterations, quadratic in time).
        for (std::size_t j = 0; j < outputs; ++j) {
            const Bytes room = plannedRoom(call, j);
            const bool isCarried = j < carriedCount;
            if (room < 0)
                continue;
            // A sequence's shape is { its elements }, so it is measured as a tensor is.
            const Bytes size = isCarried ? elementCount(carried[j].shape) * dtypeBytes(carried[j].dtype) : scanSize[j - carriedCount];
            if (size > room) {
                why = "output " + std::to_string(j) + " ('" + body.results[1 + j] + "') outgrew the room the plan gives it ("
                    + std::to_string(room) + " bytes) in iteration " + std::to_string(done + 1);
                return false;
            }
        }
        written += run.writtenNow();
        if (written > kMostLoopBytes) {
            why = "its body wrote more than " + std::to_string(kMostLoopBytes >> 30) + " GiB in all by iteration " + std::to_string(done + 1)
                + " (the most a Loop's iterations may write)";
            return false;
        }
    }
    results = std::move(carried);
    for (std::size_t k = 0; k < scans; ++k) {
        Shape stacked { done };
        stacked.insert(stacked.end(), scanShape[k].begin(), scanShape[k].end());
        if (scanInto[k]) { // already in the op's output
            results.push_back(placedValue(scanType[k], std::move(stacked), scanInto[k]));
            continue;
        }
        Value v = allocate(scanType[k], std::move(stacked), 0);
        if (scanBytes[k].size() > v.bytes.size())
            v.bytes = std::move(scanBytes[k]);
        else
            std::copy(scanBytes[k].begin(), scanBytes[k].end(), v.bytes.begin());
        results.push_back(std::move(v));
    }
    return true;
}

bool evaluate(const Subgraphs& graphs, const KernelCall& call, std::size_t outputs, const OuterLookup& outer,
    std::vector<Value>& results, Bytes& heldBytes, std::string& why, const CancelToken& cancel, const BodyArena& arena)
{
    results.clear();
    const std::string& type = call.op->type;
    if (type == "If")
        return evalIf(graphs, call, outputs, outer, results, heldBytes, why, cancel, arena);
    if (type == "Loop")
        return evalLoop(graphs, call, outputs, outer, results, heldBytes, why, cancel, arena);
    if (type == "Scan" && graphs.body.formals.size() + 1 == call.in.size())
        return evalScan8(graphs, call, outputs, outer, results, heldBytes, why, cancel, arena);
    if (type == "Scan")
        return evalScan(graphs, call, outputs, outer, results, heldBytes, why, cancel, arena);
    if (type == "SequenceMap")
        return evalSequenceMap(graphs, call, outputs, outer, results, heldBytes, why, cancel, arena);
    why = type + " has no graphs to run";
    return false;
}

} // namespace graphrun

using namespace graphrun;

bool runsGraphs(const std::string& type)
{
    return type == "If" || type == "Loop" || type == "Scan" || type == "SequenceMap";
}

bool runControlFlow(const Subgraphs& graphs, const KernelCall& call, const std::vector<bool>& bounded, const OuterLookup& outer,
    std::vector<Shape>& shapes, std::vector<std::vector<Shape>>& items, std::vector<bool>& none, Bytes& heldBytes, std::string& why,
    const CancelToken& cancel, const BodyArena& arena)
{
    std::vector<Value> results;
    // The values inside are host allocations of run-time sizes, which a shape argument can make as
    // large as it likes (a Resize to 2^40 pixels).
    const auto tooLarge = [&] {
        why = "a value inside the " + call.op->type + "'s graph is larger than the host can allocate";
        return false;
    };
    try {
        if (bounded.size() != call.out.size() || !evaluate(graphs, call, call.out.size(), outer, results, heldBytes, why, cancel, arena))
            return false;
    } catch (const std::bad_alloc&) {
        return tooLarge();
    } catch (const std::length_error&) {
        return tooLarge();
    }
    // Every result must fit its planned room before any is written.
    for (std::size_t k = 0; k < call.out.size(); ++k) {
        if (results[k].none)
            continue; // nothing to write (whether its output may hold nothing is the caller's to check)
        const auto r = results[k].view();
        const auto& room = call.out[k];
        if (r.sequence != room.sequence) {
            why = "the " + call.op->type + "'s output " + std::to_string(k) + (r.sequence ? " is a sequence, its room a tensor" : " is a tensor, its room a sequence");
            return false;
        }
        if (r.dtype != room.dtype || (bounded[k] ? r.count > room.count : r.count != room.count)) {
            why = "the " + call.op->type + "'s output " + std::to_string(k) + " (" + std::string(dtypeName(r.dtype)) + ", "
                + std::to_string(r.count) + " elements) does not fit the planned room of " + std::to_string(room.count);
            return false;
        }
    }
    shapes.clear();
    items.clear();
    none.clear();
    for (std::size_t k = 0; k < call.out.size(); ++k) {
        const auto r = results[k].view();
        if (r.count > 0 && !results[k].none && r.data != call.out[k].data) // a Loop's scan output is there already
            std::memcpy(call.out[k].data, r.data, std::size_t(r.bytes()));
        shapes.push_back(r.shape);
        items.push_back(r.items);
        none.push_back(results[k].none);
    }
    return true;
}

} // namespace core::exec
