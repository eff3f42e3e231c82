#!/usr/bin/env bash
# Sets up MemPlan (installs, builds) and runs the main job on a built-in example:
# plans a U-Net with long skip connections and compares every planner on it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build/app/memplan plan example:unet --json build/unet-plan.json
echo
build/app/memplan compare example:unet
echo
echo "plan written to build/unet-plan.json"
