"""build_and_test.py: gate a patch to MLX, pristine against patched, through
everything this project checks.

    python3 build_and_test.py --mlx-source ~/mlx --mlx-build ~/mlx/build
    python3 build_and_test.py --mlx-source ~/mlx --mlx-build ~/mlx/build --fuzz 120
    python3 build_and_test.py --mlx-source ~/mlx --mlx-build ~/mlx/build --replay artifacts/native

The touched units are compiled pristine and patched and linked ahead of the
build's static libmlx.a twice, each time into MLX's Python package, MLX's C++
test binary and this project's C++ suite (harness/gate/). Both builds
then run every scenario of every op (catalog, regression corpus, --scenarios),
the C++ suite, and MLX's own Python and C++ tests. With --fuzz, the Python
fuzzer searches both builds instead (harness/gate/pyfuzz.py); with --replay,
the recorded gate evidence is rebuilt and run again (harness/gate/replay.py).

Exit: 0 when pristine reproduces every expected defect of the ops in the
patch's scope, patched passes all their scenarios, nothing pristine passes
fails patched (scenarios and MLX tests), and the patch changes something
(--fixes none accepts a patch that changes nothing); with --fuzz, no finding
against the patched build that is in scope or new; 1 otherwise; 2 bad input,
a failed compile or link, or a build that cannot run; 130 interrupted.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from ..cases import files
from ..evidence import paths, rundir
from ..gate import build as GB
from ..gate import compare as GC
from ..gate import inputs as GI
from ..gate import run as GR
from ..native import build as nb
from ..native import suite as native_suite
from ..native.build import BuildError, Project
from . import options

MLX_TESTS = ("python", "cpp")


def parser() -> options.Parser:
    p = options.Parser(prog="build_and_test.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--mlx-source", required=True, metavar="DIR", help="an MLX git checkout")
    p.add_argument("--mlx-build", required=True, metavar="DIR",
                   help="its existing static CMake build (compile_commands.json, libmlx.a)")
    p.add_argument("--patch", default=str(GI.DEFAULT_PATCH), metavar="FILE",
                   help="unified diff against the checkout (translation units of libmlx, of the "
                        "bindings (python/src) or of the C++ tests, and python/mlx sources), or a "
                        "series file listing such diffs to apply in order (default: patch/series "
                        "when it exists, else patch/gather_vjp_sorted.diff)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="run directory (default: artifacts/native, with --fuzz artifacts/native-fuzz, "
                        "with --replay artifacts/native-replay)")
    options.add_replace(p)
    p.add_argument("--opt", choices=("as-built", "O0"), default="as-built",
                   help="compile the touched units with the recorded flags, or at -O0")
    p.add_argument("--cache", metavar="DIR",
                   help="where compiled objects, the bindings build and linked builds are kept "
                        "(default: $MLX_VJPCHECK_CACHE or ~/.cache/mlx-vjpcheck)")
    p.add_argument("--fresh", action="store_true", help="recompile and relink everything, refreshing the cache")
    p.add_argument("--jobs", type=options.positive_int, metavar="N",
                   help="parallel compiles, links and suites (default: CPU count)")
    p.add_argument("--scenarios", action="append", default=[], metavar="FILE|DIR",
                   help="more scenarios: a catalog file (mlx-vjpcheck catalog), a finding "
                        "(findings/<signature>.json), a regression entry, or a directory of them "
                        "such as a fuzz output directory (repeatable)")
    p.add_argument("--no-catalog", action="store_true",
                   help="leave out the catalog and the regression corpus (run --scenarios only)")
    p.add_argument("--fixes", metavar="OPS",
                   help="comma-separated ops whose known defects the patch must fix (pristine fails "
                        "each expected defect, patched passes every scenario of them), or 'none'; "
                        "default: the ops whose scenarios change, and both of gather_mm, gather_qmm "
                        "when one of them does")
    p.add_argument("--mlx-tests", default="python,cpp", metavar="LIST",
                   help="MLX's own tests to run on both builds: python, cpp, both (default) or none")
    p.add_argument("--mlx-tests-filter", metavar="PATTERN",
                   help="only MLX tests whose id matches (a glob with * ? [, else a substring)")
    p.add_argument("--no-sweep", action="store_true",
                   help="leave out the sweep's registered reproducers (probes/sweep/, run once on each build "
                        "by default: exit 1 -> 0 is fixed, 0 -> 1 a regression)")
    p.add_argument("--hang-timeout", type=options.positive_float, default=GI.HANG_S, metavar="SECONDS",
                   help="a scenario or MLX test that shows no progress for this long is killed and "
                        f"recorded as crashed, and the run goes on (default {GI.HANG_S:g})")
    p.add_argument("--native-only", action="store_true",
                   help="only the C++ suite (gather_mm, gather_qmm): no Python bindings, harness or MLX tests")
    p.add_argument("--fuzz", type=options.positive_float, metavar="SECONDS",
                   help="instead of the scenarios, fuzz the pristine and the patched builds side by "
                        "side for SECONDS each with the Python fuzzer (every oracle of `mlx-vjpcheck fuzz`)")
    p.add_argument("--fuzz-ops", metavar="LIST", help="--fuzz: ops to fuzz (default: every fuzzable op)")
    p.add_argument("--seed", type=int, default=0, help="--fuzz: random seed (default 0)")
    p.add_argument("--max-examples", type=options.positive_int, metavar="N",
                   help="--fuzz: case budget per build")
    p.add_argument("--allow-drift", action="store_true",
                   help="--replay: rebuild although the evidence was recorded on another machine (Python, "
                        "numpy, compiler, system or CPU architecture); the output says so")
    p.add_argument("--replay", metavar="EVIDENCE",
                   help="rebuild the builds a gate run directory (or bundle) recorded, from its commit "
                        "and patch, run its scenarios and MLX tests again and say per record whether it "
                        "reproduced")
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
        raise GI.InputError("no scenarios to run (--no-catalog without --scenarios)")
    return entries


def _stages(args) -> tuple:
    chosen = [t.strip() for t in args.mlx_tests.split(",") if t.strip()]
    if chosen == ["none"]:
        chosen = []
    elif chosen == ["both"] or chosen == ["all"]:
        chosen = list(MLX_TESTS)
    bad = [t for t in chosen if t not in MLX_TESTS]
    if bad:
        raise GI.InputError(f"--mlx-tests {args.mlx_tests}: unknown {', '.join(bad)} "
                           "(give python, cpp, both or none)")
    if args.native_only:
        return ("native",)
    return ("harness", "native") + tuple(f"mlx-{t}" for t in MLX_TESTS if t in chosen)


def _fixes(args, project: Project):
    if args.fixes is None:
        return None
    if args.fixes.strip().lower() == "none":
        return "none"
    ops = [o.strip() for o in args.fixes.split(",") if o.strip()]
    from .. import ops as registry
    known = set(registry.names()) if hasattr(registry, "names") else {o.name for o in registry.registry()}
    bad = [o for o in ops if o not in known]
    if bad or not ops:
        raise GI.InputError(f"--fixes {args.fixes}: unknown op {', '.join(bad) or '(none)'} "
                           f"(known: {', '.join(sorted(known))}, or 'none')")
    return ops


def _check_args(args):
    modes = [m for m, on in (("--fuzz", args.fuzz is not None), ("--replay", args.replay is not None)) if on]
    if len(modes) > 1:
        raise GI.InputError("--fuzz and --replay are separate runs: give one")
    if modes and (args.scenarios or args.no_catalog):
        raise GI.InputError(f"{modes[0]} takes no --scenarios or --no-catalog")
    if args.fuzz is None and (args.fuzz_ops or args.max_examples):
        raise GI.InputError("--fuzz-ops and --max-examples go with --fuzz")
    args.out = args.out or ("artifacts/native-fuzz" if args.fuzz is not None else
                            "artifacts/native-replay" if args.replay is not None else "artifacts/native")


def say(msg: str) -> None:
    print(f"build_and_test: {msg}", flush=True)


def gate_main(args, project: Project, scenarios) -> int:
    t_start = time.perf_counter()
    _check_args(args)
    stages = _stages(args)
    fixes = _fixes(args, project)
    if args.replay is not None:
        from ..gate import replay as gate_replay
        from ..validation import evidence as validator
        return gate_replay.main(args, project, say, validator.check)
    entries = None if args.fuzz is not None else choose_entries(args, scenarios)
    if args.fuzz is not None:
        stages = ("harness",) if project.bindings else ("native",)
    gate = GI.prepare(args.mlx_source, args.mlx_build, args.patch, args.opt, project,
                     cache=args.cache, jobs=args.jobs, fresh=args.fresh, stages=stages,
                     mlx_tests_filter=args.mlx_tests_filter)
    gate.say = say
    gate.hang_s = args.hang_timeout
    kind = "native-fuzz" if args.fuzz is not None else "native-gate"
    try:
        rundir.check_target(args.out, kind, args.replace)
    except rundir.OutDirError as e:
        raise GI.InputError(str(e))
    print(f"patch touches: {', '.join(gate.touched)}", flush=True)
    if args.fuzz is not None:
        if project.bindings:
            return fuzz_main(args, gate, fixes, t_start)
        return fuzz_native_main(args, gate, t_start)
    gate.fixes = fixes
    gate.sweep = not args.no_sweep
    outcome = GR.run(gate, entries, args.out, args.replace)
    if "failed" in outcome:
        print(f"build_and_test: {outcome['failed']}", file=sys.stderr)
        return 2
    v = GC.overall_full(outcome, fixes)
    code, scope, lines = v["exit"], v["scope"], v["lines"]
    print_gate(outcome, scope, v["judged"])
    seconds = time.perf_counter() - t_start
    for line in lines:
        print(f"build_and_test: {line}")
    print(f"build_and_test: {'PASSED' if code == 0 else 'FAILED'} ({seconds:.1f} s)  ->  {args.out}")
    return code


def fuzz_main(args, gate, fixes, t_start) -> int:
    """--fuzz: the Python fuzzer against both builds (harness/gate/pyfuzz.py)."""
    from ..gate import pyfuzz
    state = pyfuzz.run(args, gate, fixes, say)
    return _fuzz_report(state.get("failed"), state, pyfuzz.verdict, args, t_start)


def _fuzz_report(failed, state: dict, verdict, args, t_start) -> int:
    """Both fuzz modes end alike: a failed step (exit 2), else the tables and the verdict line."""
    if failed:
        print(f"build_and_test: {failed}", file=sys.stderr)
        return 2
    print_fuzz(state["summary"], state["campaigns"])
    code, line = verdict(state["summary"], state["campaigns"])
    print(f"build_and_test: {line}  ({time.perf_counter() - t_start:.1f} s)  ->  {args.out}")
    return code


def fuzz_native_main(args, gate, t_start) -> int:
    """--fuzz on a project without bindings: the native suite's server mode."""

    from ..native import fuzz as native_fuzz
    corpus = files.regressions()
    out_of_scope = {e.meta.get("signature"): e.reason for e in corpus if not e.in_scope}
    state = {}

    def body(tmp):
        built = GB.build_variants(gate)
        binaries = {v: b.suite_binary for v, b in built.items()}
        say(f"fuzzing {', '.join(binaries)} side by side for {args.fuzz:g} s each")

        def log(cid, argv, rc, seconds, out, err):
            gate.rec.record(cid, argv, native_fuzz.ROOT, rc, seconds, out, err)
        try:
            outs = native_fuzz.side_by_side(binaries, gate.work, args.seed, args.fuzz,
                                            args.max_examples, log=log, checkout=gate.src)
        except RuntimeError as e:
            raise GI.StepFailed(str(e))
        import shutil
        campaigns = {}
        for v, d in outs.items():
            shutil.copytree(d, Path(tmp) / d.name, ignore=shutil.ignore_patterns(paths.MANIFEST))
            campaigns[v] = native_fuzz.load_campaign(d)
        summary = native_fuzz.cross_check(binaries, gate.work, outs, out_of_scope)
        native_fuzz.write_summary(tmp, summary, campaigns)
        state.update(summary=summary, campaigns=campaigns)
        return {}
    outcome = GR.staged_run(gate, args.out, body, "native-fuzz", args.replace)
    return _fuzz_report(outcome.get("failed"), state, native_fuzz.verdict, args, t_start)


