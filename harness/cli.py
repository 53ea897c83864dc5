"""`mlx-vjpcheck` command line. Subcommands live in their own modules and are
listed here by import path; each exposes add_parser(subparsers) and main(args).

Exit codes everywhere: 0 all good, 1 a check failed, 2 usage or environment error.
"""
from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMANDS = {
    "run": "harness.cmd_run",
    "catalog": "harness.cmd_catalog",
    "bundle": "harness.cmd_bundle",
    "fuzz": "harness.cmd_fuzz",
    "versions": "harness.cmd_versions",
    "native": "harness.native_wheel",
}


from .errors import UsageError  # noqa: E402  re-exported for subcommands


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mlx-vjpcheck",
                                description="Check MLX gather-op gradients against float64 references.")
    sub = p.add_subparsers(dest="command", required=True)
    for name, module in SUBCOMMANDS.items():
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:   # a real import error inside the module must surface
                raise
            continue
        mod.add_parser(sub, name)
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


if __name__ == "__main__":
    sys.exit(main())
