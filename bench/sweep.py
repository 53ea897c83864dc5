"""How long the sweep takes. Target (issue 30): a first pass over every function x
transform x corner in at most 10 minutes on 2 cores; `--time` bounds it and shards
scale it.

Usage: python bench/sweep.py [--time S] [--jobs N] [--generic-only]
Runs `mlx-vjpcheck sweep` (as a user runs it, in a fresh process) into a temporary
folder and prints the cases planned and done, the wall time, the rate, the time a whole
pass would take at that rate, and the load average before and after: the figures mean
little on a loaded machine.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 600.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time", type=float, default=TARGET_S)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--generic-only", action="store_true")
    args = ap.parse_args(argv)
    if args.time <= 0 or args.jobs < 1:
        print("bench/sweep.py: --time must be > 0 and --jobs >= 1", file=sys.stderr)
        return 2
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "sweep"
        cmd = [sys.executable, "-m", "mlx_vjpcheck.cli", "sweep", "--time", str(args.time), "--jobs",
               str(args.jobs), "--out", str(out)] + (["--generic-only"] if args.generic_only else [])
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode not in (0, 1):
            print(proc.stderr.strip()[-2000:], file=sys.stderr)
            return 1
        s = json.loads((out / "sweep.json").read_text())["summary"]
    rate = s["done"] / s["seconds"] if s["seconds"] else 0.0
    whole = s["planned"] / rate if rate else float("inf")
    print(f"sweep: {s['done']} of {s['planned']} cases in {s['seconds']:.1f} s ({wall:.1f} s with start-up), "
          f"{rate:.2f} cases/s with {args.jobs} workers")
    print(f"a whole pass at that rate: {whole:.0f} s (target {TARGET_S:.0f} s: "
          f"{'met' if whole <= TARGET_S else 'NOT met'})")
    print(f"load average before {load0[0]:.2f}, after {os.getloadavg()[0]:.2f} (1 min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
