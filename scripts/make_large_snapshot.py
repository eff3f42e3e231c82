#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a large PyTorch-style CUDA memory snapshot (hundreds of MB to GBs) for MemPlan's load benchmarks.

make_snapshot.py simulates the caching allocator in detail but builds every event as a Python object
before pickling, which does not scale to tens of millions of events. This script streams the pickle
opcodes itself (protocol 4: dicts, lists, str, int, bool, memoized keys and frame lists, the opcodes
pickle.dumps emits for the same values), so memory stays flat whatever the size.

The workload is a training loop on a stack-like allocator: weights allocated once in their own
segments; each iteration allocates one activation per layer (sizes rounded to 512 bytes, varied by
layer and iteration) with a short-lived temporary after each, then frees the activations in reverse.
Allocations sit at the top of a stack inside 20 MiB segments (the next segment when the top does not
fit, a new one when there is none), so no two live allocations overlap, as in any real allocator's placement. The final segment
state lists every segment with its blocks. Deterministic for a given seed.

Beside OUT it writes OUT.expected.json: events, allocations and the peak allocated bytes, counted here.

Usage: scripts/make_large_snapshot.py OUT.pickle [--events N | --megabytes N] [--layers N] [--seed N] [--gzip]
"""
import argparse
import gzip
import json
import random
import struct
import sys
from pathlib import Path

MIB = 1024 * 1024
SEGMENT = 20 * MIB
BASE = 0x7F0000000000


class Writer:
    """Pickle protocol 4 opcodes for the value kinds a snapshot holds, written as they come."""

    def __init__(self, out):
        self.out = out
        self.memo = {}
        self.buf = bytearray()
        self.buf += b"\x80\x04"  # PROTO 4

    def flush(self, force=False):
        if force or len(self.buf) > (1 << 22):
            self.out.write(self.buf)
            self.buf = bytearray()

    def memoize(self, key):
        self.memo[key] = len(self.memo)
        self.buf += b"\x94"  # MEMOIZE

    def get(self, key):
        index = self.memo.get(key)
        if index is None:
            return False
        self.buf += b"h" + bytes([index]) if index < 256 else b"j" + struct.pack("<I", index)
        return True

    def string(self, text, memo=True):
        if memo and self.get(("s", text)):
            return
        data = text.encode()
        self.buf += b"\x8c" + bytes([len(data)]) + data if len(data) < 256 else b"X" + struct.pack("<I", len(data)) + data
        if memo:
            self.memoize(("s", text))

    def integer(self, value):
        if 0 <= value < 256:
            self.buf += b"K" + bytes([value])
        elif 0 <= value < 65536:
            self.buf += b"M" + struct.pack("<H", value)
        elif -(1 << 31) <= value < (1 << 31):
            self.buf += b"J" + struct.pack("<i", value)
        else:
            data = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
            self.buf += b"\x8a" + bytes([len(data)]) + data

    def boolean(self, value):
        self.buf += b"\x88" if value else b"\x89"

    def dict_begin(self):
        self.buf += b"}(" # EMPTY_DICT MARK

    def dict_end(self):
        self.buf += b"u"  # SETITEMS

    def list_begin(self):
        self.buf += b"]("  # EMPTY_LIST MARK

    def list_end(self):
        self.buf += b"e"  # APPENDS

    def list_batch(self):
        """Ends a batch of items and opens the next, as pickle does every 1000 items."""
        self.buf += b"e("

    def frames(self, key, frames):
        """A frame list, written once and then referred to from the memo."""
        if self.get(("f", key)):
            return
        self.list_begin()
        for filename, line, name in frames:
            self.dict_begin()
            self.string("filename"), self.string(filename)
            self.string("line"), self.integer(line)
            self.string("name"), self.string(name)
            self.dict_end()
        self.list_end()
        self.memoize(("f", key))

    def stop(self):
        self.buf += b"."
        self.flush(force=True)


def layer_frames(layer):
    return [("/work/train.py", 100 + layer, f"block{layer}.forward"), ("/work/train.py", 40, "train_step")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--events", type=int, default=0, help="about this many trace events")
    parser.add_argument("--megabytes", type=float, default=0, help="about this large a file (default 64)")
    parser.add_argument("--layers", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--gzip", action="store_true", help="compress as it writes (--megabytes counts the pickle)")
    args = parser.parse_args()
    # About 50 bytes per event once keys and frames are memoized (measured on this writer).
    events_wanted = args.events or int((args.megabytes or 64) * MIB / 50)
    rng = random.Random(args.seed)
    layers = max(1, args.layers)
    sizes = [512 * rng.randint(64, 4096) for _ in range(layers)]  # 32 KiB .. 2 MiB activations

    segments = []          # [address, size]
    blocks_at_end = {}     # segment index -> list of (address, size, state)
    stack = []             # live activations: (address, size, layer)
    top_segment, top = -1, 0
    events = allocations = live_bytes = peak = 0
    time_us = 1_700_000_000_000_000

    with (gzip.GzipFile(args.out, "wb", compresslevel=6, mtime=0) if args.gzip else open(args.out, "wb")) as f:
        w = Writer(f)
        w.dict_begin()
        w.string("device_traces")
        w.list_begin()
        w.list_begin()
        in_batch = 0

        def event(action, addr, size, frames_key, frames):
            nonlocal events, in_batch, time_us
            time_us += 7
            w.dict_begin()
            w.string("action"), w.string(action)
            w.string("addr"), w.integer(addr)
            w.string("size"), w.integer(size)
            w.string("stream"), w.integer(0)
            w.string("time_us"), w.integer(time_us)
            w.string("frames"), w.frames(frames_key, frames)
            w.dict_end()
            events += 1
            in_batch += 1
            if in_batch == 1000:
                w.list_batch()
                in_batch = 0
                w.flush()

        def new_segment():
            nonlocal top_segment, top
            address = BASE + len(segments) * 32 * MIB
            segments.append([address, SEGMENT])
            top_segment, top = len(segments) - 1, 0
            event("segment_alloc", address, SEGMENT, "none", [])

        def alloc(size, layer):
            nonlocal top, top_segment, allocations, live_bytes, peak
            if top_segment < 0 or top + size > SEGMENT:
                if top_segment + 1 < len(segments):  # segments above the stack's top are empty: reuse
                    top_segment, top = top_segment + 1, 0
                else:
                    new_segment()
            address = segments[top_segment][0] + top
            top += size
            stack.append((address, size, layer, top_segment))
            allocations += 1
            live_bytes += size
            peak = max(peak, live_bytes)
            event("alloc", address, size, layer, layer_frames(layer))

        def free_top():
            nonlocal top, top_segment, live_bytes
            address, size, layer, segment = stack.pop()
            live_bytes -= size
            event("free_requested", address, size, layer, layer_frames(layer))
            event("free_completed", address, size, layer, layer_frames(layer))
            # The stack's top moves back into the segment of the allocation below, if any.
            if stack:
                below = stack[-1]
                top_segment, top = below[3], below[0] + below[1] - segments[below[3]][0]
            else:
                top_segment, top = (segment, 0)

        iteration = 0
        while events < events_wanted:
            for layer in range(layers):
                alloc(sizes[layer] + 512 * ((iteration + layer) % 7), layer)
                alloc(sizes[layer] // 4 // 512 * 512 + 512, layer)  # a temporary
                free_top()
            for _ in range(layers):
                free_top()
            iteration += 1

        w.list_end()  # the device's events
        w.list_end()  # device_traces
        w.string("segments")
        w.list_begin()
        for address, size in segments:
            w.dict_begin()
            for key, value in (("device", 0), ("address", address), ("total_size", size), ("stream", 0)):
                w.string(key), w.integer(value)
            w.string("segment_type"), w.string("large")
            w.string("blocks")
            w.list_begin()
            w.dict_begin()
            w.string("address"), w.integer(address)
            w.string("size"), w.integer(size)
            w.string("requested_size"), w.integer(0)
            w.string("state"), w.string("inactive")
            w.string("frames"), w.frames("none", [])
            w.dict_end()
            w.list_end()
            w.dict_end()
        w.list_end()
        w.dict_end()
        w.stop()

    expected = {"events": events, "allocations": allocations, "peak_allocated_bytes": peak, "segments": len(segments),
                "bytes": Path(args.out).stat().st_size}
    Path(args.out + ".expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    print(f"{args.out}: {expected}")


if __name__ == "__main__":
    sys.exit(main())
