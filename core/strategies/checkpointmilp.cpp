// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/checkpointmilp.h"

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

namespace core {

namespace {

// A tensor that a later segment may read: its producer, bytes and the forward steps that read it.
struct SkipTensor {
    Step producer = 0;
    Bytes bytes = 0;
    std::vector<Step> readers; // ascending
};

std::vector<SkipTensor> skipTensors(const CheckpointChain& chain)
{
    std::map<std::pair<Step, Bytes>, std::vector<Step>> readers;
    for (Step s = 0; s < chain.steps() && std::size_t(s) < chain.inputs.size(); ++s)
        for (const auto& [from, bytes] : chain.inputs[std::size_t(s)])
            if (from + 1 < s) // a reader right after its producer is never in a later segment
                readers[{ from, bytes }].push_back(s);
    std::vector<SkipTensor> skips;
    for (auto& [key, steps] : readers) {
        steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
        skips.push_back({ key.first, key.second, std::move(steps) });
    }
    return skips;
}

// Why the chain's per-step lists do not fit together, or empty (a chain from checkpointChain always does).
std::string inconsistency(const CheckpointChain& chain)
{
    const auto n = chain.bytes.size();
    if (chain.seconds.size() != n || chain.forced.size() != n || chain.candidate.size() != n || (!chain.keep.empty() && chain.keep.size() != n)
        || (!chain.inputs.empty() && chain.inputs.size() != n))
        return "the chain's per-step lists differ in length";
    for (std::size_t s = 0; s < chain.inputs.size(); ++s)
        for (const auto& [from, bytes] : chain.inputs[s])
            if (from < 0 || std::size_t(from) >= s || bytes < 0)
                return "step " + std::to_string(s) + " reads a tensor that is not made by an earlier step";
    return {};
}

// The checkpoints in canonical form: ascending, unique, the forced steps before the last added.
std::vector<Step> canonical(const CheckpointChain& chain, std::vector<Step> checkpoints)
{
    std::erase_if(checkpoints, [&](Step s) { return s < 0 || s >= chain.steps(); });
    return withForcedCheckpoints(chain, std::move(checkpoints));
}

// Per skip tensor, the index of the first segment (segment i closes at checkpoints[i]) at whose re-run
// its original is held, or -1 when it never is (its producer is a checkpoint or in the tail, or no later
// segment reads it).
std::vector<int> heldFrom(const std::vector<SkipTensor>& skips, const std::vector<Step>& checkpoints)
{
    const int k = static_cast<int>(checkpoints.size());
    const auto segmentOf = [&](Step s) { return static_cast<int>(std::lower_bound(checkpoints.begin(), checkpoints.end(), s) - checkpoints.begin()); };
    const auto isCheckpoint = [&](Step s) { return std::binary_search(checkpoints.begin(), checkpoints.end(), s); };
    std::vector<int> first(skips.size(), -1);
    for (std::size_t t = 0; t < skips.size(); ++t) {
        const auto& skip = skips[t];
        const int own = segmentOf(skip.producer);
        if (own == k || isCheckpoint(skip.producer))
            continue;
        for (auto r : skip.readers) { // a checkpoint or a tail step is not re-run: it holds nothing
            const int segment = segmentOf(r);
            if (segment > own && segment < k && !isCheckpoint(r)) {
                first[t] = segment;
                break; // readers ascend, so segments do
            }
        }
    }
    return first;
}

CheckpointChoice evaluate(const CheckpointChain& chain, const std::vector<SkipTensor>& skips, std::vector<Step> checkpoints)
{
    CheckpointChoice choice;
    choice.checkpoints = canonical(chain, std::move(checkpoints));
    const auto& cps = choice.checkpoints;
    const auto first = heldFrom(skips, cps);
    std::vector<Bytes> entering(cps.size() + 1, 0);
    for (std::size_t t = 0; t < skips.size(); ++t)
        if (first[t] >= 0)
            entering[std::size_t(first[t])] += skips[t].bytes;
    Bytes checkpointBytes = 0, held = 0;
    Step previous = -1;
    for (std::size_t i = 0; i < cps.size(); ++i) {
        Bytes segment = 0;
        for (Step s = previous + 1; s < cps[i]; ++s) {
            segment += chain.bytes[std::size_t(s)];
            choice.modelSeconds += chain.seconds[std::size_t(s)];
        }
        held += entering[i];
        choice.modelPeak = std::max(choice.modelPeak, checkpointBytes + held + segment + chain.kept(cps[i]));
        checkpointBytes += chain.kept(cps[i]);
        previous = cps[i];
    }
    Bytes tail = 0;
    for (Step s = previous + 1; s < chain.steps(); ++s)
        tail += chain.bytes[std::size_t(s)];
    choice.modelPeak = std::max(choice.modelPeak, checkpointBytes + held + tail);
    return choice;
}

// The DP's set at its least feasible budget (the DP is monotone in the budget).
std::optional<CheckpointChoice> dpLeastPeak(const CheckpointChain& chain)
{
    Bytes low = 0, high = 0;
    for (int s = 0; s < chain.steps(); ++s)
        high += chain.kept(s);
    while (low < high) {
        const Bytes mid = low + (high - low) / 2;
        if (bestCheckpoints(chain, mid))
            high = mid;
        else
            low = mid + 1;
    }
    return bestCheckpoints(chain, low);
}

// What the branch and bound callback reads and records.
struct Search {
    std::vector<double> start; // a feasible point (GLPK's column numbering, [0] unused); empty: none
    bool startGiven = false;
    double gap = -1;
    CancelToken cancel;
    bool cancelled = false;
};

void callback(glp_tree* tree, void* info)
{
    auto& search = *static_cast<Search*>(info);
    if (glp_ios_reason(tree) == GLP_IHEUR && !search.startGiven && !search.start.empty()) {
        search.startGiven = true;
        glp_ios_heur_sol(tree, search.start.data());
    }
    const double gap = glp_ios_mip_gap(tree); // DBL_MAX until there is an incumbent
    if (gap < 1e300)
        search.gap = gap;
    if (search.cancel.isCancelled()) {
        search.cancelled = true;
        glp_ios_terminate(tree);
    }
}

// Deletes the problem and frees this thread's GLPK environment, however the solve ends.
struct Problem {
    glp_prob* lp = glp_create_prob();
    Problem() = default;
    Problem(const Problem&) = delete;
    Problem& operator=(const Problem&) = delete;
    ~Problem()
    {
        glp_delete_prob(lp);
        glp_free_env();
    }
};

// One row: sum(coefficients[i] * column[i]) within [low, high] (low or high may be unbounded).
void addRow(glp_prob* lp, std::vector<int> columns, std::vector<double> values, int type, double low, double high)
{
    const int row = glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, row, type, low, high);
    columns.insert(columns.begin(), 0); // GLPK reads from index 1
    values.insert(values.begin(), 0.0);
    glp_set_mat_row(lp, row, static_cast<int>(columns.size()) - 1, columns.data(), values.data());
}

// Budget given: the least seconds under it. No budget: the least peak.
MilpResult solve(const CheckpointChain& chain, std::optional<Bytes> budget, const MilpOptions& options)
{
    using Clock = std::chrono::steady_clock;
    const auto started = Clock::now();
    MilpResult result;
    const int n = chain.steps();
    if (n == 0) {
        result.message = "no forward steps (the graph has no backward pass)";
        return result;
    }
    if (options.cancel.isCancelled()) {
        result.cancelled = true;
        result.message = "cancelled";
        return result;
    }
    if (auto why = inconsistency(chain); !why.empty()) {
        result.message = std::move(why);
        return result;
    }
    std::vector<Bytes> bytesBefore(std::size_t(n) + 1, 0);
    std::vector<double> secondsBefore(std::size_t(n) + 1, 0.0);
    std::vector<Step> nextForced(std::size_t(n) + 1, n); // the first forced step at or after s
    for (int s = 0; s < n; ++s) {
        bytesBefore[std::size_t(s) + 1] = bytesBefore[std::size_t(s)] + chain.bytes[std::size_t(s)];
        secondsBefore[std::size_t(s) + 1] = secondsBefore[std::size_t(s)] + chain.seconds[std::size_t(s)];
    }
    for (int s = n - 1; s >= 0; --s)
        nextForced[std::size_t(s)] = chain.forced[std::size_t(s)] ? s : nextForced[std::size_t(s) + 1];
    // Nodes: 0 the start (position -1), 1..m the candidates ascending, m + 1 the end of the forward pass.
    std::vector<Step> position { -1 };
    for (Step s = 0; s < n; ++s)
        if (chain.candidate[std::size_t(s)] || chain.forced[std::size_t(s)])
            position.push_back(s);
    const int m = static_cast<int>(position.size()) - 1, end = m + 1;
    // Only a candidate strictly between a tensor's producer and a reader can put them in different segments.
    auto skips = skipTensors(chain);
    std::erase_if(skips, [&](const SkipTensor& t) {
        const auto after = std::upper_bound(position.begin() + 1, position.end(), t.producer);
        return after == position.end() || *after >= t.readers.back();
    });
    Bytes most = 0; // no peak exceeds it: scales the memory rows
    for (int s = 0; s < n; ++s)
        most += chain.kept(s);
    for (const auto& t : skips)
        most += t.bytes;
    const double scale = static_cast<double>(std::max<Bytes>(budget ? *budget : most, 1));
    const double secondsScale = secondsBefore[std::size_t(n)] > 0 ? secondsBefore[std::size_t(n)] : 1.0;

    Problem problem;
    glp_term_out(GLP_OFF);
    auto* lp = problem.lp;
    glp_set_obj_dir(lp, GLP_MIN);
    const auto addColumn = [&](int kind, double low, double high, double cost) {
        const int column = glp_add_cols(lp, 1);
        glp_set_col_kind(lp, column, kind);
        if (kind != GLP_BV)
            glp_set_col_bnds(lp, column, high > low ? GLP_DB : GLP_FX, low, high);
        glp_set_obj_coef(lp, column, cost);
        return column;
    };
    struct Edge {
        int from = 0, to = 0;
        Bytes bytes = 0; // the segment's bytes; into the end: the tail's
        int column = 0;
    };
    std::vector<Edge> edges;
    std::vector<std::vector<int>> into(std::size_t(end) + 1), outOf(std::size_t(end) + 1); // edge indices
    // What a path through node a holds for sure when it leaves a: a's own bytes and the forced checkpoints
    // before it. A pair that exceeds the budget with that alone is left out.
    std::vector<Bytes> heldAtLeast(std::size_t(end), 0);
    Bytes forcedBefore = 0;
    for (Step k = 0, a = 1; a <= m; ++a) {
        for (; k < position[std::size_t(a)]; ++k)
            if (chain.forced[std::size_t(k)])
                forcedBefore += chain.kept(k);
        heldAtLeast[std::size_t(a)] = forcedBefore + chain.kept(position[std::size_t(a)]);
    }
    for (int a = 0; a <= m; ++a) {
        const Step from = position[std::size_t(a)];
        for (int b = a + 1; b <= end; ++b) {
            Edge e { a, b, 0, 0 };
            double seconds = 0;
            if (b == end) {
                e.bytes = bytesBefore[std::size_t(n)] - bytesBefore[std::size_t(from) + 1];
                if (budget && heldAtLeast[std::size_t(a)] + e.bytes > *budget)
                    continue;
            } else {
                const Step to = position[std::size_t(b)];
                if (nextForced[std::size_t(from) + 1] < to)
                    continue; // a forced checkpoint inside the segment; only the end may lie past it
                e.bytes = bytesBefore[std::size_t(to)] - bytesBefore[std::size_t(from) + 1];
                seconds = secondsBefore[std::size_t(to)] - secondsBefore[std::size_t(from) + 1];
                if (budget && heldAtLeast[std::size_t(a)] + e.bytes + chain.kept(to) > *budget)
                    continue;
            }
            e.column = addColumn(GLP_BV, 0, 1, budget ? seconds / secondsScale : 0.0);
            into[std::size_t(b)].push_back(static_cast<int>(edges.size()));
            outOf[std::size_t(a)].push_back(static_cast<int>(edges.size()));
            edges.push_back(e);
        }
    }
    result.binaries = static_cast<int>(edges.size());
    if (outOf[0].empty() || into[std::size_t(end)].empty()) {
        result.infeasible = true; // every first segment, or every tail, alone exceeds the budget
        return result;
    }
    std::vector<int> checkpointColumn(std::size_t(end) + 1, 0); // y(c), c = 1..m
    for (int c = 1; c <= m; ++c)
        checkpointColumn[std::size_t(c)] = addColumn(GLP_CV, 0, 1, 0);
    const int peakColumn = budget ? 0 : addColumn(GLP_CV, 0, static_cast<double>(most) / scale + 1, 1.0);
    // u(t, c) for the nodes after t's producer, and the end.
    std::vector<std::vector<int>> heldColumn(skips.size(), std::vector<int>(std::size_t(end) + 1, 0));
    for (std::size_t t = 0; t < skips.size(); ++t)
        for (int c = 1; c <= end; ++c)
            if (c == end || position[std::size_t(c)] > skips[t].producer)
                heldColumn[t][std::size_t(c)] = addColumn(GLP_CV, 0, 1, 0);

    // The path: one edge leaves the start, one enters the end, a checkpoint has one in and one out.
    {
        std::vector<int> columns;
        for (int e : outOf[0])
            columns.push_back(edges[std::size_t(e)].column);
        addRow(lp, columns, std::vector<double>(columns.size(), 1.0), GLP_FX, 1, 1);
        columns.clear();
        for (int e : into[std::size_t(end)])
            columns.push_back(edges[std::size_t(e)].column);
        addRow(lp, columns, std::vector<double>(columns.size(), 1.0), GLP_FX, 1, 1);
    }
    for (int c = 1; c <= m; ++c)
        for (const auto* list : { &into[std::size_t(c)], &outOf[std::size_t(c)] }) {
            std::vector<int> columns { checkpointColumn[std::size_t(c)] };
            std::vector<double> values { -1.0 };
            for (int e : *list) {
                columns.push_back(edges[std::size_t(e)].column);
                values.push_back(1.0);
            }
            addRow(lp, columns, values, GLP_FX, 0, 0);
        }
    // Skip tensors: held from the first segment that reads them on (unless their producer is a checkpoint).
    for (std::size_t t = 0; t < skips.size(); ++t) {
        const auto& skip = skips[t];
        int previous = 0;
        for (int c = 1; c <= end; ++c) {
            const int column = heldColumn[t][std::size_t(c)];
            if (column == 0)
                continue;
            if (previous != 0)
                addRow(lp, { column, previous }, { 1.0, -1.0 }, GLP_LO, 0, 0);
            previous = column;
            if (c == end)
                break;
            std::vector<int> columns { column };
            std::vector<double> values { 1.0 };
            for (int e : into[std::size_t(c)]) {
                const Step from = position[std::size_t(edges[std::size_t(e)].from)];
                const auto reader = std::upper_bound(skip.readers.begin(), skip.readers.end(), from);
                if (from > skip.producer && reader != skip.readers.end() && *reader < position[std::size_t(c)]) {
                    columns.push_back(edges[std::size_t(e)].column);
                    values.push_back(-1.0);
                }
            }
            if (columns.size() == 1)
                continue;
            const auto producer = std::lower_bound(position.begin() + 1, position.end(), skip.producer);
            if (producer != position.end() && *producer == skip.producer) {
                columns.push_back(checkpointColumn[std::size_t(producer - position.begin())]);
                values.push_back(1.0);
            }
            addRow(lp, columns, values, GLP_LO, 0, 0);
        }
    }
    // Memory: at the re-run of the segment closing at c, and at the end of the forward pass.
    const double limit = budget ? static_cast<double>(*budget) / scale : 0.0;
    for (int c = 1; c <= end; ++c) {
        std::vector<int> columns;
        std::vector<double> values;
        for (int k = 1; k <= std::min(c, m); ++k)
            if (const Bytes kept = chain.kept(position[std::size_t(k)]); kept > 0) {
                columns.push_back(checkpointColumn[std::size_t(k)]);
                values.push_back(static_cast<double>(kept) / scale);
            }
        for (std::size_t t = 0; t < skips.size(); ++t)
            if (heldColumn[t][std::size_t(c)] != 0 && skips[t].bytes > 0) {
                columns.push_back(heldColumn[t][std::size_t(c)]);
                values.push_back(static_cast<double>(skips[t].bytes) / scale);
            }
        for (int e : into[std::size_t(c)])
            if (edges[std::size_t(e)].bytes > 0) {
                columns.push_back(edges[std::size_t(e)].column);
                values.push_back(static_cast<double>(edges[std::size_t(e)].bytes) / scale);
            }
        if (peakColumn != 0) {
            columns.push_back(peakColumn);
            values.push_back(-1.0);
        }
        addRow(lp, columns, values, GLP_UP, 0, limit);
    }
    result.columns = glp_get_num_cols(lp);
    result.rows = glp_get_num_rows(lp);

    // The first incumbent: the DP's set for the budget (or at its least feasible budget), which fits this
    // model whenever it fits the DP's.
    Search search;
    search.cancel = options.cancel;
    std::optional<CheckpointChoice> start;
    if (options.warmStart)
        if (auto dp = budget ? bestCheckpoints(chain, *budget) : dpLeastPeak(chain)) {
            start = evaluate(chain, skips, dp->checkpoints);
            const auto& cps = start->checkpoints;
            std::vector<int> onPath { 0 }; // nodes
            for (auto s : cps)
                onPath.push_back(static_cast<int>(std::lower_bound(position.begin() + 1, position.end(), s) - position.begin()));
            onPath.push_back(end);
            std::vector<double> x(std::size_t(result.columns) + 1, 0.0);
            bool complete = !budget || start->modelPeak <= *budget;
            if (peakColumn != 0)
                x[std::size_t(peakColumn)] = static_cast<double>(start->modelPeak) / scale;
            for (std::size_t i = 1; complete && i + 1 < onPath.size(); ++i) {
                complete = onPath[i] <= m && position[std::size_t(onPath[i])] == cps[i - 1];
                if (complete)
                    x[std::size_t(checkpointColumn[std::size_t(onPath[i])])] = 1;
            }
            for (std::size_t i = 0; complete && i + 1 < onPath.size(); ++i) {
                const auto& out = outOf[std::size_t(onPath[i])];
                const auto e = std::find_if(out.begin(), out.end(), [&](int e) { return edges[std::size_t(e)].to == onPath[i + 1]; });
                complete = e != out.end();
                if (complete)
                    x[std::size_t(edges[std::size_t(*e)].column)] = 1;
            }
            const auto first = heldFrom(skips, cps);
            for (std::size_t t = 0; complete && t < skips.size(); ++t)
                if (first[t] >= 0)
                    for (int c = onPath[std::size_t(first[t]) + 1]; c <= end; ++c)
                        if (heldColumn[t][std::size_t(c)] != 0)
                            x[std::size_t(heldColumn[t][std::size_t(c)])] = 1;
            if (complete)
                search.start = std::move(x);
            else
                start.reset();
        }

    const auto remainingMs = [&] {
        const double spent = std::chrono::duration<double>(Clock::now() - started).count();
        return std::max(1, static_cast<int>(std::lround(1e3 * (options.timeLimitSeconds - spent))));
    };
    const auto bestFound = [&](std::string why) {
        result.message = std::move(why);
        if (start) {
            result.choice = start;
            result.gap = -1;
        }
        return result;
    };
    glp_smcp simplex;
    glp_init_smcp(&simplex);
    simplex.msg_lev = GLP_MSG_OFF;
    simplex.tm_lim = remainingMs();
    const int relaxed = glp_simplex(lp, &simplex);
    if (relaxed == GLP_ETMLIM) {
        result.timedOut = true;
        return bestFound("the time limit ran out in the LP relaxation");
    }
    if (relaxed != 0 || (glp_get_status(lp) != GLP_OPT && glp_get_status(lp) != GLP_NOFEAS))
        return bestFound("GLPK's simplex failed (code " + std::to_string(relaxed) + ")");
    if (glp_get_status(lp) == GLP_NOFEAS) {
        if (start)
            return bestFound("GLPK's relaxation is infeasible but the DP's set fits (numerical trouble)");
        result.infeasible = true;
        return result;
    }
    glp_iocp branch;
    glp_init_iocp(&branch);
    branch.msg_lev = GLP_MSG_OFF;
    branch.tm_lim = remainingMs();
    branch.cb_func = callback;
    branch.cb_info = &search;
    branch.bt_tech = GLP_BT_BPH; // best projection: on ResNet-50's chain it closed more budgets within 2 s than
                                 // the default or GLPK's cuts (MIR, cover, Gomory), which only slowed the nodes
    const int code = glp_intopt(lp, &branch);
    result.timedOut = code == GLP_ETMLIM;
    result.cancelled = code == GLP_ESTOP || search.cancelled;
    const int status = glp_mip_status(lp);
    if (status == GLP_NOFEAS) {
        if (start)
            return bestFound("GLPK found no set but the DP's fits (numerical trouble)");
        result.infeasible = true;
        return result;
    }
    if (status != GLP_OPT && status != GLP_FEAS)
        return bestFound(result.timedOut ? "no set found within the time limit" : result.cancelled ? "cancelled" : "GLPK found no set (code " + std::to_string(code) + ")");
    result.optimal = status == GLP_OPT;
    result.gap = result.optimal ? 0.0 : search.gap;
    std::vector<Step> checkpoints;
    for (int node = 0; node != end;) {
        const auto& out = outOf[std::size_t(node)];
        const auto e = std::find_if(out.begin(), out.end(), [&](int e) { return glp_mip_col_val(lp, edges[std::size_t(e)].column) > 0.5; });
        if (e == out.end())
            return bestFound("GLPK's solution is not a path");
        node = edges[std::size_t(*e)].to;
        if (node != end)
            checkpoints.push_back(position[std::size_t(node)]);
    }
    result.choice = evaluate(chain, skips, std::move(checkpoints));
    if (start && (budget ? start->modelSeconds < result.choice->modelSeconds : start->modelPeak < result.choice->modelPeak)) { // GLPK refused the start
        result.choice = start;
        result.optimal = false;
    }
    return result;
}

} // namespace

