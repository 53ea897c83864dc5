"""`mlx-vjpcheck register add SWEEP.json --finding N`: one finding of a sweep (its
sweep.json, harness/sweep/run.py) becomes a sweep entry of the defect register
(harness/cases/defects.json, status open) and a reproducer probes/sweep/<id>.py,
and the command prints the `Known` line that harness/sweep/known.py must declare
(tests/cases/test_sweep_register.py fails until it does: a class is declared once,
there, and the register and the reproducer follow it).

The reproducer is the one given with --reproducer (reduced by hand: mlx + numpy,
about 40 lines, "VERDICT: defect present" and exit 1 while the defect is there),
else one generated from the finding's case where the generator can
(cli/sweep_reproducer.py); a generated one is run on the installed MLX first and
refused unless it shows the defect. A finding the current declarations explain
already is reported and nothing is written (exit 0), unless its declaration has no
register entry yet (a class declared in known.py by hand): then that class's entry is
written, its reproducer kept where it is in place. Nothing is replaced: the
reproducer must not exist, and the register is rewritten only when it is exactly
what the tool writes.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from ..cases import files, register
from ..core import resources
from ..core.errors import UsageError
from ..evidence import atomic

SCHEMA = "mlx-vjpcheck/sweep/1"   # cli/sweep.py's
MAX_LINES = 45
MODULES = {"sys", "os", "subprocess", "signal", "time", "math", "mlx", "numpy"}
PROBES = Path("probes") / "sweep"


def is_sweep(obj) -> bool:
    return isinstance(obj, dict) and obj.get("schema") == SCHEMA


class SweepFinding:
    """Finding N of a sweep.json: its signature (function, transform, corner class,
    symptom), first record and the sweep's MLX."""

    def __init__(self, path: Path, obj: dict, index):
        if index is None:
            raise UsageError(f"{path}: a sweep holds many findings: give --finding N (`sweep` prints it)")
        found = obj.get("findings")
        if not isinstance(found, list) or not 0 <= index < len(found):
            raise UsageError(f"--finding {index}: {path} has {len(found) if isinstance(found, list) else 0} "
                             "findings (0-based)")
        f = found[index]
        sig = f.get("signature") if isinstance(f, dict) else None
        if not (isinstance(sig, list) and len(sig) == 4 and all(isinstance(x, str) and x for x in sig)) \
                or not isinstance(f.get("first"), dict):
            raise UsageError(f"{path}: finding {index} is not a sweep finding (signature, first record)")
        self.path, self.index, self.finding, self.record = path, index, f, f["first"]
        self.function, self.transform, self.corner, self.symptom = sig
        env = obj.get("environment")
        self.mlx = env.get("mlx") if isinstance(env, dict) and isinstance(env.get("mlx"), str) else None

    @property
    def short(self) -> str:
        """mx.fft.irfft -> irfft, nn.Softshrink -> softshrink: the id's first part."""
        return re.sub(r"[^a-z0-9_]+", "_", self.function.rsplit(".", 1)[-1].lower()).strip("_") or "function"

    def default_class(self) -> str:
        words = re.sub(r"[^a-z0-9]+", "_", f"{self.transform}_{self.symptom}".lower()).strip("_")
        return words[:60].rstrip("_")

    def check_line(self) -> str:
        """What the first failing check said (a crash: how the worker died)."""
        rec = self.record
        if rec.get("status") == "crash":
            return f"the process died ({rec.get('how')}), alone: {rec.get('alone', 'not rerun')}"
        for c in rec.get("checks", ()):
            if c.get("status") == "fail" and c.get("transform") == self.transform:
                if c.get("detail"):
                    return str(c["detail"])[:200]
                return f"MLX {c.get('got')} vs {c.get('want')}"
        return self.symptom


def load(path: Path, index) -> SweepFinding:
    try:
        obj = files.read_json(path)
    except files.ScenarioFileError as e:
        raise UsageError(str(e)) from None
    return SweepFinding(path, obj, index)


def explained(f: SweepFinding):
    """The declaration (harness/sweep/known.py) that explains it now, or None."""
    from ..sweep import known
    return known.explain(f.function, f.transform, f.symptom)


def entry(f: SweepFinding, ident: str, title: str | None) -> register.SweepClass:
    rec = f.record
    try:
        return register.SweepClass(
            id=ident,
            title=title or f"{f.function}: {f.symptom} under {f.transform} (found by the sweep)",
            minimal=f"{rec.get('entry', f.function)} at the sweep's {rec.get('corner')} corner "
                    f"(seed {rec.get('seed')}): {f.transform}: {f.check_line()}",
            releases=f"{f.mlx or 'the MLX the sweep ran on (not recorded)'} (found by the sweep; other "
                     "releases: mlx-vjpcheck versions)",
            root_cause=f"not analysed yet (the sweep's {f.transform} check at the {f.corner} corner: "
                       f"{f.symptom})",
            reason=register.NOT_ANALYSED)
    except register.RegisterError as e:
        raise UsageError(str(e)) from None


