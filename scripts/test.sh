#!/usr/bin/env bash
# Sets up MemPlan (installs, builds), exports the real-architecture test models if missing,
# runs every test with ctest, then the sanitizer pass (scripts/sanitize.sh: ASan/UBSan build of the
# core tests, fuzz-target replays and a short fuzzing run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --with-model-tools --with-sanitizers --werror
scripts/make_models.sh tests/models
export QT_QPA_PLATFORM=offscreen
ctest --test-dir build --output-on-failure -j2
scripts/sanitize.sh
