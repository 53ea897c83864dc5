"""`mlx-vjpcheck coverage`: which of MLX's gradient rules (`::vjp(` definitions in
mlx/primitives.cpp and mlx/fast.cpp) the registered op records exercise, as a
table: primitive, covered by (ops), scenario count, or why it is not covered,
and the totals.

The primitives come from the list shipped for the tested MLX commit, or from
a checkout (--mlx-source). --save-list writes the checkout's list (how the
shipped one is made); --out writes the table to a file (docs/coverage.md is
`--markdown --out docs/coverage.md`). Every input and output path is checked
before any work; a file is only replaced when this command wrote it and
--replace is given.

Exit codes: 0 the table is written and the coverage reaches the target
(90 %); 1 it is below the target; 2 usage error.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..cases import coverage as C
from ..core.errors import UsageError
from ..evidence import atomic, rundir
from . import options


def add_parser(sub, name):
    p = sub.add_parser(name, help="which MLX primitives with a VJP the op records cover, and which public "
                                  "functions of the installed MLX the sweep covers")
    p.add_argument("--mlx-source", metavar="DIR",
                   help="read the primitives from this MLX checkout instead of the shipped list")
    p.add_argument("--markdown", action="store_true", help="write the table as Markdown (docs/coverage.md)")
    p.add_argument("--out", metavar="FILE", help="write the table here (atomically) instead of stdout")
    p.add_argument("--save-list", metavar="FILE",
                   help="with --mlx-source: also write the checkout's primitive list (the shipped file's format)")
    options.add_replace(p)
    p.set_defaults(func=main)


def _target(path, flag: str, replace: bool) -> Path:
    """An output file this command may write (UsageError otherwise)."""
    path = Path(path)
    if path.is_dir():
        raise UsageError(f"{flag} {path} is a directory")
    if path.exists() and not C.is_ours(path):
        raise UsageError(f"{flag} {path} exists and was not written by mlx-vjpcheck coverage: not overwriting it")
    if path.exists() and not replace:
        raise UsageError(f"{flag} {path} already exists: pass --replace to replace it")
    if not path.parent.is_dir():
        raise UsageError(f"{flag} {path}: the folder {path.parent} does not exist")
    try:   # tried, not asked: os.access says yes to root on a read-only mount
        rundir.check_creatable(path, flag)
    except rundir.OutDirError as e:
        raise UsageError(str(e)) from None
    return path


def _check(args) -> tuple:
    """(primitive list, out path or None, list path or None), every path checked first."""
    if args.save_list and not args.mlx_source:
        raise UsageError("--save-list needs --mlx-source (the list is read from a checkout)")
    out = _target(args.out, "--out", args.replace) if args.out else None
    saved = _target(args.save_list, "--save-list", args.replace) if args.save_list else None
    if out is not None and saved is not None and out.resolve() == saved.resolve():
        raise UsageError("--out and --save-list name the same file")
    try:
        plist = C.from_source(args.mlx_source) if args.mlx_source else C.shipped()
    except C.CoverageError as e:
        raise UsageError(str(e)) from None
    return plist, out, saved


def _api() -> tuple:
    """The sweep's API coverage table and whether it reaches its target (None and True
    where mlx is not installed: the API is read from the installed MLX)."""
    try:
        import mlx.core  # noqa: F401
    except ImportError:
        return None, True
    from ..sweep import coverage as api
    table = api.rows()
    return table, api.percent(table) >= api.TARGET_PERCENT


def main(args) -> int:
    plist, out, saved = _check(args)
    rows, unknown = C.from_catalog(plist)
    body = (C.markdown if args.markdown else C.text)(plist, rows, unknown)
    table, api_ok = _api()
    if table:
        from ..sweep import coverage as api
        body += api.markdown(table, C.md) if args.markdown else api.text(table)
    if saved is not None:
        atomic.write_text(saved, json.dumps(C.document(plist), indent=1) + "\n")
    if out is not None:
        atomic.write_text(out, body)
    else:
        sys.stdout.write(body)
    covered, total, pct = C.totals(rows)
    if out is not None:
        print(f"coverage: {covered} / {total} ({pct:.1f} %) -> {out}", file=sys.stderr)
    return 0 if pct >= C.TARGET_PERCENT and api_ok else 1


if __name__ == "__main__":
    sys.exit(options.not_a_program("coverage"))
