// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "exec/onednn.h"
#include "exec/onednnprimitive.h"

#include "exec/executor.h"
#include "exec/opattrs.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

namespace core {

namespace {
std::atomic<int> threadSetting { 0 };
std::atomic<CpuKernels> kernelSetting { CpuKernels::OneDnn };
std::atomic<bool> channelsLastSetting { true };
}

void setCpuChannelsLast(bool on)
{
    channelsLastSetting = on;
}

bool cpuChannelsLast()
{
    return channelsLastSetting.load();
}

void setCpuKernels(CpuKernels kernels)
{
    kernelSetting = kernels;
}

CpuKernels cpuKernels()
{
    return kernelSetting.load();
}

std::string_view cpuKernelsName(CpuKernels kernels)
{
    return kernels == CpuKernels::OneDnn ? "onednn" : "own";
}

std::string cpuKernelLibrary()
{
    if (cpuKernels() == CpuKernels::Own)
        return "own kernels";
    const dnnl_version_t* v = dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

void setCpuThreads(int threads)
{
    threadSetting = std::max(threads, 0);
}

int cpuThreads()
{
    const int n = threadSetting.load();
    return n > 0 ? n : std::max(1, int(std::thread::hardware_concurrency()));
}

} // namespace core

namespace core::exec::onednn_detail {

// oneDNN on this build runs on OpenMP: its thread count is the calling thread's omp_set_num_threads.
// Looked up at run time (libdnnl brings libgomp), so the project builds with any compiler's OpenMP.
void applyThreads()
{
    using SetThreads = void (*)(int);
    static const auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    thread_local int applied = 0;
    const int want = cpuThreads();
    if (set && applied != want) {
        set(want);
        applied = want;
    }
}

dnnl::engine& engine()
{
    static dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
}

std::mutex cacheMutex;
std::unordered_map<std::string, std::shared_ptr<const Primitive>> cache; // null: oneDNN refused it
std::unordered_map<std::string, std::string> refusals;                    // key -> why
thread_local std::vector<std::string> notes;
thread_local std::set<std::string> noted;
thread_local int calls = 0;

void note(const KernelCall& c, const std::string& why)
{
    std::string text = "op '" + (c.op ? c.op->name : std::string()) + "' (" + (c.op ? c.op->type : std::string()) + "): " + why
        + "; the own kernel ran";
    if (noted.insert(text).second)
        notes.push_back(std::move(text));
}

std::string key(const char* kind, const std::vector<dims>& shapes, const std::vector<std::int64_t>& attrs)
{
    std::string k = kind;
    for (const auto& s : shapes) {
        k += '|';
        for (auto d : s)
            k += std::to_string(d) + ',';
    }
    k += '#';
    for (auto a : attrs)
        k += std::to_string(a) + ',';
    k += '@' + std::to_string(cpuThreads());
    return k;
}

// The cached primitive for `k`, made by `make` on first use (null when oneDNN refuses the
// configuration; the refusal is remembered and noted for the op).
std::shared_ptr<const Primitive> cached(const KernelCall& c, const std::string& k, const MakePrimitive& make, bool noteRefusal)
{
    {
        std::lock_guard lock(cacheMutex);
        if (auto it = cache.find(k); it != cache.end()) {
            if (!it->second && noteRefusal)
                note(c, refusals[k]);
            return it->second;
        }
    }
    applyThreads();
    std::shared_ptr<const Primitive> made;
    std::string why;
    try {
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        made = make(attr);
        // On N,H,W,C a reference implementation is tens to hundreds of times slower than N,C,H,W
        // copies and the usual kernels: refused, so runKernel makes the copies.
        if (made && anyChannelsLast(c) && made->implementation.rfind("ref", 0) == 0) {
            made = nullptr;
            why = "oneDNN has only a reference implementation for this configuration on N,H,W,C";
        }
    } catch (const dnnl::error& e) {
        why = std::string("oneDNN has no implementation for this configuration (") + e.what() + ")";
    }
    std::lock_guard lock(cacheMutex);
    if (cache.size() > 4096) { // a long session of many models: start over rather than grow without end
        cache.clear();
        refusals.clear();
    }
    cache[k] = made;
    if (!made) {
        refusals[k] = why;
        if (noteRefusal)
            note(c, why);
    }
    return made;
}

void Primitive::stage(std::size_t index, const dnnl::memory::desc& plain, bool output)
{
    const auto& wanted = args.at(index).second;
    if (wanted == plain)
        return;
    Staged st;
    st.index = index;
    st.output = output;
    st.plain = plain;
    st.reorder = output ? dnnl::reorder(dnnl::reorder::primitive_desc(engine(), wanted, engine(), plain))
                        : dnnl::reorder(dnnl::reorder::primitive_desc(engine(), plain, engine(), wanted));
    constexpr std::int64_t align = 64;
    st.offset = (workspaceBytes + align - 1) / align * align;
    workspaceBytes = st.offset + std::int64_t(wanted.get_size());
    staged.push_back(std::move(st));
}

void Primitive::pack(std::size_t index, std::size_t input, const dnnl::memory::desc& plain)
{
    const auto& wanted = args.at(index).second;
    if (wanted == plain)
        return;
    packing = Packing { index, input, plain, dnnl::reorder(dnnl::reorder::primitive_desc(engine(), plain, engine(), wanted)) };
}

thread_local WeightPacks* currentPacks = nullptr;

} // namespace core::exec::onednn_detail

namespace core::exec {

struct WeightPacks::Impl {
    struct Held {
        const void* plain;
        dnnl::memory::desc layout;
        dnnl::memory memory;
    };
    std::unordered_multimap<const void*, Held> held;
    std::int64_t bytes = 0;

