"""`mlx-vjpcheck fuzz`: search for gradient defects nobody wrote a scenario for,
shrink each distinct one to a minimal counterexample, write findings and
reproducers.

Each finding is written into the (staged) output directory as soon as it is
made; Ctrl-C or SIGTERM ends the campaign early (after the case it is running),
keeps every finding so far in a run directory that validates (campaign.json
says "interrupted": true), and exits 130. The signal only raises a flag the
campaign reads between cases (fuzz/campaign.py STOP), so it cannot be lost
where it lands; a second Ctrl-C stops at once, writing nothing.
"""
from __future__ import annotations

import argparse
import os
import shlex
import signal
from pathlib import Path

from ..core.errors import UsageError
from ..evidence import rundir
from ..running import environment
from . import options


def add_parser(sub, name):
    p = sub.add_parser(name, help="property-based search for gradient defects, with shrinking")
    p.add_argument("--time", type=options.positive_float, default=60.0, metavar="S",
                   help="time budget in seconds (default: 60)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    options.add_out(p, "artifacts/fuzz", "findings directory")
    p.add_argument("--device", choices=("cpu", "gpu"), help="default: $MLX_VJPCHECK_DEVICE, else cpu")
    p.add_argument("--max-examples", type=options.positive_int, metavar="N",
                   help="case budget (with a fixed seed, makes the search reproducible)")
    p.add_argument("--ops", metavar="LIST", help="comma-separated ops to fuzz (default: every registered op)")
    p.add_argument("--db", metavar="DIR", default=None,
                   help="example database directory, or 'none' for this campaign only (default: "
                        "$MLX_VJPCHECK_CACHE/fuzz-db, i.e. ~/.cache/mlx-vjpcheck/fuzz-db); or "
                        "github:OWNER/REPO/ARTIFACT[:DIR] to also replay, read-only, the cases in the "
                        "newest GitHub Actions artifact ARTIFACT of OWNER/REPO (downloaded at the start "
                        "with $GITHUB_TOKEN, which needs actions: read; hypothesis >= 6.156.2) while new "
                        "cases go to DIR (default as above; 'none': keep nothing); a finding first seen "
                        "replaying a stored case is marked as coming from the database")
    p.add_argument("--shards", type=options.positive_int, default=1, metavar="N",
                   help="run N campaigns in parallel processes (seeds SEED..SEED+N-1) and merge (default: 1)")
    p.add_argument("--shard-index", type=int, default=None, help=argparse.SUPPRESS)  # set by --shards
    p.add_argument("--no-progress", action="store_true", help="no live progress display")
    p.set_defaults(func=main)


def _ops(args) -> list:
    from ..fuzz import targets
    known = targets.names()
    # --ops '' names no op (an empty list is a mistake, not "all"): only an absent --ops means every op
    ops = known if args.ops is None else [o.strip() for o in args.ops.split(",") if o.strip()]
    bad = [o for o in ops if o not in known]
    if bad or not ops:
        raise UsageError(f"unknown fuzz target {', '.join(bad) or '(none)'}; known: {', '.join(known)}")
    return ops


def _device(args) -> str:
    device = args.device or os.environ.get("MLX_VJPCHECK_DEVICE") or "cpu"
    device = "cpu" if device == "all" else device
    from ..running import devices
    try:
        devices.resolve(device)
    except ImportError:
        raise UsageError("mlx is not installed: " + options.INSTALL["mlx"]) from None
    except devices.DeviceError as e:
        raise UsageError(str(e)) from None
    return device


def _database(args):
    """The checked --db: 'none', a directory (absolute: shards run elsewhere), or a
    github: spec's text (see fuzz/database.py), which shards are given as it is."""
    from ..fuzz import database
    if args.db is not None and args.db.lower() == "none":
        return "none"
    try:
        spec = database.parse(args.db)
    except database.SpecError as e:
        raise UsageError(f"--db {args.db}: {e}") from None
    local = None
    if spec.local is not None:
        try:
            # resolved first: mkdir of a/b/../c would create a/b on its way to a/c
            local = rundir.check_writable(spec.local.resolve(), "--db")
        except rundir.OutDirError as e:
            raise UsageError(f"{e} (give a directory, or 'none')") from None
    if spec.github is None:
        return local
    problem = database.github_problem(os.environ)
    if problem:
        raise UsageError(f"--db {args.db}: {problem}")
    return str(database.Spec(local, spec.github))


def check(args) -> tuple:
    """Every input and output before the campaign: (ops, device, database)."""
    options.require("hypothesis", "numpy", "rich", what="mlx-vjpcheck fuzz")
    ops = _ops(args)
    device = _device(args)
    options.out_dir(args, "fuzz")
    return ops, device, _database(args)


def main(args) -> int:
    ops, device, db = check(args)
    from ..fuzz import campaign, findings
    from . import terminal
    signal.signal(signal.SIGINT, campaign.on_interrupt)
    signal.signal(signal.SIGTERM, campaign.on_interrupt)   # ends the campaign like Ctrl-C: findings kept
    display = campaign.quiet if args.no_progress else terminal.fuzz_progress
    with rundir.staged(args.out, "fuzz", args.replace) as tmp:
        try:
            result = campaign.run(ops=ops, device=device, seed=args.seed, budget_s=args.time,
                                  max_cases=args.max_examples, db_path=db, shards=args.shards,
                                  display=display, on_finding=lambda f: findings.write_one(tmp, f))
        except campaign.ShardError as e:
            raise UsageError(str(e)) from None
        campaign.write(tmp, result, environment.record([device]))
    if args.shard_index is None:
        terminal.print_fuzz(result, args.out)
        print_unregistered(result["findings"], args.out)
    if result["campaign"].get("interrupted"):
        return options.interrupted("mlx-vjpcheck fuzz")
    return 1 if result["findings"] else 0


def print_unregistered(found, out) -> None:
    """Each finding whose signature the project has not registered (corpus, register), with
    the command line that registers it."""
    from ..cases import register
    from ..evidence import paths
    known = register.known_signatures()
    new = [f.signature for f in found if f.signature not in known]
    for sig in new:
        path = shlex.quote(str(Path(out) / paths.FINDINGS_DIR / f"{sig}.json"))
        print(f"new signature {sig}: register it with  mlx-vjpcheck register add {path}")
    if found:
        print(f"{len(found) - len(new)} of {len(found)} signatures are registered already")


if __name__ == "__main__":
    import sys
    sys.exit(options.not_a_program("fuzz"))
