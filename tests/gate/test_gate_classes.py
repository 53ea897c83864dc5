"""What the gate holds a patch to, class by class, on each executor; error inputs in the
C++ suite's records. No MLX build: rows and records written here, the real catalog."""
from __future__ import annotations

from mlx_vjpcheck.cases import catalog, files
from mlx_vjpcheck.oracles import FIRST_ORDER
from mlx_vjpcheck.gate import inputs as GI
from mlx_vjpcheck.gate import compare as GC
from mlx_vjpcheck.native import suite as native_suite


def _row(name, op, pristine, patched, expects=True):
    return {"scenario": name, "op": op, "device": "cpu", "pristine": pristine, "patched": patched,
            "expects_defect": expects, "source": "catalog", "in_scope": True}


def _outcome(rows, first_order):
    return {"comparison": {"rows": rows}, "gate": {"defect_tags_first_order": first_order}}


def test_a_scenario_is_held_once_every_class_on_it_is_fixed():
    """A scenario tagged with a fixed class and a class the patch leaves alone fails on both
    as pre-existing; one whose every class is fixed must pass (negative control)."""
    rows = [_row("q/left", "gather_qmm", "fail", "pass"),            # fixes quantized_left
            _row("q/untransposed", "gather_qmm", "error", "error"),  # quantized_left + transpose_false
            _row("q/left/2", "gather_qmm", "fail", "pass")]
    tags = {"q/left": ["quantized_left"], "q/untransposed": ["quantized_left", "transpose_false_scales"],
            "q/left/2": ["quantized_left"]}
    code, _, lines = GC.overall(_outcome(rows, tags))
    assert code == 0 and "1 fail on both (pre-existing)" in lines[1], lines
    rows[2] = _row("q/left/2", "gather_qmm", "fail", "crashed")     # every class fixed, still broken
    code, _, lines = GC.overall(_outcome(rows, tags))
    assert code == 1 and "not passing patched: q/left/2" in lines[1], lines


def test_the_first_order_tags_decide_not_second_order_ones():
    """A crash on a scenario whose first-order class the patch fixes fails the gate even when
    the scenario also carries a second-order class the patch does not fix."""
    rows = [_row("g/zero_M", "gather_qmm", "crashed", "pass"), _row("g/zero_N", "gather_qmm", "crashed", "crashed")]
    outcome = _outcome(rows, {"g/zero_M": ["zero_size"], "g/zero_N": ["zero_size"]})
    outcome["gate"]["defect_tags"] = {"g/zero_M": ["zero_size"], "g/zero_N": ["zero_size", "transpose_false_second_order"]}
    code, _, lines = GC.overall(outcome)
    assert code == 1 and "not passing patched: g/zero_N" in lines[1], lines


def test_biting_tags_resolve_conditions_and_oracles():
    entries = files.catalog_entries(catalog.catalog())
    every, first = GC.biting_tags(entries), GC.biting_tags(entries, FIRST_ORDER)
    by = {e.scenario.name: e.scenario for e in entries}
    # a class that bites on the sorted variant only is no tag of the unsorted one
    unsorted = [n for n, s in by.items() if s.op == "gather_mm" and "segmented_second_order" in s.defect_tags
                and not s.params.get("sorted_indices")]
    assert unsorted and all("segmented_second_order" not in every.get(n, ()) for n in unsorted)
    # second order only: among all of a sorted scenario's tags, never among its first-order ones
    second = [n for n, s in by.items() if s.op == "gather_mm" and s.params.get("sorted_indices")
              and "segmented_second_order" in s.defect_tags]
    assert second and all("segmented_second_order" in every[n] for n in second)
    assert all("segmented_second_order" not in first.get(n, ()) for n in second)
    assert set(first) <= set(every) and all(set(first[n]) <= set(every[n]) for n in first)


def test_the_native_comparison_expects_only_what_first_order_checks_show():
    entries = [e for e in files.catalog_entries(catalog.catalog()) if e.scenario.op == "gather_mm"]
    only_second = next(e for e in entries if e.expects_defect and not e.scenario.expects_defect_under(FIRST_ORDER))
    both = next(e for e in entries if e.scenario.expects_defect_under(FIRST_ORDER))
    runs = {v: native_suite.NativeRun(records=[{"scenario": e.scenario.name, "device": "cpu", "status": "pass",
                                                "checks": [], "error": None} for e in (only_second, both)])
            for v in GI.VARIANTS}
    rows = {r["scenario"]: r for r in GC.comparison([only_second, both], runs, [], FIRST_ORDER)["rows"]}
    assert rows[only_second.scenario.name]["expects_defect"] is False
    assert rows[both.scenario.name]["expects_defect"] is True
    # the harness (every oracle) expects both
    rows = {r["scenario"]: r for r in GC.comparison([only_second, both], runs, [])["rows"]}
    assert rows[only_second.scenario.name]["expects_defect"] is True


