#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes PyTorch-style CUDA memory snapshots for MemPlan's tests, deterministically (a fixed seed).

A small simulation of PyTorch's CUDA caching allocator as its documentation describes it: request
sizes rounded up to 512 bytes; requests up to 1 MiB served from a small pool of 2 MiB segments,
larger ones from a large pool of 20 MiB segments (requests under 10 MiB) or of their own size rounded
up to 2 MiB; best-fit over the cached free blocks of the same pool and stream, a block split when
the rest is at least 512 bytes (small pool) or more than 1 MiB (large pool), free neighbours merged;
a block used on another stream is free_requested at once and free_completed some events later; when
a new segment would pass the device's capacity the wholly free segments are released
(segment_free), and if that is not enough the request fails with an "oom" event.

A training-like workload runs on it: weights allocated once, each iteration a forward pass keeping
one activation per layer with short-lived temporaries, a backward pass freeing them in reverse.
Each iteration is annotated as record_function does: train_step around forward and backward,
each a START and an END in external_annotations.

The snapshot is the dict torch.cuda.memory._snapshot() returns (segments with blocks, device_traces
with frames, most recent frame first), pickled as torch.cuda.memory._dump_snapshot() does.

Beside SNAPSHOT it writes SNAPSHOT.expected.json: the numbers the simulation produced, counted on
its own (peak allocated and reserved bytes over the events kept, allocations, events, OOM events,
annotated phases not over before the first event kept).

With --replay-plan PLAN.json (what `memplan plan MODEL --json PLAN.json` writes) the workload is that
plan instead: step by step, every buffer born at the step is allocated (in the plan's buffer order),
then every buffer whose lifetime ends after the step is freed, all on one stream; buffers live to the
end stay allocated. Each allocation's frame is named after its buffer ("name" the buffer's name, the
file the tensor's module when the plan's model is a JSON graph that names modules), so that
`memplan trace PLAN_MODEL OUT.pickle` can match them.

Usage: scripts/make_snapshot.py OUT.pickle [--seed N] [--iterations N] [--layers N] [--scale X]
           [--max-entries N] [--gzip] [--protocol 2..5] [--capacity-mib N] [--oom-at ITERATION]
       scripts/make_snapshot.py OUT.pickle --replay-plan PLAN.json [--seed N] [--capacity-mib N]
       scripts/make_snapshot.py --edge-cases DIR    (the small hand-made files of tests/data/snapshots)
