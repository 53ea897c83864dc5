"""`mlx-vjpcheck run`: every catalog scenario on every available device."""
from __future__ import annotations

from pathlib import Path

from ..cases import catalog, selection
from ..core.errors import UsageError
from ..evidence import atomic, junit, paths, results, rundir
from ..running import devices, environment, runner


def add_parser(sub, name):
    p = sub.add_parser(name, help="run the differential suite and write results.json")
    p.add_argument("--device", choices=("cpu", "gpu", "all"),
                   help="default: $MLX_VJPCHECK_DEVICE or all available")
    p.add_argument("--filter", metavar="PATTERN", help="glob or substring of scenario names")
    p.add_argument("--out", metavar="DIR", default="artifacts/run", help="run directory")
    p.add_argument("--junitxml", metavar="FILE",
                   help="also write JUnit XML here: one testcase per scenario and device")
    p.set_defaults(func=main)


def resolve_devices(requested):
    try:
        return devices.resolve(requested)
    except ImportError:
        raise UsageError("mlx is not installed: pip install 'mlx[cpu]' (Linux) or mlx (macOS)")
    except devices.DeviceError as e:
        raise UsageError(str(e))


def main(args) -> int:
    from . import terminal
    chosen = selection.select(catalog.catalog(), args.filter)
    if not chosen:
        raise UsageError(f"no scenario matches --filter {args.filter!r}")
    devs = resolve_devices(args.device)
    try:
        rundir.check_target(args.out)
    except rundir.OutDirError as e:
        raise UsageError(str(e))
    if args.junitxml and Path(args.junitxml).is_dir():
        raise UsageError(f"--junitxml {args.junitxml} is a directory")
    with terminal.progress(len(chosen) * len(devs)) as tick:
        records = runner.run(chosen, devs, on_record=tick)
    env = environment.record(devs)
    env["skipped_devices"] = devices.skipped(devs)
    data = results.build(chosen, records, env)
    with rundir.staged(args.out) as tmp:
        atomic.write_json(Path(tmp) / paths.RESULTS, data)
        atomic.write_json(Path(tmp) / paths.ENVIRONMENT, env)
    if args.junitxml:
        junit.write(args.junitxml, records, {"mlx": env.get("mlx"), "results": f"{args.out}/{paths.RESULTS}"})
    terminal.print_summary(records, data["summary"], args.out)
    for dev, why in env["skipped_devices"].items():
        terminal.console().print(f"{dev}: skipped ({why})")
    return results.exit_code(records)
