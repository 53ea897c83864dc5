"""The regression corpus (harness/regressions/) and the scenario-file loader
(harness/cases/files.py): findings are scenarios."""
from __future__ import annotations

import dataclasses
import json
import re

import pytest

from conftest import ROOT, needs_pinned_mlx, run_cli
from mlx_vjpcheck.cases import catalog, files, register
from mlx_vjpcheck.core import scenario as scenario_mod

CORPUS = ROOT / "harness" / "regressions"


@pytest.fixture(scope="module")
def corpus():
    return files.regressions()


# --- the corpus as data ------------------------------------------------------------

def test_one_entry_per_signature_named_after_it(corpus):
    assert len(corpus) >= 15
    for e in corpus:
        sig = e.meta["signature"]
        assert e.kind == "regression"
        assert e.source.endswith(f"{sig}.json")
        assert e.scenario.name == f"regress/{sig}"
        assert re.fullmatch(r"[A-Za-z0-9_.+-]+", sig)
        assert e.scenario.op == sig.split("__")[0]
        assert e.scenario.defect_tags == (e.meta["class"],)
    assert len({e.meta["signature"] for e in corpus}) == len(corpus)


def test_every_entry_records_its_pristine_status_and_scope(corpus):
    for e in corpus:
        p = e.meta["pristine"]
        assert p["mlx"] and p["device"] == "cpu" and p["status"] in ("fail", "error", "crashed")
        assert e.expects_defect
        assert isinstance(e.in_scope, bool)
        if not e.in_scope:
            assert e.reason.strip()


def test_corpus_files_are_strict_json(corpus):
    for path in sorted(CORPUS.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        json.loads(text, parse_constant=lambda c: pytest.fail(f"{path.name}: {c}"))


def test_corpus_names_do_not_collide_with_the_catalog(corpus):
    names = {s.name for s in catalog.catalog()}
    assert not names & {e.scenario.name for e in corpus}


def test_the_corpus_is_package_data():
    tomllib = pytest.importorskip("tomllib")
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "regressions/*.json" in cfg["tool"]["setuptools"]["package-data"]["mlx_vjpcheck"]
    assert not (CORPUS / "__init__.py").exists()   # data, not a stage


@needs_pinned_mlx()
def test_recorded_status_and_signature_hold_on_the_pinned_wheel(corpus):
    """Each entry still reproduces on the pinned MLX: the runner's status is the recorded
    one, and the fuzzer's engine names the same signature (a crash in a worker too)."""
    from mlx_vjpcheck.fuzz import pool
    from mlx_vjpcheck.running import runner
    scenarios = [e.scenario for e in corpus]
    status = {r["scenario"]: r["status"] for r in runner.run(scenarios, ["cpu"])}
    with pool.Worker("cpu") as w:
        for e in corpus:
            assert status[e.scenario.name] == e.meta["pristine"]["status"], e.scenario.name
            assert w.run(e.scenario, 0).signature == e.meta["signature"]


def test_negative_control_a_tampered_entry_is_caught(tmp_path, corpus):
    """The checks above must be able to fail: a wrong status or a missing reason is refused."""
    e = corpus[0]
    d = json.loads((CORPUS / f"{e.meta['signature']}.json").read_text())
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps(dict(d, pristine={"status": "wonderful"})))
    with pytest.raises(files.ScenarioFileError, match="status"):
        files.load_entries(bad)
    no_reason = {k: v for k, v in d.items() if k != "out_of_scope_reason"}   # whichever entry is first
    bad.write_text(json.dumps(dict(no_reason, in_scope=False)))
    with pytest.raises(files.ScenarioFileError, match="out_of_scope_reason"):
        files.load_entries(bad)
    (ok,) = files.load_entries(CORPUS / f"{e.meta['signature']}.json")
    assert ok.meta["pristine"]["status"] != "pass"


# --- every register class goes through the corpus -----------------------------------

