"""What every command line shares: one-line usage errors, checked number types,
output options, dependency checks, and the exit statuses.

Exit statuses (README's table): 0 all good, 1 a check failed or a defect was
found, 2 bad input or an unusable environment (one line on stderr, nothing
written), 130 interrupted (Ctrl-C, the shell's convention for SIGINT).
"""
from __future__ import annotations

import argparse
import importlib.util
import sys

from ..core.errors import UsageError
from ..evidence import rundir

INTERRUPTED = 130

# What a subcommand holds to the end of the process (keep): the console script then
# leaves without the interpreter's teardown, which would free it object by object.
_KEPT: list = []


def keep(*objs) -> None:
    """Hold `objs` until the process ends, and let the console script leave at once after
    flushing its output (validate: the parsed evidence, some two million objects whose
    freeing took 0.03-0.05 s of a validation of about a second). Only the last call's
    objects are held, so a caller that runs subcommands in-process keeps one set at most."""
    _KEPT[:] = objs


def kept() -> bool:
    return bool(_KEPT)


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (and exit 2)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


def add_out(p, default: str, what: str = "run directory") -> None:
    # None marks "not given": the default folder is the tool's own (out_dir below)
    p.add_argument("--out", metavar="DIR", default=None,
                   help=f"{what} (default: {default}, replaced by each run; a folder you name needs --replace)")
    p.set_defaults(out_default=default)
    add_replace(p)


def add_replace(p) -> None:
    p.add_argument("--replace", action="store_true",
                   help="replace earlier output of the same kind at --out (never anything else)")


def out_dir(args, kind: str):
    """The checked --out directory (UsageError when it cannot be used). Without --out the
    default folder is used, and earlier evidence of the same kind there is replaced: the
    README's first line works twice. A folder the user names keeps needing --replace, and
    nothing that is not this kind of evidence is ever replaced."""
    if args.out is None:
        args.out, args.replace = args.out_default, True
    try:
        return rundir.check_target(args.out, kind, args.replace)
    except rundir.OutDirError as e:
        raise UsageError(str(e)) from None


def out_file(path, kind: str, replace: bool, flag: str):
    try:
        return rundir.check_file_target(path, kind, replace, flag)
    except rundir.OutDirError as e:
        raise UsageError(str(e)) from None


INSTALL = {"mlx": "python3 -m pip install 'mlx[cpu]' (Linux) or mlx (macOS)",
           "numpy": "python3 -m pip install numpy", "rich": "python3 -m pip install rich",
           "hypothesis": "python3 -m pip install hypothesis"}


def require(*modules: str, what: str) -> None:
    """Fail before any work when a module the command needs is not installed."""
    for name in modules:
        if importlib.util.find_spec(name) is None:
            raise UsageError(f"{what} needs {name}, which is not installed: {INSTALL.get(name, name)}")


def interrupted(prog: str) -> int:
    print(f"{prog}: interrupted", file=sys.stderr)
    return INTERRUPTED


def not_a_program(name: str) -> int:
    """What `python -m <package>.cli.<module>` of a subcommand's module says: it is run
    through the command line, never by accident as a script that does nothing."""
    print(f"this module is part of `mlx-vjpcheck {name}`: run `mlx-vjpcheck {name} --help`", file=sys.stderr)
    return 2


if __name__ == "__main__":
    print("cli/options.py is the command line's shared options, not a program: run `mlx-vjpcheck --help`",
          file=sys.stderr)
    sys.exit(2)
