// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "elementparams.h"

#include "opparams.h"

#include <optional>

namespace gpu {

using core::DType;
using core::exec::KernelCall;
using core::exec::TensorView;

namespace {

// The present inputs of a call.
std::vector<const TensorView*> presentInputs(const KernelCall& c)
{
    std::vector<const TensorView*> in;
    for (const auto& t : c.in)
        if (t.present())
            in.push_back(&t);
    return in;
}

std::optional<kernels::Scalar> scalarOf(DType t)
{
    switch (t) {
    case DType::Float32: return kernels::Scalar::Float32;
    case DType::Float64: return kernels::Scalar::Float64;
    case DType::Int64: return kernels::Scalar::Int64;
    case DType::Int32: return kernels::Scalar::Int32;
    case DType::Int8: return kernels::Scalar::Int8;
    case DType::UInt8: return kernels::Scalar::UInt8;
    case DType::Bool: return kernels::Scalar::Bool;
    default: return std::nullopt;
    }
}

// The scale (slot 1) and zero point (slot 2) of a Q or DQ call on data `x`, as the CPU's quantParams.
bool quantAxis(const KernelCall& c, const TensorView& x, kernels::QuantAxis& q)
{
    if (!c.has(1) || c.in[1].dtype != DType::Float32 || c.attrInt("block_size", 0) != 0)
        return false;
    const auto& scale = c.in[1];
    if (c.has(2) && c.in[2].count != scale.count)
        return false;
    q = {};
    if (scale.count == 1 && scale.rank() <= 1)
        return true;
    if (scale.rank() != 1 || x.rank() == 0)
        return false;
    const int axis = core::exec::normAxis(c.attrInt("axis", 1), x.rank());
    if (x.shape[std::size_t(axis)] != scale.count)
        return false;
    q.channels = scale.count;
    for (int d = axis + 1; d < x.rank(); ++d)
        q.inner *= x.shape[std::size_t(d)];
    return true;
}

} // namespace

const std::map<std::string, kernels::Unary>& unaryOpTypes()
{
    using U = kernels::Unary;
    static const std::map<std::string, U> t { { "Relu", U::Relu }, { "LeakyRelu", U::LeakyRelu }, { "Sigmoid", U::Sigmoid },
        { "Tanh", U::Tanh }, { "Clip", U::Clip }, { "Erf", U::Erf }, { "Gelu", U::Gelu }, { "Sqrt", U::Sqrt }, { "Exp", U::Exp },
        { "Log", U::Log }, { "Abs", U::Abs }, { "Neg", U::Neg }, { "Reciprocal", U::Reciprocal }, { "Floor", U::Floor },
        { "Ceil", U::Ceil }, { "Sin", U::Sin }, { "Cos", U::Cos }, { "Softplus", U::Softplus }, { "Softsign", U::Softsign },
        { "Elu", U::Elu }, { "HardSigmoid", U::HardSigmoid }, { "HardSwish", U::HardSwish }, { "Tan", U::Tan }, { "Asin", U::Asin },
        { "Acos", U::Acos }, { "Atan", U::Atan }, { "Sinh", U::Sinh }, { "Cosh", U::Cosh }, { "Asinh", U::Asinh }, { "Acosh", U::Acosh },
        { "Atanh", U::Atanh }, { "Sign", U::Sign }, { "Round", U::Round }, { "Selu", U::Selu }, { "ThresholdedRelu", U::ThresholdedRelu },
        { "Celu", U::Celu }, { "Shrink", U::Shrink } };
    return t;
}

const std::map<std::string, kernels::Binary>& binaryOpTypes()
{
    using B = kernels::Binary;
    static const std::map<std::string, B> t { { "Add", B::Add }, { "Sum", B::Add }, { "Sub", B::Sub }, { "Mul", B::Mul },
        { "Div", B::Div }, { "Pow", B::Pow }, { "Max", B::Max }, { "Min", B::Min }, { "PRelu", B::PRelu }, { "Mod", B::Fmod } };
    return t;
}

const std::map<std::string, kernels::Compare>& compareOpTypes()
{
    using C = kernels::Compare;
    static const std::map<std::string, C> t { { "Equal", C::Equal }, { "Less", C::Less }, { "Greater", C::Greater },
        { "LessOrEqual", C::LessOrEqual }, { "GreaterOrEqual", C::GreaterOrEqual } };
    return t;
}

bool unaryParams(const KernelCall& c, kernels::Unary& op, float& alpha, float& beta)
{
    const auto it = unaryOpTypes().find(c.op->type);
    if (it == unaryOpTypes().end() || !c.allFloat() || c.out.size() != 1 || !c.has(0) || c.in[0].count != c.out[0].count)
        return false;
    op = it->second;
    alpha = beta = 0;
    switch (op) {
    case kernels::Unary::LeakyRelu: alpha = c.attrFloat("alpha", 0.01f); break;
    case kernels::Unary::Elu: alpha = c.attrFloat("alpha", 1.0f); break;
    case kernels::Unary::Selu:
        alpha = c.attrFloat("alpha", 1.67326319217681884765625f);
        beta = c.attrFloat("gamma", 1.05070102214813232421875f);
        break;
    case kernels::Unary::ThresholdedRelu: case kernels::Unary::Celu: alpha = c.attrFloat("alpha", 1.0f); break;
    case kernels::Unary::Shrink:
        alpha = c.attrFloat("lambd", 0.5f);
        beta = c.attrFloat("bias", 0.0f);
        break;
    case kernels::Unary::HardSigmoid:
        alpha = c.attrFloat("alpha", 0.2f);
        beta = c.attrFloat("beta", 0.5f);
        break;
    case kernels::Unary::Clip:
        alpha = c.attrFloat("min", -INFINITY);
        beta = c.attrFloat("max", INFINITY);
        for (std::size_t slot : { 1, 2 })
            if (c.has(slot)) {
                if (c.in[slot].count != 1)
                    return false; // the CPU kernel ignores such a bound; leave it to the CPU
                (slot == 1 ? alpha : beta) = c.in[slot].f32()[0];
            }
        break;
    case kernels::Unary::Gelu: {
        const auto approximate = c.attrText("approximate", "none");
        if (approximate == "tanh")
            op = kernels::Unary::GeluTanh;
        else if (approximate != "none")
            return false;
        break;
    }
    default: break;
    }
    return true;
}

bool binaryParams(const KernelCall& c, kernels::Binary& op, kernels::Broadcast& s)
{
    const auto it = binaryOpTypes().find(c.op->type);
    const auto in = presentInputs(c);
    if (it == binaryOpTypes().end() || !c.allFloat() || c.out.size() != 1 || in.size() != 2 || !c.has(0) || !c.has(1))
        return false;
    if (it->second == kernels::Binary::Fmod && c.attrInt("fmod", 0) == 0)
        return false; // integer-only on the CPU
    op = it->second;
    return broadcastShape(c.out[0], { in[0], in[1] }, s);
}

bool compareParams(const KernelCall& c, kernels::Compare& op, bool& int64, kernels::Broadcast& s)
{
    const auto it = compareOpTypes().find(c.op->type);
    if (it == compareOpTypes().end() || c.in.size() != 2 || !c.has(0) || !c.has(1) || c.out.size() != 1 || c.out[0].dtype != DType::Bool)
        return false;
    const DType t = c.in[0].dtype;
    if (c.in[1].dtype != t || (t != DType::Float32 && t != DType::Int64))
        return false;
    op = it->second;
    int64 = t == DType::Int64;
    return broadcastShape(c.out[0], { &c.in[0], &c.in[1] }, s);
}

bool notParams(const KernelCall& c)
{
    return c.has(0) && c.out.size() == 1 && c.in[0].dtype == DType::Bool && c.out[0].dtype == DType::Bool && c.in[0].count == c.out[0].count;
}

bool specialParams(const KernelCall& c, bool& inf, bool& negative, bool& positive)
{
    inf = c.op && c.op->type == "IsInf";
    negative = c.attrInt("detect_negative", 1) != 0;
    positive = c.attrInt("detect_positive", 1) != 0;
    return c.has(0) && c.out.size() == 1 && c.in[0].dtype == DType::Float32 && c.out[0].dtype == DType::Bool && c.in[0].count == c.out[0].count;
}

bool whereParams(const KernelCall& c, int& elementBytes, kernels::Broadcast& s)
{
    if (c.in.size() != 3 || !c.has(0) || !c.has(1) || !c.has(2) || c.out.size() != 1 || c.in[0].dtype != DType::Bool)
        return false;
    const DType t = c.out[0].dtype;
    elementBytes = int(core::dtypeBytes(t));
    if (c.in[1].dtype != t || c.in[2].dtype != t || t == DType::String || (elementBytes != 1 && elementBytes != 2 && elementBytes != 4 && elementBytes != 8))
        return false;
    return broadcastShape(c.out[0], { &c.in[0], &c.in[1], &c.in[2] }, s);
}

bool castParams(const KernelCall& c, kernels::Scalar& from, kernels::Scalar& to)
{
    if (!c.has(0) || c.out.size() != 1 || c.in[0].count != c.out[0].count)
        return false;
    if (c.op && c.op->type == "CastLike" && (!c.has(1) || c.in[1].dtype != c.out[0].dtype)) // Cast to input 1's type
        return false;
    const auto x = scalarOf(c.in[0].dtype), y = scalarOf(c.out[0].dtype);
    if (!x || !y)
        return false;
    from = *x;
    to = *y;
    return true;
}

bool quantizeParams(const KernelCall& c, kernels::Scalar& type, kernels::QuantAxis& axis)
{
    if (!c.has(0) || c.out.size() != 1)
        return false;
    const auto &x = c.in[0], &y = c.out[0];
    if (x.dtype != DType::Float32 || (y.dtype != DType::UInt8 && y.dtype != DType::Int8) || y.count != x.count || !quantAxis(c, x, axis))
        return false;
    if (c.has(2) && c.in[2].dtype != y.dtype)
        return false;
    type = *scalarOf(y.dtype);
    return true;
}

bool dynamicQuantizeParams(const KernelCall& c)
{
    if (!c.has(0) || c.out.size() != 3)
        return false;
    const auto &x = c.in[0], &y = c.out[0];
    return x.dtype == DType::Float32 && y.dtype == DType::UInt8 && y.count == x.count && c.out[1].dtype == DType::Float32 && c.out[1].count == 1
        && c.out[2].dtype == DType::UInt8 && c.out[2].count == 1;
}

bool dequantizeParams(const KernelCall& c, kernels::Scalar& type, kernels::QuantAxis& axis)
{
    if (!c.has(0) || c.out.size() != 1)
        return false;
    const auto &x = c.in[0], &y = c.out[0];
    if ((x.dtype != DType::UInt8 && x.dtype != DType::Int8 && x.dtype != DType::Int32) || y.dtype != DType::Float32 || y.count != x.count
        || !quantAxis(c, x, axis))
        return false;
    if (c.has(2) && c.in[2].dtype != x.dtype)
        return false;
    type = *scalarOf(x.dtype);
    return true;
}

} // namespace gpu
