// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "strategies/backwardrules.h"

#include <unordered_map>

namespace core {

namespace {
constexpr SlotRange kNone {};
constexpr SlotRange kSlot0 { 0, 0 };
constexpr SlotRange kSlot1 { 1, 1 };
constexpr SlotRange kSlots01 { 0, 1 };
constexpr SlotRange kEvery { 0, kLastSlot };
constexpr SlotRange kFrom1 { 1, kLastSlot };
constexpr SlotRange kFrom3 { 3, kLastSlot };
constexpr auto Rule = GradientFlow::Rule;
constexpr auto NoGradient = GradientFlow::NoGradient;
constexpr auto NoRule = GradientFlow::NoRule;

constexpr BackwardRule kRules[] = {
    // type                          flow        reads inputs  reads outputs  settings
    // Reads its output
    { "Relu",                         Rule,       kNone,        kSlot0,        kNone },
    { "Sigmoid",                      Rule,       kNone,        kSlot0,        kNone },
    { "Tanh",                         Rule,       kNone,        kSlot0,        kNone },
    { "Softmax",                      Rule,       kNone,        kSlot0,        kNone },
    { "LogSoftmax",                   Rule,       kNone,        kSlot0,        kNone },
    { "Exp",                          Rule,       kNone,        kSlot0,        kNone },
    { "Sqrt",                         Rule,       kNone,        kSlot0,        kNone },
    { "Reciprocal",                   Rule,       kNone,        kSlot0,        kNone },
    // Reads its input
    { "Gelu",                         Rule,       kSlot0,       kNone,         kNone },
    { "Erf",                          Rule,       kSlot0,       kNone,         kNone },
    { "LeakyRelu",                    Rule,       kSlot0,       kNone,         kNone },
    { "Elu",                          Rule,       kSlot0,       kNone,         kNone },
    { "Selu",                         Rule,       kSlot0,       kNone,         kNone },
    { "Celu",                         Rule,       kSlot0,       kNone,         kNone },
    { "Softplus",                     Rule,       kSlot0,       kNone,         kNone },
    { "Softsign",                     Rule,       kSlot0,       kNone,         kNone },
    { "HardSigmoid",                  Rule,       kSlot0,       kNone,         kNone },
    { "HardSwish",                    Rule,       kSlot0,       kNone,         kNone },
    { "Mish",                         Rule,       kSlot0,       kNone,         kNone },
    { "Swish",                        Rule,       kSlot0,       kNone,         kNone },
    { "ThresholdedRelu",              Rule,       kSlot0,       kNone,         kNone },
    { "Log",                          Rule,       kSlot0,       kNone,         kNone },
    { "Abs",                          Rule,       kSlot0,       kNone,         kNone },
    { "Clip",                         Rule,       kSlot0,       kNone,         kFrom1 },
    { "Sin",                          Rule,       kSlot0,       kNone,         kNone },
    { "Cos",                          Rule,       kSlot0,       kNone,         kNone },
    { "Tan",                          Rule,       kSlot0,       kNone,         kNone },
    { "Asin",                         Rule,       kSlot0,       kNone,         kNone },
    { "Acos",                         Rule,       kSlot0,       kNone,         kNone },
    { "Atan",                         Rule,       kSlot0,       kNone,         kNone },
    { "Sinh",                         Rule,       kSlot0,       kNone,         kNone },
    { "Cosh",                         Rule,       kSlot0,       kNone,         kNone },
    { "Asinh",                        Rule,       kSlot0,       kNone,         kNone },
    { "Acosh",                        Rule,       kSlot0,       kNone,         kNone },
    { "Atanh",                        Rule,       kSlot0,       kNone,         kNone },
    { "ReduceL1",                      Rule,      kSlot0,   kNone,  kNone },
    { "ReduceL2",                      Rule,      kSlot0,   kNone,  kNone },
    { "ReduceLogSumExp",              Rule,       kSlot0,       kNone,         kNone },
    { "ReduceSumSquare",              Rule,       kSlot0,       kNone,         kNone },
    { "ReduceProd",                   Rule,       kSlot0,       kNone,         kNone },
    { "LpNormalization",              Rule,       kSlot0,       kNone,         kNone },
    { "CumSum",                       Rule,       kSlot0,       kNone,         kNone },
    // Reads X and W
    { "Conv",                         Rule,       kSlots01,     kNone,         kNone },
    { "ConvTranspose",                Rule,       kSlots01,     kNone,         kNone },
    { "Gemm",                         Rule,       kSlots01,     kNone,         kNone },
    { "MatMul",                       Rule,       kSlots01,     kNone,         kNone },
    { "FusedMatMul",                  Rule,       kSlots01,     kNone,         kNone },
    // Reads X and the scale
    { "BatchNormalization",           Rule,       kSlots01,     kNone,         kFrom3 },
    { "LayerNormalization",           Rule,       kSlots01,     kNone,         kNone },
    { "InstanceNormalization",        Rule,       kSlots01,     kNone,         kNone },
    { "GroupNormalization",           Rule,       kSlots01,     kNone,         kNone },
    { "SimplifiedLayerNormalization", Rule,       kSlots01,     kNone,         kNone },
    { "RMSNormalization",             Rule,       kSlots01,     kNone,         kNone },
    // Reads its input and output
    { "MaxPool",                      Rule,       kSlot0,       kSlot0,        kNone },
    { "GlobalMaxPool",                Rule,       kSlot0,       kSlot0,        kNone },
    { "ReduceMax",                    Rule,       kSlot0,       kSlot0,        kNone },
    { "ReduceMin",                    Rule,       kSlot0,       kSlot0,        kNone },
    { "LpPool",                       Rule,       kSlot0,       kSlot0,        kNone },
    // Reads every input
    { "Mul",                          Rule,       kEvery,       kNone,         kNone },
    { "Div",                          Rule,       kEvery,       kNone,         kNone },
    { "Pow",                          Rule,       kEvery,       kNone,         kFrom1 },
    { "Min",                          Rule,       kEvery,       kNone,         kNone },
    { "Max",                          Rule,       kEvery,       kNone,         kNone },
    { "PRelu",                        Rule,       kEvery,       kNone,         kNone },
    // Reads its indices
    { "Gather",                       Rule,       kSlot1,       kNone,         kFrom1 },
    { "GatherElements",               Rule,       kSlot1,       kNone,         kFrom1 },
    { "GatherND",                     Rule,       kSlot1,       kNone,         kFrom1 },
    { "Where",                        Rule,       kSlot0,       kNone,         kSlot0 },
    { "Dropout",                      Rule,       kNone,        kSlot1,        kFrom1 },
    // Reads nothing: its gradient needs only shapes
    { "Add",                          Rule,       kNone,        kNone,         kNone },
    { "Sub",                          Rule,       kNone,        kNone,         kNone },
    { "Neg",                          Rule,       kNone,        kNone,         kNone },
    { "Identity",                     Rule,       kNone,        kNone,         kNone },
    { "Concat",                       Rule,       kNone,        kNone,         kNone },
    { "Split",                        Rule,       kNone,        kNone,         kFrom1 },
    { "Slice",                        Rule,       kNone,        kNone,         kFrom1 },
    { "Reshape",                      Rule,       kNone,        kNone,         kFrom1 },
    { "Flatten",                      Rule,       kNone,        kNone,         kNone },
    { "Squeeze",                      Rule,       kNone,        kNone,         kFrom1 },
    { "Unsqueeze",                    Rule,       kNone,        kNone,         kFrom1 },
    { "Transpose",                    Rule,       kNone,        kNone,         kNone },
    { "Pad",                          Rule,       kNone,        kNone,         kFrom1 },
    { "Expand",                       Rule,       kNone,        kNone,         kFrom1 },
    { "Tile",                         Rule,       kNone,        kNone,         kFrom1 },
    { "ReduceSum",                    Rule,       kNone,        kNone,         kFrom1 },
    { "ReduceMean",                   Rule,       kNone,        kNone,         kFrom1 },
    { "AveragePool",                  Rule,       kNone,        kNone,         kNone },
    { "GlobalAveragePool",            Rule,       kNone,        kNone,         kNone },
    { "Resize",                       Rule,       kNone,        kNone,         kFrom1 },
    { "Upsample",                     Rule,       kNone,        kNone,         kFrom1 },
    { "Cast",                         Rule,       kNone,        kNone,         kNone },
    { "Sum",                          Rule,       kNone,        kNone,         kNone },
    { "Mean",                         Rule,       kNone,        kNone,         kNone },
    { "DepthToSpace",                 Rule,       kNone,        kNone,         kNone },
    { "SpaceToDepth",                 Rule,       kNone,        kNone,         kNone },
    { "ReverseSequence",              Rule,       kNone,        kNone,         kNone },
    // Outputs carry no gradient
    { "Shape",                        NoGradient, kNone,        kNone,         kNone },
    { "Size",                         NoGradient, kNone,        kNone,         kNone },
    { "Floor",                        NoGradient, kNone,        kNone,         kNone },
    { "Ceil",                         NoGradient, kNone,        kNone,         kNone },
    { "Round",                        NoGradient, kNone,        kNone,         kNone },
    { "Sign",                         NoGradient, kNone,        kNone,         kNone },
    { "ArgMax",                       NoGradient, kNone,        kNone,         kNone },
    { "ArgMin",                       NoGradient, kNone,        kNone,         kNone },
    { "NonZero",                      NoGradient, kNone,        kNone,         kNone },
    { "ConstantOfShape",              NoGradient, kNone,        kNone,         kNone },
    { "Range",                        NoGradient, kNone,        kNone,         kNone },
    { "EyeLike",                      NoGradient, kNone,        kNone,         kNone },
    { "RandomNormal",                 NoGradient, kNone,        kNone,         kNone },
    { "RandomUniform",                NoGradient, kNone,        kNone,         kNone },
    { "RandomNormalLike",             NoGradient, kNone,        kNone,         kNone },
    { "RandomUniformLike",            NoGradient, kNone,        kNone,         kNone },
    { "Multinomial",                  NoGradient, kNone,        kNone,         kNone },
    { "Constant",                     NoGradient, kNone,        kNone,         kNone },
    { "Equal",                        NoGradient, kNone,        kNone,         kNone },
    { "Less",                         NoGradient, kNone,        kNone,         kNone },
    { "LessOrEqual",                  NoGradient, kNone,        kNone,         kNone },
    { "Greater",                      NoGradient, kNone,        kNone,         kNone },
    { "GreaterOrEqual",               NoGradient, kNone,        kNone,         kNone },
    { "Not",                          NoGradient, kNone,        kNone,         kNone },
    { "And",                          NoGradient, kNone,        kNone,         kNone },
    { "Or",                           NoGradient, kNone,        kNone,         kNone },
    { "Xor",                          NoGradient, kNone,        kNone,         kNone },
    { "IsNaN",                        NoGradient, kNone,        kNone,         kNone },
    { "IsInf",                        NoGradient, kNone,        kNone,         kNone },
    { "NonMaxSuppression",            NoGradient, kNone,        kNone,         kNone },
    { "OneHot",                       NoGradient, kNone,        kNone,         kNone },
    { "BitShift",                     NoGradient, kNone,        kNone,         kNone },
    // No rule, but settings
    { "TopK",                         NoRule,     kEvery,       kNone,         kFrom1 },
};

constexpr bool typesAreDistinct()
{
    for (std::size_t i = 0; i < std::size(kRules); ++i)
        for (std::size_t j = i + 1; j < std::size(kRules); ++j)
            if (kRules[i].type == kRules[j].type)
                return false;
    return true;
}
static_assert(typesAreDistinct(), "one row per op type");

constexpr BackwardRule kNoRule { "", NoRule, kEvery, kNone, kNone };
} // namespace

const BackwardRule& backwardRule(std::string_view opType)
{
    static const auto byType = [] {
        std::unordered_map<std::string_view, const BackwardRule*> map;
        for (const auto& rule : kRules)
            map.emplace(rule.type, &rule);
        return map;
    }();
    const auto it = byType.find(opType);
    return it == byType.end() ? kNoRule : *it->second;
}

} // namespace core
