"""Known defects are declared once, on the op record (core/opinfo.KnownDefect): the defect
register, the catalog's tags, the regression corpus, the reproducers and the gate's
first-patch ops are held to those declarations (cases/declared.py), each check with a
negative control that breaks one declaration or one file."""
from __future__ import annotations

import dataclasses

import pytest
from conftest import ROOT
from mlx_vjpcheck import ops
from mlx_vjpcheck.cases import catalog, declared, files, register
from mlx_vjpcheck.core.opinfo import KnownDefect


@pytest.fixture(scope="module")
def records():
    return dict(ops.registry())


@pytest.fixture(scope="module")
def defects():
    return register.load()   # the sweep's entries too: register_problems leaves them to sweep_problems


def _without(records, op, tag):
    """The records with one declaration of `op` dropped."""
    info = records[op]
    kept = tuple(k for k in info.known_defects if k.tag != tag)
    assert len(kept) == len(info.known_defects) - 1
    return dict(records, **{op: dataclasses.replace(info, known_defects=kept)})


def _changed(records, op, tag, **change):
    info = records[op]
    kds = tuple(dataclasses.replace(k, **change) if k.tag == tag else k for k in info.known_defects)
    return dict(records, **{op: dataclasses.replace(info, known_defects=kds)})


# --- the register -----------------------------------------------------------------------------

def test_every_register_entry_has_exactly_one_declaration_and_back(defects, records):
    assert declared.register_problems(defects, records) == []
    ids = {i for name, info in records.items() for k in info.known_defects for i in k.register_ids(name)}
    assert ids == {d.id for d in register.catalog_entries(defects)}


def test_negative_control_an_undeclared_entry_or_a_missing_entry_is_caught(defects, records):
    assert declared.register_problems(defects, _without(records, "topk", "tie_misroute")) == [
        "register entry topk__tie_misroute: no KnownDefect('tie_misroute') on op 'topk'"]
    gone = [d for d in defects if d.id != "topk__tie_misroute"]
    assert declared.register_problems(gone, records) == [
        "KnownDefect('tie_misroute') of topk: register id topk__tie_misroute has 0 entries in defects.json, not 1"]
    # a second register id the declaration does not list
    assert declared.register_problems(defects, _changed(records, "pad", "constant_value_grad", register=())) != []


def test_negative_control_fatal_and_revealed_by_must_match_the_entry(defects, records):
    flipped = _changed(records, "topk", "tie_misroute", fatal=True)
    assert declared.register_problems(defects, flipped) == [
        "register entry topk__tie_misroute: its KnownDefect is fatal, but the reproducer does not isolate"]
    shown = _changed(records, "topk", "tie_misroute", revealed_by="vmap")
    assert declared.register_problems(defects, shown) == [
        "register entry topk__tie_misroute: transform '', but only vmap shows it"]
    first = _changed(records, "cumprod", "zero_second_order", revealed_by="first_order")
    assert len(declared.register_problems(defects, first)) == 1


def test_fatal_declarations_are_the_isolated_entries_of_the_catalog(defects, records):
    """The fatal flags (what tests that run in-process skip) are exactly the declarations
    whose register entries isolate, apart from an entry of its own for a crashing form
    (pad's constant_value_grad_crash) of a class that does not crash in the catalog."""
    fatal = {(n, k.tag) for n, info in records.items() for k in info.known_defects if k.fatal}
    isolated = {(d.op, d.klass) for d in register.catalog_entries(defects)
                if d.isolate and not d.id.endswith("_crash")}
    assert fatal == isolated and fatal


# --- the catalog ----------------------------------------------------------------------------

def test_every_catalog_tag_is_declared_and_every_declaration_tags_the_catalog(defects, records):
    assert declared.catalog_problems(catalog.catalog(), records, defects) == []


def test_negative_control_an_undeclared_catalog_tag_is_caught(defects, records):
    problems = declared.catalog_problems(catalog.catalog(), _without(records, "partition", "broadcast_misroute"),
                                         defects)
    assert problems == ["catalog: op partition carries tag 'broadcast_misroute', which no KnownDefect "
                        "of partition declares"]
    extra = dict(records, topk=dataclasses.replace(
        records["topk"], known_defects=records["topk"].known_defects + (KnownDefect("never_tagged"),)))
    assert any("never_tagged" in p for p in declared.catalog_problems(catalog.catalog(), extra, defects))


def test_a_tag_rule_on_a_declaration_tags_exactly_the_scenarios_it_holds_for():
    """Where a KnownDefect names its op's tag rule, the catalog carries the tag exactly
    where the rule holds (the op passes its scenarios through tag_by_rules)."""
    ruled = 0
    for s in catalog.catalog():
        for k in s.info.known_defects:
            if k.rule is not None and not s.must_refuse:
                ruled += 1
                assert k.rule(s) == (k.tag in s.defect_tags), (s.name, k.tag)
    assert ruled > 100


def test_derived_maps_follow_the_declarations(records):
    gmm = records["gather_mm"]
    assert gmm.conditional_tags["zero_size_unsorted"] == "!sorted_indices"
    assert gmm.revealed_by == {"segmented_second_order": "second_order"}
    assert set(gmm.fatal_tags) == {"zero_size", "zero_size_unsorted"}
    # negative control: one changed declaration changes what expects_defect reads
    changed = _changed(records, "gather_mm", "zero_size_unsorted", when=None)["gather_mm"]
    assert changed.expects_defect(("zero_size_unsorted",), {"sorted_indices": True})
    assert not gmm.expects_defect(("zero_size_unsorted",), {"sorted_indices": True})


# --- the regression corpus and the reproducers --------------------------------------------------

def test_every_corpus_class_is_declared(records):
    assert declared.corpus_problems(files.regressions(), records) == []


def test_negative_control_an_undeclared_corpus_class_is_caught(records):
    corpus = files.regressions()
    problems = declared.corpus_problems(corpus, _without(records, "full", "value_scaled"))
    assert problems and all("'value_scaled'" in p and "op full" in p for p in problems)
    # a corpus-only declaration whose entries are gone
    without = [e for e in corpus if e.meta.get("class") != "qmm_no_indices_shape"]
    assert declared.corpus_problems(without, records) == [
        "KnownDefect('qmm_no_indices_shape') of gather_qmm: unregistered, yet no corpus entry holds it"]


def test_every_register_entry_has_its_reproducer_file(defects):
    missing = [d.id for d in defects if not (ROOT / d.probe).is_file()]
    assert missing == []
    assert {p.stem for p in (ROOT / "probes" / "findings").glob("*.py")} == \
        {d.id for d in register.catalog_entries(defects)}


# --- the gate's first-patch ops -------------------------------------------------------------

def test_the_gates_target_is_read_from_the_records(records):
    from mlx_vjpcheck.judging import gate_verdict
    assert gate_verdict.TARGET == tuple(n for n, info in records.items() if info.first_patch)
    assert gate_verdict.TARGET == ("gather_mm", "gather_qmm")
