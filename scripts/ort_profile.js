#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// Writes an ONNX Runtime profile (Chrome-trace JSON) of a model run on ONNX Runtime's CPU provider,
// for `memplan trace PROFILE.json --model MODEL.onnx` (docs/CLI.md).
//
// Usage: node scripts/ort_profile.js MODEL.onnx OUT.json [LEVEL] [RUNS] [options]
//   LEVEL                 graph optimization level: disabled (default: ORT keeps the ONNX node names,
//                         so every node maps onto MemPlan's ops), basic, extended or all (fuses nodes)
//   RUNS                  how many times to run the model (default 1); the profile holds one pass per run
//   --fill zeros|random   input values (default random: uniform [0, 1) floats from --seed; integer and
//                         boolean inputs are always zero, so indices stay valid)
//   --seed N              seed of the random inputs (default 1)
//   --dim NAME=V          value of a symbolic dimension of the declared input shapes (default 1)
//   --shape INPUT=D1xD2   the whole shape of one input (for bindings without inputMetadata, or to override)
//   --no-arena            run without ONNX Runtime's CPU memory arena (no mem_* numbers in the profile)
//   --no-mem-pattern      run without its memory pattern planning
//   --no-prepack          run without weight prepacking (session.disable_prepacking): a prepacked
//                         weight is a copy of it in the arena, counted in the bytes in use
//   --latency             time the runs instead of profiling: one warm-up run, then RUNS timed runs;
//                         OUT.json ("-": standard output) gets {"p50_ms", "median_ms", "runs",
//                         "threads", "level"} (`memplan bench run` uses it)
//   --threads N           intra-op threads of a --latency session (default 1)
//   --save-io DIR         also write the last run's inputs and outputs as ONNX TensorProto files,
//                         DIR/input_K.pb and DIR/output_K.pb (session order), and DIR/io.json naming
//                         them ({"inputs": [{"name", "file"}], "outputs": [...]}): `memplan run
//                         --input NAME=FILE --save-outputs` then runs the same inputs
// The profiling session runs sequentially on one thread, so the events come in execution order.
// onnxruntime-node is found in $MEMPLAN_ORT_NODE (the package folder), else in tools/node/
// (scripts/setup.sh installs it there), else wherever node's require finds it.
// Exits 1 with one message on any error, 2 on a bad command line.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

function fail(message, code = 1) {
    process.stderr.write(`ort_profile: ${message}\n`);
    process.exit(code);
}

function loadOrt() {
    const candidates = [];
    if (process.env.MEMPLAN_ORT_NODE)
        candidates.push(process.env.MEMPLAN_ORT_NODE);
    candidates.push(path.join(__dirname, '..', 'tools', 'node', 'node_modules', 'onnxruntime-node'));
    candidates.push('onnxruntime-node');
    const errors = [];
    for (const candidate of candidates) {
        try {
            return require(candidate);
        } catch (e) {
            errors.push(`${candidate}: ${String(e.message).split('\n')[0]}`);
        }
    }
    fail(`onnxruntime-node is not installed (run scripts/setup.sh, or set MEMPLAN_ORT_NODE): ${errors.join('; ')}`);
}

