#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Export the ONNX test models MemPlan's tests use.
#
# Usage: scripts/make_models.sh [OUTDIR] [--force] [--only NAME,...]
#   OUTDIR defaults to tests/models under the repository root.
#
# Runs scripts/make_models.py (torchvision architectures, random weights, opset 17)
# and then scripts/make_tricky_models.py (small hand-built graphs in OUTDIR/tricky/).
# Models already present are not exported again; with everything present it prints
# one summary line. Needs a Python that imports torch, torchvision and
# onnx: on Debian the python3-torch, python3-torchvision and python3-onnx packages,
# which only Debian's /usr/bin/python3 sees. Exit status: 0 ok, 1 some model
# failed, 2 no usable interpreter (or bad arguments).
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

outdir=""
passthru=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) sed -n '3,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --only) [ $# -ge 2 ] || { echo "make_models.sh: --only needs a value" >&2; exit 2; }
            passthru+=("$1" "$2"); shift 2; continue ;;
    -*) passthru+=("$1") ;;
    *) if [ -n "$outdir" ]; then echo "make_models.sh: one OUTDIR only" >&2; exit 2; fi
       outdir="$1" ;;
  esac
  shift
done
[ -n "$outdir" ] || outdir="$root/tests/models"

python=""
candidates=()
while IFS= read -r p; do candidates+=("$p"); done < <(which -a python3 2>/dev/null)
candidates+=(/usr/bin/python3)
for p in "${candidates[@]}"; do
  [ -x "$p" ] || continue
  if "$p" -c 'import torch, torchvision, onnx' >/dev/null 2>&1; then
    python="$p"
    break
  fi
done
if [ -z "$python" ]; then
  {
    echo "make_models.sh: no Python interpreter can import torch, torchvision and onnx."
    echo "  tried: ${candidates[*]}"
    echo "  On Debian 12: apt-get install python3-torch python3-torchvision python3-onnx"
    echo "  (they load in /usr/bin/python3 only)."
  } >&2
  exit 2
fi

status=0
"$python" "$here/make_models.py" "${passthru[@]+"${passthru[@]}"}" "$outdir" || status=$?
[ "$status" -eq 2 ] && exit 2
# --only names torchvision models; the tricky set is always checked (it is cheap).
tricky_args=(--quiet)
for a in "${passthru[@]+"${passthru[@]}"}"; do
  [ "$a" = "--force" ] && tricky_args+=(--force)
done
"$python" "$here/make_tricky_models.py" "${tricky_args[@]+"${tricky_args[@]}"}" "$outdir/tricky" || status=$?
exit "$status"
