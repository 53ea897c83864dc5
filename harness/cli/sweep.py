"""`mlx-vjpcheck sweep`: MLX's whole public differentiable API (sweep/api.py, checked
against the installed MLX by sweep/inventory.py) at systematic corners under every
transform, reference-free (gradcheck), in crash-isolated workers; one finding per
signature (function, transform, corner class, symptom), written to --out/sweep.json.
Each finding is matched against the registered classes (sweep/known.py). Exit 0: every
finding is explained by a registered class or a documented limitation; 1: some finding
is unexplained (new), or its class has no entry in the defect register (each such
finding gets its `register add` line); 2: bad input."""
from __future__ import annotations

import os

from ..core.errors import UsageError
from ..evidence import atomic, paths, rundir
from ..evidence.text import visible
from . import options

SCHEMA = "mlx-vjpcheck/sweep/1"


def add_parser(sub, name):
    p = sub.add_parser(name, help="check MLX's whole differentiable API reference-free at systematic corners")
    p.add_argument("--time", type=options.positive_float, default=None, metavar="S",
                   help="time budget in seconds (default: none, every case)")
    p.add_argument("--shard", default="0/1", metavar="I/N", help="run the I-th of N shares of the cases "
                   "(0-based; round robin, so every share has every kind of function; default 0/1)")
    p.add_argument("--functions", metavar="LIST", default=None,
                   help="comma-separated functions or entries (mx.sin, nn.Linear, mx.linalg.*); default all")
    p.add_argument("--generic-only", action="store_true", help="only each entry's generic point")
    p.add_argument("--seed", type=int, default=0, help="random seed of the values (default: 0)")
    p.add_argument("--jobs", type=options.positive_int, default=min(2, os.cpu_count() or 1), metavar="N",
                   help="worker processes (default: 2 or the CPU count if smaller)")
    p.add_argument("--device", choices=("cpu", "gpu"), help="default: $MLX_VJPCHECK_DEVICE, else cpu")
    options.add_out(p, "artifacts/sweep", "sweep directory")
    p.set_defaults(func=main)


def _shard(text: str) -> tuple:
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard {text}: expected I/N, e.g. 0/4") from None
    if n < 1 or not 0 <= i < n:
        raise UsageError(f"--shard {text}: need 0 <= I < N")
    return i, n


def check(args) -> tuple:
    options.require("numpy", what="mlx-vjpcheck sweep")
    shard = _shard(args.shard)
    device = args.device or os.environ.get("MLX_VJPCHECK_DEVICE") or "cpu"
    if device not in ("cpu", "gpu"):
        raise UsageError(f"$MLX_VJPCHECK_DEVICE={device!r}: expected cpu or gpu")
    from ..sweep import run
    items = run.plan(args.functions, shard, args.seed, args.generic_only)
    if not items:
        raise UsageError(f"--functions {args.functions}: matches no entry of the API table")
    options.out_dir(args, "sweep")
    return run, items, shard, device


def main(args) -> int:
    run, items, shard, device = check(args)
    from ..running import environment
    result = run.sweep(items, device=device, jobs=args.jobs, budget_s=args.time)
    found = run.findings(result)
    doc = {"schema": SCHEMA, "kind": "sweep", "environment": environment.record([device]),
           "plan": {"functions": args.functions, "shard": list(shard), "seed": args.seed,
                    "generic_only": args.generic_only, "time": args.time},
           "summary": run.summary(result), "findings": found, "records": result.records}
    with rundir.staged(args.out, "sweep", args.replace) as tmp:
        atomic.write_json(tmp / paths.SWEEP, doc)
        atomic.write_json(tmp / paths.ENVIRONMENT, doc["environment"])
    unregistered = _print(result, found, args.out)
    return 1 if run.unexplained(found) or unregistered else 0


def _print(result, found, out) -> int:
    for f in found:
        fn, transform, corner, symptom = f["signature"]
        head = "LIMIT  " if f["limitation"] else ("known  " if f["explained"] else "NEW    ")
        why = f"  [{f['explained']}]" if f["explained"] else ""
        print(visible(f"{head}{fn}  {transform}  at {', '.join(f['corners'])}: {symptom} "
                      f"({f['cases']} cases){why}"))
    from .register_sweep import add_lines   # a finding the register cannot explain never passes silently
    lines = add_lines(found, f"{out}/{paths.SWEEP}")
    for line in lines:
        print(visible(line))
    s, new = result, len([f for f in found if not f["explained"]])
    print(visible(f"{s.done} of {s.planned} cases in {s.seconds:.1f} s{' (' + s.stopped + ')' if s.stopped else ''}: "
                  f"{len(found)} findings, {new} unexplained  ->  {out}/{paths.SWEEP}"))
    return len(lines)