"""
import argparse
import collections
import gzip
import json
import pickle
import random
import sys
from pathlib import Path

KIB, MIB = 1024, 1024 * 1024
SMALL_SIZE = 1 * MIB          # requests up to this go to the small pool
SMALL_SEGMENT = 2 * MIB
LARGE_SEGMENT = 20 * MIB      # for large-pool requests under MIN_LARGE_ALLOC
MIN_LARGE_ALLOC = 10 * MIB
ROUND_LARGE = 2 * MIB
CPP_FRAME = {"filename": "??", "line": 0, "name": "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc"}


class OutOfMemory(Exception):
    pass


class Block:
    def __init__(self, address, size, segment):
        self.address, self.size, self.segment = address, size, segment
        self.requested, self.state, self.frames, self.alloc_id = 0, "inactive", [], None


class Segment:
    def __init__(self, address, size, stream, small):
        self.address, self.size, self.stream, self.small = address, size, stream, small
        self.blocks = [Block(address, size, self)]


class Allocator:
    def __init__(self, capacity, rng):
        self.capacity, self.rng = capacity, rng
        self.segments, self.events, self.pending = [], [], []
        self.next_address = 0x7F3A00000000
        self.time_us = 1_700_000_000_000_000
        self.allocated = self.reserved = 0
        self.curve = []  # (allocated, reserved) after each event
        self.next_id = 0
        self.event_ids = []  # per event: the allocation it concerns, or None
        self.annotations = []  # external_annotations, as record_function writes them with history on

    def emit(self, action, addr=None, size=0, stream=0, frames=(), alloc_id=None, **extra):
        self.time_us += self.rng.randint(1, 50)
        event = {"action": action}
        if addr is not None:
            event["addr"] = addr
        event.update({"size": size, "stream": stream, "time_us": self.time_us, "frames": frames})
        event.update(extra)
        self.events.append(event)
        if action == "alloc":
            self.allocated += size
        elif action == "free_completed":
            self.allocated -= size
        elif action == "segment_alloc":
            self.reserved += size
        elif action == "segment_free":
            self.reserved -= size
        self.curve.append((self.allocated, self.reserved))
        self.event_ids.append(alloc_id)

    @staticmethod
    def rounded(size):
        return max(512, (size + 511) // 512 * 512)

    @staticmethod
    def segment_size(size):
        if size <= SMALL_SIZE:
            return SMALL_SEGMENT
        if size < MIN_LARGE_ALLOC:
            return LARGE_SEGMENT
        return (size + ROUND_LARGE - 1) // ROUND_LARGE * ROUND_LARGE

    def process_pending(self, force=False):
        keep = []
        for due, block in self.pending:
            if force or due <= len(self.events):
                self.complete(block)
            else:
                keep.append((due, block))
        self.pending = keep

    def complete(self, block):
        self.emit("free_completed", block.address, block.size, block.segment.stream, block.frames, block.alloc_id)
        block.state, block.frames, block.requested, block.alloc_id = "inactive", [], 0, None
        blocks = block.segment.blocks
        i = blocks.index(block)
        if i + 1 < len(blocks) and blocks[i + 1].state == "inactive":  # merge with the free block after
            block.size += blocks[i + 1].size
            del blocks[i + 1]
        if i > 0 and blocks[i - 1].state == "inactive":  # and with the one before
            blocks[i - 1].size += block.size
            del blocks[i]

    def release_free_segments(self):
        for segment in list(self.segments):
            if len(segment.blocks) == 1 and segment.blocks[0].state == "inactive":
                self.segments.remove(segment)
                self.emit("segment_free", segment.address, segment.size, segment.stream, [])

    def malloc(self, request, stream, frames):
        self.process_pending()
        size = self.rounded(request)
        small = size <= SMALL_SIZE
        fits = [b for s in self.segments if s.small == small and s.stream == stream
                for b in s.blocks if b.state == "inactive" and b.size >= size]
        if fits:
            block = min(fits, key=lambda b: (b.size, b.address))
        else:
            seg_size = self.segment_size(size)
            if self.reserved + seg_size > self.capacity:
                self.process_pending(force=True)
                self.release_free_segments()
            if self.reserved + seg_size > self.capacity:
                self.emit("oom", size=size, stream=stream, frames=frames, device_free=self.capacity - self.reserved)
                raise OutOfMemory()
            segment = Segment(self.next_address, seg_size, stream, small)
            # Segments lie 2 MiB-aligned with gaps between them, as cudaMalloc's addresses do.
            self.next_address += (seg_size + ROUND_LARGE - 1) // ROUND_LARGE * ROUND_LARGE + ROUND_LARGE
            self.segments.append(segment)
            self.emit("segment_alloc", segment.address, seg_size, stream, frames)
            block = segment.blocks[0]
        rest = block.size - size
        if (small and rest >= 512) or (not small and rest > SMALL_SIZE):
            tail = Block(block.address + size, rest, block.segment)
            blocks = block.segment.blocks
            blocks.insert(blocks.index(block) + 1, tail)
            block.size = size
        block.state, block.requested, block.frames = "active_allocated", request, frames
        block.alloc_id = self.next_id
        self.next_id += 1
        self.emit("alloc", block.address, block.size, stream, frames, block.alloc_id)
        return block

    def annotate(self, name, stage):
        # Recorded between events: after the last one's time, before the next one's.
        self.annotations.append({"name": name, "stage": stage, "device": 0, "time_us": self.time_us})

    def free(self, block, other_stream=False):
        self.emit("free_requested", block.address, block.size, block.segment.stream, block.frames, block.alloc_id)
        if other_stream:  # completes once the other stream's work is done, a few events later
            block.state = "active_pending_free"
            self.pending.append((len(self.events) + self.rng.randint(2, 12), block))
        else:
            self.complete(block)

    def snapshot_segments(self):
        out = []
        for s in sorted(self.segments, key=lambda s: s.address):
            blocks = [{"address": b.address, "size": b.size, "requested_size": b.requested, "state": b.state, "frames": b.frames}
                      for b in s.blocks]
            out.append({"device": 0, "address": s.address, "total_size": s.size, "stream": s.stream,
                        "segment_type": "small" if s.small else "large",
                        "allocated_size": sum(b.size for b in s.blocks if b.state == "active_allocated"),
                        "active_size": sum(b.size for b in s.blocks if b.state != "inactive"),
                        "requested_size": sum(b.requested for b in s.blocks),
                        "segment_pool_id": (0, 0), "is_expandable": False, "blocks": blocks})
        return out


def simulate(args):
    rng = random.Random(args.seed)
    alloc = Allocator(args.capacity_mib * MIB, rng)
    main_stream, side_stream = 7, 8

    def site(line, name, filename="/work/model.py"):
        # One list per site, shared by its events, as PyTorch shares a traceback's frames.
        return [CPP_FRAME, {"filename": filename, "line": line, "name": name},
                {"filename": "/work/train.py", "line": 88, "name": "train_step"}]

    layers = [{"act": int(rng.randint(256 * KIB, 24 * MIB) * args.scale), "tmp": int(rng.randint(4 * KIB, 3 * MIB) * args.scale),
               "site": site(100 + 10 * i, f"block{i}.forward"), "tmp_site": site(103 + 10 * i, f"block{i}.attention"),
               "grad_site": site(300 + 10 * i, f"block{i}.backward")} for i in range(args.layers)]
    weights = [alloc.malloc(int(rng.randint(64 * KIB, 8 * MIB) * args.scale), main_stream,
                            site(40 + i, "init", "/work/torch_modules/linear.py")) for i in range(args.layers)]
    del weights  # live to the end
    for it in range(args.iterations):
        alloc.annotate("train_step", "START")
        alloc.annotate("forward", "START")
        acts = []
        for layer in layers:
            acts.append(alloc.malloc(layer["act"], main_stream, layer["site"]))
            tmp = alloc.malloc(layer["tmp"], main_stream, layer["tmp_site"])
            alloc.free(tmp, other_stream=rng.random() < 0.2)
        if it == args.oom_at:
            try:
                alloc.malloc(args.capacity_mib * MIB, main_stream, site(77, "too_big"))
            except OutOfMemory:
                pass
        alloc.annotate("forward", "END")
        alloc.annotate("backward", "START")
        for layer, act in reversed(list(zip(layers, acts))):
            grad = alloc.malloc(layer["act"] // 2 + 512, side_stream if rng.random() < 0.3 else main_stream, layer["grad_site"])
            alloc.free(act, other_stream=rng.random() < 0.25)
            alloc.free(grad)
        alloc.annotate("backward", "END")
        alloc.annotate("train_step", "END")
    alloc.process_pending()
    return alloc


def replay_plan(args):
    """The plan's buffers through the allocator: alloc at the birth step, free after the last one."""
    plan = json.loads(Path(args.replay_plan).read_text())
    modules = {}
    model = Path(str(plan.get("model", "")))
    if model.suffix == ".json" and model.is_file():
        modules = {t["name"]: t.get("module", "") for t in json.loads(model.read_text()).get("tensors", [])}
    rng = random.Random(args.seed)
    alloc = Allocator(args.capacity_mib * MIB, rng)
    stream = 7
    born = collections.defaultdict(list)
    dying = collections.defaultdict(list)
    for i, b in enumerate(plan["buffers"]):
        born[b["start"]].append(i)
        dying[b["end"]].append(i)
    blocks = {}
    for step in range(plan["steps"]):
        for i in born[step]:
            b = plan["buffers"][i]
            tensor = b["tensors"][0] if b.get("tensors") else b["name"]
            module = modules.get(tensor) or "model"
            frames = [CPP_FRAME, {"filename": f"replay/{module}.py", "line": 1, "name": b["name"]}]
            blocks[i] = alloc.malloc(b["size_bytes"], stream, frames)
        for i in dying[step + 1]:
            alloc.free(blocks.pop(i))
    return alloc


