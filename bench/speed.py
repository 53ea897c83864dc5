#!/usr/bin/env python3
"""Do the patches keep their ops' speed? patched / pristine per workload, target <= 1.05.

Usage: python bench/speed.py --mlx-source DIR --mlx-build DIR [--opt as-built|O0] [--cache DIR]
                             [--patch SERIES] [--per-patch all|FILE,...] [--only WORKLOAD,...]
                             [--rounds N] [--repeat R] [--blas-threads N] [--json OUT]
       (defaults: $MLX_SOURCE_ROOT, $MLX_CPU_BUILD, as-built, the gate's cache, patch/series,
        10 rounds, 5 repeats, 1 BLAS thread)

bench/speed.json says which diffs of the series need a speed check and which workloads
(native/src/workloads.cpp: a realistic, non-defective call of the op and its gradient)
time each. The gate's two binaries are built (harness/gate/build.py: the touched units
compiled pristine and patched with the build's own flags, linked ahead of libmlx.a):
once for the whole series, and with --per-patch once more per named diff, alone. Each
binary's `--bench WORKLOAD R` runs one warm-up and R timed iterations of forward +
gradient; every round runs each workload on both binaries back to back, the order
alternating. The figure is the median process CPU time per iteration over all rounds
(the wall clock is printed too: on a shared machine it also counts waiting for a core).
Exit 1 when any patched / pristine median exceeds 1.05, 2 on bad input.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlx_vjpcheck.native import build as nb
from mlx_vjpcheck.gate import inputs as GI
from mlx_vjpcheck.gate import build as GB
from mlx_vjpcheck.gate import cache as native_cache

PLAN = Path(__file__).with_name("speed.json")
THRESHOLD = 1.05          # the target: patched / pristine, medians of CPU time
VARIANTS = ("pristine", "patched")


class BenchError(Exception):
    """Bad input or a failed run: one line, exit 2."""


# --- what to measure -----------------------------------------------------------------------

def load_plan(plan: Path = PLAN) -> list:
    try:
        data = json.loads(plan.read_text(encoding="utf-8"))
        return [dict(p) for p in data["patches"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BenchError(f"{plan}: not a speed plan ({e})")


def series_files(series: Path) -> list:
    """The diffs a quilt series file lists, in order."""
    lines = series.read_text(encoding="utf-8").splitlines()
    return [s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#")]


def workloads_of(plan: list, files) -> list:
    """The workloads serving the given diffs, each once, in plan order."""
    out = []
    for p in plan:
        if p["file"] in files:
            out += [w for w in p["workloads"] if w not in out]
    return out


# --- building and running --------------------------------------------------------------

def build(args, patch: Path, work: Path) -> dict:
    gate = GI.prepare(args.mlx_source, args.mlx_build, patch, args.opt, cache=args.cache,
                     jobs=min(2, os.cpu_count() or 1), stages=("native",))
    gate.rec, gate.work = nb.Recorder(work / "rec"), work
    return {v: b.suite_binary for v, b in GB.build_variants(gate).items()}


def run_one(exe: Path, workload: str, repeat: int, env: dict) -> dict:
    p = subprocess.run([str(exe), "--bench", workload, str(repeat)], check=False, capture_output=True, text=True,
                       env=env)
    if p.returncode != 0:
        raise BenchError(f"{exe.name} --bench {workload} exited {p.returncode}: "
                         f"{(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(p.stdout)


def measure(exes: dict, workloads: list, rounds: int, repeat: int, env: dict) -> dict:
    """{workload: {variant: {"cpu": [...], "wall": [...], "graph": {...}}}}; the two
    binaries run back to back, which goes first alternating by round and workload."""
    times = {w: {v: {"cpu": [], "wall": [], "graph": None} for v in VARIANTS} for w in workloads}
    for r in range(rounds):
        for i, w in enumerate(workloads):
            for v in (VARIANTS if (r + i) % 2 == 0 else VARIANTS[::-1]):
                out = run_one(exes[v], w, repeat, env)
                t = times[w][v]
                t["cpu"] += out["cpu_seconds"]
                t["wall"] += out["seconds"]
                t["graph"], t["what"] = out["graph"], out["what"]
    return times


# --- the verdict -------------------------------------------------------------------------

def graph_change(pristine: dict | None, patched: dict | None) -> str:
    """'same ops', or the primitives the patched graph has more (+) or fewer (-) of."""
    a, b = pristine or {}, patched or {}
    diff = [(k, b.get(k, 0) - a.get(k, 0)) for k in sorted(set(a) | set(b))]
    return ", ".join(f"{d:+d} {k}" for k, d in diff if d) or "same ops"


def summarize(times: dict) -> list:
    """One row per workload: medians, the ratio that is checked (CPU time) and the others."""
    rows = []
    for w, t in times.items():
        med = {v: statistics.median(t[v]["cpu"]) for v in VARIANTS}
        wall = {v: statistics.median(t[v]["wall"]) for v in VARIANTS} if all(t[v].get("wall") for v in VARIANTS) else None
        ratio = med["patched"] / med["pristine"]
        rows.append({"workload": w, "what": t["pristine"].get("what", ""), "n": len(t["patched"]["cpu"]),
                     "pristine_s": med["pristine"], "patched_s": med["patched"], "ratio": ratio,
                     "ratio_min": min(t["patched"]["cpu"]) / min(t["pristine"]["cpu"]),
                     "ratio_wall": wall and wall["patched"] / wall["pristine"],
                     "graph": graph_change(t["pristine"].get("graph"), t["patched"].get("graph")),
                     "ok": ratio <= THRESHOLD})
    return rows


def passes(rows: list) -> bool:
    return all(r["ratio"] <= THRESHOLD for r in rows)


def print_rows(title: str, rows: list) -> None:
    print(f"\n{title}")
    print(f"  {'workload':26s} {'pristine':>9s} {'patched':>9s} {'ratio':>6s} {'min':>6s} {'wall':>6s}  graph")
    for r in rows:
        wall = f"{r['ratio_wall']:6.3f}" if r["ratio_wall"] else "     -"
        print(f"  {r['workload']:26s} {r['pristine_s'] * 1e3:7.2f}ms {r['patched_s'] * 1e3:7.2f}ms "
              f"{r['ratio']:6.3f} {r['ratio_min']:6.3f} {wall}  {r['graph']}"
              + ("" if r["ok"] else f"   OVER {THRESHOLD}"))


def print_patches(plan: list, files: list, rows: dict) -> None:
    """Per diff of the series: its workloads' ratios in the series build (and alone)."""
    print("\nper diff (series build; 'alone' where --per-patch built it by itself):")
    for p in plan:
        if p["file"] not in files:
            continue
        if not p["workloads"]:
            print(f"  {p['file']:44s} no benchmark: {p['reason']}")
            continue
        parts = []
        for w in p["workloads"]:
            s = rows["series"].get(w)
            alone = rows.get(p["file"], {}).get(w)
            parts.append(f"{w} {s['ratio']:.3f}" if s else f"{w} -")
            if alone:
                parts[-1] += f" (alone {alone['ratio']:.3f})"
        print(f"  {p['file']:44s} " + ", ".join(parts))