# --- tables -------------------------------------------------------------------------

def _cell(status) -> str:
    from . import terminal
    return terminal._cell(status)


def _scenario_table(title, rows, fails=None, with_signature=False, why=None):
    from rich.markup import escape
    from rich.table import Table
    t = Table(title=title)
    for col in ("scenario", "op", "expects defect", "pristine", "patched", "patched fails", "verdict"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(escape(r.get("signature") or r["scenario"] if with_signature else r["scenario"]),
                  escape(r.get("op", "")), "yes" if r["expects_defect"] else "", _cell(r["pristine"]),
                  _cell(r["patched"]), escape(", ".join((fails or {}).get(r["scenario"], {}).get("patched") or ())),
                  escape((why or {}).get(r["scenario"], "")))
    return t


def print_comparison(comp: dict, scope: dict, what: str, judged: dict, fails=None) -> None:
    """One table for the suite: per op in scope or changed (and the rest summed), how many
    scenarios pass on each build and what the verdict made of them; the full lists are in
    gate.json's "verdict" (and comparison.json per scenario). Then the rows that fail the
    verdict, one each."""
    from rich.markup import escape
    from rich.table import Table

    from . import terminal
    c = terminal.console()
    units = ", ".join(comp.get("units", []))
    t = Table(title=f"{what}: pristine vs patched, per op ({escape(units)})")
    cols = (("op", "op"), ("runs", "scenarios"), ("pass pristine", "pass_pristine"),
            ("pass patched", "pass_patched"), ("fixed", "fixed"), ("regressed", "regressed"),
            ("held: pass/all", None), ("changed, not fixed", "changed_not_fixed"),
            ("both fail", "pre_existing"), ("flaky", "flaky"))
    for name, _ in cols:
        t.add_column(name, overflow="fold")
    for row in GC.op_table(comp, scope, judged):
        t.add_row(*[escape(str(row[k])) if k else (f"{row['held_passing']}/{row['held']}" if row["held"] else "")
                    for _, k in cols])
    c.print(t)
    bad = {n: why for why, names in (("regressed", judged["regressed"]), ("not passing patched", judged["unfixed"]),
                                     ("changed, not fixed", judged["changed_not_fixed"]),
                                     ("not reproduced on pristine", judged["missed"])) for n in names}
    if bad:
        c.print(_scenario_table(f"{what}: the scenarios that fail the verdict",
                                [r for r in comp["rows"] if r["scenario"] in bad], fails, why=bad))
    out = [r for r in comp["rows"] if r.get("source") == "regression" and not r.get("in_scope", True)
           and r.get("op") in set(scope["ops"])]
    if out:   # the corpus says why these are not the patch's: said, not counted silently
        c.print(escape(f"{what}: regression-corpus entries of the scope's ops outside the patch's scope: "
                       + "; ".join(f"{r.get('signature') or r['scenario']} ({r['pristine']} -> {r['patched']}): "
                                   f"{r.get('reason', '')}" for r in out)), soft_wrap=True)
    for k in comp.get("skipped", []):
        if what == "native" and not k["reason"].startswith("op "):
            c.print(f"skipped {escape(k['scenario'])}: {escape(k['reason'])}")
    n_skipped = len(comp.get("skipped", []))
    if n_skipped and what == "native":
        c.print(f"native: {n_skipped} scenarios of other ops are not implemented by the C++ suite "
                "(the harness ran them through the bindings)")
    fp = comp.get("fast_path") or {}
    if any(fp.values()):
        says = lambda d: ", ".join(f"{op} {'yes' if on else 'NO'}" for op, on in sorted((d or {}).items())) or "?"  # noqa: E731
        c.print(f"right-sorted fast path (segmented matmul in the VJP): pristine {says(fp.get('pristine'))}; "
                f"patched {says(fp.get('patched'))}")


def print_mlx_tests(doc: dict, reruns: dict | None = None) -> None:
    from rich.markup import escape
    from rich.table import Table

    from ..judging import gate_verdict
    from . import terminal
    c = terminal.console()
    t = Table(title="MLX's own tests: pristine vs patched, per suite (each test in mlx-tests.json)")
    for col in ("suite", "tests", "pass pristine", "pass patched", "fixed", "pass -> fail", "changed",
                "missing", "fail on both (pre-existing)"):
        t.add_column(col)
    for suite in dict.fromkeys(r["suite"] for r in doc["rows"]):
        rs = [r for r in doc["rows"] if r["suite"] == suite]
        n = lambda ch: str(sum(r["change"] == ch for r in rs))  # noqa: E731
        t.add_row(suite, str(len(rs)), str(sum(r["pristine"] in gate_verdict.GOOD for r in rs)),
                  str(sum(r["patched"] in gate_verdict.GOOD for r in rs)), n("fixed"), n("regression"),
                  n("changed"), n("missing"), n("pre-existing"))
    c.print(t)
    rows = [r for r in doc["rows"] if r["change"] in ("regression", "fixed", "changed", "missing")]
    if rows:
        t = Table(title="MLX's own tests whose outcome changed")
        for col in ("suite", "test", "pristine", "patched", "change", "reruns (pristine; patched)", "detail"):
            t.add_column(col, overflow="fold")
        for r in rows:
            seen = (reruns or {}).get(gate_verdict.mlx_key(r))
            change = "flaky" if gate_verdict.mlx_flaky(r, reruns) else r["change"]
            t.add_row(r["suite"], escape(r["test"]), r["pristine"] or "-", r["patched"] or "-", change,
                      escape(f"{', '.join(map(str, seen['pristine']))}; {', '.join(map(str, seen['patched']))}")
                      if seen else "", escape((r.get("detail") or "")[:120]))
        c.print(t)


def print_gate(outcome: dict, scope: dict, judged: dict | None = None) -> None:
    """One pristine-vs-patched table per suite (`judged`: overall_full's, else derived)."""
    info = outcome.get("gate") or {}
    fails = info.get("failing") or {}
    judged = judged if judged is not None else GC.overall_full(outcome, None)["judged"]
    if outcome.get("comparison"):
        print_comparison(outcome["comparison"], scope, "harness", judged["harness"], fails.get("harness"))
    if outcome.get("native_comparison"):
        print_comparison(outcome["native_comparison"], scope, "native", judged["native"], fails.get("native"))
    if outcome.get("mlx_tests"):
        print_mlx_tests(outcome["mlx_tests"], info.get("mlx_test_reruns"))
    if info.get("sweep_reproducers"):
        print_sweep(info["sweep_reproducers"])


def print_sweep(doc: dict) -> None:
    """The sweep's registered reproducers: exit code on each build, one row each."""
    from rich.markup import escape
    from rich.table import Table

    from . import terminal
    t = Table(title="sweep reproducers (probes/sweep): pristine vs patched exit codes (1 present, 0 absent)")
    for col in ("reproducer", "pristine", "patched", "change"):
        t.add_column(col, overflow="fold")
    for r in doc.get("rows", []):
        t.add_row(escape(r["reproducer"]), str(r["pristine"]), str(r["patched"]), r["change"] or "same")
    terminal.console().print(t)


def print_fuzz(summary: dict, campaigns: dict) -> None:
    from rich.markup import escape
    from rich.table import Table

    from . import terminal
    c = terminal.console()
    t = Table(title="fuzz: every finding on both builds")
    for col in ("finding", "found by", "size", "pristine", "patched", "verdict"):
        t.add_column(col, overflow="fold")
    for r in summary["rows"]:
        t.add_row(escape(r["signature"]), ", ".join(r["found_by"]), str(r["size"]),
                  _cell((r["pristine"] or {}).get("status")), _cell((r["patched"] or {}).get("status")),
                  escape(r.get("verdict") or ("in scope" if r.get("in_scope") else f"out: {r.get('reason', '')}")))
    c.print(t)
    for v, info in campaigns.items():
        st = info["stats"]
        c.print(f"{v}: {st['cases']} cases in {st['elapsed_s']:.1f} s ({st['cases_per_s']} cases/s), "
                f"{st['invalid']} rejected by the forward or skipped, {len(info.get('findings', []))} findings")
        for k in info.get("skipped", []):
            c.print(f"  skipped {k['cases']} cases: {escape(k['reason'])}")


def _terminate_as_interrupt():
    """SIGTERM (a CI job cancelled, `kill`) ends the gate as Ctrl-C does: running commands
    stopped, no half-written run directory or cache entry, one line, exit 130. Returns
    the handler it replaced (None off the main thread)."""
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread():
        return None

    def _raise(signum, frame):
        raise KeyboardInterrupt
    return signal.signal(signal.SIGTERM, _raise)


def add_parser(sub, name):
    """`mlx-vjpcheck gate ...`: build_and_test.py's command line, as a subcommand of the
    installed tool (its options are build_and_test.py's; `mlx-vjpcheck gate --help`)."""
    # (cli/main.py hands `gate`'s arguments to main() before its own parser sees them;
    # this entry is what `mlx-vjpcheck --help` lists)
    p = sub.add_parser(name, add_help=False,
                       help="gate a patch to MLX: pristine against patched, through everything this project "
                            "checks (build_and_test.py's options)")
    p.set_defaults(func=lambda args: main([]))


def main(argv=None, project: Project | None = None, scenarios=None) -> int:
    """The command line; `project` and `scenarios` let the tests drive a fixture library."""
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:   # --help, or a usage error already told in one line
        return int(e.code or 0)
    previous = None
    try:
        options.require("numpy", "rich", what="build_and_test.py")   # before any work
        previous = _terminate_as_interrupt()
        return gate_main(args, project or nb.MLX, scenarios)
    except (GI.InputError, BuildError, native_suite.NativeError, files.ScenarioFileError,
            options.UsageError) as e:
        print(f"build_and_test: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return options.interrupted("build_and_test")
    finally:
        if previous is not None:
            import signal
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
