#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Collects seed inputs for the fuzz targets into OUTDIR/<target>/ (default build-fuzz/seeds).

Sources: the repository's test data, device profiles and allocation benchmarks; the test models
(tests/models, tests/models/tricky) when they have been exported; small models and tensor files of
Debian's libonnx-testdata (the ONNX backend node tests) when it is installed. The committed set
tests/fuzz/seeds/<target>/ is a small hand-picked subset of these; this is the large one.
Usage: tests/fuzz/make_seeds.py [OUTDIR]
"""
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTDATA = Path("/usr/share/libonnx-testdata/data/node")


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build-fuzz" / "seeds"
    data, models = ROOT / "tests" / "data", ROOT / "tests" / "models"
    benchmarks = sorted((ROOT / "resources" / "benchmarks" / "allocation").glob("*.csv"))
    sources = {  # target -> (most bytes per file, files)
        "jsongraph": (65536, sorted(data.glob("*.json"))),
        "problemcsv": (65536, sorted(data.glob("*.csv")) + benchmarks),
        "planjson": (65536, sorted(data.glob("*.json")) + sorted(data.glob("*.csv")) + benchmarks),
        "device": (65536, sorted((ROOT / "resources" / "devices").glob("*.json")) + sorted(data.glob("*profile*.json"))),
        "onnx": (262144, sorted(models.glob("tricky/*.onnx")) + sorted(models.glob("*.onnx"))
                 + (sorted(TESTDATA.glob("*/model.onnx")) if TESTDATA.is_dir() else [])),
        "snapshot": (262144, sorted(f for f in (data / "snapshots").glob("*.pickle*") if f.suffix != ".json")),
        "tensorfile": (4096, sorted(TESTDATA.glob("*/test_data_set_0/*.pb")) if TESTDATA.is_dir() else []),
    }
    for target, (most, files) in sources.items():
        folder = out / target
        folder.mkdir(parents=True, exist_ok=True)
        count = 0
        for f in files:
            if not f.is_file() or f.stat().st_size > most:
                continue
            # Named after the path, so that test_abs/model.onnx and test_add/model.onnx do not collide.
            base = TESTDATA if f.is_relative_to(TESTDATA) else ROOT
            shutil.copyfile(f, folder / "_".join(f.relative_to(base).parts))
            count += 1
        print(f"{target:<11} {count:5d} files -> {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
