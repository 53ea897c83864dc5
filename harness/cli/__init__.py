"""The `mlx-vjpcheck` command line: one module per subcommand, listed below.

Each subcommand module exposes add_parser(subparsers, name) and main(args).
build_and_test.py and validate_artifacts.py are thin entry points onto
cli/build_and_test.py and cli/validate.py.

Exit codes everywhere: 0 all good, 1 a check failed, 2 usage or environment error.
"""
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
