"""`mlx-vjpcheck native`: the C++ suite against the installed wheel, as a run directory.

Exit 0 all pass, 1 any other status, 2 bad input (or the suite cannot be built).
"""
from __future__ import annotations

import sys

from ..cases import catalog, files, selection
from ..core.errors import UsageError
from ..evidence import rundir
from ..native import suite as native_suite
from ..native import wheel
from . import options


def add_parser(sub, name):
    p = sub.add_parser(name, help="run the native C++ suite against the installed MLX wheel")
    p.add_argument("--filter", metavar="PATTERN", help="glob or substring of scenario names")
    p.add_argument("--scenarios", action="append", default=[], metavar="FILE|DIR",
                   help="run these instead of the catalog: a catalog file, a finding "
                        "(findings/<signature>.json), a regression entry, or a directory of them "
                        "such as a fuzz output directory or harness/regressions (repeatable)")
    options.add_out(p, "artifacts/native-wheel")
    p.add_argument("--build-dir", metavar="DIR", default=None,
                   help="CMake build directory for the suite, reused between runs "
                        "(default: one per interpreter under ~/.cache/mlx-vjpcheck/native-build)")
    p.set_defaults(func=main)
    return p


def main(args) -> int:
    try:
        given = getattr(args, "scenarios", None) or []
        pool = [s for path in given for s in files.load(path)] if given else catalog.catalog()
        files.unique([files.Entry(s, "", "catalog", False) for s in pool])
    except files.ScenarioFileError as e:
        raise UsageError(str(e))
    chosen = selection.select(pool, args.filter)
    if not chosen:
        raise UsageError(f"no scenario matches --filter {args.filter!r}")
    options.out_dir(args, "native-wheel")
    replace = args.replace
    try:
        build_dir = rundir.check_writable(args.build_dir or wheel.default_build_dir(), "--build-dir")
        result, data = wheel.run(chosen, build_dir, args.out, replace,
                                 say=lambda msg: print(f"mlx-vjpcheck native: {msg}", file=sys.stderr, flush=True))
    except (rundir.OutDirError, native_suite.NativeError) as e:
        raise UsageError(str(e))
    from . import terminal
    terminal.print_summary(result.records, data["summary"], args.out)
    for k in result.skipped:
        print(f"skipped {k['scenario']}: {k['reason']}")
    return 0 if result.records and all(r["status"] == "pass" for r in result.records) else 1
