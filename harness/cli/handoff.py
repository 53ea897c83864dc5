"""`mlx-vjpcheck handoff ID|all --out DIR`: hand each finding of the defect
register to MLX's maintainers in the form they take: an issue text in MLX's
bug-report form (what is wrong, the minimal reproducer, what MLX gives against
the float64 rule, the affected releases, the root cause), the patch of the
series that fixes it, and a regression test in the style of MLX's
python/tests. One folder per finding, plus handoff.json; written whole (a run
directory of kind "handoff" with its manifest), so a bundle can carry it and
the validator checks it (validation/handoff.py).

A class the sweep found (the register's sweep entries) is handed over the same
way, its reproducer the hand-reduced one of probes/sweep/, its issue saying
where the sweep sees it (its `Known` declarations in harness/sweep/known.py).
A fixed one carries its patch and test like a catalog finding; an open one's
issue quotes a regression test in MLX's style (the register's test file where
there is one, else one generated from the reproducer, which runs it in a
child process since some of these defects end the process); a limitation's
issue says why no fix is proposed and carries no patch and no test.

The reproducer is run here, on the installed MLX, to quote its output: the
issue says which MLX and platform printed it. That output is MLX's text, not
ours: it is quoted with its risky characters escaped, inside a fence longer
than any run of backticks in it. The patches and regression tests come from
the package (patch/ in a checkout, package data in a wheel).
"""
from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from pathlib import Path

from ..cases import register
from ..core.errors import UsageError
from ..evidence import atomic, paths, rundir
from ..evidence.text import visible
from ..validation.handoff import expected_files, packaged as sources
from . import options

SCHEMA = "mlx-vjpcheck/handoff/1"
TIMEOUT_S = 300


def add_parser(sub, name):
    p = sub.add_parser(name, help="write, per finding, an MLX issue text, its reproducer, its patch and a "
                                  "regression test in MLX's python/tests style")
    p.add_argument("finding", metavar="ID|all", help="a defect register id, of the catalog or of the sweep "
                                                    "(see docs/findings.md), or all")
    options.add_out(p, "artifacts/handoff", what="handoff directory")
    p.set_defaults(func=main)


def chosen(which: str) -> list:
    defects = register.load()
    if which == "all":
        return defects
    picked = [d for d in defects if d.id == which]
    if not picked:
        raise UsageError(f"no finding {which!r} in the register; known: all, {', '.join(d.id for d in defects)}")
    return picked


def _run(script: Path) -> tuple:
    try:
        proc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return 124, f"(no exit within {TIMEOUT_S} s)"
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def fence(text: str, lang: str = "") -> tuple:
    """(opening, closing) code fence longer than any run of backticks inside."""
    best = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        best = max(best, run)
    f = "`" * max(3, best + 1)
    return f + lang, f


def quoted(text: str, lang: str = "") -> list:
    opening, closing = fence(text, lang)
    return [opening, text, closing]


def issue_text(d, output: str, rc: int, mlx_version: str, where: str) -> str:
    """MLX's bug-report form: Describe the bug / To Reproduce / Expected behavior /
    Desktop / Additional context. `output` and `mlx_version` are MLX's text."""
    repro = Path(d.probe).name
    output = "\n".join(visible(line) for line in output.split("\n")) or "(no output)"   # line by line
    return "\n".join([
        f"# [BUG] `{d.op}`: {d.title}", "",
        "**Describe the bug**", "",
        f"`{d.op}` ({d.klass}): {d.title}. Minimal input: {d.minimal}.", "",
        "**To Reproduce**", "",
        f"`{repro}` (attached; mlx and numpy only; exit 0 = defect absent, 1 = present, 125 = cannot test):", "",
        *quoted(d.reproducer().rstrip(), "python"), "",
        f"On MLX {visible(mlx_version)} ({where}, CPU) it exits {rc} and prints:", "",
        *quoted(output), "",
        "**Expected behavior**", "",
        "The values of the float64 rule quoted in the script (the rule is in its comments).", "",
        "**Desktop (please complete the following information):**", "",
        f" - OS Version: {where}",
        f" - Version: MLX {visible(mlx_version)}; affected releases (CPU): {d.releases}", "",
        "**Additional context**", "",
        f"Root cause: {d.root_cause or 'not analysed yet.'}", "",
        *_fix(d), "",
        *_found_by(d), ""])


def _fix(d) -> list:
    if d.status == "fixed":
        return [(f"The attached `{Path(d.patch).name}` (against ml-explore/mlx 846d176, one patch of a series "
                 f"that applies alone) fixes it; the attached `{Path(d.regression_test).name}` is a regression "
                 "test for `python/tests` that fails before the patch and passes after it.")]
    if getattr(d, "state", "") == "limitation":   # no fix is right for MLX: the reason points at its docs or code
        return [f"No patch is proposed, and none is asked for: {d.reason}."]
    out = [f"No patch is proposed: {d.reason}."]
    if d.kind == "sweep":
        out += ["", "A regression test for `python/tests` (it fails while the defect is present):", "",
                *quoted(mlx_test(d).rstrip(), "python")]
    return out