    void* find(const void* plain, const dnnl::memory::desc& layout) const
    {
        const auto [from, to] = held.equal_range(plain);
        for (auto it = from; it != to; ++it)
            if (it->second.layout == layout)
                return it->second.memory.get_data_handle();
        return nullptr;
    }
    void keep(const void* plain, const dnnl::memory::desc& layout, const dnnl::memory& memory)
    {
        held.emplace(plain, Held { plain, layout, memory });
        bytes += std::int64_t(layout.get_size());
    }
};

WeightPacks::WeightPacks() : m_impl(std::make_unique<Impl>()), m_previous(onednn_detail::currentPacks)
{
    onednn_detail::currentPacks = this;
}

WeightPacks::~WeightPacks()
{
    onednn_detail::currentPacks = m_previous;
}

std::int64_t WeightPacks::bytes() const { return m_impl->bytes; }
int WeightPacks::count() const { return int(m_impl->held.size()); }

} // namespace core::exec

namespace core::exec::onednn_detail {

// The weights of `p` in its layout: a run's packed copy of constant weights (made on first use),
// else a reorder into kernel scratch.
void* packedWeights(const KernelCall& c, const Primitive& p, void* plain, dnnl::stream& stream)
{
    const auto& pk = *p.packing;
    const auto& wanted = p.args[pk.index].second;
    const bool constant = pk.input < c.in.size() && c.in[pk.input].constant;
    if (constant && currentPacks)
        if (void* held = currentPacks->impl().find(plain, wanted))
            return held;
    dnnl::memory from(pk.plain, engine(), plain);
    dnnl::memory to = constant && currentPacks ? dnnl::memory(wanted, engine())
                                               : dnnl::memory(wanted, engine(), scratch(1, std::int64_t((wanted.get_size() + 3) / 4)));
    pk.reorder.execute(stream, from, to);
    if (constant && currentPacks)
        currentPacks->impl().keep(plain, wanted, to);
    return to.get_data_handle();
}

// Runs `p` over `data` (one pointer per argument but the scratchpad, in p.args' order).
bool execute(const KernelCall& c, const Primitive& p, const std::vector<void*>& data)
{
    applyThreads();
    void* pad = nullptr;
    if (p.workspaceBytes > 0) {
        const std::int64_t floats = (p.workspaceBytes + 3) / 4;
        // A planned workspace holds workspaceFloats(c), which is this scratchpad (workspaceAtStep checked it).
        pad = c.workspace ? static_cast<void*>(c.workspace) : static_cast<void*>(scratch(2, floats));
    }
    try {
        thread_local dnnl::stream stream(engine());
        std::vector<void*> at(p.args.size());
        for (std::size_t i = 0; i < p.args.size(); ++i)
            at[i] = i < data.size() ? data[i] : pad;
        if (p.packing)
            at[p.packing->index] = packedWeights(c, p, data[p.packing->index], stream);
        for (const auto& st : p.staged) { // staged copies after the scratchpad
            at[st.index] = static_cast<std::byte*>(pad) + st.offset;
            if (!st.output) {
                dnnl::memory from(st.plain, engine(), data[st.index]), to(p.args[st.index].second, engine(), at[st.index]);
                st.reorder.execute(stream, from, to);
            }
        }
        std::unordered_map<int, dnnl::memory> bound;
        for (std::size_t i = 0; i < p.args.size(); ++i)
            bound.emplace(p.args[i].first, dnnl::memory(p.args[i].second, engine(), at[i]));
        p.primitive.execute(stream, bound);
        for (const auto& st : p.staged)
            if (st.output) {
                dnnl::memory from(p.args[st.index].second, engine(), at[st.index]), to(st.plain, engine(), data[st.index]);
                st.reorder.execute(stream, from, to);
            }
        stream.wait();
        ++calls;
    } catch (const dnnl::error& e) {
        note(c, std::string("oneDNN failed inside the primitive (") + e.what() + ")");
        return false;
    }
    return true;
}

dims shapeOf(const TensorView& t)
{
    return dims(t.shape.begin(), t.shape.end());
}

dnnl::memory::desc activationDesc(const TensorView& v, const dims& d)
{
    if (v.channelsLast && d.size() == 4 && dims(v.shape.begin(), v.shape.end()) == d)
        return dnnl::memory::desc(d, dt::f32, tag::acdb);
    return dnnl::memory::desc(d, dt::f32, plainStrides(d));
}

std::int64_t layoutBits(const KernelCall& c)
{
    std::int64_t bits = 0, bit = 1;
    for (const auto* list : { &c.in, &c.out })
        for (const auto& v : *list) {
            bits |= v.channelsLast ? bit : 0;
            bit <<= 1;
        }
    return bits;
}

bool anyChannelsLast(const KernelCall& c)
{
    return layoutBits(c) != 0;
}

tag plainTag(std::size_t rank)
{
    switch (rank) {
    case 1: return tag::a;
    case 2: return tag::ab;
    case 3: return tag::abc;
    case 4: return tag::abcd;
    case 5: return tag::abcde;
    case 6: return tag::abcdef;
    default: return tag::undef;
    }
}

// Row-major strides of `shape`, in oneDNN's type.
dims plainStrides(const dims& shape)
{
    dims s(shape.size(), 1);
    for (int i = int(shape.size()) - 2; i >= 0; --i)
        s[std::size_t(i)] = s[std::size_t(i) + 1] * shape[std::size_t(i) + 1];
    return s;
}

} // namespace core::exec::onednn_detail

namespace core::exec {

namespace {

using namespace onednn_detail;

// Strides, dilations (oneDNN counts the gaps: ONNX's minus one) and both pads of a convolution in
// the order of the spatial dimensions, the right pads derived from the output size.
struct Window {
    dims strides, dilations, padL, padR;
};

Window windowOf(const ConvGeometry& g, bool transposed)
{
    Window w;
    const auto add = [&](std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t s, std::int64_t d, std::int64_t pad) {
        w.strides.push_back(s);
        w.dilations.push_back(d - 1);
        w.padL.push_back(pad);
        const std::int64_t span = (k - 1) * d + 1;
        // Conv: out = (in + l + r - span) / s + 1, rounded down, so an end pad the stride skips is
        // left out (never below 0); ConvTranspose: out = (in - 1) * s + span - l - r exactly.
        std::int64_t r = transposed ? (in - 1) * s + span - pad - out : (out - 1) * s + span - in - pad;
        if (!transposed && r < 0 && (in + pad - span) / s + 1 == out)
            r = 0;
        w.padR.push_back(r);
    };
    if (g.spatial == 3)
        add(g.inD, g.outD, g.kD, g.strideD, g.dilD, g.padFront);
    if (g.spatial >= 2)
        add(g.inH, g.outH, g.kH, g.strideH, g.dilH, g.padTop);
    add(g.inW, g.outW, g.kW, g.strideW, g.dilW, g.padLeft);
    return w;
}

// The grouped weights' dims and plain tag: [G, O/G, I/G, k...] over ONNX's [O, I/G, k...] (Conv), or
// [G, O/G, I/G, k...] over ONNX's [I, O/G, k...] read as "io" (ConvTranspose).
bool weightsDesc(const TensorView& w, std::int64_t groups, bool transposed, dnnl::memory::desc& desc)
{
    const std::size_t r = w.shape.size();
    dims d = shapeOf(w);
    if (!transposed) {
        if (groups == 1) {
            desc = dnnl::memory::desc(d, dt::f32, plainTag(r));
            return true;
        }
        d[0] /= groups;
        d.insert(d.begin(), groups);
        desc = dnnl::memory::desc(d, dt::f32, plainTag(r + 1));
        return true;
    }
    // ConvTranspose W [I, O/G, k...]: oneDNN's deconvolution weights are [(G,) O/G, I/G, k...];
    // per group the model stores I/G blocks of [O/G, k...], so they are read through strides.
    const std::int64_t in = d[0] / groups, out = d[1];
    std::int64_t window = 1;
    for (std::size_t i = 2; i < r; ++i)
        window *= d[i];
    dims logical { out, in }, strides { window, out * window };
    const dims spatial(d.begin() + 2, d.end());
    logical.insert(logical.end(), spatial.begin(), spatial.end());
    const dims inner = plainStrides(spatial);
    strides.insert(strides.end(), inner.begin(), inner.end());
    if (groups > 1) {
        logical.insert(logical.begin(), groups);
        strides.insert(strides.begin(), in * out * window);
    }
    desc = dnnl::memory::desc(logical, dt::f32, strides);
    return true;
}

bool floatConv(const KernelCall& c)
{
    return c.op && c.has(0) && c.has(1) && c.out.size() == 1 && c.allFloat() && c.in[0].dtype == DType::Float32
        && c.in[1].dtype == DType::Float32 && (!c.has(2) || c.in[2].dtype == DType::Float32);
}

// `post`: post-ops applied to the result (only on the N,H,W,C path; null: none).
std::shared_ptr<const Primitive> convPrimitive(const KernelCall& c, bool transposed, const PostOps* post = nullptr)
{
    if (!floatConv(c))
        return nullptr;
    const auto &x = c.in[0], &w = c.in[1], &y = c.out[0];
    ConvGeometry g;
    if (!convGeometry(c, x, w, y, transposed, g))
        return nullptr;
    const std::int64_t groups = c.attrInt("group", 1);
    const std::int64_t cin = x.shape[1], cout = y.shape[1];
    if (groups <= 0 || cin % groups || cout % groups || x.shape[0] != y.shape[0])
        return nullptr;
    if (transposed ? (w.shape[0] != cin || w.shape[1] * groups != cout) : (w.shape[0] != cout || w.shape[1] * groups != cin))
        return nullptr;
    const bool bias = c.has(2);
    if (bias && c.in[2].count != cout)
        return nullptr;
    const Window win = windowOf(g, transposed);
    for (std::size_t i = 0; i < win.padR.size(); ++i)
        if ((!transposed && win.padR[i] < 0) || win.strides[i] < 1 || win.dilations[i] < 0)
            return nullptr;
    std::vector<std::int64_t> attrs { groups, bias, layoutBits(c), cpuChannelsLast(), w.constant };
    for (const auto* v : { &win.strides, &win.dilations, &win.padL, &win.padR })
        attrs.insert(attrs.end(), v->begin(), v->end());
    if (post) {
        attrs.push_back(-1);
        attrs.insert(attrs.end(), post->key.begin(), post->key.end());
    }
    // oneDNN's fast 2-D convolutions (brgconv, and the depthwise brdgmm) want N,H,W,C activations and
    // weights in their own layout. Every 2-D convolution runs so (with cpuChannelsLast(); without it
    // only the depthwise ones, which on N,C,H,W run as a GEMM per channel): a side stored N,C,H,W is
    // staged through the workspace, and the weights are packed. So a convolution's bits do not
    // depend on its neighbours' layouts (exec/channelslast.h).
    const bool depthwise = !transposed && groups > 1 && groups == cin && x.rank() == 4;
    const bool nhwc = !transposed && x.rank() == 4 && (depthwise || cpuChannelsLast());
    // One element per channel is the same bytes in either layout: nothing to stage.
    const auto stored = [](const TensorView& v) { return v.channelsLast || (v.rank() == 4 && v.shape[2] * v.shape[3] == 1); };
    const bool xLast = stored(x), yLast = stored(y);
    if (post && (!nhwc || !yLast))
        return nullptr;
    const std::string k = key(transposed ? "deconv" : nhwc ? "nhwcconv" : "conv", { shapeOf(x), shapeOf(w), shapeOf(y) }, attrs);
    return cached(c, k, [&](const dnnl::primitive_attr& attr) -> std::shared_ptr<const Primitive> {
        const dnnl::memory::desc src(shapeOf(x), dt::f32, plainTag(x.shape.size())), dst(shapeOf(y), dt::f32, plainTag(y.shape.size()));
        dnnl::memory::desc wei;
        if (!weightsDesc(w, groups, transposed, wei))
            throw dnnl::error(dnnl_unimplemented, "weights of this rank");
        const dnnl::memory::desc biasDesc = bias ? dnnl::memory::desc({ cout }, dt::f32, tag::a) : dnnl::memory::desc();
        std::vector<std::pair<int, dnnl::memory::desc>> args { { DNNL_ARG_SRC, src }, { DNNL_ARG_WEIGHTS, wei }, { DNNL_ARG_DST, dst } };
        if (bias)
            args.emplace_back(DNNL_ARG_BIAS, biasDesc);
        if (transposed) {
            const dnnl::deconvolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src,
                wei, biasDesc, dst, win.strides, win.dilations, win.padL, win.padR);
            return finish<dnnl::deconvolution_forward::primitive_desc, dnnl::deconvolution_forward>(
                dnnl::deconvolution_forward::primitive_desc(d, attr, engine()), std::move(args));
        }
        if (nhwc) {
            const dnnl::memory::desc nhwcSrc(shapeOf(x), dt::f32, tag::acdb), nhwcDst(shapeOf(y), dt::f32, tag::acdb);
            const dnnl::memory::desc anyWei(wei.dims(), dt::f32, tag::any);
            const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, nhwcSrc,
                anyWei, biasDesc, nhwcDst, win.strides, win.dilations, win.padL, win.padR);
            dnnl::primitive_attr withPost = attr;
            if (post)
                withPost.set_post_ops(post->ops);
            const dnnl::convolution_forward::primitive_desc pd(d, withPost, engine());
            args[0].second = pd.src_desc();
            args[1].second = pd.weights_desc();
            args[2].second = pd.dst_desc();
            auto p = finish<dnnl::convolution_forward::primitive_desc, dnnl::convolution_forward>(pd, std::move(args));
            if (!xLast)
                p->stage(0, src, false);
            if (w.constant) // packed once per run (WeightPacks)
                p->pack(1, 1, wei);
            else            // computed weights: reordered every call, in the workspace
                p->stage(1, wei, false);
            if (!yLast)
                p->stage(2, dst, true);
            return p;
        }
        const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wei,
            biasDesc, dst, win.strides, win.dilations, win.padL, win.padR);
        return finish<dnnl::convolution_forward::primitive_desc, dnnl::convolution_forward>(
            dnnl::convolution_forward::primitive_desc(d, attr, engine()), std::move(args));
    }, post == nullptr);
}

