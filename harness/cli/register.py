"""`mlx-vjpcheck register add FINDING`: a fuzz (or sweep) finding becomes a defect register
entry (harness/cases/defects.json), a regression-corpus entry
(harness/regressions/<signature>.json) and a reproducer (probes/findings/<id>.py), with
no file edited by hand. A sweep's finding (FINDING a sweep.json, with --finding N)
becomes a sweep entry of the register and a reproducer in probes/sweep/ instead
(cli/register_sweep.py).

FINDING is a finding file of a fuzz output directory (findings/<signature>.json). A
signature the project holds already (the corpus, or a register entry's fuzz_signature)
is reported and nothing is written (exit 0). A new signature of a class the op's
register already has joins the corpus only; a new class gets all three, "not fixed"
until someone analyses it, and the command prints the KnownDefect line its op record
must declare (tests/cases/test_known_defects.py holds the register to the records).

Where it writes: into the checkout the package runs from (an editable install, where
pyproject.toml, docs/findings.md and probes/findings/ sit beside harness/), or, with
--out DIR, the same paths under DIR (which must be empty or absent) to copy from.
It never replaces a file it did not make: a corpus entry or a reproducer already there
is refused; the register is rewritten only when it is exactly what the tool writes
(register.dump of its own entries), with one entry added, and docs/findings.md only
in its generated table. Bad input: one line on stderr, exit 2, nothing written.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from ..cases import UnboundOp, files, register, reproducer
from ..core import jsonio
from ..core.errors import UsageError
from ..evidence import atomic

NAME = re.compile(r"[a-z][a-z0-9_]*")
SIGNATURE = re.compile(r"[a-z][a-z0-9_]*__[A-Za-z0-9_.+-]+")
STATUSES = ("fail", "error", "crashed")   # what a finding's record may say (a pass is no finding)
CORPUS = Path("harness") / "regressions"
REGISTER = Path("harness") / "cases" / "defects.json"
DOC = Path("docs") / "findings.md"


def add_parser(sub, name):
    p = sub.add_parser(name, help="turn a fuzz finding into a register entry, corpus entry and reproducer")
    actions = p.add_subparsers(dest="action", required=True, parser_class=type(p))
    a = actions.add_parser("add", help="register one finding (findings/<signature>.json of a fuzz run)",
                           description=__doc__.split("\n\n")[0])
    a.add_argument("finding", metavar="FINDING", help="a finding file: findings/<signature>.json of a fuzz output, "
                                                     "or a sweep's sweep.json with --finding N")
    a.add_argument("--finding", dest="index", type=int, metavar="N",
                   help="with a sweep.json: its N-th finding (0-based, as `sweep` prints it)")
    a.add_argument("--reproducer", metavar="FILE",
                   help="with a sweep finding: a reproducer reduced by hand (mlx + numpy, exit 1 while the defect "
                        "is present); default: generated where the generator can, and run here first")
    a.add_argument("--class", dest="klass", metavar="NAME",
                   help="the defect class (lower-case name; default: from the signature's oracle and kind); "
                        "a class the op has registered already adds the corpus entry only")
    a.add_argument("--title", metavar="TEXT", help="one line on what is wrong (default: from the signature)")
    a.add_argument("--out", metavar="DIR",
                   help="write under DIR (empty or absent) instead of into the checkout the package runs from")
    a.set_defaults(func=main)
    b = actions.add_parser("declared", help="register each sweep class harness/sweep/known.py declares that "
                                            "the register lacks (from its reproducer in probes/sweep/ and its rule)")
    b.add_argument("--out", metavar="DIR",
                   help="write under DIR (empty or absent) instead of into the checkout the package runs from")
    b.set_defaults(func=declared_main)


def declared_main(args) -> int:
    from . import register_sweep
    return register_sweep.declared(args, destination, REGISTER, DOC)


# --- reading the finding ---------------------------------------------------------------------

class Finding:
    """A checked finding file: its signature's parts, bound scenario and record."""

    def __init__(self, path: Path):
        self.path, self.obj = path, _finding_file(path)
        self.signature = self.obj["signature"]
        self.op, self.gradient, self.oracle, self.kind = self.signature.split("__")[:4]
        self.form = "__".join(self.signature.split("__")[4:])
        try:
            (entry,) = files.entries_of(self.obj, str(path))
        except (files.ScenarioFileError, UnboundOp) as e:
            raise UsageError(str(e)) from None
        self.scenario, self.record = entry.scenario, self.obj.get("record")
        self._check()

    def _check(self):
        rec = self.record
        if self.scenario.op != self.op:
            raise UsageError(f"{self.path}: the scenario is of op {self.scenario.op!r}, the signature of {self.op!r}")
        if not isinstance(rec, dict) or rec.get("status") not in STATUSES:
            raise UsageError(f"{self.path}: its record must say {', '.join(STATUSES)}")
        if self.obj.get("oracle") != self.oracle:
            raise UsageError(f"{self.path}: oracle {self.obj.get('oracle')!r} is not the signature's {self.oracle!r}")

    def environment(self) -> dict:
        """The fuzz run's environment.json and its findings.json line, where they sit beside it."""
        run = self.path.resolve().parent.parent
        env, line = {}, {}
        try:
            env = jsonio.loads((run / "environment.json").read_text(encoding="utf-8"))
            line = next(e for e in jsonio.loads((run / "findings.json").read_text(encoding="utf-8"))
                        if isinstance(e, dict) and e.get("signature") == self.signature)
        except (OSError, ValueError, StopIteration):
            pass
        return {"mlx": env.get("mlx") if isinstance(env, dict) else None,
                "seed": line.get("seed") if isinstance(line.get("seed"), int) else None}

    def default_class(self) -> str:
        words = re.sub(r"[^a-z0-9]+", "_", f"{self.oracle}_{self.kind}".lower()).strip("_")
        return words[:60].rstrip("_")


