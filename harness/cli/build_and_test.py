"""build_and_test.py: validate the proposed MLX patch with the native suite.

    python3 build_and_test.py --mlx-source ~/mlx --mlx-build ~/mlx/build

Pristine vs patched translation units of the checkout, run through the C++
suite (harness/native/gate.py does the work). Exit: 0 pristine reproduces
every expected defect and patched passes everything; 1 otherwise; 2 bad
input, a failed compile/link, or a crash.
"""
from __future__ import annotations

import argparse
import sys
import time

from ..native import gate as G
from ..native import suite as native_suite
from ..native.build import BuildError, Project


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="build_and_test.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--mlx-source", required=True, metavar="DIR", help="an MLX git checkout")
    p.add_argument("--mlx-build", required=True, metavar="DIR",
                   help="its existing static CMake build (compile_commands.json, libmlx.a)")
    p.add_argument("--patch", default=str(G.DEFAULT_PATCH), metavar="FILE",
                   help="unified diff against the checkout (default: patch/gather_vjp_sorted.diff)")
    p.add_argument("--out", default="artifacts/native", metavar="DIR", help="run directory")
    p.add_argument("--opt", choices=("as-built", "O0"), default="as-built",
                   help="compile the touched units with the recorded flags, or at -O0")
    p.add_argument("--cache", metavar="DIR",
                   help="cache of the suite's and the pristine units' objects "
                        "(default: $MLX_VJPCHECK_CACHE or ~/.cache/mlx-vjpcheck/native-objects)")
    p.add_argument("--fresh", action="store_true", help="recompile everything, refreshing the cache")
    p.add_argument("--jobs", type=int, metavar="N", help="parallel compiles (default: CPU count)")
    return p


def gate_main(args, project: Project, scenarios) -> int:
    t_start = time.perf_counter()
    gate = G.prepare(args.mlx_source, args.mlx_build, args.patch, args.opt, project,
                     cache=args.cache, jobs=args.jobs, fresh=args.fresh)
    try:
        G.rundir.check_target(args.out)
    except G.rundir.OutDirError as e:
        raise G.InputError(str(e))
    if scenarios is None:
        from ..cases import catalog
        scenarios = catalog.catalog()
    print(f"patch touches: {', '.join(gate.touched)}", flush=True)
    outcome = G.run(gate, scenarios, args.out)
    if "failed" in outcome:
        print(f"build_and_test: {outcome['failed']}", file=sys.stderr)
        return 2
    from . import terminal
    terminal.print_native(outcome["comparison"])
    code, line = G.verdict(outcome["comparison"])
    print(f"build_and_test: {line}  ({time.perf_counter() - t_start:.1f} s)  ->  {args.out}",
          file=sys.stderr if code == 2 else sys.stdout)
    return code


def main(argv=None, project: Project | None = None, scenarios=None) -> int:
    """The command line; `project` and `scenarios` let the tests drive a fixture library."""
    args = parser().parse_args(argv)
    try:
        return gate_main(args, project or G.nb.MLX, scenarios)
    except (G.InputError, BuildError, native_suite.NativeError) as e:
        print(f"build_and_test: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("build_and_test: interrupted", file=sys.stderr)
        return 2