std::vector<void*> convData(const KernelCall& c)
{
    std::vector<void*> data { c.in[0].data, c.in[1].data, c.out[0].data };
    if (c.has(2))
        data.push_back(c.in[2].data);
    return data;
}

// MatMul (numpy semantics: 1-D operands promoted, batch dimensions broadcast): the operands' and
// the result's dims at one rank, each row-major.
std::shared_ptr<const Primitive> matmulPrimitive(const KernelCall& c)
{
    if (!c.op || !c.has(0) || !c.has(1) || c.out.size() != 1 || !c.allFloat())
        return nullptr;
    MatMulDims md;
    if (!matmulDims(c.in[0].shape, c.in[1].shape, md) || md.y.size() > 6 || md.m <= 0 || md.n <= 0 || md.k <= 0
        || md.batches * md.m * md.n != c.out[0].count)
        return nullptr;
    const std::int64_t m = md.m, k = md.k, n = md.n, count = md.batches;
    dims a(md.a.begin(), md.a.end()), b(md.b.begin(), md.b.end()), y(md.y.begin(), md.y.end());
    if (md.oneGemm && y.size() > 2) {
        a = { count * m, k };
        b = { k, n };
        y = { count * m, n };
    }
    const std::string kk = key("matmul", { a, b, y }, {});
    return cached(c, kk, [&](const dnnl::primitive_attr& attr) -> std::shared_ptr<const Primitive> {
        const dnnl::memory::desc src(a, dt::f32, plainStrides(a)), wei(b, dt::f32, plainStrides(b)), dst(y, dt::f32, plainStrides(y));
        const dnnl::matmul::desc d(src, wei, dst);
        return finish<dnnl::matmul::primitive_desc, dnnl::matmul>(
            dnnl::matmul::primitive_desc(d, attr, engine()), { { DNNL_ARG_SRC, src }, { DNNL_ARG_WEIGHTS, wei }, { DNNL_ARG_DST, dst } });
    });
}

