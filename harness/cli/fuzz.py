"""`mlx-vjpcheck fuzz`: explore gather-like calls, shrink every distinct gradient
defect to a minimal counterexample, write findings and reproducers."""
from __future__ import annotations

import argparse
import os

from ..core.errors import UsageError
from ..evidence import rundir
from ..running import environment


def add_parser(sub, name):
    p = sub.add_parser(name, help="property-based search for gradient defects, with shrinking")
    p.add_argument("--time", type=float, default=60.0, metavar="S", help="time budget in seconds (default 60)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--out", metavar="DIR", default="artifacts/fuzz", help="findings directory")
    p.add_argument("--device", choices=("cpu", "gpu"), help="default: $MLX_VJPCHECK_DEVICE or cpu")
    p.add_argument("--max-examples", type=int, metavar="N",
                   help="case budget (with a fixed seed, makes the findings exactly reproducible)")
    p.add_argument("--ops", metavar="LIST", help="comma-separated targets (default: all registered)")
    p.add_argument("--db", metavar="DIR", default=None,
                   help="hypothesis example database, or 'none' (default: .hypothesis/mlx-vjpcheck-fuzz)")
    p.add_argument("--shards", type=int, default=1, metavar="N",
                   help="run N campaigns in parallel processes (seeds SEED..SEED+N-1) and merge")
    p.add_argument("--shard-index", type=int, default=None, help=argparse.SUPPRESS)  # set by --shards
    p.add_argument("--no-progress", action="store_true", help="no live progress display")
    p.set_defaults(func=main)


def _check(args):
    try:
        from ..fuzz import targets
    except ModuleNotFoundError as e:
        if e.name != "hypothesis":
            raise
        raise UsageError("the fuzzer needs hypothesis: pip install hypothesis")
    if args.time <= 0:
        raise UsageError("--time must be positive")
    if args.shards < 1:
        raise UsageError("--shards must be at least 1")
    if args.max_examples is not None and args.max_examples < 1:
        raise UsageError("--max-examples must be at least 1")
    known = targets.names()
    ops = known if not args.ops else [o.strip() for o in args.ops.split(",") if o.strip()]
    bad = [o for o in ops if o not in known]
    if bad or not ops:
        raise UsageError(f"unknown fuzz target {', '.join(bad) or '(none)'}; known: {', '.join(known)}")
    device = args.device or os.environ.get("MLX_VJPCHECK_DEVICE") or "cpu"
    if device == "all":
        device = "cpu"
    try:
        from ..running import devices
        devices.resolve(device)
    except ImportError:
        raise UsageError("mlx is not installed: pip install 'mlx[cpu]' (Linux) or mlx (macOS)")
    except devices.DeviceError as e:
        raise UsageError(str(e))
    try:
        rundir.check_target(args.out)
    except rundir.OutDirError as e:
        raise UsageError(str(e))
    return ops, device


def main(args) -> int:
    from ..fuzz import campaign, database
    from . import terminal
    ops, device = _check(args)
    db_path = args.db if args.db is not None else database.DEFAULT_DIR
    result = campaign.run(ops=ops, device=device, seed=args.seed, budget_s=args.time,
                          max_cases=args.max_examples, db_path=db_path, shards=args.shards,
                          display=campaign.quiet if args.no_progress else terminal.fuzz_progress)
    env = environment.record([device])
    with rundir.staged(args.out) as tmp:
        campaign.write(tmp, result, env)
    if args.shard_index is None:
        terminal.print_fuzz(result, args.out)
    return 1 if result["findings"] else 0