def _finding_file(path: Path) -> dict:
    """The file's JSON object, a fuzz finding with a well-formed signature (UsageError otherwise)."""
    try:
        obj = files.read_json(path)
    except files.ScenarioFileError as e:
        raise UsageError(str(e)) from None
    if not isinstance(obj, dict) or obj.get("schema") != files.FINDING_SCHEMA:
        raise UsageError(f"{path}: not a fuzz finding (schema {files.FINDING_SCHEMA})")
    sig = obj.get("signature")
    if not isinstance(sig, str) or not SIGNATURE.fullmatch(sig) or len(sig.split("__")) < 5:
        raise UsageError(f"{path}: signature {sig!r} is not op__gradient__oracle__kind__form")
    return obj


# --- what it becomes -------------------------------------------------------------------------

def defect_entry(f: Finding, klass: str, title: str | None) -> register.Defect:
    """The register entry: not fixed, outside the catalog until a scenario carries it."""
    opts = reproducer.finding_options(f.oracle, f.kind, f.record)
    ident = f"{f.op}__{klass}"
    scenario = dict(f.scenario.to_dict(), name=f"finding/{ident}", defect_tags=[klass])
    mlx = f.environment()["mlx"] or "the MLX the fuzz run used (its environment.json was not found)"
    try:
        return register.Defect(
            id=ident, op=f.op, klass=klass, scenario=scenario,
            title=title or f"{f.kind} in {f.gradient}, shown by the {f.oracle} oracle (call form {f.form})",
            minimal=f"{f.scenario.description or 'the fuzz counterexample'}; {_detail(f.record)}",
            releases=f"{mlx} (found by fuzz; other releases: mlx-vjpcheck versions)",
            isolate=opts["isolate"], exact=opts["exact"], transform=opts.get("transform", ""),
            fuzz_signature=f.signature,
            outside_catalog=f"found by fuzz ({f.signature}); no catalog scenario carries it yet")
    except register.RegisterError as e:
        raise UsageError(str(e)) from None


def _detail(rec: dict) -> str:
    from ..fuzz.merge import detail_of   # the corpus's wording of what went wrong
    return detail_of(rec)


def corpus_entry(f: Finding, klass: str, entry: register.Defect | None) -> dict:
    """The corpus entry; in scope of the patch series exactly when the register entry of its
    class says "fixed" (tests/cases/test_regressions.py holds the corpus to that)."""
    env = f.environment()
    if env["mlx"] is None:   # the entry must say which MLX failed it (tests/cases/test_regressions.py)
        raise UsageError(f"{f.path}: no environment.json of its fuzz run beside it (../environment.json): "
                         "the MLX version that failed it is unknown; register it from its fuzz output folder")
    found = {"seeds": [env["seed"]], "size": f.obj.get("size")} if env["seed"] is not None \
        else {"fuzz_finding": f.path.name, "size": f.obj.get("size")}
    out = {
        "schema": files.REGRESSION_SCHEMA, "signature": f.signature, "class": klass,
        "scenario": dict(f.scenario.to_dict(), name=f"regress/{f.signature}", defect_tags=[klass]),
        "pristine": {"mlx": env["mlx"], "device": f.record.get("device", "cpu"),
                     "status": f.record["status"], "detail": _detail(f.record)},
        "in_scope": entry is not None and entry.status == "fixed",
        "found": found,
    }
    if not out["in_scope"]:
        out["out_of_scope_reason"] = (f"{entry.status}: {entry.reason} (register entry {entry.id})" if entry
                                      else f"class {klass} has no register entry that names a fix")
    return out


