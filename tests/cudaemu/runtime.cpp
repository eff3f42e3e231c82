// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Test emulation of the CUDA runtime (README.md): memory, streams, events, the default memory pool,
// copies and kernel launches, on the host, with the checks described in state.h and cudaemu.h.
#include "state.h"

#include "cuda_runtime.h"
#include "cudaemu_kernels.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

struct CUstream_st {
    cudaemu::detail::Stream s;
};
struct CUevent_st {
    std::shared_ptr<cudaemu::detail::Marker> last; // the latest record, null before the first
};
struct CUmemPoolHandle_st {
    std::uint64_t releaseThreshold = 0;
};

namespace cudaemu::detail {

namespace {

constexpr std::size_t kQuarantineBytes = std::size_t(256) << 20;
constexpr std::size_t kPoolGranularity = 512; // the emulated pool's rounding of what it counts as used
constexpr double kLaunchMs = 0.002, kBytesPerMs = 1e7; // the emulated clock: 10 GB/s copies

struct State {
    Order order = Order::OldestStreamFirst;
    long calls = 0, failAt = 0;
    bool ignoreWaits = false, trace = false;
    int deviceCount = 1;
    std::size_t deviceMemory = std::size_t(16) << 30, deviceBytes = 0;
    std::uint64_t poolUsed = 0;
    cudaError_t lastError = cudaSuccess, sticky = cudaSuccess;
    std::vector<std::string> violations;
    std::map<const std::byte*, Block> blocks; // by base address
    std::deque<const std::byte*> quarantine;
    std::size_t quarantineBytes = 0;
    std::vector<CUstream_st*> streams; // live, in creation order (the order cudaemu::Order uses)
    std::set<CUevent_st*> events;
    double clockMs = 0;
    CUmemPoolHandle_st pool;
};

long numberFromEnvironment(const char* name, long fallback)
{
    const char* v = std::getenv(name);
    char* end = nullptr;
    const long n = v ? std::strtol(v, &end, 10) : fallback;
    return v && (end == v || *end || n < 0) ? fallback : n;
}

// A fresh state with the settings of the environment (cudaemu.h).
State fromEnvironment()
{
    State s;
    const char* order = std::getenv("MEMPLAN_CUDAEMU_ORDER");
    s.order = order && std::strcmp(order, "newest") == 0 ? Order::NewestStreamFirst : Order::OldestStreamFirst;
    s.trace = std::getenv("MEMPLAN_CUDAEMU_TRACE") != nullptr;
    s.deviceCount = int(numberFromEnvironment("MEMPLAN_CUDAEMU_DEVICES", s.deviceCount));
    s.deviceMemory = std::size_t(numberFromEnvironment("MEMPLAN_CUDAEMU_MEMORY", long(s.deviceMemory)));
    s.failAt = numberFromEnvironment("MEMPLAN_CUDAEMU_FAIL_CALL", 0);
    return s;
}

void checkAtExit();

State& st()
{
    static State s = fromEnvironment();
    // Registered after s and the cuBLAS handle set exist, so it runs before they are destroyed.
    static const bool checked = (liveBlasHandles(), std::atexit(checkAtExit) == 0);
    (void)checked;
    return s;
}

std::string hex(const void* p)
{
    char text[32];
    std::snprintf(text, sizeof text, "%p", p);
    return text;
}

// A call's result; an error is also the thread's last error, as in CUDA.
cudaError_t result(cudaError_t e)
{
    if (e != cudaSuccess)
        st().lastError = e;
    return e;
}

// Start of every call that can fail: the sticky error, else a planned failure, else success.
cudaError_t enter(cudaError_t planned)
{
    if (st().sticky != cudaSuccess)
        return result(st().sticky);
    if (failHere())
        return result(planned);
    return cudaSuccess;
}

#define ENTER(planned)                                                                                                                     \
    do {                                                                                                                                   \
        if (const cudaError_t e_ = enter(planned); e_ != cudaSuccess)                                                                      \
            return e_;                                                                                                                     \
    } while (0)

std::byte* allocate(std::size_t size, BlockKind kind)
{
    Block b;
    b.bytes.reset(new std::byte[std::max<std::size_t>(size, 1)]);
    std::memset(b.bytes.get(), 0xFF, std::max<std::size_t>(size, 1));
    b.size = size;
    b.kind = kind;
    b.usable = kind != BlockKind::Pool; // a pool block once its allocation has run in its stream
    std::byte* base = b.bytes.get();
    if (st().trace)
        std::fprintf(stderr, "cudaemu: allocate %s %zu bytes\n", hex(base).c_str(), size);
    if (kind != BlockKind::Pinned)
        st().deviceBytes += size;
    st().blocks.emplace(base, std::move(b));
    return base;
}

// The block whose base is p, of one of the kinds, still allocated; else nullptr.
Block* allocatedAt(const void* p, std::initializer_list<BlockKind> kinds)
{
    auto it = st().blocks.find(static_cast<const std::byte*>(p));
    if (it == st().blocks.end() || !it->second.allocated)
        return nullptr;
    return std::find(kinds.begin(), kinds.end(), it->second.kind) != kinds.end() ? &it->second : nullptr;
}

// Poisons a released block and keeps it reserved until the quarantine is full.
void retire(const std::byte* base)
{
    auto& s = st();
    auto it = s.blocks.find(base);
    if (it == s.blocks.end())
        return;
    Block& b = it->second;
    if (s.trace)
        std::fprintf(stderr, "cudaemu: release %s %zu bytes\n", hex(base).c_str(), b.size);
    b.allocated = b.usable = false;
    std::memset(b.bytes.get(), 0xFF, std::max<std::size_t>(b.size, 1));
    if (b.kind != BlockKind::Pinned)
        s.deviceBytes -= b.size;
    s.quarantine.push_back(base);
    s.quarantineBytes += b.size;
    while (s.quarantineBytes > kQuarantineBytes && !s.quarantine.empty()) {
        auto old = s.blocks.find(s.quarantine.front());
        s.quarantineBytes -= old->second.size;
        s.blocks.erase(old);
        s.quarantine.pop_front();
    }
}

bool drained(bool blockingOnly)
{
    return std::all_of(st().streams.begin(), st().streams.end(),
        [&](CUstream_st* x) { return x->s.queue.empty() || (blockingOnly && !x->s.blocking); });
}

void synchronizeDevice()
{
    runUntil([] { return drained(false); });
}

// The legacy default stream (a null stream): its work waits for, and runs before later work of,
// every blocking stream; emulated by draining them and running the work at once.
void runOnLegacyStream(const std::function<void()>& work, double costMs)
{
    runUntil([] { return drained(true); });
    work();
    st().clockMs += costMs;
}

enum class Side { Host, Pinned, Device };

Side sideOf(const void* p, std::size_t n)
{
    const Block* b = blockOf(p, std::max<std::size_t>(n, 1));
    if (!b)
        return Side::Host;
    return b->kind == BlockKind::Pinned ? Side::Pinned : Side::Device;
}

// Checks a copy's direction against its pointers (a kind that contradicts them is undefined in
// CUDA: reported here) and its device ranges. `dstSpan`/`srcSpan`: bytes from each pointer.
cudaError_t checkCopy(void* dst, std::size_t dstSpan, const void* src, std::size_t srcSpan, cudaMemcpyKind kind, const char* call)
{
    const bool dstDevice = sideOf(dst, dstSpan) == Side::Device, srcDevice = sideOf(src, srcSpan) == Side::Device;
    bool wantDst = dstDevice, wantSrc = srcDevice;
    switch (kind) {
    case cudaMemcpyHostToHost: wantDst = wantSrc = false; break;
    case cudaMemcpyHostToDevice: wantDst = true, wantSrc = false; break;
    case cudaMemcpyDeviceToHost: wantDst = false, wantSrc = true; break;
    case cudaMemcpyDeviceToDevice: wantDst = wantSrc = true; break;
    case cudaMemcpyDefault: break;
    default: return result(cudaErrorInvalidMemcpyDirection);
    }
    if (wantDst != dstDevice || wantSrc != srcDevice) {
        recordViolation(std::string(call) + ": the kind says " + (wantSrc ? "device" : "host") + " to " + (wantDst ? "device" : "host")
            + ", the pointers are " + (srcDevice ? "device" : "host") + " (" + hex(src) + ") to " + (dstDevice ? "device" : "host") + " ("
            + hex(dst) + ")");
        return result(cudaErrorInvalidValue);
    }
    if ((wantDst && !checkDevice(dst, dstSpan, call)) || (wantSrc && !checkDevice(src, srcSpan, call)))
        return result(cudaErrorInvalidValue);
    return cudaSuccess;
}

// Enqueues a copy of `height` rows of `width` bytes. A source in pageable host memory is read
// now (CUDA stages it before returning); a pageable destination makes the call wait for the copy.
cudaError_t copyRows(void* dst, std::size_t dpitch, const void* src, std::size_t spitch, std::size_t width, std::size_t height,
    cudaMemcpyKind kind, cudaStream_t stream, bool async, const char* call)
{
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (width > dpitch || width > spitch)
        return result(cudaErrorInvalidValue);
    const std::size_t dstSpan = dpitch * (height - 1) + width, srcSpan = spitch * (height - 1) + width;
    if (const auto e = checkCopy(dst, dstSpan, src, srcSpan, kind, call); e != cudaSuccess)
        return e;
    const bool srcPageable = sideOf(src, srcSpan) == Side::Host, dstPageable = sideOf(dst, dstSpan) == Side::Host;
    std::shared_ptr<std::vector<std::byte>> staged;
    if (srcPageable) {
        staged = std::make_shared<std::vector<std::byte>>(srcSpan);
        std::memcpy(staged->data(), src, srcSpan);
    }
    auto* to = static_cast<std::byte*>(dst);
    const auto* from = static_cast<const std::byte*>(src);
    const std::string name = call;
    auto work = [=] {
        const std::byte* source = staged ? staged->data() : from;
        if ((!dstPageable && !usableNow(to, dstSpan, name)) || (!staged && !usableNow(from, srcSpan, name)))
            return;
        for (std::size_t r = 0; r < height; ++r)
            std::memmove(to + r * dpitch, source + r * spitch, width);
    };
    const double cost = double(width * height) / kBytesPerMs;
    if (!async || !stream) {
        runOnLegacyStream(work, cost);
        return cudaSuccess;
    }
    enqueue(stream, work, cost);
    if (dstPageable) {
        auto done = std::make_shared<Marker>();
        stream->s.queue.push_back(Task { {}, done, {}, 0 });
        runUntil([&] { return done->done; });
    }
    return cudaSuccess;
}

const char* errorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorUnknown: return "cudaErrorUnknown";
    }
    return "cudaErrorUnknown";
}

