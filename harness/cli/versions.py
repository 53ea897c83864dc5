"""`mlx-vjpcheck versions`: which MLX releases carry each defect, and the first affected.

Exit codes: 0 every release x probe decided (present or absent); 1 the table
is written but some release could not be installed or some probe could not
test; 2 usage error, or nothing could run at all.
"""
from __future__ import annotations

import os
import platform
import sys
import time

from ..core.errors import UsageError
from ..evidence import rundir
from ..running import environment
from ..versions import matrix as V
from . import options

STYLE = {V.PRESENT: "red", V.ABSENT: "green", V.CANNOT: "yellow"}


def add_parser(sub, name):
    p = sub.add_parser(name, help="run the probes against every released MLX version")
    p.add_argument("--from", dest="lo", metavar="V",
                   help="oldest release to test, inclusive (default: the oldest offered for this platform)")
    p.add_argument("--to", dest="hi", metavar="V",
                   help="newest release to test, inclusive (default: the newest offered)")
    p.add_argument("--only", metavar="V", nargs="+", help="test exactly these releases (instead of a range)")
    p.add_argument("--probes", metavar="SCRIPT", nargs="+", default=[],
                   help="extra probe scripts (taking --device cpu|gpu; exit 0 absent, 1 present, "
                        "125 cannot test), e.g. findings/*_repro.py from `mlx-vjpcheck fuzz`")
    p.add_argument("--device", choices=("cpu", "gpu"), default="cpu", help="default: cpu")
    options.add_out(p, "artifacts/versions")
    p.add_argument("--cache-dir", metavar="DIR",
                   help=f"where environments are kept (default: ${V.CACHE_ENV} or ~/.cache/mlx-vjpcheck); "
                        "every release costs one environment, about 130 MB")
    jobs = min(4, os.cpu_count() or 1)
    p.add_argument("--jobs", "-j", type=options.positive_int, default=jobs,
                   help=f"releases handled at once (default: {jobs}, min(4, CPUs))")
    p.add_argument("--timeout", type=options.positive_float, default=300,
                   help="seconds per probe run (default: 300)")
    p.set_defaults(func=main, provider=None)


def _check_versions(args):
    for flag, v in (("--from", args.lo), ("--to", args.hi), *(("--only", v) for v in args.only or ())):
        if v is not None:
            try:
                V.version_key(v)
            except ValueError:
                raise UsageError(f"{flag} {v!r} is not a version number")


def _say(msg: str) -> None:
    from ..evidence.text import visible
    print(visible(f"mlx-vjpcheck versions: {msg}"), file=sys.stderr, flush=True)


def choose_releases(provider, args, root) -> list:
    notes = []
    offered = V.list_releases(provider, notes)
    for n in notes:
        _say(n)
    if offered is None:
        offered = V.cached_releases(root)
        if not offered:
            raise UsageError("no package index reachable and no cached environment to fall back on")
        _say(f"using the {len(offered)} releases already in the cache ({root / 'envs'})")
    chosen, notes = V.select(offered, args.lo, args.hi, args.only)
    for n in notes:
        _say(n)
    if not chosen:
        span = f"{offered[0].version} .. {offered[-1].version}" if offered else "none"
        raise UsageError(f"no MLX release to test in that range (offered here: {span})")
    return chosen


def _progress_line(row) -> None:
    inst = row.install
    if inst["status"] != "ok":
        _say(f"mlx {row.release.version}: install failed ({row.release.spec}): {inst['error']}")
        return
    cells = " ".join(f"{pid}={res['status']}" for pid, res in row.results.items())
    probe_s = sum(res["seconds"] for res in row.results.values())
    how = "cached env" if inst["cached"] else "installed"
    _say(f"mlx {row.release.version}: {how} {inst['seconds']:.1f} s, probes {probe_s:.1f} s: {cells}")


