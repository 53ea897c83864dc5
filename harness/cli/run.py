"""`mlx-vjpcheck run`: every catalog scenario on every available device."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from ..cases import catalog, selection
from ..core.errors import UsageError
from ..evidence import atomic, junit, paths, results, rundir
from ..running import devices, environment, runner
from . import options


def add_parser(sub, name):
    p = sub.add_parser(name, help="run the differential suite and write results.json")
    p.add_argument("--device", choices=("cpu", "gpu", "all"),
                   help="cpu, gpu or all (default: $MLX_VJPCHECK_DEVICE, else every device this MLX has)")
    p.add_argument("--filter", metavar="PATTERN",
                   help="only scenarios whose name matches: a glob when it has * ? [, else a substring")
    p.add_argument("--scenarios", metavar="FILE|DIR",
                   help="run these scenarios instead of the catalog: a catalog JSON, a fuzz finding, a "
                        "regression entry, or a directory of them (a fuzz output directory works as it is)")
    p.add_argument("--with-catalog", action="store_true", help="with --scenarios: run the catalog as well")
    options.add_out(p, "artifacts/run")
    p.add_argument("--jobs", type=options.positive_int, default=runner.default_jobs(),
                   help="worker processes side by side (default: one per CPU)")
    p.add_argument("--junitxml", metavar="FILE",
                   help="also write JUnit XML here: one testcase per scenario and device")
    p.set_defaults(func=main)


def resolve_devices(requested):
    try:
        return devices.resolve(requested)
    except ImportError:
        raise UsageError("mlx is not installed: " + options.INSTALL["mlx"]) from None
    except devices.DeviceError as e:
        raise UsageError(str(e)) from None


def scenarios_of(args) -> list:
    """The catalog, or the scenarios of --scenarios (with the catalog too if asked)."""
    if not args.scenarios:
        if args.with_catalog:
            raise UsageError("--with-catalog goes with --scenarios")
        return catalog.catalog()
    from ..cases import files
    try:
        extra = files.load(args.scenarios)
    except files.ScenarioFileError as e:
        raise UsageError(str(e)) from None
    base = catalog.catalog() if args.with_catalog else []
    clash = sorted({s.name for s in base} & {s.name for s in extra})
    if clash:
        raise UsageError(f"--scenarios {args.scenarios}: {clash[0]!r} is also a catalog scenario")
    return base + extra


def check(args) -> tuple:
    """Every input and output, before any scenario runs: (scenarios, devices)."""
    options.require("numpy", "rich", what="mlx-vjpcheck run")
    chosen = selection.select(scenarios_of(args), args.filter)
    if not chosen:
        raise UsageError(f"no scenario matches --filter {args.filter!r}")
    devs = resolve_devices(args.device)
    options.out_dir(args, "run")
    if args.junitxml:
        if Path(args.out).resolve() in Path(args.junitxml).resolve().parents:
            raise UsageError(f"--junitxml {args.junitxml} lies inside --out {args.out}, which is written whole")
        options.out_file(args.junitxml, "junit", args.replace, "--junitxml")
    return chosen, devs


def main(args) -> int:
    chosen, devs = check(args)
    from . import terminal
    try:
        with terminal.progress(len(chosen) * len(devs)) as tick:
            records = runner.run(chosen, devs, on_record=tick, jobs=args.jobs)
    except runner.WorkerError as e:
        raise UsageError(str(e)) from None
    env = environment.record(devs)
    env["skipped_devices"] = devices.skipped(devs)
    prov = environment.provenance(["mlx-vjpcheck", *sys.argv[1:]],
                                  {"filter": args.filter, "scenarios": args.scenarios}, catalog.digest())
    data = results.build(chosen, records, env, provenance=prov)
    pending = None
    try:
        with rundir.staged(args.out, "run", args.replace) as tmp:
            atomic.write_json(Path(tmp) / paths.RESULTS, data)
            atomic.write_json(Path(tmp) / paths.ENVIRONMENT, env)
            if args.junitxml:   # written beside its target now, renamed with the run directory
                pending = atomic.prepare(args.junitxml, junit.render(
                    records, {"mlx": env.get("mlx"), "results": f"{args.out}/{paths.RESULTS}"}).encode())
        if pending:
            os.replace(pending, args.junitxml)
            pending = None
    finally:
        if pending:
            os.unlink(pending)
    terminal.print_summary(records, data["summary"], args.out)
    for dev, why in env["skipped_devices"].items():
        terminal.console().print(f"{dev}: skipped ({terminal.escape(why)})")
    return results.exit_code(records)