const char* errorText(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorUnknown: return "unknown error";
    }
    return "unknown error";
}

bool validEvent(cudaEvent_t e) { return e && st().events.count(e) != 0; }

} // namespace

void recordViolation(const std::string& what)
{
    auto& s = st();
    s.violations.push_back(what);
    s.sticky = cudaErrorIllegalAddress;
}

bool failHere() { return ++st().calls == st().failAt; }

cudaError_t stickyError() { return st().sticky; }

Block* blockOf(const void* p, std::size_t n)
{
    const auto* q = static_cast<const std::byte*>(p);
    auto& blocks = st().blocks;
    auto it = blocks.upper_bound(q);
    if (!q || it == blocks.begin())
        return nullptr;
    --it;
    const std::byte* base = it->first;
    const std::size_t size = std::max<std::size_t>(it->second.size, 1);
    return q >= base && std::size_t(q - base) + n <= size ? &it->second : nullptr;
}

bool checkDevice(const void* p, std::size_t n, const std::string& call)
{
    const Block* b = blockOf(p, std::max<std::size_t>(n, 1));
    std::string why;
    if (!b)
        why = " is not inside any device allocation";
    else if (b->kind == BlockKind::Pinned)
        why = " is pinned host memory, not device memory";
    else if (!b->allocated)
        why = " was freed";
    if (why.empty())
        return true;
    recordViolation(call + ": " + hex(p) + " (" + std::to_string(n) + " bytes)" + why);
    return false;
}

