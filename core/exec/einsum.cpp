// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/einsum.h"

#include <algorithm>

namespace core::exec {

namespace {

constexpr int kLetters = 52;

int letterLabel(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return 26 + (c - 'a');
    return -1;
}

std::string labelText(int label)
{
    if (label < 26)
        return std::string(1, char('A' + label));
    if (label < kLetters)
        return std::string(1, char('a' + label - 26));
    return "...[" + std::to_string(label - kLetters) + "]";
}

bool fail(std::string* why, const std::string& text)
{
    if (why)
        *why = text;
    return false;
}

// The labels of one term over `rank` dimensions; the ellipsis takes the dimensions the letters leave,
// labelled so that the last ellipsis dimension of every term is label 52 + ellipsisRank - 1.
bool termLabels(const std::string& term, int rank, int ellipsisRank, std::vector<int>& labels, std::string* why)
{
    labels.clear();
    const auto dots = term.find("...");
    const int letters = int(term.size()) - (dots == std::string::npos ? 0 : 3);
    const int extra = rank - letters;
    if (dots != std::string::npos && term.find("...", dots + 3) != std::string::npos)
        return fail(why, "term '" + term + "' has more than one ellipsis");
    if (extra < 0 || (dots == std::string::npos && extra != 0))
        return fail(why, "term '" + term + "' names " + std::to_string(letters) + " dimensions, its operand has " + std::to_string(rank));
    for (std::size_t i = 0; i < term.size(); ++i) {
        if (i == dots) {
            for (int d = 0; d < extra; ++d)
                labels.push_back(kLetters + ellipsisRank - extra + d);
            i += 2;
            continue;
        }
        const int l = letterLabel(term[i]);
        if (l < 0)
            return fail(why, std::string("'") + term[i] + "' is not a letter in term '" + term + "'");
        labels.push_back(l);
    }
    return true;
}

std::int64_t productOf(const std::vector<int>& labels, const std::vector<std::int64_t>& extent)
{
    std::int64_t p = 1;
    for (int l : labels)
        p *= extent[std::size_t(l)];
    return p;
}

} // namespace

EinsumTerms splitEinsum(const std::string& equation)
{
    std::string text;
    for (char c : equation)
        if (c != ' ' && c != '\t')
            text += c;
    EinsumTerms t;
    const auto arrow = text.find("->");
    t.explicitOutput = arrow != std::string::npos;
    if (t.explicitOutput)
        t.output = text.substr(arrow + 2);
    const std::string lhs = text.substr(0, arrow);
    for (std::size_t start = 0;;) {
        const auto comma = lhs.find(',', start);
        t.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return t;
}

bool einsumLabels(const std::string& equation, const std::vector<Shape>& inputs, const Shape& output, EinsumLabels& e, std::string* why)
{
    const auto terms = splitEinsum(equation);
    if (terms.inputs.size() != inputs.size())
        return fail(why, "equation '" + equation + "' has " + std::to_string(terms.inputs.size()) + " terms for " + std::to_string(inputs.size())
                + " inputs");
    int ellipsisRank = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const auto& term = terms.inputs[i];
        if (term.find("...") != std::string::npos)
            ellipsisRank = std::max(ellipsisRank, int(inputs[i].size()) - int(term.size() - 3));
    }
    e = {};
    e.extent.assign(std::size_t(kLetters + ellipsisRank), -1);
    std::vector<int> uses(e.extent.size(), 0);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        std::vector<int> labels;
        if (!termLabels(terms.inputs[i], int(inputs[i].size()), ellipsisRank, labels, why))
            return false;
        for (std::size_t d = 0; d < labels.size(); ++d) {
            auto& extent = e.extent[std::size_t(labels[d])];
            const std::int64_t length = inputs[i][d];
            if (extent < 0 || extent == 1)
                extent = length;
            else if (length != extent && length != 1)
                return fail(why, "label " + labelText(labels[d]) + " has lengths " + std::to_string(extent) + " and " + std::to_string(length));
            ++uses[std::size_t(labels[d])];
        }
        e.inputs.push_back(std::move(labels));
    }
    if (terms.explicitOutput) {
        const bool dots = terms.output.find("...") != std::string::npos;
        if (!termLabels(terms.output, int(terms.output.size()) - (dots ? 3 - ellipsisRank : 0), ellipsisRank, e.output, why))
            return false;
        for (std::size_t d = 0; d < e.output.size(); ++d) {
            const int l = e.output[d];
            if (e.extent[std::size_t(l)] < 0)
                return fail(why, "output label " + labelText(l) + " is in no input");
            if (std::count(e.output.begin(), e.output.end(), l) > 1)
                return fail(why, "output label " + labelText(l) + " appears twice");
        }
    } else {
        for (int l = kLetters; l < kLetters + ellipsisRank; ++l)
            e.output.push_back(l);
        for (int l = 0; l < kLetters; ++l)
            if (uses[std::size_t(l)] == 1)
                e.output.push_back(l);
    }
    for (auto& extent : e.extent)
        extent = std::max<std::int64_t>(extent, 1); // labels no term uses
    for (std::size_t i = 0; i < inputs.size(); ++i)
        for (std::size_t d = 0; d < inputs[i].size(); ++d)
            e.broadcasts = e.broadcasts || inputs[i][d] != e.extent[std::size_t(e.inputs[i][d])];
    Shape expected;
    for (int l : e.output)
        expected.push_back(e.extent[std::size_t(l)]);
    if (expected != output) {
        auto text = [](const Shape& s) {
            std::string t = "[";
            for (std::size_t i = 0; i < s.size(); ++i)
                t += (i ? "," : "") + std::to_string(s[i]);
            return t + "]";
        };
        return fail(why, "equation '" + equation + "' gives an output of shape " + text(expected) + ", the graph says " + text(output));
    }
    return true;
}