CheckpointChoice milpModel(const CheckpointChain& chain, std::vector<Step> checkpoints)
{
    return evaluate(chain, skipTensors(chain), std::move(checkpoints));
}

MilpResult milpCheckpoints(const CheckpointChain& chain, Bytes budget, const MilpOptions& options)
{
    return solve(chain, budget, options);
}

MilpResult milpLeastPeak(const CheckpointChain& chain, const MilpOptions& options)
{
    return solve(chain, std::nullopt, options);
}

MilpSweep milpSweep(const CheckpointChain& chain, int budgets, const MilpOptions& options, double totalSeconds,
    const std::function<void(int, int)>& progress)
{
    using Clock = std::chrono::steady_clock;
    const auto started = Clock::now();
    MilpSweep sweep;
    if (chain.steps() == 0 || budgets < 1)
        return sweep;
    const auto left = [&] { return totalSeconds - std::chrono::duration<double>(Clock::now() - started).count(); };
    const auto record = [&](const MilpResult& r) {
        ++sweep.solves;
        sweep.cancelled = sweep.cancelled || r.cancelled;
        if (r.optimal)
            ++sweep.optimal;
        else if (r.timedOut && r.choice) {
            ++sweep.timedOut;
            sweep.worstGap = r.gap < 0 || sweep.worstGap < 0 ? -1 : std::max(sweep.worstGap, r.gap);
        }
    };
    Bytes high = 0;
    for (int s = 0; s < chain.steps(); ++s)
        high += chain.kept(s);
    // The DP's least feasible budget (its model's peaks are at least this model's): a bound to start from.
    const auto dpLeast = dpLeastPeak(chain);
    Bytes low = dpLeast ? dpLeast->modelPeak : 0;
    auto first = options;
    first.timeLimitSeconds = std::min(options.timeLimitSeconds, std::max(0.0, left()));
    const auto least = milpLeastPeak(chain, first);
    record(least);
    if (least.choice)
        low = std::min(low, least.choice->modelPeak);
    std::set<std::vector<Step>> seen;
    for (int i = 0; i < budgets && !sweep.cancelled; ++i) {
        if (left() <= 0) {
            sweep.capped = true;
            break;
        }
        const double f = budgets == 1 ? 0.0 : static_cast<double>(i) / (budgets - 1);
        const auto budget = low + static_cast<Bytes>(f * f * static_cast<double>(high - low));
        auto each = options;
        each.timeLimitSeconds = std::min(options.timeLimitSeconds, left());
        auto result = milpCheckpoints(chain, budget, each);
        record(result);
        if (progress)
            progress(i + 1, budgets);
        if (result.choice && result.choice->modelSeconds > 0 && seen.insert(result.choice->checkpoints).second)
            sweep.choices.push_back(std::move(*result.choice));
    }
    return sweep;
}

} // namespace core
