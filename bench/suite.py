"""Wall time of the full CPU run, and where it goes: MLX, references, overhead.

Usage: python bench/suite.py [--repeat N]
The wall figure is the real `runner` path (worker subprocess included); the
shares come from an in-process pass that times the reference and MLX halves
of every scenario separately. Target: full CPU run <= 10 s on 2 cores.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mlx_vjpcheck.cases import catalog  # noqa: E402
from mlx_vjpcheck.running import devices  # noqa: E402
from mlx_vjpcheck.running import execute  # noqa: E402
from mlx_vjpcheck.cases import expected as expect  # noqa: E402
from mlx_vjpcheck.running import runner  # noqa: E402


def wall_of_run(scenarios) -> float:
    t0 = time.perf_counter()
    runner.run_device(scenarios, "cpu")
    return time.perf_counter() - t0


def split(scenarios) -> tuple:
    devices.select("cpu")
    ref_s = mlx_s = 0.0
    for s in scenarios:
        t0 = time.perf_counter()
        exp = expect.expected(s)
        t1 = time.perf_counter()
        try:
            execute.observe(s, expect.cotangent(s, exp["forward"]))
        except Exception:  # errors are results; their time still counts as MLX time
            pass
        mlx_s += time.perf_counter() - t1
        ref_s += t1 - t0
    return ref_s, mlx_s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cat = catalog.catalog()
    walls = [wall_of_run(cat) for _ in range(args.repeat)]
    ref_s, mlx_s = split(cat)
    wall = statistics.median(walls)
    over = max(wall - ref_s - mlx_s, 0.0)
    print(f"scenarios: {len(cat)} on cpu, {args.repeat} runs")
    print(f"full CPU run (median wall): {wall:.2f} s   [min {min(walls):.2f}, max {max(walls):.2f}]  target <= 10 s")
    for label, secs in (("MLX (forward, VJP, finite differences)", mlx_s),
                        ("float64 references", ref_s), ("overhead (process start, import, IPC, JSON)", over)):
        print(f"  {label:46s} {secs:6.2f} s  {100 * secs / wall:5.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
