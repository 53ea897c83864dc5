"""The sweep's classes in the defect register: each class the sweep declares (a `Known`
of harness/sweep/known.py that is neither a catalog class nor a documented limitation)
has exactly one register entry of its id and its reproducer in probes/sweep/, and back
(cases/declared.sweep_problems); each entry says its status, root cause and fix as the
catalog's do. Every check has a negative control that breaks one side."""
from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import ROOT
from mlx_vjpcheck.cases import declared, register
from mlx_vjpcheck.sweep import known

SWEEP_PROBES = ROOT / "probes" / "sweep"


@pytest.fixture(scope="module")
def everything():
    return register.load()


def _stems():
    return {p.stem for p in SWEEP_PROBES.glob("*.py")}


def test_every_sweep_class_is_registered_with_its_reproducer_and_back(everything):
    assert declared.sweep_problems(everything, known.KNOWN, _stems()) == []
    entries = register.sweep_entries(everything)
    assert {d.id for d in entries} == {k.id for k in known.KNOWN if not k.catalog and not k.limitation}
    assert len(entries) >= 14


def test_negative_control_a_class_missing_its_reproducer_is_caught(everything):
    assert declared.sweep_problems(everything, known.KNOWN, _stems() - {"sign__shapeless_grad_shape"}) == [
        "sweep entry sign__shapeless_grad_shape: no reproducer probes/sweep/sign__shapeless_grad_shape.py"]
    assert declared.sweep_problems(everything, known.KNOWN, _stems() | {"stray__file"}) == [
        "probes/sweep/stray__file.py: no sweep entry of that id in defects.json"]


def test_negative_control_an_entry_no_known_matches_is_caught(everything):
    extra = register.SweepClass("cos__made_up", "t", "m", "r", root_cause="c")
    problems = declared.sweep_problems(everything + [extra], known.KNOWN, _stems() | {"cos__made_up"})
    assert problems == ["sweep entry cos__made_up of defects.json: no Known('cos__made_up') in "
                        "harness/sweep/known.py matches it (a catalog class or a limitation is not a sweep entry)"]
    # a limitation of the checker's (as_strided) is not a sweep entry either
    lim = register.SweepClass("as_strided__invalid_memory", "t", "m", "r", root_cause="c")
    assert any("as_strided__invalid_memory" in p for p in
               declared.sweep_problems(everything + [lim], known.KNOWN, _stems() | {"as_strided__invalid_memory"}))


def test_negative_control_a_known_not_in_the_register_is_caught(everything):
    new = known.KNOWN + (known.Known("cos__new_class", ("mx.cos",), "vjp", "wrong value", "made up"),)
    assert declared.sweep_problems(everything, new, _stems()) == [
        "Known('cos__new_class') of harness/sweep/known.py: 0 sweep entries in defects.json, not 1 "
        "(`mlx-vjpcheck register declared` writes it)"]
    gone = [d for d in everything if d.id != "flip__shapeless_vjp_heap_overflow"]
    assert any("Known('flip__shapeless_vjp_heap_overflow')" in p
               for p in declared.sweep_problems(gone, known.KNOWN, _stems()))
    twice = everything + [next(d for d in everything if d.id == "flip__shapeless_vjp_heap_overflow")]
    assert any("2 sweep entries" in p for p in declared.sweep_problems(twice, known.KNOWN, _stems()))


def test_negative_control_a_catalog_known_must_name_a_catalog_entry(everything):
    bad = known.KNOWN + (dataclasses.replace(known.KNOWN[-1], id="nothing__here", catalog=True),)
    assert declared.sweep_problems(everything, bad, _stems()) == [
        "Known('nothing__here', catalog=True): no catalog entry of that id in defects.json"]


def test_each_sweep_entry_reads_its_reproducer_and_is_not_a_catalog_entry(everything):
    for d in register.sweep_entries(everything):
        assert d.probe == f"probes/sweep/{d.id}.py"
        assert d.reproducer() == (ROOT / d.probe).read_text(encoding="utf-8")
        assert d.reproducer().count("\n") <= 45, d.id   # short: mlx + numpy, about 40 lines
        assert f"{d.op}__{d.klass}" == d.id and d.root_cause
    assert not set(d.id for d in register.sweep_entries(everything)) & \
        set(d.id for d in register.catalog_entries(everything))


# --- the entry's own rules -------------------------------------------------------------------

def _load_with(tmp_path, edit):
    """The register with its first sweep entry made open (whatever it is now), then edited."""
    data = json.loads(register.PATH.read_text(encoding="utf-8"))
    data["sweep"][0].update(status="open", reason="not yet", patch="", regression_test="", gate="")
    edit(data["sweep"][0])
    bad = tmp_path / "defects.json"
    bad.write_text(json.dumps(data))
    return register.load(bad)


@pytest.mark.parametrize("edit, match", [
    (lambda d: d.update(status="not fixed"), "status 'not fixed' is not one of"),
    (lambda d: d.update(root_cause=" "), "root_cause must say"),
    (lambda d: d.update(id="Sign"), "id must be"),
    (lambda d: d.update(status="fixed", reason="", patch="x.diff", regression_test="tests/test_x.py"),
     "gate says"),
    (lambda d: d.update(status="fixed", reason="", patch="../x.diff", regression_test="tests/test_x.py",
                        gate="g"), "patch is"),
    (lambda d: d.update(patch="x.diff"), "names no patch"),
    (lambda d: d.update(reason=""), "reason must say why"),
    (lambda d: d.update(status="limitation", reason="upstream would not want it"), "points at MLX"),
    (lambda d: d.update(status="limitation", reason="see mlx/compile.cpp", regression_test="tests/test_x.py"),
     "no regression test"),
    (lambda d: d.update(functions=["mx.sign"]), "unexpected keyword"),
])
def test_an_inconsistent_sweep_entry_is_refused(tmp_path, edit, match):
    with pytest.raises(register.RegisterError, match=match):
        _load_with(tmp_path, edit)


