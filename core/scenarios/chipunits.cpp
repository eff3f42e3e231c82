// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "scenarios/chipunits.h"

#include <set>

namespace core {

ChipUnit chipUnitFor(std::string_view opType)
{
    static const std::set<std::string_view> matrix { "Conv", "ConvTranspose", "Gemm", "MatMul", "FusedMatMul", "FusedConv",
        "MatMulInteger", "ConvInteger", "QLinearConv", "QLinearMatMul", "Einsum" };
    static const std::set<std::string_view> switching { "Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Concat",
        "Split", "Slice", "Gather", "GatherElements", "GatherND", "ScatterND", "Pad", "Resize", "Upsample", "Expand", "Tile",
        "DepthToSpace", "SpaceToDepth", "Shape", "Roll" };
    static const std::set<std::string_view> memory { "Identity", "Constant", "ConstantOfShape" };
    if (matrix.count(opType))
        return ChipUnit::Matrix;
    if (switching.count(opType))
        return ChipUnit::Switch;
    if (memory.count(opType))
        return ChipUnit::Memory;
    return ChipUnit::Vector;
}

ChipUnit chipUnitFor(const Op& op)
{
    if (op.body.empty())
        return chipUnitFor(op.type);
    constexpr auto rank = [](ChipUnit unit) {
        switch (unit) {
        case ChipUnit::Matrix:
            return 3;
        case ChipUnit::Vector:
            return 2;
        case ChipUnit::Switch:
            return 1;
        case ChipUnit::Memory:
            break;
        }
        return 0;
    };
    ChipUnit heaviest = ChipUnit::Memory;
    for (const Op& member : op.body)
        if (const ChipUnit unit = chipUnitFor(member); rank(unit) > rank(heaviest))
            heaviest = unit;
    return heaviest;
}

std::string_view chipUnitName(ChipUnit unit)
{
    switch (unit) {
    case ChipUnit::Memory:
        return "memory";
    case ChipUnit::Matrix:
        return "matrix";
    case ChipUnit::Switch:
        return "switch";
    case ChipUnit::Vector:
        break;
    }
    return "vector";
}

} // namespace core
