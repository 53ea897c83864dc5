"""`mlx-vjpcheck handoff ID|all --out DIR`: hand each finding of the defect
register to MLX's maintainers in the form they take: an issue text in MLX's
bug-report form (what is wrong, the minimal reproducer, what MLX gives
against the float64 rule, the affected releases, the root cause), the patch
of the series that fixes it, and a regression test in the style of MLX's
python/tests. One folder per finding, plus index.json; written whole (a run
directory with its manifest), so a bundle can carry it and the validator can
check it.

The reproducer is run here, on the installed MLX, to quote its output: the
issue says which MLX and platform printed it.
"""
from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from pathlib import Path

from ..cases import register
from ..core.errors import UsageError
from ..evidence import atomic, rundir
from . import options

INDEX = "index.json"
SCHEMA = "mlx-vjpcheck/handoff/1"


def add_parser(sub, name):
    p = sub.add_parser(name, help="write, per finding, an MLX issue text, its patch and a regression test")
    p.add_argument("finding", metavar="ID|all", help="a defect register id (see docs/findings.md) or all")
    options.add_out(p, "artifacts/handoff", what="handoff directory")
    p.set_defaults(func=main)


def chosen(which: str) -> list:
    defects = register.load()
    if which == "all":
        return defects
    picked = [d for d in defects if d.id == which]
    if not picked:
        raise UsageError(f"no finding {which!r} in the register; known: {', '.join(d.id for d in defects)}")
    return picked


def _run(script: Path) -> tuple:
    proc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                          timeout=300)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks inside (MLX's text is not ours)."""
    return "`" * max(3, _longest_backticks(text) + 1)


def _longest_backticks(text: str) -> int:
    best = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        best = max(best, run)
    return best


def issue_text(d, output: str, rc: int, mlx_version: str) -> str:
    fence = _fence(output)
    repro = Path(d.probe).name
    fix = (f"The attached `{Path(d.patch).name}` fixes it; `{Path(d.regression_test).name}` is a regression "
           "test for `python/tests` that fails before the patch and passes after it." if d.patch else
           "No patch is proposed yet.")
    return "\n".join([
        f"### Describe the bug", "", f"`{d.op}`: {d.title}.", "",
        "### To reproduce", "", f"`{repro}` (attached; mlx and numpy only; exit 1 = defect present):", "",
        "```python", d.reproducer().rstrip(), "```", "",
        f"On MLX {mlx_version} ({platform.system()} {platform.machine()}, CPU) it exits {rc} and prints:", "",
        fence, output, fence, "",
        "### Expected behavior", "",
        f"The values of the float64 rule quoted in the script. Minimal input: {d.minimal}.", "",
        "### Affected releases", "", f"{d.releases} (`mlx-vjpcheck versions`).", "",
        "### Root cause and fix", "", d.root_cause or "Not analysed yet.", "", fix, ""])


def write_one(root: Path, d, mlx_version: str) -> dict:
    folder = root / d.id
    script = folder / Path(d.probe).name
    atomic.write_text(script, d.reproducer())
    rc, out = _run(script)
    atomic.write_text(folder / "ISSUE.md", issue_text(d, out, rc, mlx_version))
    files = {"issue": f"{d.id}/ISSUE.md", "reproducer": f"{d.id}/{script.name}"}
    if d.patch:
        shutil.copyfile(register.patch_file(d), folder / Path(d.patch).name)
        files["patch"] = f"{d.id}/{Path(d.patch).name}"
    if d.regression_test:
        shutil.copyfile(register.regression_test_file(d), folder / Path(d.regression_test).name)
        files["regression_test"] = f"{d.id}/{Path(d.regression_test).name}"
    return {"id": d.id, "op": d.op, "class": d.klass, "reproducer_exit": rc, "files": files}


def main(args) -> int:
    defects = chosen(args.finding)
    options.require("numpy", what="mlx-vjpcheck handoff")
    try:
        import mlx.core as mx
    except ImportError:
        raise UsageError("mlx is not installed: " + options.INSTALL["mlx"]) from None
    missing = [str(p) for d in defects for p in ([register.patch_file(d)] if d.patch else [])
               + ([register.regression_test_file(d)] if d.regression_test else []) if not p.is_file()]
    if missing:
        raise UsageError(f"the package lacks {missing[0]}")
    options.out_dir(args, "handoff")
    entries = []
    with rundir.staged(args.out, "handoff", args.replace) as tmp:
        for d in defects:
            entries.append(write_one(Path(tmp), d, mx.__version__))
        atomic.write_json(Path(tmp) / INDEX, {"schema": SCHEMA, "mlx": mx.__version__, "findings": entries})
    for e in entries:
        print(f"{e['id']}: reproducer exit {e['reproducer_exit']}; " + ", ".join(sorted(e["files"])))
    print(f"{len(entries)} findings handed off -> {args.out}")
    return 0


__all__ = ["add_parser", "main", "issue_text"]