// Gemm: Y = A'·B' + C with alpha 1 and beta 1 (C broadcast to [M, N]: a bias of shape [N], [1, N],
// [M, 1], [M, N] or a scalar); transposed operands read in place through strides.
std::shared_ptr<const Primitive> gemmPrimitive(const KernelCall& c)
{
    if (!c.op || !c.has(0) || !c.has(1) || c.out.size() != 1 || !c.allFloat() || c.in[0].rank() != 2 || c.in[1].rank() != 2
        || c.out[0].rank() != 2)
        return nullptr;
    if (c.attrFloat("alpha", 1.0f) != 1.0f || (c.has(2) && c.attrFloat("beta", 1.0f) != 1.0f))
        return nullptr;
    const bool ta = c.attrInt("transA", 0), tb = c.attrInt("transB", 0);
    const auto &a = c.in[0], &b = c.in[1], &y = c.out[0];
    const std::int64_t m = y.shape[0], n = y.shape[1], k = ta ? a.shape[0] : a.shape[1];
    if ((ta ? a.shape[1] : a.shape[0]) != m || (tb ? b.shape[1] : b.shape[0]) != k || (tb ? b.shape[0] : b.shape[1]) != n)
        return nullptr;
    dims biasDims;
    if (c.has(2)) {
        const auto& cs = c.in[2].shape;
        if (cs.size() > 2)
            return nullptr;
        const std::int64_t rows = cs.size() == 2 ? cs[0] : 1, cols = cs.empty() ? 1 : cs.back();
        if ((rows != 1 && rows != m) || (cols != 1 && cols != n))
            return nullptr;
        biasDims = { rows, cols };
    }
    const std::string kk = key("gemm", { { m, n, k }, biasDims }, { ta, tb });
    return cached(c, kk, [&](const dnnl::primitive_attr& attr) -> std::shared_ptr<const Primitive> {
        const dnnl::memory::desc src({ m, k }, dt::f32, ta ? dims { 1, m } : dims { k, 1 });
        const dnnl::memory::desc wei({ k, n }, dt::f32, tb ? dims { 1, k } : dims { n, 1 });
        const dnnl::memory::desc dst({ m, n }, dt::f32, dims { n, 1 });
        std::vector<std::pair<int, dnnl::memory::desc>> args { { DNNL_ARG_SRC, src }, { DNNL_ARG_WEIGHTS, wei }, { DNNL_ARG_DST, dst } };
        dnnl::memory::desc biasDesc;
        if (!biasDims.empty()) {
            biasDesc = dnnl::memory::desc(biasDims, dt::f32, plainStrides(biasDims));
            args.emplace_back(DNNL_ARG_BIAS, biasDesc);
        }
        const dnnl::matmul::desc d = biasDims.empty() ? dnnl::matmul::desc(src, wei, dst) : dnnl::matmul::desc(src, wei, biasDesc, dst);
        return finish<dnnl::matmul::primitive_desc, dnnl::matmul>(dnnl::matmul::primitive_desc(d, attr, engine()), std::move(args));
    });
}

