// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to gpu/: each scheduled op prepared once for every pass: where it runs (a device kernel,
// the host with the CPU executor's code, the copy stream for SwapOut/SwapIn, or nowhere for a
// Constant whose output is an uploaded weight), its device views and its host views (pinned and
// weight tensors in place, everything else through staging buffers).
// An op runs on the device only when the CPU executor would run a real kernel for it and a device
// kernel exists; Constant and ConstantOfShape always run on the host. A fused op runs its body on
// the device, op by op on the compute stream with its internal tensors in Layout::fused, when every
// body op would (else it runs whole on the host, as it does when a body kernel declines at run time).
// Precomputed: an op (a fused op too) whose every input is constant (a weight, or the output of another precomputed
// op; Shape and Size read only static shapes) is run once by prepareSteps on the CPU executor's
// kernels, and each pass copies its outputs to the device (asynchronously, no synchronisation):
// exporters leave whole shape and mask subgraphs as runtime ops (Swin-T: over 1,700), which would
// otherwise each stop both streams for a host round trip. Host ops qualify at any size; device ops
// with small outputs are computed too, but only those on shapes (not float32) are precomputed, the
// float32 ones keep their device kernel and just make their value known to the ops after them. An
// op the CPU executor runs synthetic is not precomputed.
// Shaped: an op that reads or writes a tensor sized by an upper bound (Tensor::estimated), a
// data-dependent op (NonZero, NonMaxSuppression, ...) or an If/Loop/Scan with its graphs runs on the host
// with run-time shapes (core::exec::runWithShapes), exactly as the CPU executor runs it: the device
// kernels know only planned shapes. Its outer reads (Op::captured) are staged like its inputs. It is
// never precomputed. Not a fused op: that runs on the host as a whole (core::exec::runHostOp).
// Host images: a tensor a host or precomputed op wrote stays in that op's output staging for the
// rest of the pass, so a later host op reads it there instead of copying it back from the device;
// a host op whose every input is such an image, a weight or a constant does not wait for the
// device at all (readsDevice false), so chains of host ops (a detector's post-processing) run
// without a synchronisation between them.

#include "devicelayout.h"

#include "exec/opcall.h"

#include "schedule/schedule.h"

namespace gpu {

enum class Where { Device, Host, SwapOut, SwapIn, Nothing, Precomputed };

// One scheduled op as every pass runs it.

struct Prepared {
    DeviceCall device; // views into device (or pinned host) memory
    core::exec::KernelCall host; // the same op on host memory: staging, weight copies, pinned tensors
    std::vector<core::TensorIndex> inTensor, outTensor; // per slot; -1 for an absent optional input
    std::vector<std::vector<std::byte>> inStage, outStage; // per slot: staging when the host view needs a copy (Precomputed: the outputs)
    core::exec::Kernel cpuKernel = nullptr;
    DeviceKernel deviceKernel = nullptr;
    // A fused op on the device: its body's calls on device views, each body op's kernel, and per body
    // op and input slot the host contents of a constant it reads. Empty otherwise.
    core::exec::PreparedCall body;
    std::vector<DeviceKernel> bodyKernels;
    std::vector<std::vector<const std::byte*>> bodyHostContents;
    // Shaped (above): the op's call on its host views, and its captured tensors' staging.
    bool shaped = false;
    core::exec::PreparedCall shapedCall;
    std::vector<std::vector<std::byte>> capturedStage; // per Op::captured entry, empty when read in place
    bool readsDevice = true; // a host op: it reads a tensor only the device (or the copy stream) has
    Where where = Where::Host;
    core::OpIndex opIndex = 0;
    std::string label; // "op 'name' (Type)"
};

// Prepares every op of the schedule (device views still unpointed: pointDeviceViews).
std::vector<Prepared> prepareSteps(const core::Graph& g, const core::Schedule& schedule, const Layout& layout, const core::RunOptions& options);

// Points the device views (a fused op's body too) at the tensors' current addresses.
void pointDeviceViews(const core::Graph& g, Prepared& p, const Layout& layout);

// A fused op's body on the device: each body op's kernel in order on the step's stream, handle and
// scratch. Stops at the first that fails or declines (then `supported` is false).
Outcome launchBody(const Prepared& p);

} // namespace gpu
