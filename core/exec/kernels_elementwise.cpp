// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Elementwise kernels: unary float math, binary/variadic arithmetic, comparisons and logical ops with
// multidirectional (numpy) broadcasting, Where, Cast, BitShift.
#include "exec/kernels.h"
#include "util/halffloat.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>

namespace core::exec {

namespace {

// Calls f.template operator()<T>() with T the C++ type of numeric element type t (float32, float64,
// signed and unsigned 8- to 64-bit integers); false for any other type.
template <class F>
bool withNumeric(DType t, F f)
{
    switch (t) {
    case DType::Float32: return f.template operator()<float>();
    case DType::Float64: return f.template operator()<double>();
    case DType::Int64: return f.template operator()<std::int64_t>();
    case DType::Int32: return f.template operator()<std::int32_t>();
    case DType::Int16: return f.template operator()<std::int16_t>();
    case DType::Int8: return f.template operator()<std::int8_t>();
    case DType::UInt64: return f.template operator()<std::uint64_t>();
    case DType::UInt32: return f.template operator()<std::uint32_t>();
    case DType::UInt16: return f.template operator()<std::uint16_t>();
    case DType::UInt8: return f.template operator()<std::uint8_t>();
    default: return false;
    }
}

// Calls f(outIndex, inIndex[]) for every output element; inputs broadcast against `out`
// (numpy rules, aligned at the trailing dimension). O(out elements × inputs).
template <class F>
bool forEachBroadcast(const Shape& out, const std::vector<const TensorView*>& ins, F f)
{
    const int rank = int(out.size());
    std::int64_t total = 1;
    for (auto d : out)
        total *= d;
    std::vector<std::int64_t> idx(ins.size(), 0);
    bool simple = true;
    for (const auto* t : ins) {
        if (t->rank() > rank)
            return false;
        for (int i = 0; i < t->rank(); ++i) {
            const auto d = t->shape[t->rank() - 1 - i];
            if (d != 1 && d != out[rank - 1 - i])
                return false;
        }
        simple = simple && (t->count == total || t->count == 1);
    }
    if (simple) {
        for (std::int64_t o = 0; o < total; ++o) {
            for (std::size_t k = 0; k < ins.size(); ++k)
                idx[k] = ins[k]->count == 1 ? 0 : o;
            f(o, idx.data());
        }
        return true;
    }
    // Per input, the stride of each output dimension (0 where broadcast).
    std::vector<Shape> strides(ins.size(), Shape(rank, 0));
    for (std::size_t k = 0; k < ins.size(); ++k) {
        const auto s = stridesOf(ins[k]->shape);
        const int off = rank - ins[k]->rank();
        for (int i = 0; i < ins[k]->rank(); ++i)
            strides[k][off + i] = ins[k]->shape[i] == 1 ? 0 : s[i];
    }
    Shape counter(rank, 0);
    for (std::int64_t o = 0; o < total; ++o) {
        f(o, idx.data());
        for (int d = rank - 1; d >= 0; --d) {
            for (std::size_t k = 0; k < ins.size(); ++k)
                idx[k] += strides[k][d];
            if (++counter[d] < out[d])
                break;
            for (std::size_t k = 0; k < ins.size(); ++k)
                idx[k] -= strides[k][d] * out[d];
            counter[d] = 0;
        }
    }
    return true;
}

bool unary(const KernelCall& c, float (*fn)(float, const KernelCall&))
{
    if (!c.allFloat() || c.out.size() != 1 || c.in[0].count != c.out[0].count)
        return false;
    const float* x = c.in[0].f32();
    float* y = c.out[0].f32();
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        y[i] = fn(x[i], c);
    return true;
}

#define UNARY(NAME, EXPR) \
    bool NAME(const KernelCall& c) { return unary(c, [](float x, [[maybe_unused]] const KernelCall& k) -> float { return EXPR; }); }

UNARY(relu, x > 0 ? x : 0.0f)
UNARY(leakyRelu, x >= 0 ? x : x * k.attrFloat("alpha", 0.01f))
UNARY(sigmoid, 1.0f / (1.0f + std::exp(-x)))
UNARY(tanhK, std::tanh(x))
UNARY(erfK, std::erf(x))
UNARY(sqrtK, std::sqrt(x))
UNARY(expK, std::exp(x))
UNARY(logK, std::log(x))
UNARY(absK, std::fabs(x))
UNARY(negK, -x)
UNARY(reciprocal, 1.0f / x)
UNARY(floorK, std::floor(x))
UNARY(ceilK, std::ceil(x))
UNARY(sinK, std::sin(x))
UNARY(cosK, std::cos(x))
UNARY(softplus, std::log(std::exp(x) + 1.0f))
UNARY(softsign, x / (1.0f + std::fabs(x)))
UNARY(elu, x >= 0 ? x : k.attrFloat("alpha", 1.0f) * (std::exp(x) - 1.0f))
UNARY(hardSigmoid, std::clamp(k.attrFloat("alpha", 0.2f) * x + k.attrFloat("beta", 0.5f), 0.0f, 1.0f))
UNARY(hardSwish, x * std::clamp(x / 6.0f + 0.5f, 0.0f, 1.0f))
UNARY(identityF, x)
UNARY(tanK, std::tan(x))
UNARY(asinK, std::asin(x))
UNARY(acosK, std::acos(x))
UNARY(atanK, std::atan(x))
UNARY(sinhK, std::sinh(x))
UNARY(coshK, std::cosh(x))
UNARY(asinhK, std::asinh(x))
UNARY(acoshK, std::acosh(x))
UNARY(atanhK, std::atanh(x))
UNARY(signK, x > 0 ? 1.0f : x < 0 ? -1.0f : x) // 0 and NaN stay
UNARY(roundK, std::nearbyint(x)) // halves to even (the default rounding mode)
UNARY(selu, x > 0 ? k.attrFloat("gamma", 1.05070102214813232421875f) * x
                  : k.attrFloat("gamma", 1.05070102214813232421875f) * (k.attrFloat("alpha", 1.67326319217681884765625f) * std::exp(x)
                      - k.attrFloat("alpha", 1.67326319217681884765625f)))
UNARY(thresholdedRelu, x > k.attrFloat("alpha", 1.0f) ? x : 0.0f)
UNARY(celu, std::max(0.0f, x) + std::min(0.0f, k.attrFloat("alpha", 1.0f) * (std::exp(x / k.attrFloat("alpha", 1.0f)) - 1.0f)))
UNARY(shrink, x < -k.attrFloat("lambd", 0.5f) ? x + k.attrFloat("bias", 0.0f) : x > k.attrFloat("lambd", 0.5f) ? x - k.attrFloat("bias", 0.0f) : 0.0f)

bool gelu(const KernelCall& c)
{
    if (c.attrText("approximate", "none") == "tanh")
        return unary(c, [](float x, const KernelCall&) {
            return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
        });
    return unary(c, [](float x, const KernelCall&) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); });
}

