"""`mlx-vjpcheck catalog`: export the scenario catalog as JSON (the native suite's input)."""
from __future__ import annotations

import sys

from ..cases import catalog, selection
from ..core import scenario
from ..evidence import atomic


def add_parser(sub, name):
    p = sub.add_parser(name, help="print or write the scenario catalog as JSON")
    p.add_argument("--filter", metavar="PATTERN")
    p.add_argument("--out", metavar="FILE", help="write here (atomically) instead of stdout")
    p.set_defaults(func=main)


def main(args) -> int:
    chosen = selection.select(catalog.catalog(), args.filter)
    text = scenario.dump_catalog(chosen)
    if args.out:
        atomic.write_text(args.out, text + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 0
