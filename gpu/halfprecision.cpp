// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Half-precision tensors on the device: a float32 device kernel runs on float32 copies of a call's
// float16 and bfloat16 tensors, made in the step's staging buffer by a widening kernel, and its float
// outputs are rounded back to nearest even, as core::exec::runKernel does on the host. A float16
// model thereby runs on the device kernels instead of on the host.
#include "kernels.h"
#include "ops.h"

#include "util/halfbits.h"

#include <algorithm>

namespace gpu {

using core::DType;
using core::exec::KernelCall;
using core::exec::TensorView;

namespace {

// By type alone: before a pass activations have no address yet, and sizing must count them.
bool isNarrow(const TensorView& v) { return v.dtype == DType::Float16 || v.dtype == DType::BFloat16; }

kernels::Scalar narrowScalar(DType t) { return t == DType::Float16 ? kernels::Scalar::Float16 : kernels::Scalar::BFloat16; }

// Floats a copy of `count` elements takes in the staging buffer: whole 256-byte blocks, so each copy
// starts aligned as a fresh device allocation would.
std::int64_t stagedFloats(std::int64_t count) { return (std::max<std::int64_t>(count, 1) + 63) / 64 * 64; }

// Inputs read as parameters from their host copies (Clip's bounds, Resize's scales) are small.
constexpr std::int64_t kHostParameterLimit = 64;

} // namespace

std::int64_t stagingFloats(const KernelCall& call)
{
    if (call.op && (call.op->type == "Cast" || call.op->type == "CastLike"))
        return 0; // converts itself
    std::int64_t floats = 0;
    for (const auto* list : { &call.in, &call.out })
        for (const auto& v : *list)
            floats += isNarrow(v) ? stagedFloats(v.count) : 0;
    return floats;
}

KernelCall widenedShapes(const KernelCall& call)
{
    KernelCall wide = call;
    if (stagingFloats(call) == 0)
        return wide;
    for (auto* list : { &wide.in, &wide.out })
        for (auto& v : *list)
            if (isNarrow(v))
                v.dtype = DType::Float32;
    return wide;
}

Outcome launchDeviceOp(DeviceKernel kernel, const DeviceCall& d)
{
    if (stagingFloats(d.call) == 0)
        return kernel(d);
    if (!d.staging)
        return { false, {} };
    DeviceCall wide = d;
    float* next = d.staging;
    std::vector<std::vector<float>> hostCopies; // widened host copies of small parameter inputs, read while enqueuing
    for (std::size_t k = 0; k < wide.call.in.size(); ++k) {
        auto& v = wide.call.in[k];
        if (!isNarrow(v) || !v.present())
            continue;
        if (const auto e = kernels::cast(narrowScalar(v.dtype), v.data, kernels::Scalar::Float32, next, v.count, d.stream); e != cudaSuccess)
            return launched(e, "kernels::cast (widening a half-precision input)");
        if (k < wide.hostContents.size() && wide.hostContents[k]) {
            const std::byte* widened = nullptr;
            if (v.count <= kHostParameterLimit) {
                auto& copy = hostCopies.emplace_back(std::size_t(v.count));
                const auto* bits = reinterpret_cast<const std::uint16_t*>(wide.hostContents[k]);
                for (std::int64_t i = 0; i < v.count; ++i)
                    copy[std::size_t(i)] = v.dtype == DType::Float16 ? core::halfbits::toFloat(bits[i]) : core::halfbits::bfloat16ToFloat(bits[i]);
                widened = reinterpret_cast<const std::byte*>(copy.data());
            }
            wide.hostContents[k] = widened; // a large one: the kernel reads the device copy or declines
        }
        v.dtype = DType::Float32;
        v.data = reinterpret_cast<std::byte*>(next);
        next += stagedFloats(v.count);
    }
    for (auto& v : wide.call.out)
        if (isNarrow(v) && v.present()) {
            v.dtype = DType::Float32;
            v.data = reinterpret_cast<std::byte*>(next);
            next += stagedFloats(v.count);
        }
    const Outcome outcome = kernel(wide);
    if (!outcome.supported || !outcome.failure.empty())
        return outcome;
    for (std::size_t k = 0; k < d.call.out.size(); ++k) {
        const auto& v = d.call.out[k];
        if (isNarrow(v) && v.present())
            if (const auto e = kernels::cast(kernels::Scalar::Float32, wide.call.out[k].data, narrowScalar(v.dtype), v.data, v.count, d.stream);
                e != cudaSuccess)
                return launched(e, "kernels::cast (rounding a float32 result to half precision)");
    }
    return outcome;
}

} // namespace gpu