// Clip: float32 with the min/max attributes (opset 6) or inputs; any other numeric type with
// inputs only (opset 12), an absent bound the type's limit.
bool clip(const KernelCall& c)
{
    if (c.in.empty() || c.out.size() != 1 || c.in[0].dtype != c.out[0].dtype || c.in[0].count != c.out[0].count)
        return false;
    for (std::size_t k = 1; k < c.in.size(); ++k)
        if (c.has(k) && (c.in[k].dtype != c.in[0].dtype || c.in[k].count != 1))
            return false;
    if (c.in[0].dtype == DType::Float32) {
        float lo = c.attrFloat("min", -INFINITY), hi = c.attrFloat("max", INFINITY);
        if (c.has(1))
            lo = c.in[1].f32()[0];
        if (c.has(2))
            hi = c.in[2].f32()[0];
        const float* x = c.in[0].f32();
        float* y = c.out[0].f32();
        for (std::int64_t i = 0; i < c.out[0].count; ++i)
            y[i] = std::min(std::max(x[i], lo), hi);
        return true;
    }
    return withNumeric(c.in[0].dtype, [&]<class T>() {
        const T lo = c.has(1) ? reinterpret_cast<const T*>(c.in[1].data)[0] : std::numeric_limits<T>::lowest();
        const T hi = c.has(2) ? reinterpret_cast<const T*>(c.in[2].data)[0] : std::numeric_limits<T>::max();
        const T* x = reinterpret_cast<const T*>(c.in[0].data);
        T* y = reinterpret_cast<T*>(c.out[0].data);
        for (std::int64_t i = 0; i < c.out[0].count; ++i)
            y[i] = std::min(std::max(x[i], lo), hi);
        return true;
    });
}

