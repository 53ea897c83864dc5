#!/usr/bin/env python3
"""Fuzzing throughput: the native server against the in-process Python fuzzer.

Usage: python bench/native_fuzz.py [--time 60] [--seed 0] [--binary PATH]

Both run the same hypothesis campaign (fuzz/search.Campaign, same seed, same
budget, gather_mm and gather_qmm, one after the other so they never share the
CPUs). The Python fuzzer evaluates each case in its worker process with every
oracle (float64 reference, sorted vs unsorted, finite differences, backward
twice); the native executor sends it to `vjpcheck-native --serve`, which runs
MLX's C++ API and the C++ float64 reference. The binary defaults to the suite
built against the installed wheel (native/build-bench/). Target: native
cases/s >= half the Python fuzzer's.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlx_vjpcheck.native import fuzz as native_fuzz  # noqa: E402
from mlx_vjpcheck.native import server as native_server  # noqa: E402
from mlx_vjpcheck.native import suite as native_suite  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--time", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--binary", help="a vjpcheck-native binary (default: build against the wheel)")
    args = ap.parse_args()
    binary = Path(args.binary) if args.binary else native_suite.build_wheel(ROOT / "native" / "build-bench")
    ops = native_fuzz.native_ops()
    from mlx_vjpcheck.fuzz import campaign
    py = campaign.run_single(ops, "cpu", args.seed, args.time, None, "none")
    with tempfile.TemporaryDirectory() as t:
        tol = native_server.write_tolerances(Path(t) / "tol.json")
        nat = native_fuzz.campaign(binary, tol, args.seed, args.time)
    print(f"cpus: {os.cpu_count()}  load average: {os.getloadavg()[0]:.2f}  ops: {', '.join(ops)}  "
          f"budget {args.time:g} s each, seed {args.seed}")
    for name, res in (("python (in-process fuzzer, all oracles)", py), ("native server", nat)):
        st = res["campaign"]["stats"]
        print(f"{name:40s} {st['cases']:6d} cases  {st['cases_per_s']:8.2f} cases/s  "
              f"{st['invalid']} invalid  {len(res['findings'])} findings")
    ratio = nat["campaign"]["stats"]["cases_per_s"] / py["campaign"]["stats"]["cases_per_s"]
    print(f"native / python throughput: {ratio:.2f} (target >= 0.5)")
    if nat["campaign"].get("skipped"):
        for k in nat["campaign"]["skipped"]:
            print(f"  native skipped {k['cases']} cases: {k['reason']}")
    return 0 if ratio >= 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
