"""The defect register: every confirmed MLX defect class this tool has found,
as data (harness/cases/defects.json, package data, numpy only).

One entry per finding class: the op and class (a catalog defect tag), a
one-line title, the minimal input in words, the MLX releases that carry it
(from `mlx-vjpcheck versions`), its minimal counterexample as a scenario
(the reproducer under probes/findings/ is rendered from it), and where it is
fixed: the patch of the series under patch/ and the MLX-style regression
test under patch/tests/. From this one file come the reproducers, the
Findings table (docs/findings.md), and `mlx-vjpcheck handoff` (an issue text,
the patch and the regression test per finding); tests keep all of them in
step with it.

The register holds two kinds of entries. `Defect`: a class with a catalog
scenario (or a fuzz finding), declared on its op record (core/opinfo.KnownDefect),
its reproducer rendered from its scenario. `SweepClass`: a class the sweep found
in MLX's public API, with no catalog scenario: what it matches (functions,
transform, symptom) is declared once, by the `Known` entries of its id in
harness/sweep/known.py; its reproducer is hand-reduced in probes/sweep/<id>.py;
the register adds its status (open, fixed, limitation), root cause, fix and gate
line. cases/declared.sweep_problems holds the two files to each other.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..core import jsonio, resources
from ..core.scenario import Scenario
from . import bind, files, reproducer

SCHEMA = "mlx-vjpcheck/defect-register/1"
PATH = Path(__file__).resolve().parent / "defects.json"
STATUSES = ("fixed", "not fixed")
SWEEP_STATUSES = ("open", "fixed", "limitation")
# A limitation says where MLX documents (or decides) the behaviour: a docs page, a source path, a URL.
POINTER = re.compile(r"https?://|docs/|mlx/|python/|docstring|documentation")
NOT_ANALYSED = "no patch proposed yet"
PATCH_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\.diff")
TEST_NAME = re.compile(r"tests/test_[A-Za-z0-9_]+\.py")


class RegisterError(ValueError):
    """A register entry that cannot be used (a programming error in defects.json)."""


@dataclass(frozen=True)
class Defect:
    # Identity: "<op>__<class>", the reproducer's file stem; the catalog tag it carries.
    id: str
    op: str
    klass: str
    # For people: one line on what is wrong, the minimal input in words, the releases.
    title: str
    minimal: str
    releases: str
    # The minimal counterexample, and how its reproducer runs (in a child process
    # when the defect kills the process; exact zeros when that is the finding; under
    # a transform, or the forward alone: reproducer.TRANSFORMS; in children with a
    # timeout when it hangs).
    scenario: dict = field(repr=False)
    isolate: bool = False
    exact: bool = False
    transform: str = ""
    hang: bool = False
    fuzz_signature: str = ""
    # Why no catalog scenario carries the class (it hangs, or reads memory it does not
    # own, so a run could not judge it): empty where the catalog has it.
    outside_catalog: str = ""
    # Where it is fixed: status "fixed" (a patch of the series, patch/<file>.diff, its
    # MLX-style regression test, patch/tests/test_*.py, the root cause in one sentence,
    # and what the gate showed for that patch, one line from a measured run) or
    # "not fixed" (no patch; the reason says why).
    status: str = "not fixed"
    reason: str = NOT_ANALYSED
    patch: str = ""
    regression_test: str = ""
    root_cause: str = ""
    gate: str = ""

    def __post_init__(self):
        if self.id != f"{self.op}__{self.klass}" and not self.id.startswith(f"{self.op}__{self.klass}_"):
            raise RegisterError(f"defect {self.id!r}: id must be '<op>__<class>[_variant]'")
        if self.scenario.get("op") != self.op:
            raise RegisterError(f"defect {self.id!r}: its scenario is of op {self.scenario.get('op')!r}")
        if self.transform not in reproducer.TRANSFORMS:
            raise RegisterError(f"defect {self.id!r}: transform {self.transform!r} is not one of "
                                f"{reproducer.TRANSFORMS}")
        self._check_fix()

    def _check_fix(self):
        def bad(why):
            raise RegisterError(f"defect {self.id!r}: {why}")
        if self.status not in STATUSES:
            bad(f"status {self.status!r} is not one of {STATUSES}")
        if self.status == "fixed":
            if not PATCH_NAME.fullmatch(self.patch):
                bad(f"fixed, so patch must name a file of patch/ ('<name>.diff'), not {self.patch!r}")
            if not TEST_NAME.fullmatch(self.regression_test):
                bad(f"fixed, so regression_test must be 'tests/test_<name>.py', not {self.regression_test!r}")
            for name in ("root_cause", "gate"):
                if not getattr(self, name).strip():
                    bad(f"fixed, so {name} must say something")
            if self.reason:
                bad("fixed, so it has no reason for not being fixed")
        else:
            if self.patch or self.regression_test:
                bad("not fixed, so it names no patch and no regression test")
            if not self.reason.strip():
                bad("not fixed, so reason must say why")

    def bound_scenario(self):
        return bind(Scenario.from_dict(self.scenario))

    def reproducer(self) -> str:
        return reproducer.render(self.bound_scenario(), title=f"{self.op} / {self.klass}: {self.title}",
                                 description=f"Minimal input: {self.minimal}. MLX releases: {self.releases}.",
                                 isolate=self.isolate, exact=self.exact, transform=self.transform,
                                 hang=self.hang)

    @property
    def probe(self) -> str:
        return f"probes/findings/{self.id}.py"

    kind = "catalog"


@dataclass(frozen=True)
class SweepClass:
    """A defect class found by the sweep (see the module's docstring). Its `Known`
    entries (harness/sweep/known.py, same id) say where it shows; this says what it is
    and where it is fixed: status "open" (no patch yet, `reason`), "fixed" (a patch of
    the series and its MLX-style test, root cause and gate line, as a `Defect`), or
    "limitation" (no fix is right for MLX: `reason` says why, pointing at MLX's
    documentation or code; the handoff is then an issue text without a patch)."""
    id: str
    title: str
    minimal: str
    releases: str
    # "status" in defects.json: open, fixed or limitation (the evidence's handoff.json
    # speaks the catalog's "fixed"/"not fixed": the `status` property)
    state: str = "open"
    reason: str = NOT_ANALYSED
    root_cause: str = ""
    patch: str = ""
    regression_test: str = ""
    gate: str = ""

    kind = "sweep"

    def __post_init__(self):
        def bad(why):
            raise RegisterError(f"sweep class {self.id!r}: {why}")
        if not re.fullmatch(r"[a-z][a-z0-9_]*__[a-z0-9_]+", self.id):
            bad("id must be '<function>__<class>' (lower case)")
        if self.state not in SWEEP_STATUSES:
            bad(f"status {self.state!r} is not one of {SWEEP_STATUSES}")
        if not self.root_cause.strip():
            bad("root_cause must say something (what the triage found, if not analysed further)")
        if self.state == "fixed":
            if not PATCH_NAME.fullmatch(self.patch) or not TEST_NAME.fullmatch(self.regression_test):
                bad("fixed, so patch is '<name>.diff' of patch/ and regression_test 'tests/test_<name>.py'")
            if not self.gate.strip() or self.reason:
                bad("fixed, so gate says what the gate showed and there is no reason for not fixing")
            return
        if self.patch or self.gate:
            bad(f"{self.state}, so it names no patch and no gate line")
        if not self.reason.strip():
            bad(f"{self.state}, so reason must say why")
        if self.state == "limitation" and (self.regression_test or not POINTER.search(self.reason)):
            bad("a limitation has no regression test, and its reason points at MLX's documentation or code")

    @property
    def status(self) -> str:
        """The catalog's word for it (handoff.json, the validator, the series' checks)."""
        return "fixed" if self.state == "fixed" else "not fixed"

    @property
    def op(self) -> str:
        """The public function's short name (mx.fft.irfft -> irfft), as in the id."""
        return self.id.split("__", 1)[0]

    @property
    def klass(self) -> str:
        return self.id.split("__", 1)[1]

    @property
    def probe(self) -> str:
        return f"probes/sweep/{self.id}.py"

    def reproducer(self) -> str:
        """The hand-reduced reproducer (probes/sweep/, package data in a wheel)."""
        return (resources.probes_dir() / "sweep" / f"{self.id}.py").read_text(encoding="utf-8")