// Binary op on element type T with broadcasting; variadic ops fold left over their inputs.
template <class T, class Fn>
bool foldBinary(const KernelCall& c, Fn fn)
{
    const auto& out = c.out[0];
    std::vector<const TensorView*> ins;
    for (const auto& t : c.in)
        if (t.present())
            ins.push_back(&t);
    if (ins.empty())
        return false;
    T* y = reinterpret_cast<T*>(out.data);
    if (ins.size() == 1) {
        if (ins[0]->count != out.count)
            return false;
        std::memcpy(y, ins[0]->data, std::size_t(out.bytes()));
        return true;
    }
    const T* a = reinterpret_cast<const T*>(ins[0]->data);
    const T* b = reinterpret_cast<const T*>(ins[1]->data);
    if (!forEachBroadcast(out.shape, { ins[0], ins[1] }, [&](std::int64_t o, const std::int64_t* i) { y[o] = T(fn(a[i[0]], b[i[1]])); }))
        return false;
    for (std::size_t k = 2; k < ins.size(); ++k) {
        const T* z = reinterpret_cast<const T*>(ins[k]->data);
        if (!forEachBroadcast(out.shape, { ins[k] }, [&](std::int64_t o, const std::int64_t* i) { y[o] = T(fn(y[o], z[i[0]])); }))
            return false;
    }
    return true;
}

// Integer arithmetic in the element type: sums, differences and products wrap as two's complement
// (computed in 64-bit unsigned, so never signed overflow); a zero divisor gives 0 (the spec leaves it
// undefined) and the one overflowing quotient (minimum / -1) wraps.
template <class T>
T wrapAdd(T a, T b) { return T(std::uint64_t(a) + std::uint64_t(b)); }
template <class T>
T wrapSub(T a, T b) { return T(std::uint64_t(a) - std::uint64_t(b)); }
template <class T>
T wrapMul(T a, T b) { return T(std::uint64_t(a) * std::uint64_t(b)); }
template <class T>
bool quotientOverflows(T a, T b) { return std::is_signed_v<T> && b == T(-1) && a == std::numeric_limits<T>::min(); }
template <class T>
T safeDiv(T a, T b) { return b == 0 ? T(0) : quotientOverflows(a, b) ? a : T(a / b); }
template <class T>
T truncMod(T a, T b) { return b == 0 || quotientOverflows(a, b) ? T(0) : T(a % b); }

// Binary/variadic arithmetic: every input and the output of one numeric type; `floating` for float32
// and float64, `integral` for the integer types (either may decline a type by being null).
template <class FF, class FI>
bool arith(const KernelCall& c, FF floating, FI integral)
{
    if (c.out.size() != 1)
        return false;
    const DType t = c.out[0].dtype;
    for (const auto& v : c.in)
        if (v.present() && v.dtype != t)
            return false;
    return withNumeric(t, [&]<class T>() {
        if constexpr (std::is_floating_point_v<T>)
            return foldBinary<T>(c, floating);
        else
            return foldBinary<T>(c, integral);
    });
}