bool usableNow(const void* p, std::size_t n, const std::string& call)
{
    const Block* b = blockOf(p, std::max<std::size_t>(n, 1));
    if (b && b->usable)
        return true;
    recordViolation(call + ": " + hex(p) + " (" + std::to_string(n) + " bytes) is used in stream order "
        + (!b ? "outside any allocation" : b->allocated ? "before its allocation" : "after it was freed"));
    return false;
}

bool validStream(cudaStream_t stream)
{
    return !stream || std::find(st().streams.begin(), st().streams.end(), stream) != st().streams.end();
}

void enqueue(cudaStream_t stream, std::function<void()> work, double costMs)
{
    if (!stream)
        runOnLegacyStream(work, costMs);
    else
        stream->s.queue.push_back(Task { std::move(work), {}, {}, costMs });
}

void runUntil(const std::function<bool()>& done)
{
    auto& s = st();
    while (!done()) {
        CUstream_st* pick = nullptr;
        const auto n = s.streams.size();
        for (std::size_t i = 0; i < n && !pick; ++i) {
            auto* x = s.streams[s.order == Order::OldestStreamFirst ? i : n - 1 - i];
            if (!x->s.queue.empty() && (!x->s.queue.front().waitFor || x->s.queue.front().waitFor->done))
                pick = x;
        }
        if (!pick) {
            recordViolation("the emulation cannot make progress: every stream with queued work waits for an event that never completes");
            return;
        }
        Task task = std::move(pick->s.queue.front());
        pick->s.queue.pop_front();
        if (task.work)
            task.work();
        s.clockMs += task.costMs;
        if (task.record) {
            task.record->done = true;
            task.record->timeMs = s.clockMs;
        }
    }
}

} // namespace cudaemu::detail