def known_line(f: SweepFinding, d: register.SweepClass) -> str:
    """The declaration harness/sweep/known.py's KNOWN must end with."""
    return (f"Known({d.id!r}, ({f.function!r},), {f.transform!r}, {f.symptom!r}, "
            f"\"<the rule MLX breaks, one line>\")")


# --- the reproducer ---------------------------------------------------------------------------

def given(path: str) -> str:
    """A hand-reduced reproducer, checked for the house form (UsageError otherwise)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"--reproducer {path}: cannot read it ({type(e).__name__})") from None
    problem = form_problem(text)
    if problem:
        raise UsageError(f"--reproducer {path}: {problem}")
    return text


def form_problem(text: str) -> str | None:
    """Why `text` is not a reproducer in the house form, or None."""
    if len(text.splitlines()) > MAX_LINES:
        return f"{len(text.splitlines())} lines; a reproducer is short (at most {MAX_LINES})"
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        return f"not Python ({e.msg}, line {e.lineno})"
    used = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    used |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    if used - MODULES:
        return f"imports {sorted(used - MODULES)}: a reproducer uses mlx and numpy only"
    if "VERDICT: defect" not in text:
        return 'prints no "VERDICT: defect present/absent" line'
    return None


def shows_defect(text: str, timeout_s: float = 300) -> tuple:
    """(exit status, output) of the reproducer run on the installed MLX, in a child."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "reproducer.py"
        script.write_text(text, encoding="utf-8")
        try:
            p = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                               timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return 124, ""
    return p.returncode, (p.stdout + p.stderr).strip()


def reproducer(f: SweepFinding, d: register.SweepClass, path: str | None) -> str:
    """The reproducer to write: the given one, else a generated one that shows the defect here."""
    if path:
        return given(path)
    from . import sweep_reproducer
    text, why = sweep_reproducer.render(f, d)
    if text is None:
        raise UsageError(f"no reproducer can be generated for {f.function} {f.transform} ({why}): reduce one by "
                         f"hand (mlx + numpy, at most {MAX_LINES} lines, exit 1 while the defect is present) "
                         "and give --reproducer FILE")
    rc, _ = shows_defect(text)
    if rc != 1:
        raise UsageError(f"the generated reproducer does not show the defect on the installed MLX (exit {rc}): "
                         "reduce one by hand and give --reproducer FILE")
    return text


# --- writing ----------------------------------------------------------------------------------

def plan(d: register.SweepClass, text: str | None, root: Path, in_checkout: bool, register_at: Path,
         doc_at: Path) -> dict:
    """path -> text, checked in full before anything is written (text None: the reproducer
    is in place already and is kept)."""
    defects = register.load()
    if any(x.id == d.id for x in defects):
        raise UsageError(f"register id {d.id} is taken: give --class another name")
    if register.dump(defects) != register.PATH.read_text(encoding="utf-8"):
        raise UsageError(f"{register.PATH} is not in the form this tool writes (edited by hand?): not rewriting it")
    out = {root / register_at: register.dump(defects + [d])}
    if in_checkout:
        doc = (root / doc_at).read_text(encoding="utf-8")
        out[root / doc_at] = register.findings_doc(doc, defects + [d])
    if text is not None:
        probe = root / PROBES / f"{d.id}.py"
        if probe.exists():
            raise UsageError(f"{probe} exists and was not made by this command: not replacing it")
        out[probe] = text
    return out


def add(args, destination, register_at: Path, doc_at: Path) -> int:
    """`register add SWEEP.json --finding N` (cli/register.py hands it over)."""
    f = load(Path(args.finding), args.index)
    k = explained(f)
    if k is not None and (k.catalog or k.limitation or k.id in {d.id for d in register.load()}):
        print(f"{f.function} {f.transform} {f.symptom}: registered already (harness/sweep/known.py: {k.id}"
              f"{', a documented limitation' if k.limitation else ''}); nothing written")
        return 0
    ident = _ident(f, k, args.klass)
    d = entry(f, ident, args.title)
    root, in_checkout = destination(args.out)
    in_place = resources.probes_dir() / "sweep" / f"{ident}.py"
    # a class declared in known.py with its reproducer already written: the entry only
    text = None if k is not None and in_place.is_file() and not args.reproducer else reproducer(f, d, args.reproducer)
    todo = plan(d, text, root, in_checkout, register_at, doc_at)
    for path, body in sorted(todo.items(), key=lambda kv: kv[0] == root / register_at):
        atomic.write_text(path, body)   # the register last: the reproducer exists before it names it
        print(f"wrote {path}")
    if k is not None:
        print(f"{f.function} {f.transform} at {f.corner}: {f.symptom}: its class {ident} is declared in "
              f"harness/sweep/known.py; registered (open){', its reproducer kept' if text is None else ''}")
    else:
        print(f"{f.function} {f.transform} at {f.corner}: {f.symptom}: registered as {ident} (open). Declare it: "
              f"append {known_line(f, d)} to KNOWN in harness/sweep/known.py (tests/cases/test_sweep_register.py "
              "holds the register to it)")
    print(f"`mlx-vjpcheck handoff {ident}` writes its issue" + ("" if in_checkout else
                                                                 "; copy the files into the checkout"))
    return 0