def load(path: Path | None = None) -> list:
    """Every entry: the catalog's `Defect`s, then the sweep's `SweepClass`es (of PATH by default)."""
    path = PATH if path is None else path
    data = jsonio.loads(path.read_text(encoding="utf-8"))
    if data.get("schema") != SCHEMA:
        raise RegisterError(f"{path}: not a defect register (schema {data.get('schema')!r})")
    out = []
    for d in data["defects"]:
        d = dict(d, klass=d.pop("class"))
        out.append(Defect(**d))
    for d in data.get("sweep", []):
        try:
            out.append(SweepClass(**{("state" if k == "status" else k): v for k, v in d.items()}))
        except TypeError as e:   # an unknown or missing field
            raise RegisterError(f"{path}: sweep class {d.get('id')!r}: {e}") from None
    ids = [d.id for d in out]
    if len(set(ids)) != len(ids):
        raise RegisterError(f"{path}: a defect id appears twice")
    return out


def catalog_entries(defects) -> list:
    return [d for d in defects if d.kind == "catalog"]


def sweep_entries(defects) -> list:
    return [d for d in defects if d.kind == "sweep"]


def table(defects) -> str:
    """The Findings table of docs/findings.md, one row per catalog defect."""
    rows = ["| op | class | defect | minimal input: MLX vs float64 rule | MLX releases (CPU) | reproducer "
            "| patch (regression test) | what the gate showed |", "|---|---|---|---|---|---|---|---|"]
    for d in catalog_entries(defects):
        if d.status == "fixed":
            fix, gate = f"`patch/{d.patch}` (`patch/{d.regression_test}`)", d.gate
        else:
            fix, gate = f"not fixed: {d.reason}", "—"
        rows.append(f"| {d.op} | {d.klass} | {_cell(d.title)} | {_cell(d.minimal)} | {_cell(d.releases)} "
                    f"| `{d.probe}` | {_cell(fix)} | {_cell(gate)} |")
    return "\n".join(rows) + "\n"