# Register classes with no corpus entry of their own, and why (each reason is checked
# on the pinned MLX below). The fuzzer names their minimal scenario with the signature
# of an entry already in the corpus (one entry per signature: an exception or a crash is
# named by its failing site alone, not by the call form):
SHARED_SIGNATURE = {
    "gather_mm__rank2_segments": "gather_mm__vjp__vjp_exception__exception-ValueError-scatter_add_axis__any",
    "gather_qmm__rank2_segments": "gather_qmm__vjp__vjp_exception__exception-ValueError-scatter_add_axis__any",
    "gather_mm__zero_size_unsorted": "gather_mm__vjp__vjp_exception__crash-signal-SIGFPE__any",
}
# The forward itself kills the process: the fuzzer counts the case invalid (no gradient
# defect to sign), so no signature can name it; the reproducer still shows it.
FORWARD_DIES = ("gather_qmm__zero_rows", "gather_qmm__zero_size")


def uncovered(defects, corpus) -> list:
    """Register ids with neither a corpus entry of their op and class nor a listed reason."""
    have = {(e.scenario.op, e.meta["class"]) for e in corpus}
    listed = set(SHARED_SIGNATURE) | set(FORWARD_DIES)
    return [d.id for d in defects if (d.op, d.klass) not in have and d.id not in listed]


def scope_disagreements(defects, corpus) -> list:
    """Corpus entries whose in_scope is not what the register says (fixed by the series)."""
    fixed = {(d.op, d.klass): d.status == "fixed" for d in defects}
    return [e.meta["signature"] for e in corpus
            if (e.scenario.op, e.meta["class"]) in fixed and e.in_scope != fixed[(e.scenario.op, e.meta["class"])]]


def test_every_register_class_has_a_corpus_entry_or_a_reason(corpus):
    defects = register.catalog_entries(register.load())   # the sweep's classes have no scenario
    assert uncovered(defects, corpus) == []
    have = {(e.scenario.op, e.meta["class"]) for e in corpus}
    ids = {d.id: d for d in defects}
    for i in list(SHARED_SIGNATURE) + list(FORWARD_DIES):   # a reason for a class that is gone, or stale
        assert i in ids and (ids[i].op, ids[i].klass) not in have, i
    assert set(SHARED_SIGNATURE.values()) <= {e.meta["signature"] for e in corpus}
    assert scope_disagreements(defects, corpus) == []


def test_negative_control_a_missing_entry_or_a_wrong_scope_is_caught(corpus):
    defects = register.catalog_entries(register.load())
    e = next(e for e in corpus if e.meta["class"] == "untransposed_factor")
    assert uncovered(defects, [x for x in corpus if x is not e]) == ["hadamard_transform__untransposed_factor"]
    flipped = dataclasses.replace(e, in_scope=not e.in_scope)
    assert scope_disagreements(defects, [flipped]) == [e.meta["signature"]]


@needs_pinned_mlx()
def test_the_listed_reasons_hold_on_the_pinned_wheel():
    from mlx_vjpcheck.fuzz import pool
    ids = {d.id: d for d in register.load()}
    with pool.Worker("cpu") as w:
        for i, sig in SHARED_SIGNATURE.items():
            assert w.run(ids[i].bound_scenario(), 0).signature == sig, i
        for i in FORWARD_DIES:
            out = w.run(ids[i].bound_scenario(), 0)
            assert out.status == "invalid" and "died in the forward" in out.reason, i


# --- loading scenario files ----------------------------------------------------------

def _finding(tmp_path, name="f.json", s=None):
    s = s or catalog.catalog()[0]
    p = tmp_path / name
    p.write_text(json.dumps({"schema": files.FINDING_SCHEMA, "signature": "x", "scenario": s.to_dict(),
                             "record": {}}))
    return p


def test_catalog_file_round_trips(tmp_path):
    chosen = catalog.catalog()[:5]
    p = tmp_path / "cat.json"
    p.write_text(scenario_mod.dump_catalog(chosen))
    entries = files.load_entries(p)
    assert [e.scenario for e in entries] == chosen
    assert [e.expects_defect for e in entries] == [s.expects_defect for s in chosen]
    assert {e.kind for e in entries} == {"catalog"}