bool add(const KernelCall& c) { return arith(c, [](auto a, auto b) { return a + b; }, [](auto a, auto b) { return wrapAdd(a, b); }); }
bool sub(const KernelCall& c) { return arith(c, [](auto a, auto b) { return a - b; }, [](auto a, auto b) { return wrapSub(a, b); }); }
bool mul(const KernelCall& c) { return arith(c, [](auto a, auto b) { return a * b; }, [](auto a, auto b) { return wrapMul(a, b); }); }
bool divK(const KernelCall& c) { return arith(c, [](auto a, auto b) { return a / b; }, [](auto a, auto b) { return safeDiv(a, b); }); }
bool maxK(const KernelCall& c)
{
    return arith(c, [](auto a, auto b) { return std::isnan(a) || a > b ? a : b; }, [](auto a, auto b) { return std::max(a, b); });
}
bool minK(const KernelCall& c)
{
    return arith(c, [](auto a, auto b) { return std::isnan(a) || a < b ? a : b; }, [](auto a, auto b) { return std::min(a, b); });
}
bool sum(const KernelCall& c) { return add(c); }

// Mean of any number of float32 inputs (broadcast): their sum, divided by how many there are.
bool mean(const KernelCall& c)
{
    if (c.out.size() != 1 || c.out[0].dtype != DType::Float32 || !add(c))
        return false;
    const auto n = float(std::count_if(c.in.begin(), c.in.end(), [](const TensorView& v) { return v.present(); }));
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        c.out[0].f32()[i] /= n;
    return true;
}

// Mod: fmod=1 truncates (C's fmod and %); fmod=0, integers only, takes the divisor's sign. A zero
// divisor gives 0 for integers (the spec leaves it undefined) instead of a crash.
bool mod(const KernelCall& c)
{
    if (c.attrInt("fmod", 0) != 0)
        return arith(c, [](auto a, auto b) { return std::fmod(a, b); }, [](auto a, auto b) { return truncMod(a, b); });
    if (c.out.empty() || c.out[0].dtype == DType::Float32 || c.out[0].dtype == DType::Float64)
        return false;
    return arith(c, [](auto a, auto) { return a; }, [](auto a, auto b) {
        using T = decltype(a);
        const T r = truncMod(a, b);
        if constexpr (std::is_signed_v<T>)
            return r != 0 && (r < 0) != (b < 0) ? T(r + b) : r;
        else
            return r;
    });
}

// Pow(X, Y): X float32/float64/int32/int64, Y any numeric type; the result in X's type. float32 to a
// float32 power stays in float (x*x for 2); every other pair is computed in double and converted, as
// numpy's power and astype give it (integers truncate toward zero).
bool powK(const KernelCall& c)
{
    if (c.in.size() != 2 || !c.has(0) || !c.has(1) || c.out.size() != 1 || c.out[0].dtype != c.in[0].dtype)
        return false;
    const auto& x = c.in[0];
    const auto& e = c.in[1];
    if (x.dtype == DType::Float32 && e.dtype == DType::Float32)
        return foldBinary<float>(c, [](float a, float b) { return b == 2.0f ? a * a : std::pow(a, b); });
    if (x.dtype != DType::Float32 && x.dtype != DType::Float64 && x.dtype != DType::Int32 && x.dtype != DType::Int64)
        return false;
    return withNumeric(x.dtype, [&]<class T>() {
        return withNumeric(e.dtype, [&]<class E>() {
            T* y = reinterpret_cast<T*>(c.out[0].data);
            const T* a = reinterpret_cast<const T*>(x.data);
            const E* b = reinterpret_cast<const E*>(e.data);
            return forEachBroadcast(c.out[0].shape, { &x, &e }, [&](std::int64_t o, const std::int64_t* i) {
                const double v = std::pow(double(a[i[0]]), double(b[i[1]]));
                if constexpr (std::is_floating_point_v<T>)
                    y[o] = T(v);
                else
                    y[o] = std::isfinite(v) && std::fabs(v) < 9.2e18 ? T(std::int64_t(v)) : T(0);
            });
        });
    });
}

