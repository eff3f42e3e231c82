#!/usr/bin/env bash
# Sets up MemPlan (installs, builds with warnings as errors), exports the real-architecture test
# models if missing, runs every test with ctest (the fuzz targets' replays included), then the
# sanitizer pass (scripts/sanitize.sh: a clang ASan/UBSan build of the core tests, run with the fuzz
# replays, and a reproducible fuzzing run of every fuzz target).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --with-model-tools --with-sanitizers --werror
scripts/make_models.sh tests/models
export QT_QPA_PLATFORM=offscreen
ctest --test-dir build --output-on-failure -j2
scripts/sanitize.sh
