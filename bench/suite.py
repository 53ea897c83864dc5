"""Wall time of `mlx-vjpcheck run` over the whole catalog, and where it goes.

Usage: python bench/suite.py [--repeat N] [--jobs N]
The wall figure is the whole process, as a user runs it (workers, results
file and table included). The shares come from one in-process pass over the
catalog under cProfile: time in the float64 references (cases/expected.py and
what it calls) and the rest; time inside MLX's own functions only where
cProfile sees them (it sees none of mlx 0.32.4's nanobind functions, so there
the rest holds MLX's time and the line says it was not measured).
Target: the whole process <= 15 s on 2 cores.
"""
from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mlx_vjpcheck.cases import catalog  # noqa: E402
from mlx_vjpcheck.running import devices, execute  # noqa: E402
from mlx_vjpcheck.running import runner  # noqa: E402

TARGET_S = 15.0


def wall_of_cli(jobs: int) -> tuple:
    """(seconds, names of the scenarios whose worker died: kept out of the in-process pass)."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "mlx_vjpcheck.cli", "run", "--device", "cpu", "--jobs", str(jobs),
                        "--out", str(Path(tmp) / "run")], capture_output=True, check=False)
        secs = time.perf_counter() - t0
        data = json.loads((Path(tmp) / "run" / "results.json").read_text(encoding="utf-8"))
        return secs, {r["scenario"] for r in data["records"] if r["status"] == "crashed"}


def _is_mlx(key) -> bool:
    filename, _, name = key
    return filename == "~" and ("mlx.core" in name or "of 'mlx." in name)


def _is_reference(key) -> bool:
    return key[2] == "expected" and key[0].endswith("cases/expected.py")


def shares(scenarios) -> tuple:
    """(seconds in MLX, seconds in the float64 expected values, total) of one pass."""
    devices.select("cpu")
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    for s in scenarios:
        execute.run(s, "cpu")
    prof.disable()
    total = time.perf_counter() - t0
    stats = pstats.Stats(prof).stats
    # MLX's functions are nanobind objects, which cProfile does not see (not one appears
    # with mlx 0.32.4): their time lands in their Python callers. None, then, not 0.
    seen = [v[2] for k, v in stats.items() if _is_mlx(k)]          # tottime
    mlx_s = sum(seen) if seen else None
    ref_s = sum(v[3] for k, v in stats.items() if _is_reference(k))    # cumtime of expected()
    return mlx_s, ref_s, total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=runner.default_jobs())
    args = ap.parse_args()
    cat = catalog.catalog()
    runs = [wall_of_cli(args.jobs) for _ in range(args.repeat)]
    walls, died = [w for w, _ in runs], set().union(*(d for _, d in runs))
    wall = statistics.median(walls)
    print(f"scenarios: {len(cat)} on cpu, {args.jobs} workers, {args.repeat} runs")
    print(f"mlx-vjpcheck run, whole process (median wall): {wall:.2f} s   [min {min(walls):.2f}, "
          f"max {max(walls):.2f}]  target <= {TARGET_S:g} s")
    mlx_s, ref_s, total = shares([s for s in cat if not s.must_refuse and s.name not in died])
    print(f"in-process pass under cProfile: {total:.2f} s")
    if mlx_s is None:
        print("  inside MLX: not measured (cProfile sees none of MLX's nanobind functions; their time "
              "is in the rest)")
    rows = [("float64 references", ref_s), ("the rest (oracles' numpy, records)", total - (mlx_s or 0.0) - ref_s)]
    for label, secs in ([("inside MLX (its built-in functions)", mlx_s)] if mlx_s is not None else []) + rows:
        print(f"  {label:40s} {max(secs, 0.0):6.2f} s  {100 * max(secs, 0.0) / total:5.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