bool prelu(const KernelCall& c)
{
    if (!c.allFloat())
        return false;
    return foldBinary<float>(c, +[](float x, float slope) { return x < 0 ? x * slope : x; });
}

// Comparisons: inputs of one numeric type (Equal: bool too), bool output.
template <class Cmp>
bool compare(const KernelCall& c, Cmp cmp)
{
    if (c.in.size() != 2 || !c.has(0) || !c.has(1) || c.in[0].dtype != c.in[1].dtype || c.out[0].dtype != DType::Bool)
        return false;
    auto* y = reinterpret_cast<std::uint8_t*>(c.out[0].data);
    const auto& a = c.in[0];
    const auto& b = c.in[1];
    const auto typed = [&]<class T>() {
        const T* p = reinterpret_cast<const T*>(a.data);
        const T* q = reinterpret_cast<const T*>(b.data);
        return forEachBroadcast(c.out[0].shape, { &a, &b }, [&](std::int64_t o, const std::int64_t* i) { y[o] = cmp(p[i[0]], q[i[1]]); });
    };
    return a.dtype == DType::Bool ? typed.template operator()<std::uint8_t>() : withNumeric(a.dtype, typed);
}

bool equal(const KernelCall& c) { return compare(c, [](auto a, auto b) { return a == b; }); }
// Orderings of bools are not defined by ONNX: only Equal takes them.
bool notBool(const KernelCall& c) { return c.in.empty() || c.in[0].dtype != DType::Bool; }
bool less(const KernelCall& c) { return notBool(c) && compare(c, [](auto a, auto b) { return a < b; }); }
bool greater(const KernelCall& c) { return notBool(c) && compare(c, [](auto a, auto b) { return a > b; }); }
bool lessOrEqual(const KernelCall& c) { return notBool(c) && compare(c, [](auto a, auto b) { return a <= b; }); }
bool greaterOrEqual(const KernelCall& c) { return notBool(c) && compare(c, [](auto a, auto b) { return a >= b; }); }

// And, Or, Xor: bool inputs (broadcast), bool output.
template <class Op>
bool logical(const KernelCall& c, Op op)
{
    if (c.in.size() != 2 || !c.has(0) || !c.has(1) || c.in[0].dtype != DType::Bool || c.in[1].dtype != DType::Bool
        || c.out[0].dtype != DType::Bool)
        return false;
    auto* y = reinterpret_cast<std::uint8_t*>(c.out[0].data);
    const auto* a = reinterpret_cast<const std::uint8_t*>(c.in[0].data);
    const auto* b = reinterpret_cast<const std::uint8_t*>(c.in[1].data);
    return forEachBroadcast(c.out[0].shape, { &c.in[0], &c.in[1] },
        [&](std::int64_t o, const std::int64_t* i) { y[o] = op(a[i[0]] != 0, b[i[1]] != 0) ? 1 : 0; });
}

bool andK(const KernelCall& c) { return logical(c, [](bool a, bool b) { return a && b; }); }
bool orK(const KernelCall& c) { return logical(c, [](bool a, bool b) { return a || b; }); }
bool xorK(const KernelCall& c) { return logical(c, [](bool a, bool b) { return a != b; }); }

// BitShift(X, Y): unsigned integers of one type (broadcast), direction LEFT or RIGHT. A shift by the
// element's bit width or more gives 0 (C leaves it undefined).
template <class T>
bool shiftAs(const KernelCall& c, bool left)
{
    auto* y = reinterpret_cast<T*>(c.out[0].data);
    const auto* a = reinterpret_cast<const T*>(c.in[0].data);
    const auto* b = reinterpret_cast<const T*>(c.in[1].data);
    return forEachBroadcast(c.out[0].shape, { &c.in[0], &c.in[1] }, [&](std::int64_t o, const std::int64_t* i) {
        const T by = b[i[1]];
        y[o] = by >= T(sizeof(T) * 8) ? T(0) : left ? T(a[i[0]] << by) : T(a[i[0]] >> by);
    });
}