std::shared_ptr<const Primitive> primitiveFor(const KernelCall& c)
{
    if (cpuKernels() != CpuKernels::OneDnn || !c.op || !(c.op->domain.empty() || c.op->domain == "ai.onnx"))
        return nullptr;
    const auto& type = c.op->type;
    if (type != "Conv" && anyChannelsLast(c))
        return nullptr; // runKernel gives them N,C,H,W copies
    if (type == "Conv")
        return convPrimitive(c, false);
    if (type == "ConvTranspose")
        return convPrimitive(c, true);
    if (type == "MatMul")
        return matmulPrimitive(c);
    if (type == "Gemm")
        return gemmPrimitive(c);
    return nullptr;
}

} // namespace

std::int64_t onednnScratchpadBytes(const KernelCall& call)
{
    const auto p = primitiveFor(call);
    return p ? p->workspaceBytes : -1;
}

std::string onednnImplementation(const KernelCall& call)
{
    const auto p = primitiveFor(call);
    return p ? p->implementation : std::string();
}

bool onednnConv(const KernelCall& call)
{
    const auto p = primitiveFor(call);
    return p && execute(call, *p, convData(call));
}

bool onednnConvTranspose(const KernelCall& call)
{
    const auto p = primitiveFor(call);
    return p && execute(call, *p, convData(call));
}