def expected_numbers(alloc, first):
    """Peaks and counts over the events kept (from index `first`), counted from the simulation."""
    events = alloc.events[first:]
    before = alloc.curve[first - 1] if first > 0 else (0, 0)
    window = [before] + alloc.curve[first:]
    touched = {i for i in alloc.event_ids[first:] if i is not None}
    live_at_end = {b.alloc_id for s in alloc.segments for b in s.blocks if b.state != "inactive"}
    return {
        "peak_allocated_bytes": max(a for a, _ in window),
        "peak_reserved_bytes": max(r for _, r in window),
        "allocations": len(touched | live_at_end),
        "events": len(events),
        "oom_events": sum(1 for e in events if e["action"] == "oom"),
        "segments_at_end": len(alloc.segments),
        "phases": phases_on_trace(alloc, first),
    }


def phases_on_trace(alloc, first):
    """START/END pairs not over before the first event kept (each END closes the latest START of its name)."""
    start = alloc.events[first]["time_us"] if first < len(alloc.events) else None
    open_, count = [], 0
    for a in alloc.annotations:
        if a["stage"] == "START":
            open_.append(a)
        else:
            match = next(i for i in range(len(open_) - 1, -1, -1) if open_[i]["name"] == a["name"])
            del open_[match]
            count += start is not None and a["time_us"] >= start
    return count + len(open_)