bool einsumAsGemm(const EinsumLabels& e, EinsumGemm& g)
{
    if (e.inputs.size() != 2 || e.broadcasts)
        return false;
    const auto in = [&](int operand, int l) {
        const auto& v = e.inputs[std::size_t(operand)];
        return std::find(v.begin(), v.end(), l) != v.end();
    };
    const auto inOutput = [&](int l) { return std::find(e.output.begin(), e.output.end(), l) != e.output.end(); };
    for (int operand = 0; operand < 2; ++operand) {
        const auto& v = e.inputs[std::size_t(operand)];
        for (std::size_t d = 0; d < v.size(); ++d)
            if (std::count(v.begin(), v.end(), v[d]) > 1 || (!inOutput(v[d]) && !in(1 - operand, v[d])))
                return false; // a diagonal, or a label summed in this operand alone
    }
    // The output: batch labels (in both operands), then one operand's free labels, then the other's.
    std::vector<int> batch, first, second;
    std::size_t d = 0;
    for (; d < e.output.size() && in(0, e.output[d]) && in(1, e.output[d]); ++d)
        batch.push_back(e.output[d]);
    if (d < e.output.size())
        g.a = in(0, e.output[d]) ? 0 : 1;
    else
        g.a = 0;
    g.b = 1 - g.a;
    for (; d < e.output.size() && in(g.a, e.output[d]) && !in(g.b, e.output[d]); ++d)
        first.push_back(e.output[d]);
    for (; d < e.output.size() && in(g.b, e.output[d]) && !in(g.a, e.output[d]); ++d)
        second.push_back(e.output[d]);
    if (d != e.output.size())
        return false;
    std::vector<int> contracted;
    for (int l : e.inputs[std::size_t(g.a)])
        if (!inOutput(l))
            contracted.push_back(l);
    const auto joined = [](std::vector<int> x, const std::vector<int>& y, const std::vector<int>& z) {
        x.insert(x.end(), y.begin(), y.end());
        x.insert(x.end(), z.begin(), z.end());
        return x;
    };
    const auto& la = e.inputs[std::size_t(g.a)];
    const auto& lb = e.inputs[std::size_t(g.b)];
    if (la == joined(batch, first, contracted))
        g.transA = false;
    else if (la == joined(batch, contracted, first))
        g.transA = true;
    else
        return false;
    if (lb == joined(batch, contracted, second))
        g.transB = false;
    else if (lb == joined(batch, second, contracted))
        g.transB = true;
    else
        return false;
    g.batch = productOf(batch, e.extent);
    g.m = productOf(first, e.extent);
    g.n = productOf(second, e.extent);
    g.k = productOf(contracted, e.extent);
    return true;
}

} // namespace core::exec
