"""The command line: one module per subcommand (listed in cli/main.py), plus the
entry points of build_and_test.py (cli/gate.py) and
validate_artifacts.py (cli/validate.py, numpy only: this package's __init__
imports nothing heavy).

Each subcommand module exposes add_parser(subparsers, name) and main(args).
Exit codes everywhere: 0 all good, 1 a check failed, 2 usage or environment
error, 130 interrupted.
"""
import os
import sys


def entry() -> int:
    """The `mlx-vjpcheck` console script. The subcommands are imported inside the
    guard, so a Ctrl-C during start-up is the same one line and exit 130."""
    try:
        from .main import main
        return leave(main())
    except KeyboardInterrupt:
        print("mlx-vjpcheck: interrupted", file=sys.stderr)
        return 130


def leave(code: int) -> int:
    """`code`, or, when the subcommand kept objects to the end (options.keep), the process
    ends here with it: output flushed, the interpreter's teardown skipped."""
    from .options import kept
    if not kept():
        return code
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a reader that left, a closed stream: nothing more to say
            pass
    os._exit(code)


if __name__ == "__main__":
    sys.exit(entry())