def write(path, obj, protocol, compress):
    data = pickle.dumps(obj, protocol=protocol)
    if compress:
        data = gzip.compress(data, mtime=0)
    Path(path).write_bytes(data)


def generate(args):
    alloc = replay_plan(args) if args.replay_plan else simulate(args)
    first = max(0, len(alloc.events) - args.max_entries) if args.max_entries else 0
    snapshot = {"segments": alloc.snapshot_segments(), "device_traces": [alloc.events[first:]],
                "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1, "garbage_collection_threshold": 0.0,
                                       "expandable_segments": False, "roundup_power2_divisions": [1, 0, 0, 0]},
                "external_annotations": alloc.annotations}
    write(args.out, snapshot, args.protocol, args.gzip)
    expected = expected_numbers(alloc, first)
    Path(str(args.out) + ".expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    print(f"{args.out}: {expected}")


def edge_cases(folder):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    frames = [{"filename": "/work/model.py", "line": 12, "name": "forward"}]
    seg = 0x7F0000000000

    def segment(address, blocks, total=SMALL_SEGMENT):
        return {"device": 0, "address": address, "total_size": total, "stream": 0, "segment_type": "small",
                "allocated_size": 0, "active_size": 0, "blocks": blocks}

    # A snapshot taken without _record_memory_history: segments alone, no traces (older PyTorch
    # releases wrote neither block addresses nor device_traces).
    write(folder / "segments_only.pickle", {"segments": [
        segment(seg, [{"size": MIB, "requested_size": MIB - 100, "state": "active_allocated", "frames": frames},
                      {"size": MIB // 2, "requested_size": 0, "state": "inactive", "frames": []},
                      {"size": MIB // 2, "requested_size": MIB // 2, "state": "active_awaiting_free", "frames": []}]),
        segment(seg + 4 * MIB, [{"size": 2 * MIB, "requested_size": 2 * MIB, "state": "active_allocated", "frames": frames}])]},
        2, False)

    def trace(events, segments):
        return {"segments": segments, "device_traces": [events]}

    def ev(action, addr=None, size=0, **extra):
        e = {"action": action, "size": size, "stream": 0, "frames": frames}
        if addr is not None:
            e["addr"] = addr
        e.update(extra)
        return e

    # An OOM: 1 MiB allocated in a 2 MiB segment, then a 6 MiB request fails.
    write(folder / "oom.pickle", trace([ev("segment_alloc", seg, SMALL_SEGMENT), ev("alloc", seg, MIB),
                                        ev("oom", size=6 * MIB, device_free=512 * KIB)],
                                       [segment(seg, [{"address": seg, "size": MIB, "requested_size": MIB, "state": "active_allocated",
                                                       "frames": frames},
                                                      {"address": seg + MIB, "size": MIB, "requested_size": 0, "state": "inactive",
                                                       "frames": []}])]), 4, False)
    # Freed twice: the second free (event 3) has no alloc.
    write(folder / "free_without_alloc.pickle", trace([ev("segment_alloc", seg, SMALL_SEGMENT), ev("alloc", seg, 512),
                                                       ev("free_completed", seg, 512), ev("free_completed", seg, 512)],
                                                      [segment(seg, [{"address": seg, "size": SMALL_SEGMENT, "requested_size": 0,
                                                                      "state": "inactive", "frames": []}])]), 4, False)
    # An allocation (event 1) far from the only segment.
    write(folder / "outside_segment.pickle", trace([ev("segment_alloc", seg, SMALL_SEGMENT), ev("alloc", seg + 64 * MIB, 512)],
                                                   [segment(seg, [{"address": seg, "size": SMALL_SEGMENT, "requested_size": 0,
                                                                   "state": "inactive", "frames": []}])]), 4, False)
    # A block without its size (segment 0, block 1).
    write(folder / "block_without_size.pickle", {"segments": [segment(seg, [{"size": MIB, "state": "inactive"},
                                                                            {"state": "active_allocated"}])]}, 4, False)
    # Python objects: an OrderedDict pickles as GLOBAL + REDUCE (protocol 2), os.system as STACK_GLOBAL.
    write(folder / "global_reduce.pickle", collections.OrderedDict(segments=[]), 2, False)
    import os
    write(folder / "stack_global.pickle", {"segments": os.system}, 4, False)
    # A valid snapshot cut short.
    full = pickle.dumps(trace([ev("segment_alloc", seg, SMALL_SEGMENT), ev("alloc", seg, 512)], []), protocol=4)
    (folder / "truncated.pickle").write_bytes(full[: len(full) // 2])
    # Every value kind, at protocols 2, 4 and 5 (FRAME, MEMOIZE, SHORT_BINUNICODE, BINBYTES, LONG1, ...).
    shared = [1, 2]
    values = {"none": None, "true": True, "false": False, "i1": 5, "i2": 300, "i4": -70000, "big": 2**40, "neg": -2**40,
              "max": 2**63 - 1, "min": -2**63, "float": 1.5, "str": "h\u00e9llo", "bytes": b"\x00\x01",
              "list": [1, 2, 3], "tuple1": (1,), "tuple2": (1, 2), "tuple3": (1, 2, 3), "tuple4": (1, 2, 3, 4), "empty": (),
              "nested": {"a": [{"b": []}]}, 7: "int key", "shared": [shared, shared], "long_str": "x" * 300,
              "long_bytes": b"y" * 300, "many": list(range(2500))}
    for protocol in (2, 4, 5):
        # Protocol 2 has no bytes opcode: it writes bytes as a call to _codecs.encode, which is refused.
        kept = {k: v for k, v in values.items() if protocol > 2 or not isinstance(v, bytes)}
        write(folder / f"values_p{protocol}.pickle", kept, protocol, False)
    write(folder / "values_p4.pickle.gz", values, 4, True)
    write(folder / "int_too_big.pickle", {"size": 2**64}, 4, False)
    print(f"edge cases in {folder}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", nargs="?")
    parser.add_argument("--edge-cases", metavar="DIR")
    parser.add_argument("--replay-plan", metavar="PLAN.json", help="replay a plan's buffers (memplan plan --json) instead of the training loop")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every tensor size")
    parser.add_argument("--max-entries", type=int, default=0, help="keep the last N events, as PyTorch's ring buffer does")
    parser.add_argument("--gzip", action="store_true")
    parser.add_argument("--protocol", type=int, default=4, choices=[2, 3, 4, 5])
    parser.add_argument("--capacity-mib", type=int, default=2048)
    parser.add_argument("--oom-at", type=int, default=-1, help="iteration that makes one request larger than the device")
    args = parser.parse_args()
    if args.edge_cases:
        edge_cases(args.edge_cases)
        return 0
    if not args.out:
        parser.error("give OUT.pickle or --edge-cases DIR")
    generate(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
