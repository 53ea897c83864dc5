"""`mlx-vjpcheck replay EVIDENCE`: does the installed MLX reproduce this evidence?

The evidence (directory or bundle) must validate first; then every record of
its run results and fuzz findings runs again (running/replay.py) and the table
says, per record, reproduced or not and which check changed. Exit 0 every
record reproduced, 1 otherwise (or something could not be replayed), 2 bad
input or no MLX.
"""
from __future__ import annotations

import sys

from ..core.errors import UsageError
from ..evidence.load import BadInput, load
from ..running import replay as R
from ..validation import evidence
from . import options


def add_parser(sub, name):
    p = sub.add_parser(name, help="run the recorded scenarios of evidence again and compare")
    p.add_argument("evidence", metavar="EVIDENCE", help="run directory or bundle .zip (it must validate)")
    p.set_defaults(func=main)


def _installed_mlx() -> str:
    options.require("mlx", "numpy", "rich", what="mlx-vjpcheck replay")
    import mlx.core as mx
    return mx.__version__


def _load(path):
    try:
        ev = load(path)
    except BadInput as e:
        raise UsageError(str(e)) from None
    lines, passed = evidence.check(ev)
    if not passed:
        print("\n".join(lines))
        raise UsageError(f"{path} does not validate: replay refused (see the checks above)")
    return ev


def main(args) -> int:
    version = _installed_mlx()
    ev = _load(args.evidence)
    items, unreplayable, recorded = R.collect(ev.files)
    if not items and not unreplayable:
        raise UsageError(f"{args.evidence}: no run results or fuzz findings to replay")
    from ..running import devices
    from . import terminal
    say = terminal.console(stderr=True)
    say.print(f"replaying {len(items)} records on mlx {version}")
    if recorded - {version}:
        say.print(terminal.escape(f"warning: the evidence was recorded on mlx {', '.join(sorted(recorded))}, "
                                  f"this is mlx {version}"))
    from ..fuzz import campaign
    with terminal.progress(len(items), "replay") as tick:
        outcomes = R.replay(items, devices.available(), tick, campaign.replay_records)
    terminal.print_replay(outcomes, unreplayable)
    return 0 if outcomes and all(o.reproduced for o in outcomes) and not unreplayable else 1
