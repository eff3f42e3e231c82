#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Packs a prebuilt `memplan` (CUDA executor in) for a GPU machine that cannot build this project:
# the device machines lent here have CUDA, CMake, PyTorch and ONNX's Python package, but no Qt,
# protobuf or ONNX C++ libraries, and nothing can be installed there. Run here (Debian 12, x86-64),
# then on the GPU machine: PACK=gpu-pack bash gpu/check.sh (carry gpu-pack along).
#
# Contents of OUT (default gpu-pack, git-ignored): memplan and the GPU test programs tst_cuda and
# tst_run_cuda (stripped), lib/ (libonnx, libonnx_proto, libprotobuf, Qt as linked here),
# lib-fallback/ (libstdc++ and libgcc_s, used only when the machine's own are older), models/
# (tests/models/gpt_decoder.onnx, maxvit_small.onnx and qmobilenet_v2.onnx when present, and tricky/,
# the fixtures tst_cuda reads; the torchvision models are exported there by check.sh, they are too
# large to carry). cuBLAS is not packed: the machine's CUDA 13 provides it. About 110 MB; the device
# machines lent here take at most 64 MiB, so carry it as `tar -cf - gpu-pack | xz -T0 > gpu-pack.tar.xz`.
# Environment: BUILD_DIR (default build; configured with the CUDA executor on), OUT.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
out=${OUT:-$root/gpu-pack}

cmake -S "$root" -B "$build" -DMEMPLAN_CUDA=ON >/dev/null
programs=(memplan tst_cuda tst_run_cuda)
cmake --build "$build" -j"$(nproc)" --target "${programs[@]}" memplan-cuda
if ! grep -q "MEMPLAN_HAVE_CUDA" "$build/gpu/CMakeFiles/memplan_gpu.dir/flags.make" 2>/dev/null; then
    echo "pack.sh: $build has no CUDA executor (memplan_gpu); is nvcc found?" >&2
    exit 1
fi
rm -rf "$out"
mkdir -p "$out/lib" "$out/lib-fallback" "$out/models"
strip -o "$out/memplan" "$build/app/memplan"
strip -o "$out/tst_cuda" "$build/tests/tst_cuda"
strip -o "$out/tst_run_cuda" "$build/tests/tst_run_cuda"
# The CUDA executor is a plugin that memplan loads from next to itself for --device cuda.
strip -o "$out/libmemplan-cuda.so" "$build/app/libmemplan-cuda.so"
# Every library they load from outside the C library and CUDA.
for program in "${programs[@]}" libmemplan-cuda.so; do ldd "$out/$program"; done | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
        libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|libz.so*|libcublas*|libcudart*) ;;
        libstdc++.so*|libgcc_s.so*) cp -L "$lib" "$out/lib-fallback/" ;;
        *) cp -L "$lib" "$out/lib/" ;;
    esac
done
for model in gpt_decoder maxvit_small qmobilenet_v2; do
    [[ -f "$root/tests/models/$model.onnx" ]] && cp "$root/tests/models/$model.onnx" "$out/models/"
done
[[ -d "$root/tests/models/tricky" ]] && cp -r "$root/tests/models/tricky" "$out/models/"
du -sh "$out"
ls -R "$out"
