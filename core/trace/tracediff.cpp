// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "trace/tracediff.h"

#include "util/format.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace core {

std::string_view peakCauseName(PeakCause cause)
{
    switch (cause) {
    case PeakCause::OnlyInB: return "only_in_b";
    case PeakCause::OnlyInA: return "only_in_a";
    case PeakCause::Rounding: return "rounding";
    case PeakCause::Resized: return "resized";
    case PeakCause::LongerInB: return "longer_in_b";
    case PeakCause::LongerInA: return "longer_in_a";
    case PeakCause::PeakMoment: return "peak_moment";
    }
    return "?";
}

Bytes TraceDiff::unexplained() const
{
    Bytes sum = 0;
    for (const auto& row : explanation)
        sum += row.bytes;
    return peakChange() - sum;
}

namespace {
bool liveAtStep(const DiffAllocation& d, Step step) { return d.lifetime.start <= step && step < d.lifetime.end; }

std::string poolOf(Bytes size) { return size <= (Bytes(1) << 20) ? "small pool (up to 1 MiB)" : "large pool (over 1 MiB)"; }

// A's curve on B's axis: per B step, the most over the A steps from its aligned step to the next one's.
std::vector<Bytes> onAxis(const std::vector<Bytes>& curve, const std::vector<double>& aStepAt)
{
    std::vector<Bytes> out(aStepAt.size(), 0);
    if (curve.empty())
        return out;
    const auto last = std::ptrdiff_t(curve.size()) - 1;
    for (std::size_t s = 0; s < aStepAt.size(); ++s) {
        const auto lo = std::clamp<std::ptrdiff_t>(std::ptrdiff_t(std::floor(aStepAt[s])), 0, last);
        auto hi = s + 1 < aStepAt.size() ? std::clamp<std::ptrdiff_t>(std::ptrdiff_t(std::floor(aStepAt[s + 1])), 0, last + 1) : last + 1;
        hi = std::max(hi, lo + 1);
        out[s] = *std::max_element(curve.begin() + lo, curve.begin() + hi);
    }
    return out;
}

// The B step A's step `stepA` maps to: the last B step whose aligned A step is at most it.
Step bStepOf(const std::vector<double>& aStepAt, Step stepA)
{
    const auto it = std::upper_bound(aStepAt.begin(), aStepAt.end(), double(stepA) + 1e-9);
    return it == aStepAt.begin() ? 0 : Step(it - aStepAt.begin() - 1);
}

std::vector<DiffRow> sortedRows(std::map<std::string, DiffRow>& byName)
{
    std::vector<DiffRow> rows;
    for (auto& [name, row] : byName) {
        row.name = name;
        rows.push_back(row);
    }
    std::stable_sort(rows.begin(), rows.end(), [](const DiffRow& x, const DiffRow& y) { return std::llabs(x.change()) > std::llabs(y.change()); });
    return rows;
}

// The explanation's sites: the three that carry most of a row's bytes.
struct Carrier {
    Bytes bytes = 0;
    int count = 0;
    std::map<std::string, Bytes> sites;
    void add(Bytes b, const std::string& site)
    {
        bytes += b;
        ++count;
        sites[site] += b;
    }
    std::string detail() const
    {
        std::vector<std::pair<std::string, Bytes>> list(sites.begin(), sites.end());
        std::stable_sort(list.begin(), list.end(), [](const auto& x, const auto& y) { return std::llabs(x.second) > std::llabs(y.second); });
        std::string out;
        for (std::size_t i = 0; i < list.size() && i < 3; ++i)
            out += (i ? ", " : "") + list[i].first + " " + (list[i].second < 0 ? "-" : "") + formatBytes(std::llabs(list[i].second));
        if (list.size() > 3)
            out += ", ...";
        return out;
    }
};
} // namespace