function parseArgs(argv) {
    const options = { positional: [], fill: 'random', seed: 1, dims: {}, shapes: {}, arena: true, memPattern: true, prepack: true, latency: false, threads: 1, saveIo: null };
    for (let i = 0; i < argv.length; ++i) {
        const arg = argv[i];
        const value = () => {
            if (i + 1 >= argv.length)
                fail(`${arg} needs a value`, 2);
            return argv[++i];
        };
        if (arg === '--fill') {
            options.fill = value();
            if (options.fill !== 'zeros' && options.fill !== 'random')
                fail(`--fill '${options.fill}': expected zeros or random`, 2);
        } else if (arg === '--seed') {
            options.seed = Number(value());
            if (!Number.isInteger(options.seed))
                fail('--seed: expected a whole number', 2);
        } else if (arg === '--dim') {
            const m = /^([^=]+)=(\d+)$/.exec(value());
            if (!m)
                fail('--dim: expected NAME=VALUE', 2);
            options.dims[m[1]] = Number(m[2]);
        } else if (arg === '--shape') {
            const m = /^([^=]+)=(\d+(?:x\d+)*)?$/.exec(value());
            if (!m)
                fail('--shape: expected INPUT=D1xD2x... (INPUT= for a scalar)', 2);
            options.shapes[m[1]] = m[2] ? m[2].split('x').map(Number) : [];
        } else if (arg === '--no-arena') {
            options.arena = false;
        } else if (arg === '--no-prepack') {
            options.prepack = false;
        } else if (arg === '--no-mem-pattern') {
            options.memPattern = false;
        } else if (arg === '--latency') {
            options.latency = true;
        } else if (arg === '--threads') {
            options.threads = Number(value());
            if (!Number.isInteger(options.threads) || options.threads < 1 || options.threads > 1024)
                fail('--threads: expected a whole number from 1 to 1024', 2);
        } else if (arg === '--save-io') {
            options.saveIo = value();
        } else if (arg === '--help' || arg === '-h') {
            process.stdout.write(fs.readFileSync(__filename, 'utf8').split('\n').filter((l) => l.startsWith('//')).slice(2, 28)
                .map((l) => l.slice(3)).join('\n') + '\n');
            process.exit(0);
        } else if (arg.startsWith('--')) {
            fail(`unknown option ${arg}`, 2);
        } else {
            options.positional.push(arg);
        }
    }
    if (options.positional.length < 2 || options.positional.length > 4)
        fail('usage: node scripts/ort_profile.js MODEL.onnx OUT.json [LEVEL] [RUNS] [options] (--help)', 2);
    const [model, out, level = 'disabled', runs = '1'] = options.positional;
    Object.assign(options, { model, out, level });
    if (!['disabled', 'basic', 'extended', 'all'].includes(options.level))
        fail(`optimization level '${options.level}': expected disabled, basic, extended or all`, 2);
    options.runs = Number(runs);
    if (!Number.isInteger(options.runs) || options.runs < 1 || options.runs > 1000)
        fail(`runs '${runs}': expected a whole number from 1 to 1000`, 2);
    return options;
}

