"""What each oracle of the `run` context costs over the whole catalog, and how
much of it is MLX: the float64 references (expected values, the accumulation
counts, second-order and directional references) are timed apart, so the rest
of a measuring function is MLX (graph building and evaluation) plus a little
numpy to compare.

Usage: python bench/oracles.py [--repeat N] [--filter TEXT]
First the real `run` path (runner.run_device: worker subprocess, JSON over the
pipe) N times, median wall and the worker's CPU seconds; then the split, in
this process, over the scenarios whose worker did not die (an MLX crash would
end this process too). Figures only, no verdicts.
"""
from __future__ import annotations

import argparse
import collections
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mlx_vjpcheck.cases import catalog  # noqa: E402
from mlx_vjpcheck.core import references  # noqa: E402
from mlx_vjpcheck import oracles  # noqa: E402
from mlx_vjpcheck.running import devices, execute, runner  # noqa: E402
from mlx_vjpcheck.cases import expected as expect  # noqa: E402

REFERENCE = collections.Counter()   # seconds in float64 reference work, by what
ORACLE = collections.Counter()      # seconds in each oracle's measuring function (references included)


def _timed(bucket, key, fn):
    def wrapper(*a, **kw):
        t0 = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            bucket[key] += time.perf_counter() - t0
    return wrapper


def _instrument() -> None:
    """Time the reference functions wherever they are called from, and each row."""
    for mod in (expect, references):
        for name in ("accumulation", "hvp", "directional"):
            setattr(mod, name, _timed(REFERENCE, name, getattr(references, name)))
    expect.expected = _timed(REFERENCE, "expected", expect.expected)
    execute.expected = expect

    def rows(trial, call):
        out = []
        for row in oracles.in_context(trial.context):
            if row.measure is not None:
                out += _timed(ORACLE, row.name, row.measure)(trial, call)
        return out
    execute._oracle_checks = rows


def in_process(cat) -> float:
    devices.select("cpu")
    t0 = time.perf_counter()
    for s in cat:
        execute.run(s, "cpu")
    return time.perf_counter() - t0


def worker_runs(cat, repeat: int) -> set:
    """Median wall and worker CPU of the run path; the scenarios whose worker died."""
    walls, cpus, crashed = [], [], set()
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        recs = runner.run_device(cat, "cpu")
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        crashed |= {r["scenario"] for r in recs if r["status"] == "crashed"}
    print(f"run path, {len(cat)} scenarios: median wall {statistics.median(walls):.2f} s "
          f"[min {min(walls):.2f}, max {max(walls):.2f}], worker CPU {statistics.median(cpus):.2f} s, "
          f"over {repeat}; {len(crashed)} crashed")
    return crashed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--filter", default="", help="only scenarios whose name contains this")
    args = ap.parse_args()
    cat = [s for s in catalog.catalog() if args.filter in s.name]
    crashed = worker_runs(cat, args.repeat)
    cat = [s for s in cat if s.name not in crashed]
    _instrument()
    total = in_process(cat)
    refs = sum(REFERENCE.values())
    in_oracles = sum(ORACLE.values())
    print(f"in process, {len(cat)} scenarios (a record that fails is measured twice): {total:.2f} s")
    print(f"  float64 references      {refs:6.2f} s  {100 * refs / total:5.1f} %   "
          + ", ".join(f"{k} {v:.2f}" for k, v in REFERENCE.most_common()))
    print(f"  MLX and the rest        {total - refs:6.2f} s  {100 * (total - refs) / total:5.1f} %")
    print("  per oracle (its references included):")
    for name, secs in ORACLE.most_common():
        print(f"    {name:20s} {secs:6.2f} s  {100 * secs / total:5.1f} %")
    print(f"    {'(outside oracles)':20s} {total - in_oracles:6.2f} s  (expected values, forward, plain VJP)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
