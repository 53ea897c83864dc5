"""How long the sweep takes. Target (issue 30): a first pass over every function x
transform x corner in at most 10 minutes on 2 cores; `--time` bounds it and shards
scale it.

Usage: python bench/sweep.py [--time S] [--jobs N] [--generic-only] [--cold]
Runs `mlx-vjpcheck sweep` (as a user runs it, in a fresh process) into a temporary
folder and prints the cases planned and done, the wall time, the rate, the time a whole
pass would take at that rate, and the load average before and after: the figures mean
little on a loaded machine.

Where the time goes (profiled): MLX's CPU backend compiles every new fused kernel of an
mx.compile with the system C++ compiler (g++ -O3, about a second each) and keeps the
library in $TMPDIR/mlx/<version>/cpu; a first pass on a fresh machine is dominated by
those compilations (72 % of a cold pass over a sample of entries), a later one by the
float64 oracle. The script counts the kernels compiled during the run; --cold gives the
sweep an empty kernel cache (a fresh $TMPDIR), as on a new CI machine.
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
    ap.add_argument("--cold", action="store_true", help="an empty MLX kernel cache (a fresh $TMPDIR)")
    args = ap.parse_args(argv)
    if args.time <= 0 or args.jobs < 1:
        print("bench/sweep.py: --time must be > 0 and --jobs >= 1", file=sys.stderr)
        return 2
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "sweep"
        cmd = [sys.executable, "-m", "mlx_vjpcheck.cli", "sweep", "--time", str(args.time), "--jobs",
               str(args.jobs), "--out", str(out)] + (["--generic-only"] if args.generic_only else [])
        env = dict(os.environ)
        if args.cold:
            (Path(tmp) / "t").mkdir()
            env["TMPDIR"] = str(Path(tmp) / "t")
        cache = Path(env.get("TMPDIR") or tempfile.gettempdir()) / "mlx"
        kernels0 = _kernels(cache)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        compiled = _kernels(cache) - kernels0
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
    print(f"MLX compiled {compiled} new CPU kernels (g++) during the run, kernel cache "
          f"{'empty at the start (--cold)' if args.cold else 'as this machine had it'}")
    print(f"load average before {load0[0]:.2f}, after {os.getloadavg()[0]:.2f} (1 min); "
          f"{os.cpu_count()} CPUs (a shared machine: say so beside the figures)")
    return 0


def _kernels(cache: Path) -> int:
    """The compiled kernel libraries in MLX's CPU kernel cache."""
    return sum(1 for _ in cache.glob("*/cpu/*.so")) if cache.is_dir() else 0


if __name__ == "__main__":
    sys.exit(main())
