// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// ONNX optional ops on the CPU executor. An optional lives in its element's planned room; whether
// it holds anything travels beside it (RuntimeShapes::none), as run-time shapes do, and a view of
// one holding nothing has no data.
#include "exec/runshape.h"

#include <cstring>

namespace core::exec {

bool isOptionalOp(const std::string& opType, bool touchesOptional)
{
    return opType == "Optional" || opType == "OptionalGetElement" || opType == "OptionalHasElement"
        || (touchesOptional && opType == "Identity");
}

bool runOptionalOp(const KernelCall& call, Shape& shape, std::vector<Shape>& items, bool& none, std::string& why)
{
    if (call.out.size() != 1 || call.in.size() > 1)
        return false;
    const auto& y = call.out[0];
    const std::string& type = call.op->type;
    const bool holds = call.has(0);
    none = false;
    items.clear();
    if (type == "OptionalHasElement") {
        if (y.dtype != DType::Bool || y.count < 1 || !y.data)
            return false;
        y.data[0] = std::byte { holds ? std::uint8_t(1) : std::uint8_t(0) };
        shape = {};
        return true;
    }
    if (!holds) {
        if (type == "OptionalGetElement") {
            why = "its input holds nothing to get";
            return false;
        }
        none = true; // Optional() and the Identity of an optional holding nothing
        shape = { 0 };
        return true;
    }
    const auto& x = call.in[0];
    if (x.dtype != y.dtype || x.sequence != y.sequence || x.count > y.count || (x.count > 0 && !y.data))
        return false;
    if (x.count > 0 && x.data != y.data)
        std::memcpy(y.data, x.data, std::size_t(x.bytes()));
    shape = x.shape;
    items = x.items;
    return true;
}

} // namespace core::exec
