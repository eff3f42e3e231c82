#!/usr/bin/env bash
# Installs what MemPlan needs from Debian 12's packages and ONNX Runtime's Node.js binding (into
# tools/node/, for scripts/ort_profile.js and tst_ortprofile), then configures and builds into build/.
# Idempotent and quiet when everything is present.
# Usage: scripts/setup.sh [--with-model-tools] [--with-sanitizers] [TARGET...]
#   --with-model-tools  also install python3-torch, python3-torchvision and python3-onnx, which
#                       scripts/make_models.sh uses to export real architectures for the tests.
#   --with-sanitizers   also install clang and libclang-rt-14-dev (libFuzzer, ASan, UBSan), which
#                       scripts/sanitize.sh and scripts/fuzz.sh build with.
#   --werror            build with compiler warnings as errors (MEMPLAN_WERROR; scripts/test.sh uses it).
#   TARGET...           build only these CMake targets (default: everything, tests included).
# Compiler warnings are printed after the build (the full log is build/build.log).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make qt6-base-dev qt6-svg-dev libqcustomplot-dev libonnx-dev libprotobuf-dev
          protobuf-compiler nlohmann-json3-dev zlib1g-dev libdnnl-dev libglpk-dev libonnx-testdata nodejs)
# npm comes with a nodejs that is not Debian's (NodeSource's bundles it; its package conflicts).
command -v npm >/dev/null || packages+=(npm)
targets=()
werror=OFF
for arg in "$@"; do
    case "$arg" in
        --with-model-tools) packages+=(python3 python3-torch python3-torchvision python3-onnx) ;;
        --with-sanitizers) packages+=(clang libclang-rt-14-dev) ;;
        --werror) werror=ON ;;
        -*) echo "setup: unknown option $arg" >&2; exit 2 ;;
        *) targets+=(--target "$arg") ;;
    esac
done

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# onnxruntime-node with its CPU library inside (ONNXRUNTIME_NODE_INSTALL=skip: no CUDA download). It
# needs the npm registry; without it the profile tests skip, saying so, and the rest works.
ort_version=1.31.1
if ! grep -qs "\"version\": \"$ort_version\"" tools/node/node_modules/onnxruntime-node/package.json; then
    echo "setup: installing onnxruntime-node@$ort_version into tools/node/"
    mkdir -p tools/node
    if ! ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix tools/node --no-audit --no-fund --loglevel=error \
        "onnxruntime-node@$ort_version" >tools/node/npm.log 2>&1; then
        tail -n 5 tools/node/npm.log >&2
        echo "setup: could not install onnxruntime-node (log: tools/node/npm.log); the ONNX Runtime profile tests will skip" >&2
    fi
fi

if [[ ! -f build/CMakeCache.txt ]]; then
    launcher=()
    if command -v ccache >/dev/null; then
        launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
    fi
    cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
fi
# Turned on once asked for, never off again here: switching rebuilds everything.
if [[ $werror == ON ]] && ! grep -q "^MEMPLAN_WERROR:BOOL=ON\$" build/CMakeCache.txt; then
    cmake -S . -B build -DMEMPLAN_WERROR=ON >/dev/null
fi
if ! cmake --build build -j"$(nproc)" "${targets[@]}" >build/build.log 2>&1; then
    grep -E "error" build/build.log | head -40 >&2 || true
    tail -n 20 build/build.log >&2
    echo "setup: the build failed; the full log is build/build.log" >&2
    exit 1
fi
warnings=$(grep -c "warning:" build/build.log || true)
if ((warnings > 0)); then
    grep -E "warning:" build/build.log | sort -u | head -20 >&2
    echo "setup: the build gave $warnings compiler warnings (build/build.log has them all)" >&2
fi