def test_an_error_input_the_cpp_forward_accepts_is_an_error_record():
    s = next(s for s in catalog.catalog() if s.must_refuse and s.op == "gather_mm")
    accepted = {"scenario": s.name, "device": "cpu", "status": "pass", "error": None,
                "checks": [{"name": "forward", "kind": "reference", "passed": True}]}
    rec = native_suite.refusal(s, accepted)
    assert rec["status"] == "error" and rec["checks"] == [] and "refused" in rec["error"]
    refused = {"scenario": s.name, "device": "cpu", "status": "error", "checks": [],
               "error": "std::runtime_error: [GatherMM::eval] Currently only supports float32."}
    assert native_suite.refusal(s, refused) == refused
    ordinary = next(x for x in catalog.catalog() if x.op == "gather_mm" and not x.must_refuse)
    assert native_suite.refusal(ordinary, dict(accepted, scenario=ordinary.name))["status"] == "pass"


def test_a_class_fixed_in_first_order_holds_its_other_scenarios():
    """A scenario patched passes in every gradient-rule oracle (a second-order failure left)
    fixes its class: the class's other scenarios are held (the C++ suite, which has no
    second-order check, sees the same)."""
    rows = [_row("q/zero_M", "gather_qmm", "crashed", "fail"), _row("q/zero_N", "gather_qmm", "crashed", "crashed")]
    tags = {"q/zero_M": ["zero_size"], "q/zero_N": ["zero_size"]}
    fails = {"q/zero_M": {"pristine": ["crashed"], "patched": ["second_order"]},
             "q/zero_N": {"pristine": ["crashed"], "patched": ["crashed"]}}
    outcome = _outcome(rows, tags)
    outcome["gate"]["failing"] = {"harness": fails}
    code, _, lines = GC.overall(outcome)
    assert code == 1 and "not passing patched: q/zero_N" in lines[1], lines
    # negative control: zero_M still failing a first-order check fixes nothing
    fails["q/zero_M"]["patched"] = ["reference"]
    code, _, lines = GC.overall(outcome)
    assert "not passing patched" not in lines[1], lines


def test_a_series_manifest_claims_classes_and_ops(tmp_path):
    """A wrong fix that changes no outcome of its op is still held to what the series'
    manifest (series.json) says it fixes; classes are per op."""
    import json

    from mlx_vjpcheck.gate import patch as P
    (tmp_path / "series").write_text("01.diff\n10-pad.diff\n")
    (tmp_path / "series.json").write_text(json.dumps({"schema": "mlx-vjpcheck/patch-series/1", "patches": [
        {"file": "10-pad.diff", "findings": [{"op": "pad", "class": "constant_value_grad"}]},
        {"file": "99-not-listed.diff", "findings": [{"op": "at_max", "class": "tied_duplicates"}]}]}))
    claims = P.claims(tmp_path / "series")
    assert claims == [("pad", "constant_value_grad")]
    rows = [_row("g/left", "gather_mm", "fail", "pass"), _row("pad/value", "pad", "fail", "fail"),
            _row("at_set/slice", "at_set", "fail", "pass"), _row("at_max/slice", "at_max", "fail", "fail"),
            _row("at_max/ties", "at_max", "fail", "pass")]
    tags = {"g/left": ["left_selection"], "pad/value": ["constant_value_grad"],
            "at_set/slice": ["array_then_slice"], "at_max/slice": ["array_then_slice"],
            "at_max/ties": ["tied_duplicates"]}
    outcome = _outcome(rows, tags)
    code, scope, lines = GC.overall(outcome)
    # at_max is in scope, but at_set's array_then_slice is not at_max's: pre-existing there
    assert code == 0 and "at_max" in scope["ops"] and "pad" not in scope["ops"], lines
    outcome["gate"]["claims"] = [list(c) for c in claims]
    code, scope, lines = GC.overall(outcome)
    assert code == 1 and "pad" in scope["ops"] and "not passing patched: pad/value" in lines[1], lines
    # without a manifest, or for one diff, there are no claims
    (tmp_path / "one.diff").write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
    assert P.claims(tmp_path / "one.diff") is None
    (tmp_path / "series.json").write_text("{")
    import pytest
    with pytest.raises(P.PatchError):
        P.claims(tmp_path / "series")


def test_the_native_comparison_expects_no_transform_class_of_the_corpus():
    """A corpus entry of a class only second order shows (segmented_second_order) is not
    expected of the C++ suite, which checks first order; a first-order entry still is."""
    corpus = [e for e in files.regressions() if e.scenario.op == "gather_mm"]
    second = next(e for e in corpus if e.meta["class"] == "segmented_second_order")
    first = next(e for e in corpus if e.meta["class"] == "left_selection")
    runs = {v: native_suite.NativeRun(records=[{"scenario": e.scenario.name, "device": "cpu", "status": "pass",
                                                "checks": [], "error": None} for e in (second, first)])
            for v in GI.VARIANTS}
    rows = {r["scenario"]: r for r in GC.comparison([second, first], runs, [], FIRST_ORDER)["rows"]}
    assert rows[second.scenario.name]["expects_defect"] is False
    assert rows[first.scenario.name]["expects_defect"] is True
    rows = {r["scenario"]: r for r in GC.comparison([second, first], runs, [])["rows"]}
    assert rows[second.scenario.name]["expects_defect"] is True