def _ident(f: SweepFinding, k, klass: str | None) -> str:
    if k is not None:   # declared in known.py without its register entry: that class
        if klass and f"{f.short}__{klass}" != k.id:
            raise UsageError(f"--class {klass}: the finding is declared as {k.id} in harness/sweep/known.py")
        return k.id
    klass = klass or f.default_class()
    if not re.fullmatch(r"[a-z][a-z0-9_]*", klass):
        raise UsageError(f"--class {klass!r}: a lower-case name (letters, digits, underscores)")
    return f"{f.short}__{klass}"


# --- classes declared in known.py by hand ------------------------------------------------------

DOCSTRING = re.compile(r'"""(?P<op>[^/\n]+) / (?P<klass>[^:\n]+): (?P<title>[^\n]+)\n'
                       r'Minimal input: (?P<minimal>[^\n]+?)(?: MLX (?P<mlx>[0-9][0-9.]*)\.)?\n')


def from_reproducer(ident: str, rules: list) -> register.SweepClass:
    """The register entry of a class declared in known.py, read from its reproducer's
    docstring (the house form: "<op> / <class>: <title>", "Minimal input: ... MLX x.y.z.")."""
    path = resources.probes_dir() / "sweep" / f"{ident}.py"
    if not path.is_file():
        raise UsageError(f"{ident} is declared in harness/sweep/known.py but has no reproducer probes/sweep/{ident}.py")
    m = DOCSTRING.search(path.read_text(encoding="utf-8"))
    if m is None or f"{m['op']}__{m['klass']}" != ident:
        raise UsageError(f"probes/sweep/{ident}.py: its docstring is not '<op> / <class>: <title>' and "
                         "'Minimal input: ...' (the house form)")
    try:
        return register.SweepClass(
            id=ident, title=m["title"], minimal=m["minimal"].rstrip("."),
            releases=f"{m['mlx'] or 'the MLX the sweep ran on'} (the release the sweep ran on; others not tested)",
            root_cause="not analysed beyond the sweep's declaration: " + "; ".join(rules))
    except register.RegisterError as e:
        raise UsageError(str(e)) from None


def declared(args, destination, register_at: Path, doc_at: Path) -> int:
    """`register declared`: an entry for each class known.py declares that the register lacks."""
    from ..sweep import known
    defects = register.load()
    have = {d.id for d in defects}
    wanted = [k.id for k in known.KNOWN if not k.catalog and not k.limitation and k.id not in have]
    new = [from_reproducer(i, [k.rule for k in known.KNOWN if k.id == i]) for i in dict.fromkeys(wanted)]
    if not new:
        print("every class harness/sweep/known.py declares has its register entry; nothing written")
        return 0
    root, in_checkout = destination(args.out)
    if register.dump(defects) != register.PATH.read_text(encoding="utf-8"):
        raise UsageError(f"{register.PATH} is not in the form this tool writes (edited by hand?): not rewriting it")
    todo = {root / register_at: register.dump(defects + new)}
    if in_checkout:
        todo[root / doc_at] = register.findings_doc((root / doc_at).read_text(encoding="utf-8"), defects + new)
    for path, body in todo.items():
        atomic.write_text(path, body)
        print(f"wrote {path}")
    for d in new:
        print(f"registered {d.id} (open; root cause: the declaration's rule); `mlx-vjpcheck handoff {d.id}` "
              "writes its issue")
    return 0


def add_lines(found: list, sweep_json) -> list:
    """For `sweep`: per finding no register entry holds (unexplained, or explained by a class
    declared in known.py that the register lacks), the command line that registers it."""
    import shlex
    registered = {d.id for d in register.load()}
    out = []
    for i, f in enumerate(found):
        if f["explained"] and (f["limitation"] or f["explained"] in registered):
            continue
        what = "new signature" if not f["explained"] else f"class {f['explained']} has no register entry"
        out.append(f"{what} ({', '.join(f['signature'])}): register it with  mlx-vjpcheck register add "
                   f"{shlex.quote(str(sweep_json))} --finding {i}")
    return out


__all__ = ["add", "add_lines", "declared", "from_reproducer", "is_sweep", "load", "explained", "entry",
           "known_line", "reproducer", "plan", "form_problem"]