bool onednnConvChain(const std::vector<const KernelCall*>& calls)
{
    if (calls.size() < 2 || cpuKernels() != CpuKernels::OneDnn || !cpuChannelsLast())
        return false;
    const KernelCall& conv = *calls[0];
    if (!conv.op || conv.op->type != "Conv" || !(conv.op->domain.empty() || conv.op->domain == "ai.onnx") || conv.out.size() != 1
        || conv.out[0].rank() != 4)
        return false;
    PostOps post;
    const std::byte* previous = conv.out[0].data;
    for (std::size_t i = 1; i < calls.size(); ++i) {
        const KernelCall& c = *calls[i];
        if (!c.op || !(c.op->domain.empty() || c.op->domain == "ai.onnx") || c.out.size() != 1 || c.out[0].shape != conv.out[0].shape
            || c.out[0].dtype != DType::Float32)
            return false;
        dnnl::algorithm algorithm {};
        float alpha = 0, beta = 0;
        if (c.in.size() >= 1 && c.in[0].data == previous && c.in[0].shape == c.out[0].shape && eltwiseAlgorithm(c, algorithm, alpha, beta)) {
            post.ops.append_eltwise(1.0f, algorithm, alpha, beta);
            std::int32_t a, b;
            std::memcpy(&a, &alpha, sizeof a);
            std::memcpy(&b, &beta, sizeof b);
            post.key.insert(post.key.end(), { 1, std::int64_t(algorithm), a, b });
        } else
            return false;
        previous = c.out[0].data;
    }
    KernelCall chain = conv;
    chain.out = { calls.back()->out[0] };
    const auto& y = chain.out[0];
    // The result must not be one of the operands it is computed from (an in-place strategy's reuse).
    for (const auto* v : { &conv.in[0], &conv.in[1] })
        if (v->data == y.data)
            return false;
    if (!floatConv(chain))
        return false;
    const auto p = convPrimitive(chain, false, &post);
    // The group's planned workspace holds what its Conv alone asks for: a chain asking more runs op by op.
    const auto alone = primitiveFor(conv);
    if (!p || !alone || p->workspaceBytes > alone->workspaceBytes)
        return false;
    return execute(chain, *p, convData(chain));
}

bool onednnMatMul(const KernelCall& call)
{
    const auto p = primitiveFor(call);
    return p && execute(call, *p, { call.in[0].data, call.in[1].data, call.out[0].data });
}

bool onednnGemm(const KernelCall& call)
{
    const auto p = primitiveFor(call);
    if (!p)
        return false;
    std::vector<void*> data { call.in[0].data, call.in[1].data, call.out[0].data };
    if (call.has(2))
        data.push_back(call.in[2].data);
    return execute(call, *p, data);
}

int takeOnednnCalls()
{
    return std::exchange(calls, 0);
}

std::vector<std::string> takeOnednnNotes()
{
    noted.clear();
    return std::exchange(notes, {});
}

} // namespace core::exec
