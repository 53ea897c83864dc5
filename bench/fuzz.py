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
than the report's. Exit 1 when a class is missing or slower than --target.
"""
import argparse
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


def one_campaign(seed, args, ops):
    from mlx_vjpcheck.fuzz import campaign
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        res = campaign.run(ops, args.device, seed, args.time, None, os.path.join(tmp, "db"),
                           shards=args.shards, display=campaign.quiet)
    wall = time.monotonic() - t0
    st = res["campaign"]["stats"]
    print(f"campaign: seed {seed}, {args.shards} shard(s), budget {args.time:g}s, wall {wall:.1f}s, "
          f"{st['cases']} cases, {st['cases_per_s']} cases/s, {len(res['findings'])} findings")
    first = {}
    for f in res["findings"]:
        c = classify(f)
        if c and f.size <= CLASSES[c][2] and (c not in first or f.time_minimal_s < first[c].time_minimal_s):
            first[c] = f
    worst = 0.0
    for name, (_, _, report_size) in CLASSES.items():
        f = first.get(name)
        if f is None:
            worst = float("inf")
            print(f"  {name:15s} NOT rediscovered within {args.time:g}s")
            continue
        worst = max(worst, f.time_minimal_s)
        print(f"  {name:15s} first hit {f.time_found_s:5.1f}s  minimal {f.time_minimal_s:5.1f}s  "
              f"size {f.size} (report {report_size})  {f.signature}"
              + ("" if f.time_minimal_s <= args.target else "  SLOW"))
    return worst


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
    worst = [one_campaign(seed, args, ops) for seed in parse_seeds(args.seeds)]
    print(f"slowest class per seed: {', '.join(f'{w:.1f}s' for w in worst)} (target {args.target:g}s)")
    return 0 if max(worst) <= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