def declaration(d: register.Defect) -> str:
    """The KnownDefect its op record must declare."""
    args = [repr(d.klass)]
    if d.transform and d.transform != "forward":
        args.append(f"revealed_by={d.transform!r}")
    if d.isolate:
        args.append("fatal=True")
    return f"KnownDefect({', '.join(args)})"


# --- where it goes ---------------------------------------------------------------------------

def checkout_root() -> Path:
    """The source checkout the package runs from, or UsageError (a wheel has none)."""
    root = register.PATH.parents[2]
    if all((root / p).exists() for p in ("pyproject.toml", DOC, "probes/findings", CORPUS)):
        return root
    raise UsageError("this mlx-vjpcheck is not an editable checkout (no probes/findings/ beside "
                     "harness/): give --out DIR")


def destination(out: str | None) -> tuple:
    """(root, in_checkout): where the files go."""
    if out is None:
        return checkout_root(), True
    root = Path(out)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise UsageError(f"--out {root}: must be an empty or absent folder (nothing there is replaced)")
    return root, False


def plan(f: Finding, klass: str, title: str | None, root: Path, in_checkout: bool) -> dict:
    """path -> text, every file written; checked in full before anything is written."""
    from .. import ops
    defects = register.load()
    registered = [d for d in defects if (d.op, d.klass) == (f.op, klass)]
    known = bool(registered) or klass in {k.tag for k in ops.get(f.op).known_defects}
    d = registered[0] if registered else None if known else defect_entry(f, klass, title)
    ident = d.id if d else f"{f.op}__{klass}"
    files_out = {root / CORPUS / f"{f.signature}.json": jsonio.dumps(
        corpus_entry(f, klass, d), indent=1, sort_keys=True) + "\n"}
    if not known:
        if any(x.id == d.id for x in defects):
            raise UsageError(f"register id {d.id} is taken by another class: give --class another name")
        _render(d, files_out, root, defects, in_checkout)
    for path in files_out:
        if path.exists() and path != root / REGISTER and path != root / DOC:
            raise UsageError(f"{path} exists and was not made by this command: not replacing it")
    return {"files": files_out, "known": known, "ident": ident}


def _render(d, files_out: dict, root: Path, defects: list, in_checkout: bool) -> None:
    try:
        files_out[root / d.probe] = d.reproducer()
    except reproducer.NotReproducible as e:
        raise UsageError(f"no reproducer for this finding: {e}") from None
    current = register.PATH.read_text(encoding="utf-8")
    if register.dump(defects) != current:
        raise UsageError(f"{register.PATH} is not in the form this tool writes (edited by hand?): "
                         "not rewriting it")
    files_out[root / REGISTER] = register.dump(defects + [d])
    if in_checkout:
        doc = (root / DOC).read_text(encoding="utf-8")
        files_out[root / DOC] = register.findings_doc(doc, defects + [d])


def main(args) -> int:
    from . import register_sweep
    try:
        sweep = register_sweep.is_sweep(files.read_json(Path(args.finding)))
    except files.ScenarioFileError as e:
        raise UsageError(str(e)) from None
    if sweep:
        return register_sweep.add(args, destination, REGISTER, DOC)
    if args.index is not None or args.reproducer:
        raise UsageError(f"{args.finding}: --finding and --reproducer are for a sweep's sweep.json, "
                         "and this is no sweep")
    f = Finding(Path(args.finding))
    where = register.known_signatures().get(f.signature)
    if where:
        print(f"{f.signature}: registered already ({where}); nothing written")
        return 0
    klass = args.klass or f.default_class()
    if not NAME.fullmatch(klass):
        raise UsageError(f"--class {klass!r}: a lower-case name (letters, digits, underscores)")
    root, in_checkout = destination(args.out)
    todo = plan(f, klass, args.title, root, in_checkout)
    for path, text in sorted(todo["files"].items(), key=lambda kv: kv[0] == root / REGISTER):
        atomic.write_text(path, text)   # the register last: the new files exist before it names them
        print(f"wrote {path}")
    _advise(f, klass, todo, in_checkout)
    return 0


def _advise(f: Finding, klass: str, todo: dict, in_checkout: bool) -> None:
    if todo["known"]:
        print(f"{f.signature}: a new signature of the known class {f.op}/{klass}: corpus entry added")
        return
    module = _module_of(f.op)
    print(f"{f.signature}: registered as {todo['ident']} (not fixed). Declare it on the op record: add "
          f"{declaration(defect_entry(f, klass, None))} to known_defects in {module} "
          "(tests/cases/test_known_defects.py holds the register to the records)"
          + ("" if in_checkout else "; then copy the files into the checkout"))


def _module_of(op: str) -> str:
    from .. import ops
    module = ops.module_of(op)
    return "harness/ops/" + module.rsplit(".", 1)[1] + ".py" if module else "the plugin module that declares it"


if __name__ == "__main__":
    from . import options
    sys.exit(options.not_a_program("register"))
