"""`mlx-vjpcheck native` (or `python -m harness.native_wheel`): the C++ suite
against the installed wheel, written as an ordinary run directory.

Builds native/ with find_package(MLX) from `python -m mlx --cmake-dir` (the
build dir is reused), runs every catalog scenario the suite supports on the
CPU, and writes results.json (kind "native-wheel"), environment.json and
commands.json with logs. Exit 0 all pass, 1 any other status, 2 bad input.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from . import atomic, catalog, environment, native_build, native_suite, report, rundir, selection

DEFAULT_BUILD = native_suite.NATIVE_DIR / "build-wheel"


class UsageError(Exception):
    """One line, exit 2 (mirrors harness.cli.UsageError without importing the CLI)."""


def add_parser(sub, name):
    p = sub.add_parser(name, help="run the native C++ suite against the installed MLX wheel")
    _arguments(p)
    p.set_defaults(func=main)
    return p


def _arguments(p):
    p.add_argument("--filter", metavar="PATTERN", help="glob or substring of scenario names")
    p.add_argument("--out", metavar="DIR", default="artifacts/native-wheel", help="run directory")
    p.add_argument("--build-dir", metavar="DIR", default=str(DEFAULT_BUILD),
                   help="CMake build directory for the suite (reused between runs)")


def _fail(msg):
    try:
        from .cli import UsageError as CliUsage   # exit 2 through the CLI when run from it
    except ImportError:  # pragma: no cover
        CliUsage = UsageError
    raise CliUsage(msg)


def main(args) -> int:
    chosen = selection.select(catalog.catalog(), args.filter)
    if not chosen:
        _fail(f"no scenario matches --filter {args.filter!r}")
    try:
        rundir.check_target(args.out)
    except rundir.OutDirError as e:
        _fail(str(e))
    log = []
    try:
        binary = native_suite.build_wheel(args.build_dir, log=log)
    except native_suite.NativeError as e:
        _fail(str(e))
    with rundir.staged(args.out) as tmp, tempfile.TemporaryDirectory(prefix="vjpcheck-") as w:
        rec = native_build.Recorder(tmp)
        for n, step in enumerate(log, 1):
            rec.replay(f"build-{n}", step, cached=False)
        input_path = native_suite.write_input(chosen, Path(w) / "scenarios.json")
        shutil.copyfile(input_path, tmp / "scenarios.json")   # the binary's exact input, kept

        def execute(argv):
            e = rec.run(f"run-{len(rec.entries) - len(log) + 1}", argv, Path.cwd())
            return (e["exit_code"], (tmp / e["stdout"]).read_text(encoding="utf-8"),
                    (tmp / e["stderr"]).read_text(encoding="utf-8"))
        run = native_suite.run_binary(binary, input_path, execute=execute)
        env = environment.record(None)
        data = native_suite.results_for(chosen, run, env, "native-wheel")
        atomic.write_json(tmp / "results.json", data)
        atomic.write_json(tmp / "environment.json", env)
        rec.save()
    report.print_summary(run.records, data["summary"], args.out)
    for k in run.skipped:
        print(f"skipped {k['scenario']}: {k['reason']}")
    return 0 if run.records and all(r["status"] == "pass" for r in run.records) else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m harness.native_wheel", description=__doc__.split("\n\n")[0])
    _arguments(parser)
    try:
        sys.exit(main(parser.parse_args()))
    except Exception as e:  # only the one-line usage errors get here by design
        if type(e).__name__ != "UsageError":
            raise
        print(f"native: {e}", file=sys.stderr)
        sys.exit(2)