def _found_by(d) -> list:
    if d.kind != "sweep":
        return ["Found and checked with mlx-vjpcheck (float64 reference rules for MLX's VJPs)."]
    from ..sweep import known
    shows = [f"`{', '.join(k.functions)}` under " + ("any transform" if k.transform == "any" else f"`{k.transform}`")
             + ": " + (f"the process dies (`{k.symptom}`)" if k.symptom.startswith("signal") else k.symptom)
             for k in known.KNOWN if k.id == d.id]   # its Known entries (fnmatch patterns)
    return ["Found by `mlx-vjpcheck sweep` (reference-free: each function of MLX's public API evaluated in "
            "float64 on the CPU and differentiated numerically, each transform against eager), which sees it "
            "in " + "; ".join(shows) + "."]


def mlx_test(d) -> str:
    """The regression test in MLX's python/tests style: the register's file where it names
    one (patch/tests/), else one generated from the reproducer (run in a child process:
    some of these defects end the process or hang)."""
    if d.regression_test and register.regression_test_file(d).is_file():
        return register.regression_test_file(d).read_text(encoding="utf-8")
    camel = "".join(w.capitalize() for w in d.id.replace("__", "_").split("_"))
    return GENERATED_TEST.format(id=d.id, title=d.title.replace('"""', "'''"), camel=camel, klass=d.klass,
                                 script=_literal(d.reproducer()), timeout=TIMEOUT_S)


def _literal(text: str) -> str:
    """Python source for the string `text`: a raw triple-quoted block where it reads the same
    (so the test shows the script as written), else repr."""
    quotes = "'" * 3
    if quotes not in text and not text.endswith("\\") and "\r" not in text:
        return "r" + quotes + text + quotes
    return repr(text)


GENERATED_TEST = '''"""Regression test for {id} (generated from its reproducer by mlx-vjpcheck handoff):
{title}"""
import subprocess
import sys

import mlx.core as mx
import mlx_tests

# The reproducer: mlx and numpy only; exit 0 = defect absent, 1 = present, 125 = cannot test.
REPRODUCER = {script}


class Test{camel}(mlx_tests.MLXTestCase):
    def test_{klass}(self):
        # in a child process: the defect may end the process that meets it, or hang
        device = "gpu" if mx.default_device() == mx.gpu else "cpu"
        try:
            proc = subprocess.run([sys.executable, "-c", REPRODUCER, "--device", device],
                                  capture_output=True, text=True, timeout={timeout})
        except subprocess.TimeoutExpired:
            self.fail("the reproducer did not exit within {timeout} s")
        if proc.returncode == 125:
            self.skipTest(proc.stdout.strip())
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
'''


def write_one(root: Path, d, mlx_version: str, where: str) -> dict:
    files = expected_files(d)
    script = root / files["reproducer"]
    atomic.write_text(script, d.reproducer())
    rc, out = _run(script)
    atomic.write_text(root / files["issue"], issue_text(d, out, rc, mlx_version, where))
    for role, src in sources(d).items():
        shutil.copyfile(src, root / files[role])
    return {"id": d.id, "op": d.op, "class": d.klass, "status": d.status, "reproducer_exit": rc, "files": files}


def main(args) -> int:
    defects = chosen(args.finding)
    options.out_dir(args, "handoff")
    options.require("numpy", what="mlx-vjpcheck handoff")
    try:
        import mlx.core as mx
    except ImportError:
        raise UsageError("mlx is not installed: " + options.INSTALL["mlx"]) from None
    missing = [str(p) for d in defects for p in sources(d).values() if not p.is_file()]
    if missing:
        raise UsageError(f"the package lacks {missing[0]} (patch/ of a checkout, or the wheel's package data)")
    where = f"{platform.system()} {platform.machine()}"
    entries = []
    with rundir.staged(args.out, "handoff", args.replace) as tmp:
        for d in defects:
            entries.append(write_one(Path(tmp), d, mx.__version__, where))
        atomic.write_json(Path(tmp) / paths.HANDOFF, {"schema": SCHEMA, "mlx": mx.__version__, "platform": where,
                                                      "findings": entries})
    for e in entries:
        print(visible(f"{e['id']}: {e['status']}; reproducer exit {e['reproducer_exit']}; "
                      + ", ".join(sorted(e["files"]))))
    print(visible(f"{len(entries)} findings handed off -> {args.out}"))
    return 0


__all__ = ["add_parser", "main", "issue_text", "mlx_test", "SCHEMA"]
