"""What a replay costs against the run it replays. Target: replay <= 2x the run.

Usage: python bench/replay.py [--filter PATTERN] [--repeat N]
Runs the catalog on the CPU (`mlx-vjpcheck run`, needs mlx), then replays the
run directory (`mlx-vjpcheck replay`: validation first, then every record again
in the crash-isolated worker), both as a user runs them (interpreter start
included), and prints the two wall times and their ratio.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(argv, ok=(0, 1)) -> float:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "mlx_vjpcheck.cli", *argv], cwd=ROOT, capture_output=True,
                       text=True)
    if p.returncode not in ok:
        sys.exit(f"bench/replay.py: {' '.join(argv[:1])} failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--filter", default=None, help="a subset of the catalog (default: all of it)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    flt = ["--filter", args.filter] if args.filter else []
    runs, replays = [], []
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        out = Path(tmp) / "run"
        for k in range(args.repeat):
            runs.append(timed(["run", "--device", "cpu", "--out", str(out), "--replace", *flt]))
            replays.append(timed(["replay", str(out)]))
    run, replay = statistics.median(runs), statistics.median(replays)
    print(f"run (median of {args.repeat}): {run:.2f} s   replay: {replay:.2f} s   "
          f"ratio {replay / run:.2f} (target <= 2)")
    return 0 if replay <= 2 * run else 1


if __name__ == "__main__":
    sys.exit(main())
