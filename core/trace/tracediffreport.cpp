// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// The text and JSON reports of `memplan trace A B` (core/trace/tracediff.h).
#include "trace/tracediff.h"

#include "util/format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace core {

namespace {
using Json = nlohmann::ordered_json;

std::string signedBytes(Bytes bytes) { return (bytes < 0 ? "-" : bytes > 0 ? "+" : "") + formatBytes(bytes < 0 ? -bytes : bytes); }

std::string pad(std::string text, std::size_t width, bool right = true)
{
    if (text.size() < width)
        text = right ? std::string(width - text.size(), ' ') + text : text + std::string(width - text.size(), ' ');
    return text;
}

// Where a side's step lies: a snapshot's step s is the state after event s - 1.
std::string atStep(const DiffSide& side, Step step)
{
    if (!side.measured)
        return "at step " + std::to_string(step) + " of " + std::to_string(side.live.size());
    if (side.events == 0)
        return "when the snapshot was taken";
    return step == 0 ? "before the first event" : "after event " + std::to_string(step - 1);
}

std::string sideLine(const char* label, const DiffSide& side)
{
    if (side.measured)
        return std::string(label) + side.source + ": peak allocated " + formatBytes(side.peak) + " " + atStep(side, side.peakStep)
            + ", peak reserved " + formatBytes(side.heldPeak) + ", " + std::to_string(side.allocations.size()) + " allocations\n";
    return std::string(label) + side.source + ": planned (" + side.planner + ", validated): peak live " + formatBytes(side.peak) + " "
        + atStep(side, side.peakStep) + ", arena " + formatBytes(side.heldPeak) + ", " + std::to_string(side.allocations.size()) + " buffers"
        + (side.outside > 0 ? " (and " + formatBytes(side.outside) + " of weights and state outside the arena, not compared)" : "") + "\n";
}

} // namespace

std::string peakCauseText(const TraceDiff& diff, PeakCause cause)
{
    switch (cause) {
    case PeakCause::OnlyInB: return "allocations live at B's peak with no counterpart in A";
    case PeakCause::OnlyInA: return "allocations live at A's peak with no counterpart in B";
    case PeakCause::Rounding: return "rounding: matched allocations' distance to the allocator's 512-byte rounding";
    case PeakCause::Resized: return "matched allocations of another size (resized, or a larger unsplit block)";
    case PeakCause::LongerInB: return "matched allocations that live longer in B (not live at that moment of A)";
    case PeakCause::LongerInA: return "matched allocations that live longer in A (not live at that moment of B)";
    case PeakCause::PeakMoment:
        return std::string("the peaks fall at other moments: matched allocations live at one peak and at the other side's ")
            + "aligned moment of it" + (diff.alignment.method == AlignMethod::Proportional ? " (on the proportional axis)" : "");
    }
    return "?";
}

namespace {
std::string rows(const std::vector<DiffRow>& list, int top, const std::string& what)
{
    const auto shown = top > 0 ? std::min<std::size_t>(list.size(), std::size_t(top)) : list.size();
    std::string out = "\nbytes live at each peak, by " + what + " (largest change first";
    out += shown < list.size() ? ", " + std::to_string(shown) + " of " + std::to_string(list.size()) + "):\n" : "):\n";
    out += "  " + pad("A", 10) + "  " + pad("B", 10) + "  " + pad("change", 11) + "  " + what + "\n";
    for (std::size_t i = 0; i < shown; ++i)
        out += "  " + pad(formatBytes(list[i].a), 10) + "  " + pad(formatBytes(list[i].b), 10) + "  " + pad(signedBytes(list[i].change()), 11)
            + "  " + list[i].name + "\n";
    return out;
}

// Indented like nlohmann's dump(2), but an array of numbers stays on one line (the aligned curves).
void writeJson(const Json& value, int indent, std::string& out)
{
    const auto dump = [](const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); };
    const bool flat = value.is_array() && std::all_of(value.begin(), value.end(), [](const Json& v) { return v.is_primitive(); });
    if (value.empty() || value.is_primitive() || flat) {
        out += dump(value);
        return;
    }
    const std::string inner(std::size_t(indent + 2), ' ');
    out += value.is_object() ? "{\n" : "[\n";
    bool first = true;
    for (auto it = value.begin(); it != value.end(); ++it) {
        out += (first ? "" : ",\n") + inner;
        first = false;
        if (value.is_object())
            out += dump(Json(it.key())) + ": ";
        writeJson(*it, indent + 2, out);
    }
    out += "\n" + std::string(std::size_t(indent), ' ') + (value.is_object() ? "}" : "]");
}

Json rowsJson(const std::vector<DiffRow>& list, const char* name)
{
    auto out = Json::array();
    for (const auto& row : list)
        out.push_back({ { name, row.name }, { "a_bytes", row.a }, { "b_bytes", row.b }, { "change_bytes", row.change() },
            { "a_allocations", row.aCount }, { "b_allocations", row.bCount } });
    return out;
}
} // namespace

