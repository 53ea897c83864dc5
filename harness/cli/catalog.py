"""`mlx-vjpcheck catalog`: list the scenario catalog, or export it as JSON
(the format `--scenarios` and the native suite read)."""
from __future__ import annotations

import sys

from .. import ops
from ..cases import catalog, selection
from ..core import scenario
from ..core.errors import UsageError
from ..evidence import atomic
from . import options


def add_parser(sub, name):
    p = sub.add_parser(name, help="list the scenario catalog, or write it as JSON")
    p.add_argument("--filter", metavar="PATTERN",
                   help="only scenarios whose name matches: a glob when it has * ? [, else a substring")
    p.add_argument("--json", action="store_true", help="print the scenarios as JSON instead of a listing")
    p.add_argument("--out", metavar="FILE", help="write the JSON here (atomically) instead of stdout")
    options.add_replace(p)
    p.set_defaults(func=main)


def listing(chosen: list) -> str:
    """One line per op (its scenario count and summary), then one per scenario."""
    by_op = {}
    for s in chosen:
        by_op.setdefault(s.op, []).append(s)
    lines = [f"{len(chosen)} scenarios, {len(by_op)} ops"]
    for op, mine in by_op.items():
        lines.append(f"{op:18s} {len(mine):4d}  {ops.get(op).summary}")
    lines.append("")
    for s in chosen:
        mark = "  (expects defect: " + ", ".join(s.defect_tags) + ")" if s.expects_defect else ""
        lines.append(f"{s.name}{mark}")
    return "\n".join(lines)


def main(args) -> int:
    if args.out:
        options.out_file(args.out, "catalog", args.replace, "--out")
    chosen = selection.select(catalog.catalog(), args.filter)
    if not chosen:
        raise UsageError(f"no scenario matches --filter {args.filter!r}")
    if args.out:
        atomic.write_text(args.out, scenario.dump_catalog(chosen) + "\n")
    elif args.json:
        sys.stdout.write(scenario.dump_catalog(chosen) + "\n")
    else:
        sys.stdout.write(listing(chosen) + "\n")
    return 0
