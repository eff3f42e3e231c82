#!/usr/bin/env bash
# Sets up MemPlan (installs, builds the command line and the Studio only) and runs the main job on a
# built-in example: plans a U-Net with long skip connections, compares every planner on it, then
# opens the Studio on it when a display is there, or draws the Studio's views to build/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh memplan memplan-studio
build/app/memplan plan example:unet --json build/unet-plan.json
echo
build/app/memplan compare example:unet
echo
echo "plan written to build/unet-plan.json"
if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]]; then
    echo "opening the Studio on example:unet"
    build/app/memplan-studio example:unet
else
    build/app/memplan render example:unet --out build/demo >/dev/null
    echo "no display: the Studio's views of example:unet are drawn in build/demo/:"
    ls build/demo | sed 's/^/  /'
fi