def test_a_good_fixed_and_a_limitation_entry_load(tmp_path):
    """The controls of the refusals above: the same edits done right load."""
    d = _load_with(tmp_path, lambda d: d.update(status="fixed", reason="", patch="x.diff",
                                                 regression_test="tests/test_x.py", gate="g"))
    assert (register.sweep_entries(d)[0].state, register.sweep_entries(d)[0].status) == ("fixed", "fixed")
    d = _load_with(tmp_path, lambda d: d.update(status="limitation", reason="documented: docs/src/usage/compile.rst"))
    assert (register.sweep_entries(d)[0].state, register.sweep_entries(d)[0].status) == ("limitation", "not fixed")


def test_dump_round_trips_both_kinds(everything):
    text = register.dump(everything)
    assert text == register.PATH.read_text(encoding="utf-8")
    assert [d.id for d in register.sweep_entries(everything)] == [e["id"] for e in json.loads(text)["sweep"]]


def test_the_doc_lists_every_sweep_class(everything):
    doc = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    table = doc.split(register.SWEEP_START, 1)[1].split(register.SWEEP_END, 1)[0]
    for d in register.sweep_entries(everything):
        assert f"| {d.id} |" in table and f"`{d.probe}`" in table, d.id


# --- merging the fix notes of whoever writes the patches ------------------------------------

def test_fix_notes_merge_into_their_sweep_entries(everything):
    notes = {"sign__shapeless_grad_shape": {"status": "fixed", "patch": "50-sign.diff", "root_cause": "why",
                                            "regression_test": "tests/test_sign.py", "gate": "a gate line"},
             "var__zero_size_hang": {"status": "limitation", "reason": "see docs/src/usage/x.rst", "root_cause": "r"}}
    merged = register.with_notes(everything, notes)
    by = {d.id: d for d in merged}
    assert (by["sign__shapeless_grad_shape"].state, by["sign__shapeless_grad_shape"].patch,
            by["sign__shapeless_grad_shape"].reason) == ("fixed", "50-sign.diff", "")
    assert by["var__zero_size_hang"].state == "limitation"
    untouched = [d for d in merged if d.id not in notes]
    assert untouched == [d for d in everything if d.id not in notes]


@pytest.mark.parametrize("notes, match", [
    ({"nothing__here": {"status": "open"}}, "no sweep class"),
    ({"topk__tie_misroute": {"status": "open"}}, "no sweep class"),   # a catalog entry is not merged
    ({"sign__shapeless_grad_shape": {"colour": "red"}}, "fields must be"),
    ({"sign__shapeless_grad_shape": {"status": "fixed", "patch": "../x.diff"}}, "sign__shapeless_grad_shape"),
    ({"var__zero_size_hang": {"status": "limitation", "reason": "upstream would not want it"}}, "points at MLX"),
])
def test_a_bad_note_is_refused(everything, notes, match):
    with pytest.raises(register.RegisterError, match=match):
        register.with_notes(everything, notes)


def test_a_stale_sweep_table_is_noticed(everything):
    """Negative control: an edited sweep row no longer matches what the register renders."""
    doc = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    assert register.findings_doc(doc, everything) == doc
    d = register.sweep_entries(everything)[0]
    edited = doc.replace(f"| {d.id} |", f"| {d.id}_edited |", 1)
    assert edited != doc and register.findings_doc(edited, everything) == doc
    fewer = [x for x in everything if x.id != d.id]
    assert register.findings_doc(doc, fewer) != doc


def test_notes_in_the_patch_writers_form_are_read(tmp_path, everything):
    """id = file name, "patch/" prefixes, nulls, and "not a fix: <why>" as a limitation."""
    (tmp_path / "sign__shapeless_grad_shape.json").write_text(json.dumps(
        {"id": "sign__shapeless_grad_shape", "patch": "patch/50-sign.diff", "regression_test": "patch/tests/test_s.py",
         "root_cause": "why", "gate": "a gate line", "status": "fixed"}))
    (tmp_path / "var__zero_size_hang.json").write_text(json.dumps(
        {"id": "var__zero_size_hang", "patch": None, "regression_test": None, "root_cause": "r", "gate": "measured",
         "status": "not a fix: a design decision for MLX (mlx/primitives.cpp, DynamicSlice::output_shapes)"}))
    notes = register._notes(tmp_path)
    assert notes["sign__shapeless_grad_shape"]["patch"] == "50-sign.diff"
    assert notes["var__zero_size_hang"] == {"root_cause": "r", "status": "limitation",
                                            "reason": "a design decision for MLX (mlx/primitives.cpp, "
                                                      "DynamicSlice::output_shapes) (measured)"}
    by = {d.id: d for d in register.with_notes(everything, notes)}
    assert by["var__zero_size_hang"].state == "limitation" and by["sign__shapeless_grad_shape"].state == "fixed"
    (tmp_path / "var__zero_size_hang.json").write_text(json.dumps({"id": "other__id"}))
    with pytest.raises(register.RegisterError, match="not its file name"):
        register._notes(tmp_path)