def table(rows, probe_list):
    from rich.table import Table

    from .terminal import escape
    t = Table(title="MLX releases x defects")
    t.add_column("release")
    t.add_column("package")
    for p in probe_list:
        t.add_column(p.defect, no_wrap=True)
    t.add_column("s", justify="right")
    for row in rows:
        cells = [f"[{STYLE[V.cell(row, p.id)]}]{V.cell(row, p.id)}[/]" for p in probe_list]
        secs = row.install.get("seconds", 0) + sum(r["seconds"] for r in row.results.values())
        t.add_row(row.release.version, escape(row.release.package), *cells, f"{secs:.1f}")
    return t


MATRIX_PROBES = 4   # more probes than this: one row per probe instead of a column each


def per_probe_table(rows, probe_list, doc):
    """Many probes do not fit as columns: one row per probe, its cells counted."""
    from rich.table import Table

    from .terminal import escape
    t = Table(title=f"MLX releases x defects ({len(rows)} releases)")
    for col in ("defect", "present", "absent", "cannot test", "first affected"):
        t.add_column(col, overflow="fold")
    for p in probe_list:
        cells = [V.cell(r, p.id) for r in rows]
        t.add_row(escape(p.defect), *(str(cells.count(k)) for k in (V.PRESENT, V.ABSENT, V.CANNOT)),
                  escape(str(doc["first_affected"][p.id].get("first") or "-")))
    return t


def print_result(rows, probe_list, doc, out) -> None:
    from . import terminal
    c = terminal.console()
    many = len(probe_list) > MATRIX_PROBES
    c.print(per_probe_table(rows, probe_list, doc) if many else table(rows, probe_list))
    for p in probe_list:
        c.print(terminal.escape(f"{p.defect}: {doc['first_affected'][p.id]['text']}"))
    failed = [r.release.version for r in rows if r.install.get("status") != "ok"]
    if failed:
        c.print(f"not installed: {', '.join(failed)}")
    c.print(f"-> {out}/versions.json")


def _check_device(device: str) -> None:
    """A GPU asked for must exist here: the probes would all answer "cannot test"."""
    if device != "gpu":
        return
    try:
        from ..running import devices
        devices.resolve("gpu")
    except ImportError:
        raise UsageError("--device gpu: mlx is not installed here to tell whether a GPU exists") from None
    except devices.DeviceError as e:
        raise UsageError(str(e)) from None


def _check_cache(path) -> None:
    try:
        rundir.check_writable(V.cache_root(path), "--cache-dir")
    except rundir.OutDirError as e:
        raise UsageError(str(e)) from None


def main(args) -> int:
    _check_versions(args)
    _check_device(args.device)
    _check_cache(args.cache_dir)
    try:
        probe_list = V.probes(args.probes)
    except V.VersionsError as e:
        raise UsageError(str(e)) from None
    options.out_dir(args, "versions")
    provider = args.provider or V.PipProvider()
    root = V.cache_root(args.cache_dir)
    chosen = choose_releases(provider, args, root)
    _say(f"{len(chosen)} releases ({chosen[0].version} .. {chosen[-1].version}) x "
         f"{len(probe_list)} probes, installer {provider.installer}, cache {root}")
    t0 = time.perf_counter()
    rows = V.run_matrix(provider, chosen, probe_list, root, args.device, args.timeout,
                        args.jobs, on_row=_progress_line)
    meta = {"platform": platform.platform(), "python": sys.version.split()[0],
            "installer": provider.installer, "device": args.device,
            "range": {"from": args.lo, "to": args.hi, "only": args.only},
            "seconds": round(time.perf_counter() - t0, 3)}
    doc = V.document(rows, probe_list, meta)
    with rundir.staged(args.out, "versions", args.replace) as tmp:
        V.write_run(tmp, rows, probe_list, doc, environment.record())
    print_result(rows, probe_list, doc, args.out)
    if not any(r.install.get("status") == "ok" for r in rows):
        _say("no release could be installed")
        return 2
    return V.exit_code(rows, probe_list)


if __name__ == "__main__":
    sys.exit(options.not_a_program("versions"))
