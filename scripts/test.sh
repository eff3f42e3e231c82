#!/usr/bin/env bash
# Sets up MemPlan (installs, builds), exports the real-architecture test models if missing,
# and runs every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --with-model-tools
scripts/make_models.sh tests/models
export QT_QPA_PLATFORM=offscreen
ctest --test-dir build --output-on-failure -j2
