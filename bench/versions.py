#!/usr/bin/env python3
"""Seconds per MLX release for `mlx-vjpcheck versions`, with a warm wheel cache.

Three passes over the same releases, one release at a time (--jobs 1) so the
per-release figure is not flattered by parallelism:
  prime        default env cache: fills the wheel cache (cold only the first time ever)
  fresh-env    new, empty env dir: every release is installed again from the wheel cache
  warm-env     same env dir again: environments reused, only the probes run
Target: <= 15 s per release with a warm cache.

    python bench/versions.py [--from 0.25.2] [--to V] [--jobs 1]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_pass(label, tmp, lo, hi, jobs, cache=None) -> dict:
    out = Path(tmp) / f"out-{label}"
    cmd = [sys.executable, "-m", "mlx_vjpcheck.cli", "versions", "--out", str(out), "--jobs", str(jobs)]
    cmd += ["--from", lo] + (["--to", hi] if hi else []) + (["--cache-dir", str(cache)] if cache else [])
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"{label}: versions exited {p.returncode}: {p.stderr.strip().splitlines()[-1:]}")
    doc = json.loads((out / "versions.json").read_text())
    per = {r["version"]: (r["install"]["seconds"],
                          sum(c.get("seconds") or 0 for c in r["probes"].values()))
           for r in doc["releases"]}
    return {"label": label, "wall": wall, "per": per}


def report(res) -> None:
    n = len(res["per"])
    totals = [a + b for a, b in res["per"].values()]
    print(f"{res['label']:10s} {n} releases  wall {res['wall']:.1f} s  "
          f"-> {res['wall'] / n:.2f} s/release  (max env+probes of one release {max(totals):.2f} s)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--from", dest="lo", default="0.25.2")
    ap.add_argument("--to", dest="hi")
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-versions-") as tmp:
        passes = [one_pass("prime", tmp, a.lo, a.hi, a.jobs)]
        cache = Path(tmp) / "envs"
        passes.append(one_pass("fresh-env", tmp, a.lo, a.hi, a.jobs, cache))
        passes.append(one_pass("warm-env", tmp, a.lo, a.hi, a.jobs, cache))
    print(f"{'release':8s} " + " ".join(f"{p['label']:>18s}" for p in passes) + "   (env + probes, s)")
    for v in passes[-1]["per"]:
        cells = [f"{p['per'][v][0]:7.2f} + {p['per'][v][1]:5.2f}  " for p in passes]
        print(f"{v:8s} " + " ".join(f"{c:>18s}" for c in cells))
    for p in passes:
        report(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
