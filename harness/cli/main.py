"""`mlx-vjpcheck`: the subcommands, listed explicitly, and the one failure policy
(UsageError: one line on stderr, exit 2)."""
from __future__ import annotations

import argparse
import sys

from ..core.errors import UsageError
from . import bundle, catalog, fuzz, native, run, versions

# name -> module, in the order `--help` lists them.
SUBCOMMANDS = {
    "run": run,
    "catalog": catalog,
    "fuzz": fuzz,
    "versions": versions,
    "native": native,
    "bundle": bundle,
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mlx-vjpcheck",
                                description="Check MLX gradient rules against float64 references.")
    sub = p.add_subparsers(dest="command", required=True)
    for name, module in SUBCOMMANDS.items():
        module.add_parser(sub, name)
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as e:
        print(f"mlx-vjpcheck: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mlx-vjpcheck: interrupted", file=sys.stderr)
        return 2