TraceDiff diffTraces(DiffSide a, DiffSide b, const AlignOptions& options)
{
    TraceDiff diff;
    diff.alignment = alignTraces(a, b, options);
    diff.a = std::move(a);
    diff.b = std::move(b);
    const auto& A = diff.a;
    const auto& B = diff.b;

    diff.bLive = B.live.empty() ? std::vector<Bytes>(1, 0) : B.live;
    diff.bHeld = B.held.empty() ? std::vector<Bytes>(diff.bLive.size(), 0) : B.held;
    diff.aLive = onAxis(A.live, diff.alignment.aStepAt);
    diff.aHeld = onAxis(A.held, diff.alignment.aStepAt);
    diff.aPeakOnAxis = Step(std::find(diff.aLive.begin(), diff.aLive.end(), A.peak) - diff.aLive.begin());
    if (std::size_t(diff.aPeakOnAxis) >= diff.aLive.size())
        diff.aPeakOnAxis = 0;

    std::vector<int> matchOfA(A.allocations.size(), -1), matchOfB(B.allocations.size(), -1);
    for (const auto& [i, j] : diff.alignment.pairs) {
        matchOfA[std::size_t(i)] = j;
        matchOfB[std::size_t(j)] = i;
    }
    // A matched snapshot allocation takes its plan counterpart's site and category, so the rows of a
    // snapshot against a plan line up; two snapshots keep their frames.
    const auto siteOfB = [&](std::size_t j) -> const std::string& {
        const int i = matchOfB[j];
        return B.measured && !A.measured && i >= 0 ? A.allocations[std::size_t(i)].site : B.allocations[j].site;
    };
    const auto siteOfA = [&](std::size_t i) -> const std::string& {
        const int j = matchOfA[i];
        return A.measured && !B.measured && j >= 0 ? B.allocations[std::size_t(j)].site : A.allocations[i].site;
    };
    const auto categoryOf = [](const DiffSide& side, const DiffSide& other, std::size_t k, int match) {
        const auto& d = side.allocations[k];
        if (!d.category.empty())
            return d.category;
        if (match >= 0 && !other.allocations[std::size_t(match)].category.empty())
            return other.allocations[std::size_t(match)].category;
        return poolOf(d.size);
    };

    std::map<std::string, DiffRow> sites, categories;
    std::map<PeakCause, Carrier> causes;
    const Step peakA = A.peakStep, peakB = B.peakStep;
    // The other side's moment of each peak, through the aligned axis.
    const Step peakBInA = diff.alignment.aStepAt.empty() ? 0 : Step(std::floor(diff.alignment.aStepAt[std::size_t(std::min<Step>(peakB, Step(diff.alignment.aStepAt.size()) - 1))]));
    const Step peakAInB = bStepOf(diff.alignment.aStepAt, peakA);

    for (std::size_t i = 0; i < A.allocations.size(); ++i) {
        const auto& d = A.allocations[i];
        if (!liveAtStep(d, peakA))
            continue;
        const int j = matchOfA[i];
        auto& site = sites[siteOfA(i)];
        site.a += d.size;
        ++site.aCount;
        auto& category = categories[categoryOf(A, B, i, j)];
        category.a += d.size;
        ++category.aCount;
        if (j < 0) {
            causes[PeakCause::OnlyInA].add(-d.size, siteOfA(i));
            continue;
        }
        const auto& e = B.allocations[std::size_t(j)];
        if (liveAtStep(e, peakB)) {
            // Counted once, from A's side: sj - si = rounding + resize.
            const Bytes rounding = (roundedTo512(d.size) - d.size) - (roundedTo512(e.size) - e.size);
            const Bytes resized = roundedTo512(e.size) - roundedTo512(d.size);
            if (rounding != 0)
                causes[PeakCause::Rounding].add(rounding, siteOfA(i));
            if (resized != 0)
                causes[PeakCause::Resized].add(resized, siteOfA(i));
            continue;
        }
        causes[liveAtStep(e, peakAInB) ? PeakCause::PeakMoment : PeakCause::LongerInA].add(-d.size, siteOfA(i));
    }
    for (std::size_t j = 0; j < B.allocations.size(); ++j) {
        const auto& e = B.allocations[j];
        if (!liveAtStep(e, peakB))
            continue;
        const int i = matchOfB[j];
        auto& site = sites[siteOfB(j)];
        site.b += e.size;
        ++site.bCount;
        auto& category = categories[categoryOf(B, A, j, i)];
        category.b += e.size;
        ++category.bCount;
        if (i < 0) {
            causes[PeakCause::OnlyInB].add(e.size, siteOfB(j));
            continue;
        }
        const auto& d = A.allocations[std::size_t(i)];
        if (liveAtStep(d, peakA))
            continue; // counted from A's side
        causes[liveAtStep(d, peakBInA) ? PeakCause::PeakMoment : PeakCause::LongerInB].add(e.size, siteOfB(j));
    }
    diff.sites = sortedRows(sites);
    diff.categories = sortedRows(categories);
    for (const auto& [cause, carrier] : causes)
        if (carrier.bytes != 0)
            diff.explanation.push_back({ cause, carrier.bytes, carrier.count, carrier.detail() });
    std::stable_sort(diff.explanation.begin(), diff.explanation.end(),
        [](const PeakExplanation& x, const PeakExplanation& y) { return std::llabs(x.bytes) > std::llabs(y.bytes); });
    return diff;
}

} // namespace core
