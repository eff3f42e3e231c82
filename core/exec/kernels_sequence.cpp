// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// ONNX sequence ops on the CPU executor. A sequence lives in its planned room as its elements'
// bytes packed in order; the element shapes travel beside it (TensorView::items), as run-time
// shapes do. Every kernel checks that what it writes fits the room before writing anything.
#include "exec/runshape.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace core::exec {

std::vector<std::int64_t> itemOffsets(const TensorView& s)
{
    std::vector<std::int64_t> offsets;
    offsets.reserve(s.items.size());
    std::int64_t elements = 0;
    for (const auto& item : s.items) {
        offsets.push_back(elements * dtypeBytes(s.dtype));
        elements += elementCount(item);
    }
    return offsets;
}

namespace {

std::int64_t countOf(const Shape& s) { return elementCount(s); }

// Byte offset of item i in a sequence view.
std::int64_t itemOffset(const TensorView& s, std::size_t i)
{
    std::int64_t elements = 0;
    for (std::size_t k = 0; k < i; ++k)
        elements += countOf(s.items[k]);
    return elements * dtypeBytes(s.dtype);
}

std::int64_t totalOf(const std::vector<Shape>& items)
{
    std::int64_t n = 0;
    for (const auto& s : items)
        n += countOf(s);
    return n;
}

bool isSequence(const KernelCall& c, std::size_t slot) { return c.has(slot) && c.in[slot].sequence; }

// Position input `slot` (a scalar int32/int64) normalised into [0, n] (inclusive: an insert may
// append) or [0, n) when !inclusive; `fallback` when the input is left out. False when out of range.
bool position(const KernelCall& c, std::size_t slot, std::int64_t n, bool inclusive, std::int64_t fallback, std::int64_t& pos)
{
    if (!c.has(slot)) {
        pos = fallback;
        return true;
    }
    const auto& p = c.in[slot];
    if (p.count != 1 || (p.dtype != DType::Int64 && p.dtype != DType::Int32))
        return false;
    pos = intAt(p, 0);
    if (pos < 0)
        pos += n;
    return pos >= 0 && (inclusive ? pos <= n : pos < n);
}

// Writes `items` (each taken from a source view's bytes) packed into out[0], which must be a
// sequence room of the same element type. False, nothing written, when they do not fit.
struct Piece {
    const std::byte* data;
    Shape shape;
};

bool writeSequence(const KernelCall& c, const std::vector<Piece>& pieces, std::vector<Shape>& shapes, std::vector<std::vector<Shape>>& items)
{
    const auto& out = c.out[0];
    if (pieces.size() > kMostListItems)
        return false;
    std::vector<Shape> list;
    for (const auto& p : pieces)
        list.push_back(p.shape);
    const std::int64_t total = totalOf(list), w = dtypeBytes(out.dtype);
    if (!out.sequence || w <= 0 || total > out.count)
        return false;
    std::byte* at = out.data;
    for (const auto& p : pieces) {
        const auto bytes = countOf(p.shape) * w;
        if (bytes > 0)
            std::memmove(at, p.data, std::size_t(bytes));
        at += bytes;
    }
    shapes = { Shape { total } };
    items = { std::move(list) };
    return true;
}

// The pieces of sequence view s: its items in order.
std::vector<Piece> piecesOf(const TensorView& s)
{
    const auto offsets = itemOffsets(s);
    std::vector<Piece> pieces;
    pieces.reserve(s.items.size() + 1);
    for (std::size_t i = 0; i < s.items.size(); ++i)
        pieces.push_back({ s.data + offsets[i], s.items[i] });
    return pieces;
}

// One output with room (an empty sequence's room may hold nothing, and have no address).
bool oneOutput(const KernelCall& c) { return c.out.size() == 1 && (c.out[0].data || c.out[0].count == 0); }

bool sequenceEmpty(const KernelCall& c, std::vector<Shape>& shapes, std::vector<std::vector<Shape>>& items)
{
    return oneOutput(c) && writeSequence(c, {}, shapes, items);
}

bool sequenceConstruct(const KernelCall& c, std::vector<Shape>& shapes, std::vector<std::vector<Shape>>& items)
{
    if (!oneOutput(c) || c.in.empty())
        return false;
    std::vector<Piece> pieces;
    for (const auto& x : c.in) {
        if (!x.present() || x.sequence || x.dtype != c.out[0].dtype)
            return false;
        pieces.push_back({ x.data, x.shape });
    }
    return writeSequence(c, pieces, shapes, items);
}

bool sequenceInsert(const KernelCall& c, std::vector<Shape>& shapes, std::vector<std::vector<Shape>>& items)
{
    if (!oneOutput(c) || !isSequence(c, 0) || !c.has(1) || c.in[1].sequence || c.in[1].dtype != c.in[0].dtype
        || c.out[0].dtype != c.in[0].dtype)
        return false;
    const auto& s = c.in[0];
    const std::int64_t n = std::int64_t(s.items.size());
    std::int64_t pos = 0;
    if (!position(c, 2, n, true, n, pos))
        return false;
    auto pieces = piecesOf(s);
    pieces.insert(pieces.begin() + pos, Piece { c.in[1].data, c.in[1].shape });
    return writeSequence(c, pieces, shapes, items);
}

bool sequenceErase(const KernelCall& c, std::vector<Shape>& shapes, std::vector<std::vector<Shape>>& items)
{
    if (!oneOutput(c) || !isSequence(c, 0) || c.out[0].dtype != c.in[0].dtype)
        return false;
    const auto& s = c.in[0];
    const std::int64_t n = std::int64_t(s.items.size());
    std::int64_t pos = 0;
    if (!position(c, 1, n, false, n - 1, pos))
        return false;
    auto pieces = piecesOf(s);
    pieces.erase(pieces.begin() + pos);
    return writeSequence(c, pieces, shapes, items);
}

bool identity(const KernelCall& c, std::vector<Shape>& shapes, std::vector<std::vector<Shape>>& items)
{
    if (!oneOutput(c) || !isSequence(c, 0) || c.out[0].dtype != c.in[0].dtype)
        return false;
    return writeSequence(c, piecesOf(c.in[0]), shapes, items);
}

// A tensor output: `shape`, copied from `from`; false when it does not fit out[0].
bool writeTensor(const KernelCall& c, const std::byte* from, const Shape& shape, std::vector<Shape>& shapes,
    std::vector<std::vector<Shape>>& items)
{
    const auto& out = c.out[0];
    const std::int64_t n = countOf(shape);
    if (out.sequence || n < 0 || n > out.count)
        return false;
    if (n > 0)
        std::memcpy(out.data, from, std::size_t(n * dtypeBytes(out.dtype)));
    shapes = { shape };
    items = { {} };
    return true;
}

bool sequenceAt(const KernelCall& c, std::vector<Shape>& shapes, std::vector<std::vector<Shape>>& items)
{
    if (!oneOutput(c) || !isSequence(c, 0) || c.out[0].sequence || c.out[0].dtype != c.in[0].dtype)
        return false;
    const auto& s = c.in[0];
    std::int64_t pos = 0;
    if (!c.has(1) || !position(c, 1, std::int64_t(s.items.size()), false, 0, pos))
        return false;
    return writeTensor(c, s.data + itemOffset(s, std::size_t(pos)), s.items[std::size_t(pos)], shapes, items);
}

bool sequenceLength(const KernelCall& c, std::vector<Shape>& shapes, std::vector<std::vector<Shape>>& items)
{
    if (!oneOutput(c) || !isSequence(c, 0) || c.out[0].sequence || c.out[0].dtype != DType::Int64 || c.out[0].count < 1)
        return false;
    const std::int64_t n = std::int64_t(c.in[0].items.size());
    std::memcpy(c.out[0].data, &n, sizeof n);
    shapes = { Shape {} };
    items = { {} };
    return true;
}

// Copies the block [begin, begin + length) of `axis` of x (shape, row-major) to `to`.
void copyBlock(const TensorView& x, std::size_t axis, std::int64_t begin, std::int64_t length, std::byte* to)
{
    std::int64_t outer = 1, inner = dtypeBytes(x.dtype);
    for (std::size_t d = 0; d < axis; ++d)
        outer *= x.shape[d];
    for (std::size_t d = axis + 1; d < x.shape.size(); ++d)
        inner *= x.shape[d];
    const std::int64_t dim = x.shape[axis];
    if (length * inner == 0)
        return; // an empty block (memcpy of nothing from a null tensor is undefined)
    for (std::int64_t o = 0; o < outer; ++o)
        std::memcpy(to + o * length * inner, x.data + (o * dim + begin) * inner, std::size_t(length * inner));
}

// The most elements a split makes: each keeps its shape on the host, so an axis of 2^40 empty
// slices (a tensor with another dimension 0) would take terabytes of shapes for no data.
constexpr std::int64_t kMostSplitElements = 1 << 20;

bool splitToSequence(const KernelCall& c, std::vector<Shape>& shapes, std::vector<std::vector<Shape>>& items)
{
    if (!oneOutput(c) || !c.has(0) || c.in[0].sequence || !c.out[0].sequence || c.out[0].dtype != c.in[0].dtype || c.in[0].rank() < 1)
        return false;
    const auto& x = c.in[0];
    const auto axis = std::size_t(normAxis(c.attrInt("axis", 0), x.rank()));
    const std::int64_t dim = x.shape[axis];
    std::vector<std::int64_t> lengths;
    bool keep = true;
    if (!c.has(1)) {
        if (dim > kMostSplitElements)
            return false;
        lengths.assign(std::size_t(dim), 1);
        keep = c.attrInt("keepdims", 1) != 0;
    } else if (c.in[1].rank() == 0) {
        const std::int64_t chunk = intAt(c.in[1], 0);
        if (chunk <= 0 || dim / chunk >= kMostSplitElements)
            return false;
        for (std::int64_t at = 0; at < dim; at += chunk)
            lengths.push_back(std::min(chunk, dim - at));
    } else {
        for (std::int64_t i = 0; i < c.in[1].count; ++i)
            lengths.push_back(intAt(c.in[1], i));
        if (std::any_of(lengths.begin(), lengths.end(), [](std::int64_t l) { return l < 0; })
            || std::accumulate(lengths.begin(), lengths.end(), std::int64_t(0)) != dim)
            return false;
    }
    if (x.count > c.out[0].count)
        return false;
    std::vector<Shape> list;
    std::int64_t begin = 0;
    std::byte* at = c.out[0].data;
    for (const auto length : lengths) {
        Shape s = x.shape;
        s[axis] = length;
        copyBlock(x, axis, begin, length, at);
        at += countOf(s) * dtypeBytes(x.dtype);
        if (!keep)
            s.erase(s.begin() + std::ptrdiff_t(axis));
        list.push_back(std::move(s));
        begin += length;
    }
    shapes = { Shape { x.count } };
    items = { std::move(list) };
    return true;
}

bool concatFromSequence(const KernelCall& c, std::vector<Shape>& shapes, std::vector<std::vector<Shape>>& items)
{
    if (!oneOutput(c) || !isSequence(c, 0) || c.out[0].sequence || c.out[0].dtype != c.in[0].dtype || c.in[0].items.empty())
        return false;
    const auto& s = c.in[0];
    const bool stack = c.attrInt("new_axis", 0) != 0;
    const Shape& first = s.items.front();
    const int rank = int(first.size()) + (stack ? 1 : 0);
    const std::int64_t a = c.attrInt("axis", 0);
    if (rank < 1 || a < -rank || a >= rank)
        return false;
    const auto axis = std::size_t(a < 0 ? a + rank : a);
    // Each element viewed with its concatenation axis (a stacked element has length 1 there).
    std::vector<Shape> parts;
    for (const auto& item : s.items) {
        Shape p = item;
        if (stack)
            p.insert(p.begin() + std::ptrdiff_t(axis), 1);
        if (p.size() != std::size_t(rank))
            return false;
        for (std::size_t d = 0; d < p.size(); ++d)
            if (d != axis && p[d] != (stack ? first[d - (d > axis ? 1 : 0)] : first[d]))
                return false;
        parts.push_back(std::move(p));
    }
    Shape shape = parts.front();
    shape[axis] = 0;
    for (const auto& p : parts)
        shape[axis] += p[axis];
    const std::int64_t n = countOf(shape);
    if (n > c.out[0].count)
        return false;
    std::int64_t outer = 1, inner = dtypeBytes(s.dtype);
    for (std::size_t d = 0; d < axis; ++d)
        outer *= shape[d];
    for (std::size_t d = axis + 1; d < shape.size(); ++d)
        inner *= shape[d];
    std::int64_t begin = 0;
    const auto offsets = itemOffsets(s);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::byte* from = s.data + offsets[i];
        const std::int64_t length = parts[i][axis];
        for (std::int64_t o = 0; o < outer; ++o)
            std::memcpy(c.out[0].data + (o * shape[axis] + begin) * inner, from + o * length * inner, std::size_t(length * inner));
        begin += length;
    }
    shapes = { shape };
    items = { {} };
    return true;
}

} // namespace

SequenceKernel findSequenceKernel(const std::string& opType, bool touchesSequence)
{
    if (!touchesSequence && (opType == "Identity" || opType == "SwapOut" || opType == "SwapIn"))
        return nullptr;
    static const std::map<std::string, SequenceKernel> table {
        { "SequenceEmpty", sequenceEmpty },
        { "SequenceConstruct", sequenceConstruct },
        { "SequenceInsert", sequenceInsert },
        { "SequenceErase", sequenceErase },
        { "SequenceAt", sequenceAt },
        { "SequenceLength", sequenceLength },
        { "SplitToSequence", splitToSequence },
        { "ConcatFromSequence", concatFromSequence },
        { "Identity", identity },
        { "SwapOut", identity },
        { "SwapIn", identity },
    };
    const auto it = table.find(opType);
    return it == table.end() ? nullptr : it->second;
}

} // namespace core::exec