def sweep_table(defects) -> str:
    """The sweep's classes in docs/findings.md, one row per class (where each shows:
    its `Known` entries in harness/sweep/known.py)."""
    rows = ["| class | defect | minimal input | MLX releases (CPU) | reproducer | root cause "
            "| status: fix (regression test) | what the gate showed |", "|---|---|---|---|---|---|---|---|"]
    for d in sweep_entries(defects):
        if d.state == "fixed":
            fix, gate = f"fixed: `patch/{d.patch}` (`patch/{d.regression_test}`)", d.gate
        else:
            fix, gate = f"{d.state}: {d.reason}", "—"
        rows.append(f"| {d.id} | {_cell(d.title)} | {_cell(d.minimal)} | {_cell(d.releases)} | `{d.probe}` "
                    f"| {_cell(d.root_cause)} | {_cell(fix)} | {_cell(gate)} |")
    return "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    """Text safe inside one Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def patch_file(d: Defect) -> Path:
    return resources.patch_dir() / d.patch


def regression_test_file(d: Defect) -> Path:
    return resources.patch_dir() / d.regression_test


def dump(defects) -> str:
    """The register as written (for tools that update it)."""
    items = []
    for d in catalog_entries(defects):
        item = {k: getattr(d, k) for k in Defect.__dataclass_fields__ if k != "klass"}
        item["class"] = d.klass
        items.append(item)
    sweep = [{("status" if k == "state" else k): getattr(d, k) for k in SweepClass.__dataclass_fields__}
             for d in sweep_entries(defects)]
    return jsonio.dumps({"schema": SCHEMA, "defects": items, "sweep": sweep}, indent=1) + "\n"


def known_signatures(defects=None, corpus=None) -> dict:
    """Fuzz signatures this project has registered -> where: the regression corpus's
    entries (one per signature) and the register's `fuzz_signature`s. A finding whose
    signature is not here is new: `mlx-vjpcheck register add` registers it."""
    out = {d.fuzz_signature: f"register entry {d.id}"
           for d in catalog_entries(load() if defects is None else defects) if d.fuzz_signature}
    for e in files.regressions() if corpus is None else corpus:
        out[e.meta.get("signature")] = f"regression corpus, class {e.meta.get('class')}"
    return out


__all__ = ["Defect", "SweepClass", "RegisterError", "load", "catalog_entries", "sweep_entries", "table",
           "sweep_table", "dump", "known_signatures", "PATH", "SCHEMA", "STATUSES", "SWEEP_STATUSES"]