bool bitShift(const KernelCall& c)
{
    const DType t = c.out[0].dtype;
    const std::string direction = c.attrText("direction");
    if (c.in.size() != 2 || !c.has(0) || !c.has(1) || c.in[0].dtype != t || c.in[1].dtype != t
        || (direction != "LEFT" && direction != "RIGHT"))
        return false;
    const bool left = direction == "LEFT";
    switch (t) {
    case DType::UInt8: return shiftAs<std::uint8_t>(c, left);
    case DType::UInt16: return shiftAs<std::uint16_t>(c, left);
    case DType::UInt32: return shiftAs<std::uint32_t>(c, left);
    case DType::UInt64: return shiftAs<std::uint64_t>(c, left);
    default: return false;
    }
}

bool notK(const KernelCall& c)
{
    if (c.in[0].dtype != DType::Bool || c.out[0].dtype != DType::Bool || c.in[0].count != c.out[0].count)
        return false;
    for (std::int64_t i = 0; i < c.out[0].count; ++i)
        c.out[0].data[i] = std::byte(c.in[0].data[i] == std::byte(0) ? 1 : 0);
    return true;
}

// Where(cond, x, y): any element type for x and y (copied bytewise).
bool where(const KernelCall& c)
{
    if (c.in.size() != 3 || !c.has(0) || !c.has(1) || !c.has(2) || c.in[0].dtype != DType::Bool
        || c.in[1].dtype != c.out[0].dtype || c.in[2].dtype != c.out[0].dtype)
        return false;
    const Bytes w = dtypeBytes(c.out[0].dtype);
    return forEachBroadcast(c.out[0].shape, { &c.in[0], &c.in[1], &c.in[2] }, [&](std::int64_t o, const std::int64_t* i) {
        const auto* src = c.in[0].data[i[0]] != std::byte(0) ? c.in[1].data + i[1] * w : c.in[2].data + i[2] * w;
        std::memcpy(c.out[0].data + o * w, src, std::size_t(w));
    });
}

template <class T>
double loadAs(const std::byte* p)
{
    T v;
    std::memcpy(&v, p, sizeof(T));
    return double(v);
}

// Cast among float32/float64/int64/int32/int8/uint8/bool. Float to int truncates toward zero.
// A float to int64 as x86's conversion gives it, without the undefined behaviour of a C++ cast:
// NaN and values outside [-2^63, 2^63) become INT64_MIN (what ONNX's reference outputs hold).
std::int64_t toInt64(double v)
{
    constexpr double kLimit = 9223372036854775808.0; // 2^63
    if (!(v >= -kLimit && v < kLimit))
        return std::numeric_limits<std::int64_t>::min();
    return std::int64_t(v);
}

