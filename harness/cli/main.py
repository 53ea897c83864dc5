"""`mlx-vjpcheck`: the subcommands, listed explicitly, and the one failure policy:
bad input raises UsageError and becomes one line on stderr with exit 2; Ctrl-C
is one line and exit 130 (cli/options.py)."""
from __future__ import annotations

import sys

from .. import __version__
from ..core.errors import UsageError
from . import bundle, catalog, coverage, fuzz, native, options, replay, run, validate, versions

# name -> module, in the order `--help` lists them.
SUBCOMMANDS = {
    "run": run,
    "catalog": catalog,
    "fuzz": fuzz,
    "versions": versions,
    "native": native,
    "bundle": bundle,
    "validate": validate,
    "replay": replay,
    "coverage": coverage,
}


def _parser() -> options.Parser:
    p = options.Parser(prog="mlx-vjpcheck",
                       description="Check MLX gradient rules against float64 references.")
    p.add_argument("--version", action="version", version=f"mlx-vjpcheck {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=options.Parser)
    for name, module in SUBCOMMANDS.items():
        module.add_parser(sub, name)
    return p


def main(argv=None) -> int:
    try:
        args = _parser().parse_args(argv)
        return int(args.func(args) or 0)
    except UsageError as e:
        print(f"mlx-vjpcheck: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return options.interrupted("mlx-vjpcheck")


if __name__ == "__main__":
    sys.exit(main())
