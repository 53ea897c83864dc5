#!/usr/bin/env python3
"""Fuzzer speed: time from the start of a campaign to the first minimal
counterexample of each defect class the report documents, and cases/second.

    python bench/fuzz.py [--time 30] [--seeds 0] [--device cpu] [--shards 2]
    python bench/fuzz.py --seeds 0-4 --shards 1   # one process, spread over seeds

Classes (report sizes in total operand elements, storage included):
  left_selection   gather_mm, left indices only, sorted, wrong gradient   (report: 4)
  broadcast_tail   gather_mm, right indices only, sorted, left broadcast   (report: 6)
  quantized_left   gather_qmm, left indices only, sorted, wrong gradient  (report: 2240)
A class counts as rediscovered when its minimal counterexample is no larger
than the report's; its time is when that finding was recorded, from the
campaign's start (with --shards > 1, from before the shards start). Each
campaign has a fresh example database and every fuzzable op. Per class: its
time in each seed and the median over the seeds (a seed that misses it counts
as infinite). Exit 1 when a class's median is over --target.
"""
import argparse
import contextlib
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CLASSES = {
    "left_selection": ("gather_mm", lambda form: form == "lhs-sorted", 4),
    "broadcast_tail": ("gather_mm", lambda form: form == "rhs-sorted+bcast-left", 6),
    "quantized_left": ("gather_qmm", lambda form: form == "lhs-sorted", 2240),
}


def classify(f):
    for name, (op, form_ok, _) in CLASSES.items():
        if f.op == op and form_ok(f.form) and f.oracle == "reference" and f.kind == "wrong-value":
            return name
    return None


def parse_seeds(text):
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def counting():
    """A display (one shard) that notes how many cases had run when each finding
    was recorded: a count the machine's load does not change."""
    at, n = {}, [0]

    @contextlib.contextmanager
    def display(budget_s):
        def on_event(kind, payload):
            if kind == "case":
                n[0] += 1
            elif kind == "finding":
                at[payload.signature] = n[0]
        yield on_event
    return display, at


def one_campaign(seed, args, ops):
    from mlx_vjpcheck.fuzz import campaign
    display, at = counting() if args.shards == 1 else (campaign.quiet, {})
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        res = campaign.run(ops, args.device, seed, args.time, None, os.path.join(tmp, "db"),
                           shards=args.shards, display=display)
    wall = time.monotonic() - t0
    st = res["campaign"]["stats"]
    gather = ", ".join(f"{op} {st['per_op'].get(op, {}).get('cases', 0)}"
                       for op in sorted({c[0] for c in CLASSES.values()}))
    print(f"campaign: seed {seed}, {args.shards} shard(s), budget {args.time:g}s, wall {wall:.1f}s, "
          f"{st['cases']} cases ({gather}), {st['cases_per_s']} cases/s, {len(res['findings'])} findings")
    first = {}
    for f in res["findings"]:
        c = classify(f)
        if c and f.size <= CLASSES[c][2] and (c not in first or f.time_minimal_s < first[c].time_minimal_s):
            first[c] = f
    times = {}
    for name, (_, _, report_size) in CLASSES.items():
        f = first.get(name)
        times[name] = float("inf") if f is None else f.time_minimal_s
        if f is None:
            print(f"  {name:15s} NOT rediscovered within {args.time:g}s")
            continue
        cases = f"  after {at[f.signature]} cases" if f.signature in at else ""
        print(f"  {name:15s} first hit {f.time_found_s:5.1f}s  minimal {f.time_minimal_s:5.1f}s{cases}  "
              f"size {f.size} (report {report_size})  {f.signature}"
              + ("" if f.time_minimal_s <= args.target else "  SLOW"))
    return times


def median(values):
    v = sorted(values)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time", type=float, default=30.0)
    ap.add_argument("--seeds", default="0", help="seed or range A-B (default 0)")
    ap.add_argument("--device", default="cpu", choices=("cpu", "gpu"))
    ap.add_argument("--shards", type=int, default=min(2, os.cpu_count() or 1),
                    help="parallel campaigns per seed (seeds S..S+N-1), default min(2, CPUs); "
                         "times include their start-up")
    ap.add_argument("--target", type=float, default=10.0, help="seconds allowed per class (default 10)")
    args = ap.parse_args()
    from mlx_vjpcheck.fuzz import targets
    ops = targets.names()
    seeds = parse_seeds(args.seeds)
    per_seed = [one_campaign(seed, args, ops) for seed in seeds]
    print(f"time to the minimal counterexample, seeds {seeds[0]}-{seeds[-1]}, {len(ops)} ops "
          f"(target: median <= {args.target:g}s)")
    medians = {}
    for name in CLASSES:
        times = [t[name] for t in per_seed]
        medians[name] = median(times)
        print(f"  {name:15s} {'  '.join(f'{t:5.1f}' for t in times)}   median {medians[name]:.1f}s"
              + ("" if medians[name] <= args.target else "  OVER"))
    return 0 if max(medians.values()) <= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