using namespace cudaemu::detail;

namespace cudaemu {

void reset()
{
    auto& s = st();
    for (auto* x : s.streams)
        delete x;
    for (auto* e : s.events)
        delete e;
    resetBlas();
    s = fromEnvironment();
}

void setOrder(Order order) { st().order = order; }
Order order() { return st().order; }
const char* orderName(Order order) { return order == Order::OldestStreamFirst ? "oldest stream first" : "newest stream first"; }
void failCall(long n) { st().failAt = n > 0 ? st().calls + n : 0; }
long calls() { return st().calls; }
void setIgnoreStreamWaits(bool ignore) { st().ignoreWaits = ignore; }
void setDeviceCount(int count) { st().deviceCount = count; }
void setDeviceMemory(std::size_t bytes) { st().deviceMemory = bytes; }

Census live()
{
    Census c;
    for (const auto& [base, b] : st().blocks) {
        if (!b.allocated)
            continue;
        if (b.kind == detail::BlockKind::Pinned)
            ++c.pinnedBlocks;
        else {
            ++c.deviceBlocks;
            c.deviceBytes += b.size;
        }
    }
    c.streams = int(st().streams.size());
    c.events = int(st().events.size());
    c.blasHandles = detail::liveBlasHandles();
    return c;
}

std::vector<std::string> violations() { return st().violations; }

void launchChecked(cudaStream_t stream, const char* kernel, std::function<void()> body, std::vector<const void*> pointers)
{
    if (enter(cudaErrorLaunchFailure) != cudaSuccess)
        return;
    if (!validStream(stream)) {
        result(cudaErrorInvalidResourceHandle);
        return;
    }
    const std::string name = std::string("kernel ") + kernel;
    if (st().trace) {
        std::string text;
        for (const void* p : pointers)
            text += " " + hex(p);
        std::fprintf(stderr, "cudaemu: launch %s%s\n", kernel, text.c_str());
    }
    for (const void* p : pointers)
        if (!checkDevice(p, 1, name))
            return; // a fault on real hardware: the violation makes the error sticky
    enqueue(stream,
        [name, body = std::move(body), pointers = std::move(pointers)] {
            for (const void* p : pointers)
                if (!usableNow(p, 1, name))
                    return;
            body();
        },
        kLaunchMs);
}

} // namespace cudaemu