bool cast(const KernelCall& c)
{
    const auto& x = c.in[0];
    const auto& y = c.out[0];
    auto ok = [](DType t) {
        return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16 || t == DType::Int64
            || t == DType::Int32 || t == DType::Int8 || t == DType::UInt8 || t == DType::Bool;
    };
    if (!ok(x.dtype) || !ok(y.dtype) || x.count != y.count)
        return false;
    if (x.dtype == y.dtype) {
        std::memcpy(y.data, x.data, std::size_t(y.bytes()));
        return true;
    }
    const Bytes wx = dtypeBytes(x.dtype), wy = dtypeBytes(y.dtype);
    for (std::int64_t i = 0; i < x.count; ++i) {
        const std::byte* p = x.data + i * wx;
        std::byte* q = y.data + i * wy;
        // int64 -> int64-like targets go through int64 to stay exact.
        std::int64_t iv = 0;
        double dv = 0;
        switch (x.dtype) {
        case DType::Float32: dv = loadAs<float>(p); iv = toInt64(dv); break;
        case DType::Float64: dv = loadAs<double>(p); iv = toInt64(dv); break;
        case DType::Float16: dv = halfToFloat(loadAs<std::uint16_t>(p)); iv = toInt64(dv); break;
        case DType::BFloat16: dv = bfloat16ToFloat(loadAs<std::uint16_t>(p)); iv = toInt64(dv); break;
        case DType::Int64: std::memcpy(&iv, p, 8); dv = double(iv); break;
        case DType::Int32: iv = std::int64_t(loadAs<std::int32_t>(p)); dv = double(iv); break;
        case DType::Int8: iv = std::int64_t(loadAs<std::int8_t>(p)); dv = double(iv); break;
        default: iv = std::int64_t(loadAs<std::uint8_t>(p)); dv = double(iv); break;
        }
        switch (y.dtype) {
        case DType::Float32: { float v = float(dv); std::memcpy(q, &v, 4); break; }
        case DType::Float64: std::memcpy(q, &dv, 8); break;
        case DType::Float16: { auto v = floatToHalf(float(dv)); std::memcpy(q, &v, 2); break; }
        case DType::BFloat16: { auto v = floatToBfloat16(float(dv)); std::memcpy(q, &v, 2); break; }
        case DType::Int64: std::memcpy(q, &iv, 8); break;
        case DType::Int32: { auto v = std::int32_t(iv); std::memcpy(q, &v, 4); break; }
        case DType::Int8: *q = std::byte(std::int8_t(iv)); break;
        case DType::Bool: *q = std::byte(dv != 0 ? 1 : 0); break;
        default: *q = std::byte(std::uint8_t(iv)); break;
        }
    }
    return true;
}

// CastLike: Cast to the element type of input 1 (the output's).
bool castLike(const KernelCall& c)
{
    return c.has(1) && c.out.size() == 1 && c.out[0].dtype == c.in[1].dtype && cast(c);
}

} // namespace

void addElementwiseKernels(std::map<std::string, Kernel>& t)
{
    t["Relu"] = relu; t["LeakyRelu"] = leakyRelu; t["Sigmoid"] = sigmoid; t["Tanh"] = tanhK; t["Erf"] = erfK;
    t["Sqrt"] = sqrtK; t["Exp"] = expK; t["Log"] = logK; t["Abs"] = absK; t["Neg"] = negK; t["Reciprocal"] = reciprocal;
    t["Floor"] = floorK; t["Ceil"] = ceilK; t["Sin"] = sinK; t["Cos"] = cosK; t["Softplus"] = softplus;
    t["Softsign"] = softsign; t["Elu"] = elu; t["HardSigmoid"] = hardSigmoid; t["HardSwish"] = hardSwish;
    t["Tan"] = tanK; t["Asin"] = asinK; t["Acos"] = acosK; t["Atan"] = atanK; t["Sinh"] = sinhK; t["Cosh"] = coshK;
    t["Asinh"] = asinhK; t["Acosh"] = acoshK; t["Atanh"] = atanhK; t["Sign"] = signK; t["Round"] = roundK; t["Selu"] = selu;
    t["ThresholdedRelu"] = thresholdedRelu; t["Celu"] = celu; t["Shrink"] = shrink;
    t["Gelu"] = gelu; t["Clip"] = clip;
    t["Add"] = add; t["Sub"] = sub; t["Mul"] = mul; t["Div"] = divK; t["Pow"] = powK; t["Max"] = maxK; t["Min"] = minK;
    t["Sum"] = sum; t["PRelu"] = prelu; t["Mod"] = mod;
    t["Equal"] = equal; t["Less"] = less; t["Greater"] = greater; t["LessOrEqual"] = lessOrEqual;
    t["GreaterOrEqual"] = greaterOrEqual; t["Not"] = notK; t["And"] = andK; t["Or"] = orK; t["Xor"] = xorK; t["Where"] = where; t["Cast"] = cast;
    t["Mean"] = mean; t["CastLike"] = castLike; t["BitShift"] = bitShift;
    (void)identityF;
}

} // namespace core::exec