# --- the command line ------------------------------------------------------------------

def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mlx-source", default=os.environ.get("MLX_SOURCE_ROOT"))
    ap.add_argument("--mlx-build", default=os.environ.get("MLX_CPU_BUILD"))
    ap.add_argument("--patch", default=str(GI.DEFAULT_PATCH), help="a series file (default patch/series)")
    ap.add_argument("--opt", choices=("as-built", "O0"), default="as-built")
    ap.add_argument("--cache", default=None, help="the gate's cache directory")
    ap.add_argument("--per-patch", default="", help="'all' or diffs of the series to build alone too")
    ap.add_argument("--only", default="", help="workloads to run (default: every one the plan names)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5, help="timed iterations per binary per round")
    ap.add_argument("--blas-threads", type=int, default=1,
                    help="OPENBLAS_NUM_THREADS for both builds (1: less noise on a shared machine)")
    ap.add_argument("--json", default=None, help="write every timing and verdict here")
    args = ap.parse_args(argv)
    if not (args.mlx_source and args.mlx_build):
        ap.error("give --mlx-source and --mlx-build (or set MLX_SOURCE_ROOT and MLX_CPU_BUILD)")
    if args.rounds < 1 or args.repeat < 1 or args.blas_threads < 1:
        ap.error("--rounds, --repeat and --blas-threads must be positive")
    return args


def select(args, plan: list) -> tuple:
    """(series path, its diffs, the workloads to run, the diffs to build alone)."""
    series = Path(args.patch)
    if not series.is_file():
        raise BenchError(f"--patch {series}: no such file")
    files = series_files(series)
    unknown = [f for f in files if f not in {p["file"] for p in plan}]
    if unknown:
        raise BenchError(f"{PLAN.name} does not classify {', '.join(unknown)} (a diff of {series})")
    wanted = workloads_of(plan, files)
    only = [w for w in args.only.split(",") if w]
    if [w for w in only if w not in wanted]:
        raise BenchError(f"--only: not a workload of the plan: {[w for w in only if w not in wanted]}")
    alone = [p["file"] for p in plan if p["file"] in files and p["workloads"]] \
        if args.per_patch == "all" else [f for f in args.per_patch.split(",") if f]
    if [f for f in alone if f not in files]:
        raise BenchError(f"--per-patch: not a diff of {series}: {[f for f in alone if f not in files]}")
    return series, files, only or wanted, alone


def run(args) -> int:
    plan = load_plan()
    series, files, workloads, alone = select(args, plan)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(args.blas_threads))
    builds = [("series", series, workloads)]
    for f in alone:
        ws = [w for w in workloads_of(plan, [f]) if w in workloads]
        builds += [(f, series.parent / f, ws)] if ws else []
    rows, record = {}, {"opt": args.opt, "rounds": args.rounds, "repeat": args.repeat,
                        "blas_threads": args.blas_threads, "threshold": THRESHOLD, "builds": {}}
    with tempfile.TemporaryDirectory(prefix="bench-speed-") as t:
        for n, (name, patch, ws) in enumerate(builds):
            exes = build(args, patch, Path(t) / str(n))
            times = measure(exes, ws, args.rounds, args.repeat, env)
            rows[name] = {r["workload"]: r for r in summarize(times)}
            record["builds"][name] = {"patch": str(patch), "times": times, "rows": list(rows[name].values())}
            print_rows(f"{name}: patched / pristine, median CPU time per iteration over {args.rounds} rounds "
                       f"x {args.repeat}", list(rows[name].values()))
    print_patches(plan, files, rows)
    every = [r for b in rows.values() for r in b.values()]
    ok = passes(every)
    print(f"\ncpus: {os.cpu_count()}  opt: {args.opt}  BLAS threads: {args.blas_threads}  "
          f"load average: {os.getloadavg()[0]:.2f}")
    print(f"verdict: {'every ratio <= ' if ok else 'some ratio > '}{THRESHOLD} "
          f"({sum(not r['ok'] for r in every)} over, of {len(every)})")
    if args.json:
        write_json(Path(args.json), dict(record, ok=ok))
    return 0 if ok else 1


def write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def main(argv=None) -> int:
    args = parse(argv)
    try:
        return run(args)
    except (BenchError, OSError, GI.InputError, nb.BuildError, GI.StepFailed, native_cache.CompileFailed) as e:
        print(f"bench/speed.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
