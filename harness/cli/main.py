"""`mlx-vjpcheck`: the subcommands, listed explicitly, and the one failure policy:
bad input raises UsageError and becomes one line on stderr with exit 2; Ctrl-C
is one line and exit 130 (cli/options.py).

A subcommand's module is imported only when it is the one asked for (all of them
for --help or a name that is none of them): `mlx-vjpcheck validate` does not
pay for importing the fuzzer and the native gate."""
from __future__ import annotations

import importlib
import sys

from .. import __version__
from ..core.errors import UsageError
from . import options

# name -> module of cli/, in the order `--help` lists them.
SUBCOMMANDS = {
    "run": "run",
    "catalog": "catalog",
    "fuzz": "fuzz",
    "register": "register",
    "versions": "versions",
    "native": "native",
    "bundle": "bundle",
    "validate": "validate",
    "replay": "replay",
    "coverage": "coverage",
    "handoff": "handoff",
    "sweep": "sweep",
    "gate": "gate",
    "gradcheck": "gradcheck",
}


def _parser(argv) -> options.Parser:
    p = options.Parser(prog="mlx-vjpcheck",
                       description="Check MLX gradient rules against float64 references.")
    p.add_argument("--version", action="version", version=f"mlx-vjpcheck {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=options.Parser)
    asked = argv[0] if argv else None
    for name in [asked] if asked in SUBCOMMANDS else SUBCOMMANDS:
        importlib.import_module(f".{SUBCOMMANDS[name]}", __package__).add_parser(sub, name)
    return p


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["gate"]:   # build_and_test.py's own command line, options and all
        return importlib.import_module(".gate", __package__).main(argv[1:])
    try:
        args = _parser(argv).parse_args(argv)
        return int(args.func(args) or 0)
    except UsageError as e:
        from ..evidence.text import visible
        print(visible(f"mlx-vjpcheck: {e}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return options.interrupted("mlx-vjpcheck")


if __name__ == "__main__":
    sys.exit(main())
