"""The defect register (harness/cases/defects.json) drives the reproducers under
probes/findings/ and the Findings table of docs/findings.md: both must be
exactly what it renders; every entry's class is a catalog defect tag of its
op; every reproducer is short and, on the pinned MLX release, says "defect
present" (exit 1)."""
from __future__ import annotations

import json

import pytest
from conftest import ROOT, needs_pinned_mlx
from helpers import scripts as script_runs
from mlx_vjpcheck.cases import catalog, register

FINDINGS = ROOT / "probes" / "findings"


@pytest.fixture(scope="module")
def defects():
    """The catalog's entries (the sweep's: tests/cases/test_sweep_register.py)."""
    return register.catalog_entries(register.load())


def test_every_reproducer_is_what_the_register_renders(defects):
    on_disk = {p.name for p in FINDINGS.glob("*.py")}
    assert on_disk == {f"{d.id}.py" for d in defects}
    stale = [d.id for d in defects if (ROOT / d.probe).read_text(encoding="utf-8") != d.reproducer()]
    assert stale == [], "regenerate: python3 -m mlx_vjpcheck.cases.register --write"


def test_the_findings_table_is_what_the_register_renders(defects):
    doc = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    everything = register.load()
    assert register.findings_doc(doc, everything) == doc
    assert register.table(defects) in doc
    assert register.sweep_table(everything) in doc


def test_a_stale_table_is_noticed(defects):
    """Negative control: an edited row no longer matches."""
    doc = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    edited = doc.replace(defects[0].minimal.split()[0], "edited", 1)
    assert register.findings_doc(edited, register.load()) != edited


def test_every_class_is_a_catalog_tag_of_its_op(defects):
    """Unless the entry says why no catalog scenario carries it (`outside_catalog`: a
    finding added by `register add` before anyone wrote a scenario for it)."""
    tags = {(s.op, t) for s in catalog.catalog() for t in s.defect_tags}
    assert [d.id for d in defects if (d.op, d.klass) not in tags and not d.outside_catalog.strip()] == []


def test_reproducers_are_short(defects):
    """The defect report's form: about 30 lines (a process-isolated one a few more)."""
    # (a process-isolated reproducer, or one under a transform, carries a fixed few lines more:
    # the child, or the transform's direction and its "without the transform" fallback)
    # An operand that is a view of wider storage takes its evaluation and its view lines.
    long = [(d.id, n) for d in defects
            if (n := len(d.reproducer().splitlines())) > (50 if d.isolate or d.transform else 40)
            + 2 * sum(bool(t.views) for t in d.bound_scenario().operands.values())]
    assert long == []


def test_a_bad_entry_is_refused(tmp_path, defects):
    data = json.loads(register.PATH.read_text(encoding="utf-8"))
    data["defects"][0]["op"] = "not_its_op"
    bad = tmp_path / "defects.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(register.RegisterError, match="id must be"):
        register.load(bad)


@needs_pinned_mlx()
def test_every_reproducer_reports_the_defect_on_pinned_mlx():
    paths = sorted(FINDINGS.glob("*.py"))
    results = script_runs.run_many(paths, ["--device", "cpu"])
    assert [(p.name, rc, out[-400:] + err[-400:]) for p, (rc, out, err) in zip(paths, results) if rc != 1] == []
    # control: a few run alone, as a maintainer runs them, end the same way
    alone = script_runs.standalone(paths[::10], ["--device", "cpu"])
    assert [rc for rc, _, _ in alone] == [rc for rc, _, _ in results[::10]]


# --- where each finding is fixed: status, patch, regression test, root cause, gate ---------------

def _refused(tmp_path, edit, match):
    data = json.loads(register.PATH.read_text(encoding="utf-8"))
    fixed = next(d for d in data["defects"] if d.get("status") == "fixed")
    edit(fixed)
    bad = tmp_path / "defects.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(register.RegisterError, match=match):
        register.load(bad)


def test_a_fixed_entry_names_its_patch_test_cause_and_gate(defects):
    for d in defects:
        if d.status == "fixed":
            assert d.patch.endswith(".diff") and d.regression_test.startswith("tests/test_"), d.id
            assert d.root_cause and d.gate and not d.reason, d.id
        else:
            assert d.status == "not fixed" and d.reason and not d.patch, d.id


@pytest.mark.parametrize("edit, match", [
    (lambda d: d.update(status="done"), "status 'done' is not one of"),
    (lambda d: d.update(patch=""), "patch must name a file"),
    (lambda d: d.update(patch="../mlx.diff"), "patch must name a file"),
    (lambda d: d.update(regression_test="test_x.py"), "regression_test must be"),
    (lambda d: d.update(root_cause=" "), "root_cause must say"),
    (lambda d: d.update(gate=""), "gate must say"),
    (lambda d: d.update(reason="it is fixed"), "no reason"),
    (lambda d: d.update(status="not fixed", reason="upstream"), "names no patch"),
    (lambda d: d.update(status="not fixed", patch="", regression_test="", reason=""), "reason must say why"),
])
def test_an_inconsistent_fix_record_is_refused(tmp_path, edit, match):
    """Negative controls: each field's rule rejects a record that breaks it."""
    _refused(tmp_path, edit, match)


def test_an_entry_without_fix_fields_is_not_fixed(tmp_path):
    """Entries written before the fix fields (or by someone adding a finding) load as
    not fixed, with the default reason, and the table says so."""
    data = json.loads(register.PATH.read_text(encoding="utf-8"))
    entry = data["defects"][0]
    for key in ("status", "reason", "patch", "regression_test", "root_cause", "gate"):
        entry.pop(key, None)
    bad = tmp_path / "defects.json"
    bad.write_text(json.dumps(data))
    d = register.load(bad)[0]
    assert (d.status, d.reason) == ("not fixed", register.NOT_ANALYSED)
    assert f"not fixed: {register.NOT_ANALYSED}" in register.table([d])


def test_the_table_shows_each_fixed_findings_patch(defects):
    table = register.table(defects)
    assert "| patch (regression test) |" in table.splitlines()[0]
    for d in defects:
        if d.status == "fixed":
            row = next(r for r in table.splitlines() if f"`{d.probe}`" in r)
            assert f"`patch/{d.patch}` (`patch/{d.regression_test}`)" in row


def test_dump_keeps_the_fix_fields(defects):
    again = json.loads(register.dump(defects))["defects"]
    assert [(e["status"], e["patch"], e["regression_test"]) for e in again] == \
        [(d.status, d.patch, d.regression_test) for d in defects]