# --- regenerating what the register drives (a maintainer's tool, run from a checkout) ---------

TABLE_START = "<!-- register:start (generated by python3 -m mlx_vjpcheck.cases.register --write) -->"
TABLE_END = "<!-- register:end -->"
SWEEP_START = "<!-- register-sweep:start (generated by python3 -m mlx_vjpcheck.cases.register --write) -->"
SWEEP_END = "<!-- register-sweep:end -->"


def findings_doc(text: str, defects) -> str:
    """docs/findings.md with its generated tables (the catalog's, the sweep's) replaced."""
    text = _between(text, TABLE_START, TABLE_END, table(defects))
    return _between(text, SWEEP_START, SWEEP_END, sweep_table(defects))


def _between(text: str, start: str, end: str, body: str) -> str:
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return head + start + "\n" + body + end + tail


def write(root: Path) -> list:
    """Rewrite probes/findings/<id>.py and the docs table from the register; the files changed."""
    defects, changed = load(), []
    for d in catalog_entries(defects):   # the sweep's reproducers are written by hand
        path = root / d.probe
        text = d.reproducer()
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(str(path))
    doc = root / "docs" / "findings.md"
    text = findings_doc(doc.read_text(encoding="utf-8"), defects)
    if doc.read_text(encoding="utf-8") != text:
        doc.write_text(text, encoding="utf-8")
        changed.append(str(doc))
    return changed


NOTE_FIELDS = ("status", "reason", "root_cause", "patch", "regression_test", "gate")


def with_notes(defects, notes: dict) -> list:
    """The register with each sweep class's fix notes merged ({id: {status, root_cause, patch,
    regression_test, gate, reason}}, as whoever writes the patch leaves them); RegisterError
    for a note of no sweep class, an unknown field, or an entry the notes make inconsistent."""
    import dataclasses
    sweep = {d.id for d in sweep_entries(defects)}
    for i, note in notes.items():
        if i not in sweep:
            raise RegisterError(f"note {i!r}: no sweep class of that id")
        if not isinstance(note, dict) or set(note) - set(NOTE_FIELDS):
            raise RegisterError(f"note {i!r}: fields must be among {NOTE_FIELDS}")

    def merged(d):
        note = notes.get(d.id) if d.kind == "sweep" else None
        if note is None:
            return d
        fix = {("state" if k == "status" else k): v for k, v in note.items()}
        if fix.get("state") == "fixed":
            fix.setdefault("reason", "")
        if fix.get("state") in ("open", "limitation"):   # what a fix record held goes with it
            fix.setdefault("patch", "")
            fix.setdefault("gate", "")
        if fix.get("state") == "limitation":
            fix.setdefault("regression_test", "")
        return dataclasses.replace(d, **fix)
    return [merged(d) for d in defects]


def _notes(folder: Path) -> dict:
    """<id>.json notes as with_notes takes them: an "id" field must be the file's stem; paths
    may start with "patch/"; null is an absent field; status "not a fix: <why>" is a
    limitation whose reason is <why>."""
    out = {}
    for f in sorted(folder.glob("*.json")):
        note = {k: v for k, v in jsonio.loads(f.read_text(encoding="utf-8")).items() if v is not None}
        if note.pop("id", f.stem) != f.stem:
            raise RegisterError(f"{f}: its id is not its file name")
        for k in ("patch", "regression_test"):
            if k in note and note[k].startswith("patch/"):
                note[k] = note[k][len("patch/"):]
        status = note.get("status", "")
        if status.startswith("not a fix:"):   # what was measured of it joins the reason: a limitation has no gate
            reason = status.split(":", 1)[1].strip()
            note.update(status="limitation", reason=reason + (f" ({note.pop('gate')})" if note.get("gate") else ""))
        out[f.stem] = note
    return out


if __name__ == "__main__":
    import sys
    args = sys.argv[1:]
    if args[:1] == ["--notes"] and len(args) == 2:
        PATH.write_text(dump(with_notes(load(), _notes(Path(args[1])))), encoding="utf-8")
        print("wrote", PATH)
        args = ["--write"]
    if args != ["--write"]:
        sys.exit("usage: python3 -m mlx_vjpcheck.cases.register --write | --notes DIR   (from a checkout)")
    for name in write(Path.cwd()):
        print("wrote", name)
