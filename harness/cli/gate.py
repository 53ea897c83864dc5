"""build_and_test.py: validate the proposed MLX patch with the native suite.

    python3 build_and_test.py --mlx-source ~/mlx --mlx-build ~/mlx/build
    python3 build_and_test.py --mlx-source ~/mlx --mlx-build ~/mlx/build --fuzz 120

Pristine vs patched translation units of the checkout, run through the C++
suite (harness/native/gate.py does the work) over the scenario catalog and the
regression corpus (harness/regressions/), plus any --scenarios. With --fuzz,
the fuzzer drives both binaries' server mode instead (harness/native/fuzz.py).
Exit: 0 pristine reproduces every expected defect and patched passes everything
in scope (--fuzz: no in-scope finding against the patched units); 1 otherwise;
2 bad input, a failed compile/link, or an unexpected crash; 130 interrupted.
"""
from __future__ import annotations

import sys
import time

from ..cases import files
from ..native import gate as G
from ..native import suite as native_suite
from ..native.build import BuildError, Project
from . import options


def parser() -> options.Parser:
    p = options.Parser(prog="build_and_test.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--mlx-source", required=True, metavar="DIR", help="an MLX git checkout")
    p.add_argument("--mlx-build", required=True, metavar="DIR",
                   help="its existing static CMake build (compile_commands.json, libmlx.a)")
    p.add_argument("--patch", default=str(G.DEFAULT_PATCH), metavar="FILE",
                   help="unified diff against the checkout, one or more translation units "
                        "(default: patch/gather_vjp_sorted.diff)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="run directory (default: artifacts/native, with --fuzz artifacts/native-fuzz)")
    options.add_replace(p)
    p.add_argument("--opt", choices=("as-built", "O0"), default="as-built",
                   help="compile the touched units with the recorded flags, or at -O0")
    p.add_argument("--cache", metavar="DIR",
                   help="cache of the suite's and the pristine units' objects "
                        "(default: $MLX_VJPCHECK_CACHE or ~/.cache/mlx-vjpcheck/native-objects)")
    p.add_argument("--fresh", action="store_true", help="recompile everything, refreshing the cache")
    p.add_argument("--jobs", type=options.positive_int, metavar="N",
                   help="parallel compiles (default: CPU count)")
    p.add_argument("--scenarios", action="append", default=[], metavar="FILE|DIR",
                   help="more scenarios: a catalog file (mlx-vjpcheck catalog), a finding "
                        "(findings/<signature>.json), a regression entry, or a directory of them "
                        "such as a fuzz output directory (repeatable)")
    p.add_argument("--no-catalog", action="store_true",
                   help="leave out the catalog and the regression corpus (run --scenarios only)")
    p.add_argument("--fuzz", type=options.positive_float, metavar="SECONDS",
                   help="instead of the scenarios, fuzz the pristine and the patched binaries "
                        "side by side for SECONDS each (their server mode; float64 reference as oracle)")
    p.add_argument("--seed", type=int, default=0, help="--fuzz: random seed (default 0)")
    p.add_argument("--max-examples", type=options.positive_int, metavar="N",
                   help="--fuzz: case budget per binary")
    return p


def _merge(groups) -> list:
    """Entries in order; the same scenario given twice is kept once, a name reused for
    a different scenario is an error."""
    out, seen = [], {}
    for e in (e for g in groups for e in g):
        prev = seen.get(e.scenario.name)
        if prev is None:
            seen[e.scenario.name] = e
            out.append(e)
        elif prev.scenario != e.scenario:
            raise files.ScenarioFileError(f"scenario name {e.scenario.name!r} is used for two "
                                          f"different scenarios ({prev.source} and {e.source})")
    return out


def choose_entries(args, scenarios=None) -> list:
    """What the gate runs: catalog + corpus (unless --no-catalog) + --scenarios.
    `scenarios` (tests) replaces the catalog and the corpus."""
    groups = []
    if scenarios is not None:
        groups.append(files.catalog_entries(scenarios))
    elif not args.no_catalog:
        from ..cases import catalog
        groups += [files.catalog_entries(catalog.catalog()), files.regressions()]
    groups += [files.load_entries(p) for p in args.scenarios]
    entries = _merge(groups)
    if not entries:
        raise G.InputError("no scenarios to run (--no-catalog without --scenarios)")
    return entries


def _check_args(args):
    if args.fuzz is not None and (args.scenarios or args.no_catalog):
        raise G.InputError("--fuzz generates its own cases: it takes no --scenarios or --no-catalog")
    args.out = args.out or ("artifacts/native-fuzz" if args.fuzz is not None else "artifacts/native")


def gate_main(args, project: Project, scenarios) -> int:
    t_start = time.perf_counter()
    _check_args(args)
    entries = None if args.fuzz is not None else choose_entries(args, scenarios)
    corpus = files.regressions() if args.fuzz is not None else []
    gate = G.prepare(args.mlx_source, args.mlx_build, args.patch, args.opt, project,
                     cache=args.cache, jobs=args.jobs, fresh=args.fresh)
    try:
        G.rundir.check_target(args.out, "native-fuzz" if args.fuzz is not None else "native-gate",
                              args.replace)
    except G.rundir.OutDirError as e:
        raise G.InputError(str(e))
    print(f"patch touches: {', '.join(gate.touched)}", flush=True)
    if args.fuzz is not None:
        return fuzz_main(args, gate, corpus, t_start)
    outcome = G.run(gate, entries, args.out, args.replace)
    if "failed" in outcome:
        print(f"build_and_test: {outcome['failed']}", file=sys.stderr)
        return 2
    print_gate(outcome["comparison"])
    code, line = G.verdict(outcome["comparison"])
    print(f"build_and_test: {line}  ({time.perf_counter() - t_start:.1f} s)  ->  {args.out}",
          file=sys.stderr if code == 2 else sys.stdout)
    return code


def fuzz_main(args, gate, corpus, t_start) -> int:
    from pathlib import Path

    from ..native import fuzz as native_fuzz
    out_of_scope = {e.meta.get("signature"): e.reason for e in corpus if not e.in_scope}
    state = {}

    def body(tmp):
        built = G.build_binaries(gate)
        binaries = {v: exe for v, (exe, _) in built.items()}
        print(f"fuzzing {', '.join(binaries)} side by side for {args.fuzz:g} s each", flush=True)

        def log(cid, argv, rc, seconds, out, err):
            gate.rec.record(cid, argv, native_fuzz.ROOT, rc, seconds, out, err)
        try:
            outs = native_fuzz.side_by_side(binaries, gate.work, args.seed, args.fuzz,
                                            args.max_examples, log=log)
        except RuntimeError as e:
            raise G.StepFailed(str(e))
        import shutil
        campaigns = {}
        for v, d in outs.items():
            # The run directory's own manifest covers these files: no nested manifests.
            shutil.copytree(d, Path(tmp) / d.name, ignore=shutil.ignore_patterns(G.paths.MANIFEST))
            campaigns[v] = native_fuzz.load_campaign(d)
        summary = native_fuzz.cross_check(binaries, gate.work, outs, out_of_scope)
        native_fuzz.write_summary(tmp, summary, campaigns)
        state.update(summary=summary, campaigns=campaigns)
        return {}
    outcome = G.staged_run(gate, args.out, body, "native-fuzz", args.replace)
    if "failed" in outcome:
        print(f"build_and_test: {outcome['failed']}", file=sys.stderr)
        return 2
    print_fuzz(state["summary"], state["campaigns"])
    code, line = native_fuzz.verdict(state["summary"], state["campaigns"])
    print(f"build_and_test: {line}  ({time.perf_counter() - t_start:.1f} s)  ->  {args.out}")
    return code


# --- tables -------------------------------------------------------------------------

def _cell(status) -> str:
    from . import terminal
    return terminal._cell(status)


def print_gate(comp: dict) -> None:
    from rich.markup import escape
    from rich.table import Table

    from . import terminal
    c = terminal.console()
    rows = comp["rows"]
    units = ", ".join(comp["units"])
    main = [r for r in rows if r.get("source", "catalog") != "regression" and r.get("in_scope", True)]
    corpus = [r for r in rows if r.get("source") == "regression" and r.get("in_scope", True)]
    out = [r for r in rows if not r.get("in_scope", True)]
    if main:
        t = Table(title=f"native: pristine vs patched ({units})")
        for col in ("scenario", "expects defect", "pristine", "patched"):
            t.add_column(col, overflow="fold")
        for r in main:
            t.add_row(escape(r["scenario"]), "yes" if r["expects_defect"] else "", _cell(r["pristine"]),
                      _cell(r["patched"]))
        c.print(t)
    if corpus:
        t = Table(title="regression corpus: one minimal scenario per confirmed finding")
        for col in ("finding", "mlx 0.32.4 wheel", "pristine", "patched"):
            t.add_column(col, overflow="fold")
        for r in corpus:
            t.add_row(escape(r.get("signature") or r["scenario"]), _cell(r.get("recorded_pristine")),
                      _cell(r["pristine"]), _cell(r["patched"]))
        c.print(t)
    if out:
        t = Table(title="out of the patch's scope (not part of the verdict)")
        for col in ("finding", "pristine", "patched", "reason"):
            t.add_column(col, overflow="fold")
        for r in out:
            t.add_row(escape(r.get("signature") or r["scenario"]), _cell(r["pristine"]),
                      _cell(r["patched"]), escape(r.get("reason", "")))
        c.print(t)
    for k in comp.get("skipped", []):
        c.print(f"skipped {escape(k['scenario'])}: {escape(k['reason'])}")
    fp = comp.get("fast_path") or {}
    if any(fp.values()):
        says = lambda d: ", ".join(f"{op} {'yes' if on else 'NO'}" for op, on in sorted((d or {}).items())) or "?"  # noqa: E731
        c.print(f"right-sorted fast path (segmented matmul in the VJP): pristine {says(fp.get('pristine'))}; "
                f"patched {says(fp.get('patched'))}")


def print_fuzz(summary: dict, campaigns: dict) -> None:
    from rich.markup import escape
    from rich.table import Table

    from . import terminal
    c = terminal.console()
    t = Table(title="native fuzz: every finding on both binaries")
    for col in ("finding", "found by", "size", "pristine", "patched", "scope"):
        t.add_column(col, overflow="fold")
    for r in summary["rows"]:
        t.add_row(escape(r["signature"]), ", ".join(r["found_by"]), str(r["size"]),
                  _cell((r["pristine"] or {}).get("status")), _cell((r["patched"] or {}).get("status")),
                  "in scope" if r["in_scope"] else escape(f"out: {r['reason']}"))
    c.print(t)
    for v, info in campaigns.items():
        st = info["stats"]
        c.print(f"{v}: {st['cases']} cases in {st['elapsed_s']:.1f} s ({st['cases_per_s']} cases/s), "
                f"{st['invalid']} rejected by the forward or skipped, {len(info['findings'])} findings, "
                f"server started {info.get('server_starts', 1)}x")
        for k in info.get("skipped", []):
            c.print(f"  skipped {k['cases']} cases: {escape(k['reason'])}")


def main(argv=None, project: Project | None = None, scenarios=None) -> int:
    """The command line; `project` and `scenarios` let the tests drive a fixture library."""
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:   # --help, or a usage error already told in one line
        return int(e.code or 0)
    try:
        options.require("numpy", "rich", what="build_and_test.py")   # before any work
        return gate_main(args, project or G.nb.MLX, scenarios)
    except (G.InputError, BuildError, native_suite.NativeError, files.ScenarioFileError,
            options.UsageError) as e:
        print(f"build_and_test: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return options.interrupted("build_and_test")