// A small deterministic generator (mulberry32), so a seed gives the same inputs everywhere.
function random(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

const kArrays = {
    float32: Float32Array, float64: Float64Array, float16: Uint16Array, int8: Int8Array, uint8: Uint8Array,
    int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array,
    uint64: BigUint64Array, bool: Uint8Array,
};

function makeInput(ort, name, type, shape, options, next) {
    const Array = kArrays[type];
    if (!Array)
        fail(`input '${name}' has type ${type}, which this script cannot fill`);
    const count = shape.reduce((a, b) => a * b, 1);
    if (!Number.isSafeInteger(count) || count > 1 << 30)
        fail(`input '${name}' of shape [${shape}] is too large to fill`);
    const data = new Array(count);
    if (options.fill === 'random' && (type === 'float32' || type === 'float64'))
        for (let i = 0; i < count; ++i)
            data[i] = next();
    return new ort.Tensor(type, data, shape);
}

// ONNX TensorProto element types (onnx.proto's DataType) of onnxruntime-node's tensor types.
const kProtoTypes = {
    float32: 1, uint8: 2, int8: 3, uint16: 4, int16: 5, int32: 6, int64: 7, bool: 9, float16: 10, float64: 11,
    uint32: 12, uint64: 13,
};

function varint(value) {
    let v = BigInt(value);
    const bytes = [];
    while (v >= 0x80n) {
        bytes.push(Number(v & 0x7fn) | 0x80);
        v >>= 7n;
    }
    bytes.push(Number(v));
    return Buffer.from(bytes);
}

// A TensorProto with dims (field 1), data_type (2), name (8) and raw_data (9, little-endian).
function tensorProto(name, tensor) {
    const code = kProtoTypes[tensor.type];
    if (!code)
        fail(`tensor '${name}' has type ${tensor.type}, which --save-io cannot write`);
    const parts = [];
    for (const d of tensor.dims)
        parts.push(Buffer.from([0x08]), varint(d));
    parts.push(Buffer.from([0x10]), varint(code));
    const nameBytes = Buffer.from(name, 'utf8');
    parts.push(Buffer.from([0x42]), varint(nameBytes.length), nameBytes);
    const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
    parts.push(Buffer.from([0x4a]), varint(data.length), data);
    return Buffer.concat(parts);
}

function saveIo(dir, feeds, results, outputNames) {
    fs.mkdirSync(dir, { recursive: true });
    const io = { inputs: [], outputs: [] };
    Object.keys(feeds).forEach((name, k) => {
        const file = path.join(dir, `input_${k}.pb`);
        fs.writeFileSync(file, tensorProto(name, feeds[name]));
        io.inputs.push({ name, file });
    });
    outputNames.forEach((name, k) => {
        const file = path.join(dir, `output_${k}.pb`);
        fs.writeFileSync(file, tensorProto(name, results[name]));
        io.outputs.push({ name, file });
    });
    fs.writeFileSync(path.join(dir, 'io.json'), JSON.stringify(io, null, 1) + '\n');
}

async function main() {
    const options = parseArgs(process.argv.slice(2));
    if (!fs.existsSync(options.model))
        fail(`${options.model}: no such file`);
    const ort = loadOrt();
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'memplan-ortprofile-'));
    try {
        const session = await ort.InferenceSession.create(options.model, {
            enableProfiling: !options.latency, profileFilePrefix: path.join(folder, 'profile'),
            graphOptimizationLevel: options.level, enableCpuMemArena: options.arena, enableMemPattern: options.memPattern,
            executionMode: 'sequential', intraOpNumThreads: options.latency ? options.threads : 1, interOpNumThreads: 1,
            executionProviders: ['cpu'],
            ...(options.prepack ? {} : { extra: { session: { disable_prepacking: '1' } } }),
        });
        const metadata = Array.isArray(session.inputMetadata) ? session.inputMetadata : [];
        const next = random(options.seed);
        const feeds = {};
        for (const name of session.inputNames) {
            const meta = metadata.find((m) => m.name === name);
            let shape = options.shapes[name];
            if (!shape) {
                if (!meta || !Array.isArray(meta.shape))
                    fail(`input '${name}': this onnxruntime-node gives no declared shape; pass --shape ${name}=D1xD2x...`, 2);
                shape = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : options.dims[d] ?? 1));
            }
            if (meta && meta.isTensor === false)
                fail(`input '${name}' is not a tensor; this script fills tensors only`);
            feeds[name] = makeInput(ort, name, meta ? meta.type : 'float32', shape, options, next);
        }
        if (options.latency) {
            await session.run(feeds);
            const times = [];
            for (let r = 0; r < options.runs; ++r) {
                const start = process.hrtime.bigint();
                await session.run(feeds);
                times.push(Number(process.hrtime.bigint() - start) / 1e6);
            }
            times.sort((a, b) => a - b);
            const result = JSON.stringify({ p50_ms: times[Math.floor((times.length - 1) / 2)], median_ms: times.length % 2
                ? times[(times.length - 1) / 2] : (times[times.length / 2 - 1] + times[times.length / 2]) / 2, runs: options.runs,
                threads: options.threads, level: options.level }) + '\n';
            if (options.out === '-')
                process.stdout.write(result);
            else
                fs.writeFileSync(options.out, result);
            return;
        }
        let results = null;
        for (let r = 0; r < options.runs; ++r)
            results = await session.run(feeds);
        if (options.saveIo)
            saveIo(options.saveIo, feeds, results, session.outputNames);
        session.endProfiling();
        if (session.release)
            await session.release();
        const written = fs.readdirSync(folder).filter((f) => f.startsWith('profile') && f.endsWith('.json'));
        if (written.length !== 1)
            fail(`ONNX Runtime wrote ${written.length} profiles in ${folder}, expected one`);
        fs.copyFileSync(path.join(folder, written[0]), options.out);
    } finally {
        fs.rmSync(folder, { recursive: true, force: true });
    }
}

main().catch((e) => fail(String(e && e.message ? e.message : e).split('\n')[0]));