const char* cudaGetErrorName(cudaError_t error) { return errorName(error); }
const char* cudaGetErrorString(cudaError_t error) { return errorText(error); }

cudaError_t cudaGetLastError()
{
    auto& s = st();
    const cudaError_t e = s.sticky != cudaSuccess ? s.sticky : s.lastError;
    s.lastError = cudaSuccess;
    return e;
}

cudaError_t cudaGetDeviceCount(int* count)
{
    ENTER(cudaErrorUnknown);
    if (!count)
        return result(cudaErrorInvalidValue);
    *count = st().deviceCount;
    return st().deviceCount > 0 ? cudaSuccess : result(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device)
{
    ENTER(cudaErrorUnknown);
    return device >= 0 && device < st().deviceCount ? cudaSuccess : result(cudaErrorInvalidDevice);
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device)
{
    ENTER(cudaErrorUnknown);
    if (!prop || device < 0 || device >= st().deviceCount)
        return result(cudaErrorInvalidValue);
    *prop = cudaDeviceProp {};
    std::snprintf(prop->name, sizeof prop->name, "MemPlan test emulation of CUDA (host memory)");
    prop->totalGlobalMem = st().deviceMemory;
    prop->major = 9;
    prop->minor = 0;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize()
{
    ENTER(cudaErrorUnknown);
    synchronizeDevice();
    return st().sticky != cudaSuccess ? result(st().sticky) : cudaSuccess;
}

cudaError_t cudaMalloc(void** devPtr, std::size_t size)
{
    ENTER(cudaErrorMemoryAllocation);
    if (!devPtr)
        return result(cudaErrorInvalidValue);
    if (st().deviceBytes + size > st().deviceMemory)
        return result(cudaErrorMemoryAllocation);
    *devPtr = allocate(size, BlockKind::Device);
    return cudaSuccess;
}

cudaError_t cudaFree(void* devPtr)
{
    if (!devPtr)
        return cudaSuccess;
    if (!allocatedAt(devPtr, { BlockKind::Device })) {
        recordViolation("cudaFree: " + hex(devPtr) + " is not a live cudaMalloc allocation");
        return result(cudaErrorInvalidValue);
    }
    synchronizeDevice(); // cudaFree waits for the device
    retire(static_cast<const std::byte*>(devPtr));
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void** ptr, std::size_t size)
{
    ENTER(cudaErrorMemoryAllocation);
    if (!ptr)
        return result(cudaErrorInvalidValue);
    *ptr = allocate(size, BlockKind::Pinned);
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr)
{
    if (!ptr)
        return cudaSuccess;
    if (!allocatedAt(ptr, { BlockKind::Pinned })) {
        recordViolation("cudaFreeHost: " + hex(ptr) + " is not a live cudaMallocHost allocation");
        return result(cudaErrorInvalidValue);
    }
    synchronizeDevice();
    retire(static_cast<const std::byte*>(ptr));
    return cudaSuccess;
}

cudaError_t cudaMallocAsync(void** devPtr, std::size_t size, cudaStream_t stream)
{
    ENTER(cudaErrorMemoryAllocation);
    if (!devPtr)
        return result(cudaErrorInvalidValue);
    if (!validStream(stream))
        return result(cudaErrorInvalidResourceHandle);
    if (st().deviceBytes + size > st().deviceMemory)
        return result(cudaErrorMemoryAllocation);
    std::byte* base = allocate(size, BlockKind::Pool);
    *devPtr = base;
    enqueue(
        stream,
        [base, size] {
            if (auto it = st().blocks.find(base); it != st().blocks.end()) // its free may already be enqueued
                it->second.usable = true;
            st().poolUsed += (size + kPoolGranularity - 1) / kPoolGranularity * kPoolGranularity;
        },
        0);
    return cudaSuccess;
}

cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t stream)
{
    if (!devPtr)
        return cudaSuccess;
    auto* b = allocatedAt(devPtr, { BlockKind::Pool });
    if (!b) {
        recordViolation("cudaFreeAsync: " + hex(devPtr) + " is not a live cudaMallocAsync allocation");
        return result(cudaErrorInvalidValue);
    }
    if (!validStream(stream))
        return result(cudaErrorInvalidResourceHandle);
    b->allocated = false;
    const auto* base = static_cast<const std::byte*>(devPtr);
    const std::size_t size = b->size;
    enqueue(
        stream,
        [base, size] {
            st().poolUsed -= (size + kPoolGranularity - 1) / kPoolGranularity * kPoolGranularity;
            retire(base);
        },
        0);
    return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device)
{
    ENTER(cudaErrorUnknown);
    if (!pool || device < 0 || device >= st().deviceCount)
        return result(cudaErrorInvalidValue);
    *pool = &st().pool;
    return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value)
{
    ENTER(cudaErrorUnknown);
    if (pool != &st().pool || !value || attr != cudaMemPoolAttrReleaseThreshold)
        return result(cudaErrorInvalidValue);
    pool->releaseThreshold = *static_cast<std::uint64_t*>(value);
    return cudaSuccess;
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value)
{
    ENTER(cudaErrorUnknown);
    if (pool != &st().pool || !value)
        return result(cudaErrorInvalidValue);
    if (attr == cudaMemPoolAttrReleaseThreshold)
        *static_cast<std::uint64_t*>(value) = pool->releaseThreshold;
    else if (attr == cudaMemPoolAttrUsedMemCurrent)
        *static_cast<std::uint64_t*>(value) = st().poolUsed;
    else
        return result(cudaErrorInvalidValue);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind)
{
    ENTER(cudaErrorUnknown);
    return copyRows(dst, count, src, count, count, 1, kind, nullptr, false, "cudaMemcpy");
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind, cudaStream_t stream)
{
    ENTER(cudaErrorUnknown);
    if (!validStream(stream))
        return result(cudaErrorInvalidResourceHandle);
    return copyRows(dst, count, src, count, count, 1, kind, stream, true, "cudaMemcpyAsync");
}

cudaError_t cudaMemsetAsync(void* dst, int value, std::size_t count, cudaStream_t stream)
{
    ENTER(cudaErrorUnknown);
    if (!validStream(stream))
        return result(cudaErrorInvalidResourceHandle);
    if (count == 0)
        return cudaSuccess;
    if (!checkDevice(dst, count, "cudaMemsetAsync"))
        return result(cudaErrorInvalidValue);
    auto* to = static_cast<std::byte*>(dst);
    auto work = [=] {
        if (usableNow(to, count, "cudaMemsetAsync"))
            std::memset(to, value, count);
    };
    const double cost = double(count) / kBytesPerMs;
    if (!stream)
        runOnLegacyStream(work, cost);
    else
        enqueue(stream, work, cost);
    return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void* dst, std::size_t dpitch, const void* src, std::size_t spitch, std::size_t width, std::size_t height,
    cudaMemcpyKind kind, cudaStream_t stream)
{
    ENTER(cudaErrorUnknown);
    if (!validStream(stream))
        return result(cudaErrorInvalidResourceHandle);
    return copyRows(dst, dpitch, src, spitch, width, height, kind, stream, true, "cudaMemcpy2DAsync");
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags)
{
    ENTER(cudaErrorUnknown);
    if (!stream)
        return result(cudaErrorInvalidValue);
    auto* x = new CUstream_st;
    x->s.blocking = (flags & cudaStreamNonBlocking) == 0;
    st().streams.push_back(x);
    *stream = x;
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    if (!stream || !validStream(stream))
        return result(cudaErrorInvalidResourceHandle);
    runUntil([stream] { return stream->s.queue.empty(); }); // queued work still completes
    auto& streams = st().streams;
    streams.erase(std::find(streams.begin(), streams.end(), stream));
    delete stream;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    ENTER(cudaErrorUnknown);
    if (!validStream(stream))
        return result(cudaErrorInvalidResourceHandle);
    if (stream)
        runUntil([stream] { return stream->s.queue.empty(); });
    else
        runUntil([] { return drained(true); });
    return st().sticky != cudaSuccess ? result(st().sticky) : cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags)
{
    ENTER(cudaErrorUnknown);
    if (!validStream(stream) || !validEvent(event) || flags != 0)
        return result(!validEvent(event) ? cudaErrorInvalidResourceHandle : cudaErrorInvalidValue);
    if (st().ignoreWaits || !event->last || event->last->done)
        return cudaSuccess;
    if (stream)
        stream->s.queue.push_back(Task { {}, {}, event->last, 0 });
    else {
        auto marker = event->last;
        runUntil([marker] { return marker->done; });
    }
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event)
{
    ENTER(cudaErrorUnknown);
    if (!event)
        return result(cudaErrorInvalidValue);
    *event = new CUevent_st;
    st().events.insert(*event);
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    if (!validEvent(event))
        return result(cudaErrorInvalidResourceHandle);
    st().events.erase(event);
    delete event;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    ENTER(cudaErrorUnknown);
    if (!validEvent(event) || !validStream(stream))
        return result(cudaErrorInvalidResourceHandle);
    event->last = std::make_shared<Marker>();
    if (stream)
        stream->s.queue.push_back(Task { {}, event->last, {}, 0 });
    else {
        auto marker = event->last;
        runOnLegacyStream([marker] { marker->done = true, marker->timeMs = st().clockMs; }, 0);
    }
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    ENTER(cudaErrorUnknown);
    if (!validEvent(event))
        return result(cudaErrorInvalidResourceHandle);
    if (auto marker = event->last)
        runUntil([marker] { return marker->done; });
    return st().sticky != cudaSuccess ? result(st().sticky) : cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end)
{
    ENTER(cudaErrorUnknown);
    if (!ms)
        return result(cudaErrorInvalidValue);
    if (!validEvent(start) || !validEvent(end) || !start->last || !end->last)
        return result(cudaErrorInvalidResourceHandle);
    if (!start->last->done || !end->last->done)
        return result(cudaErrorNotReady);
    *ms = float(end->last->timeMs - start->last->timeMs);
    return cudaSuccess;
}

namespace cudaemu::detail {
namespace {
// At exit: a violation, or anything still allocated or created, fails the process (exit status 70)
// with one line each on stderr, so a program run on the emulation (memplan with the emulated plugin) is checked too.
void checkAtExit()
{
    const auto c = cudaemu::live();
    const bool leaked = c.deviceBlocks || c.pinnedBlocks || c.streams || c.events || c.blasHandles;
    if (st().violations.empty() && !leaked)
        return;
    for (const auto& v : st().violations)
        std::fprintf(stderr, "cudaemu: violation: %s\n", v.c_str());
    if (leaked)
        std::fprintf(stderr, "cudaemu: still live at exit: %d device allocations (%zu bytes), %d pinned, %d streams, %d events, %d cuBLAS handles\n",
            c.deviceBlocks, c.deviceBytes, c.pinnedBlocks, c.streams, c.events, c.blasHandles);
    std::fflush(stderr);
    std::_Exit(70);
}
} // namespace
} // namespace cudaemu::detail