def test_a_fuzz_output_directory_loads_its_findings(tmp_path):
    cat = catalog.catalog()
    (tmp_path / "findings").mkdir()
    _finding(tmp_path / "findings", "a.json", cat[0])
    _finding(tmp_path / "findings", "b.json", cat[1])
    for index in ("findings.json", "campaign.json", "environment.json"):
        (tmp_path / index).write_text("[]" if index == "findings.json" else "{}")
    (tmp_path / "findings" / "a_repro.py").write_text("print()\n")
    entries = files.load_entries(tmp_path)
    assert [e.scenario.name for e in entries] == [cat[0].name, cat[1].name]
    assert all(e.kind == "finding" and e.expects_defect for e in entries)


def test_the_corpus_directory_loads_as_scenarios(corpus):
    assert [s.name for s in files.load(CORPUS)] == [e.scenario.name for e in corpus]


@pytest.mark.parametrize("content, fragment", [
    ("{not json", "not strict JSON"),
    ('{"schema": "mlx-vjpcheck/scenario/1", "scenarios": [{"x": NaN}]}', "not strict JSON"),
    ('{"schema": "something/else"}', "neither a scenario catalog"),
    ('[1, 2]', "neither a scenario catalog"),
    ('{"schema": "%s", "scenarios": {}}' % scenario_mod.SCHEMA, "list of scenarios"),
    ('{"schema": "%s", "scenario": 3}' % files.FINDING_SCHEMA, "must be a JSON object"),
    ('{"schema": "mlx-vjpcheck/fuzz-finding/2", "scenario": {}}', "is not read by this release"),
    ('{"schema": "mlx-vjpcheck/regression/1", "scenario": {}}', "is not read by this release"),
    ('{"schema": "mlx-vjpcheck/scenario/2", "scenarios": []}', "written by mlx-vjpcheck < 0.3"),
])
def test_bad_files_are_refused_in_one_line(tmp_path, content, fragment):
    p = tmp_path / "bad.json"
    p.write_text(content)
    with pytest.raises(files.ScenarioFileError) as e:
        files.load_entries(p)
    assert fragment in str(e.value) and "\n" not in str(e.value) and str(p) in str(e.value)


def test_inconsistent_scenarios_are_refused(tmp_path):
    s = catalog.catalog()[0].to_dict()
    for change, fragment in ((dict(op="nope"), "unknown op"),
                             (dict(wrt=["zz"]), "wrt"),
                             (dict(operands={"a": s["operands"]["a"]}), "operands"),
                             (dict(name=""), "non-empty name")):
        p = tmp_path / "one.json"
        p.write_text(json.dumps({"schema": scenario_mod.SCHEMA, "scenarios": [dict(s, **change)]}))
        with pytest.raises(files.ScenarioFileError, match=fragment):
            files.load_entries(p)
    short = dict(s, operands=dict(s["operands"], a=dict(s["operands"]["a"], values=[1.0])))
    p.write_text(json.dumps({"schema": scenario_mod.SCHEMA, "scenarios": [short]}))
    with pytest.raises(files.ScenarioFileError, match="values"):
        files.load_entries(p)


def test_duplicate_names_and_missing_paths_are_refused(tmp_path):
    _finding(tmp_path, "a.json")
    _finding(tmp_path, "b.json")
    with pytest.raises(files.ScenarioFileError, match="appears twice"):
        files.load_entries(tmp_path)
    with pytest.raises(files.ScenarioFileError, match="no such file"):
        files.load_entries(tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(files.ScenarioFileError, match="no scenario files"):
        files.load_entries(empty)


def test_native_cli_refuses_bad_scenarios_before_building(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    p = run_cli("native", "--scenarios", bad, "--out", tmp_path / "out", "--build-dir", tmp_path / "b")
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "not strict JSON" in lines[0] and "Traceback" not in p.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "b").exists()