std::string formatTraceDiff(const TraceDiff& diff, int top)
{
    const auto& a = diff.a;
    const auto& b = diff.b;
    std::string out = sideLine("A: ", a) + sideLine("B: ", b);
    const bool snapshots = a.measured && b.measured;
    out += "B - A: peak allocated " + signedBytes(diff.peakChange()) + ", " + (snapshots ? "peak reserved " : "reserved or arena ")
        + signedBytes(b.heldPeak - a.heldPeak) + "\n";
    // What each side holds beyond its live peak: a snapshot's segments' unused room, a plan's fragmentation.
    const auto over = [](const DiffSide& side) { return side.heldPeak - side.peak; };
    out += "       of the held change, " + signedBytes(over(b) - over(a)) + " is room held beyond the live peak (A: " + formatBytes(over(a))
        + (a.measured ? " of segments" : " of arena") + ", B: " + formatBytes(over(b)) + (b.measured ? " of segments" : " of arena")
        + "), the rest the peaks' change\n";

    out += "\nalignment (" + std::string(alignMethodName(diff.alignment.method)) + "): " + diff.alignment.summary + ".\n";
    out += "On B's step axis: A's peak at step " + std::to_string(diff.aPeakOnAxis) + ", B's at step " + std::to_string(b.peakStep) + " of "
        + std::to_string(diff.bLive.size()) + "\n";

    out += "\nwhat makes B's peak " + signedBytes(diff.peakChange()) + " against A's (largest first):\n";
    for (const auto& row : diff.explanation)
        out += "  " + pad(signedBytes(row.bytes), 11) + "  " + peakCauseText(diff, row.cause) + " (" + std::to_string(row.allocations)
            + (row.allocations == 1 ? " allocation" : " allocations") + (row.detail.empty() ? "" : ": " + row.detail) + ")\n";
    if (diff.explanation.empty())
        out += "  nothing: the same allocations are live at both peaks, at the same sizes\n";
    const auto rest = diff.unexplained();
    out += "  " + pad(signedBytes(rest), 11) + "  unexplained" + (rest == 0 ? " (the rows add up to the change)" : "") + "\n";
    if (diff.alignment.method == AlignMethod::Proportional)
        out += "  (the sides share almost no allocations: the rows say which allocations differ, not why)\n";

    out += rows(diff.categories, 0, "category");
    out += rows(diff.sites, top, "site");
    if (!a.notes.empty() || !b.notes.empty()) {
        out += "\nnotes:\n";
        for (const auto* side : { &a, &b })
            for (const auto& note : side->notes)
                out += std::string(side == &a ? "  A: " : "  B: ") + note + "\n";
    }
    return out;
}

std::string traceDiffJson(const TraceDiff& diff)
{
    Json j;
    for (const auto* side : { &diff.a, &diff.b }) {
        Json s;
        s["source"] = side->source;
        s["kind"] = side->measured ? "snapshot" : "plan";
        s["peak_allocated_bytes"] = side->peak;
        s["peak_step"] = side->peakStep;
        s["steps"] = side->live.size();
        if (side->measured) {
            s["peak_allocated_event"] = std::int64_t(side->peakStep) - 1;
            s["peak_reserved_bytes"] = side->heldPeak;
            s["device"] = side->device;
        } else {
            s["arena_bytes"] = side->heldPeak;
            s["planner"] = side->planner;
            s["outside_arena_bytes"] = side->outside;
        }
        s["allocations"] = side->allocations.size();
        s["events"] = side->events;
        j[side == &diff.a ? "a" : "b"] = s;
    }
    j["peak_change_bytes"] = diff.peakChange();
    j["held_change_bytes"] = diff.b.heldPeak - diff.a.heldPeak;
    j["a_held_over_peak_bytes"] = diff.a.heldPeak - diff.a.peak;
    j["b_held_over_peak_bytes"] = diff.b.heldPeak - diff.b.peak;
    j["sites"] = rowsJson(diff.sites, "site");
    j["categories"] = rowsJson(diff.categories, "category");
    const auto& al = diff.alignment;
    j["alignment"] = { { "method", std::string(alignMethodName(al.method)) }, { "matched", al.pairs.size() },
        { "matched_by_size", al.exactPairs }, { "keys_compared", al.keysCompared },
        { "matched_fraction", al.matchedFraction(diff.a.allocations.size(), diff.b.allocations.size()) }, { "summary", al.summary } };
    auto explanation = Json::array();
    for (const auto& row : diff.explanation)
        explanation.push_back({ { "cause", std::string(peakCauseName(row.cause)) }, { "bytes", row.bytes }, { "allocations", row.allocations },
            { "text", peakCauseText(diff, row.cause) }, { "detail", row.detail } });
    j["explanation"] = explanation;
    j["unexplained_bytes"] = diff.unexplained();
    j["a_notes"] = diff.a.notes;
    j["b_notes"] = diff.b.notes;
    auto aStep = Json::array();
    for (const double s : al.aStepAt)
        aStep.push_back(std::round(s * 1000.0) / 1000.0);
    j["aligned"] = { { "axis", "b_steps" }, { "steps", diff.bLive.size() }, { "a_peak_step", diff.aPeakOnAxis }, { "b_peak_step", diff.b.peakStep },
        { "a_step", aStep }, { "a_live_bytes", diff.aLive }, { "b_live_bytes", diff.bLive }, { "a_held_bytes", diff.aHeld },
        { "b_held_bytes", diff.bHeld } };
    std::string out;
    writeJson(j, 0, out);
    return out + "\n";
}

} // namespace core
