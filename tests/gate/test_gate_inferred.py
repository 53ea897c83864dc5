"""The gate judges a fix nobody told it about: the ops a diff's touched functions reach
(gate/touched.py), the classes of theirs the patch visibly acts on, held to passing, and a
scenario whose values change but still fail reported as "changed, not fixed". No MLX
build: C++ text, rows and records written here (the two wrong fixes of the issue, derived
from patch/14 and patch/37, are in tests/gate/data/ for the real gate runs)."""
from __future__ import annotations

from pathlib import Path

import pytest

from mlx_vjpcheck import ops
from mlx_vjpcheck.gate import compare as GC
from mlx_vjpcheck.gate import patch as P
from mlx_vjpcheck.gate import touched as T
from mlx_vjpcheck.judging import gate_verdict as V

DATA = Path(__file__).parent / "data"
MLX_SRC = Path("/tmp/mlx-src")

CPP = """namespace mlx::core {

namespace {

array partial(const array& a, const Stream& s) {
  return multiply(a, a, s);
}

} // namespace

std::vector<array> Power::vjp(
    const std::vector<array>& primals,
    const std::vector<array>& cotangents,
    const std::vector<int>& argnums,
    const std::vector<array>& outputs) {
  return {partial(primals[0], stream())};
}

std::vector<array> DivMod::vjp(
    const std::vector<array>& primals,
    const std::vector<array>& cotangents,
    const std::vector<int>& argnums,
    const std::vector<array>&) {
  return {zeros_like(primals[0], stream())};
}

std::pair<std::vector<array>, std::vector<int>> DivMod::vmap(
    const std::vector<array>& inputs,
    const std::vector<int>& axes) {
  return {{inputs[0]}, axes};
}

array
hadamard_transform(const array& a, std::optional<float> scale, StreamOrDevice s) {
  return a;
}

bool Power::is_equivalent(const Primitive& other) const;

} // namespace mlx::core
"""


def _edit(old: str, new: str) -> dict:
    return {"mlx/primitives.cpp": (CPP, CPP.replace(old, new))}


def test_a_changed_method_maps_to_the_ops_whose_records_name_its_primitive():
    touched = _edit("return {zeros_like(primals[0], stream())};", "return {cotangents[1]};")
    assert T.primitive_methods(touched, {"DivMod", "Power"}) == {"DivMod::vjp": ["mlx/primitives.cpp: DivMod::vjp"]}
    assert T.inferred_ops(touched, ops.registry().values()) == {"divmod": ["DivMod::vjp"]}


def test_a_changed_helper_counts_for_the_primitive_methods_that_call_it():
    touched = _edit("return multiply(a, a, s);", "return conjugate(multiply(a, a, s), s);")
    assert T.changed_functions(*touched["mlx/primitives.cpp"]) == ["partial"]
    got = T.infer(touched, ops.registry().values())
    assert got["ops"] == {"power": ["Power::vjp"]}
    assert got["functions"] == {"Power::vjp": ["mlx/primitives.cpp: Power::vjp (calls a changed helper)"]}


def test_an_op_function_and_a_vmap_map_by_name_and_primitive():
    touched = _edit("  return a;\n}", "  return multiply(a, a);\n}")
    assert T.inferred_ops(touched, ops.registry().values()) == {"hadamard_transform": ["hadamard_transform"]}
    touched = _edit("return {{inputs[0]}, axes};", "return {{inputs[1]}, axes};")
    assert T.inferred_ops(touched, ops.registry().values()) == {"divmod": ["DivMod::vmap"]}


def test_nothing_is_inferred_outside_functions_or_for_unchanged_text():
    """Negative controls: a comment between definitions, a declaration, an unchanged file."""
    assert T.inferred_ops(_edit("} // namespace\n\nstd::vector<array> Power",
                                "} // namespace\n\n// a note\nstd::vector<array> Power"), ops.registry().values()) == {}
    assert T.inferred_ops({"mlx/primitives.cpp": (CPP, CPP)}, ops.registry().values()) == {}
    assert T.inferred_ops({"python/mlx/nn/x.py": ("a", "b")}, ops.registry().values()) == {}
    assert [d[0] for d in T.definitions(CPP)] == ["partial", "Power::vjp", "DivMod::vjp", "DivMod::vmap",
                                                  "hadamard_transform"]


@pytest.mark.skipif(not (MLX_SRC / "mlx" / "primitives.cpp").is_file(), reason="needs an MLX checkout at /tmp/mlx-src")
@pytest.mark.parametrize("diff, op, methods", [
    (DATA / "wrong-power-exponent-unconjugated.diff", "power", ["Power::jvp", "Power::vjp"]),
    (DATA / "wrong-divmod-floor-sign.diff", "divmod", ["DivMod::jvp", "DivMod::vjp"])])
def test_the_wrong_fixes_reach_their_ops_on_the_real_source(diff, op, methods):
    touched = P.apply_all([(diff.name, diff.read_text())], lambda rel: (MLX_SRC / rel).read_text())
    assert T.inferred_ops(touched, ops.registry().values()) == {op: methods}


# --- judging on recorded results ------------------------------------------------------------------

def _check(name, observed, passed, tol=1e-5):
    return {"name": name, "observed": observed, "observed_shape": [len(observed)], "passed": passed,
            "atol": tol, "rtol": tol}


def _rec(name, status, grads):
    return {"scenario": name, "status": status,
            "checks": [_check(f"grad:{k}", v, ok) for k, (v, ok) in grads.items()]}


def _row(name, op, pristine, patched, expects=True):
    return {"scenario": name, "op": op, "device": "cpu", "pristine": pristine, "patched": patched,
            "expects_defect": expects, "source": "catalog", "in_scope": True}


def _outcome(pristine: list, patched: list, tags: dict, inferred: dict, expects=None) -> dict:
    """What the gate records (gate.json) for two builds' records, with the rows."""
    status = {v: {r["scenario"]: r["status"] for r in recs} for v, recs in (("pristine", pristine), ("patched", patched))}
    rows = [_row(n, n.split("/")[1], status["pristine"][n], status["patched"][n], (expects or {}).get(n, True))
            for n in status["pristine"]]
    records = {"pristine": pristine, "patched": patched}
    return {"comparison": {"rows": rows},
            "gate": {"defect_tags_first_order": tags, "failing": {"harness": V.failing_by_scenario(records)},
                     "changed_values": {"harness": V.value_changes(records)},
                     "partly_fixed": {"harness": V.partly_fixed(records)}, "inferred": {"ops": inferred}}}


POWER = "binary/power/complex64/reversed"
INFERRED = {"power": ["Power::vjp"]}
TAGS = {POWER: ["complex_power_unconjugated"]}


def test_a_wrong_fix_whose_values_change_but_still_fail_is_changed_not_fixed():
    """The issue's power case: the base's gradient is fixed, the exponent's is not; no
    outcome changes, so the automatic scope alone never sees power (negative control)."""
    before = [_rec(POWER, "fail", {"a": ([1.0, 2.0], False), "b": ([3.0, 4.0], False)})]
    after = [_rec(POWER, "fail", {"a": ([1.5, 2.5], True), "b": ([3.0, 4.0], False)})]
    outcome = _outcome(before, after, TAGS, INFERRED)
    assert outcome["gate"]["changed_values"]["harness"] == {POWER: ["grad:a"]}
    code, scope, lines = GC.overall(outcome)
    assert code == 1 and "power" in scope["ops"], lines
    assert f"changed, not fixed: {POWER}" in lines[1], lines
    assert "1 inferred from the functions the diff changes (power: complex_power_unconjugated; via power: " \
           "Power::vjp)" in lines[0] and "0 from the series' manifest" in lines[0], lines
    # without the inference power is out of scope and its scenario pre-existing: what the gate
    # did before (only "the patch changes no outcome" rejected this diff alone, never in a series)
    del outcome["gate"]["inferred"]
    code, scope, lines = GC.overall(outcome)
    assert scope["ops"] == [] and "1 fail on both (pre-existing)" in lines[1] and "changed" not in lines[1], lines


def test_the_real_fix_passes_and_an_untouched_class_stays_pre_existing():
    """Positive control: the fix passes its scenario; a second class of the same op whose
    values the diff does not change is not claimed (a diff may fix one class of an op)."""
    other = "binary/power/other"
    before = [_rec(POWER, "fail", {"a": ([1.0], False)}), _rec(other, "fail", {"a": ([7.0], False)})]
    after = [_rec(POWER, "pass", {"a": ([1.5], True)}), _rec(other, "fail", {"a": ([7.0], False)})]
    outcome = _outcome(before, after, dict(TAGS, **{other: ["another_class"]}), INFERRED)
    code, scope, lines = GC.overall(outcome)
    assert code == 0 and scope["inferred"] == [("power", "complex_power_unconjugated")], lines
    assert "1 fail on both (pre-existing)" in lines[1], lines
    # values that move from one wrong value to another mend no check: still pre-existing
    # (the real gather fix shifts gather_qmm's zero-size crashes into errors this way)
    after[1] = _rec(other, "fail", {"a": ([8.0], False)})
    code, scope, lines = GC.overall(_outcome(before, after, dict(TAGS, **{other: ["another_class"]}), INFERRED))
    assert code == 0 and "1 fail on both (pre-existing)" in lines[1], lines
    # negative control: a check of that class the diff mends while another still fails: held
    before[1] = _rec(other, "fail", {"a": ([7.0], False), "b": ([1.0], False)})
    after[1] = _rec(other, "fail", {"a": ([7.5], True), "b": ([1.0], False)})
    code, scope, lines = GC.overall(_outcome(before, after, dict(TAGS, **{other: ["another_class"]}), INFERRED))
    assert code == 1 and f"changed, not fixed: {other}" in lines[1], lines


def test_a_manifest_claim_and_an_inferred_one_are_told_apart():
    # the divmod case: d/da mended (0 -> 1), d/db's sign flipped (0 -> +floor)
    before = [_rec(POWER, "fail", {"a": ([1.0], False)}),
              _rec("binary/divmod/r", "fail", {"a": ([0.0], False), "b": ([0.0], False)})]
    after = [_rec(POWER, "pass", {"a": ([1.5], True)}),
             _rec("binary/divmod/r", "fail", {"a": ([1.0], True), "b": ([2.0], False)})]
    outcome = _outcome(before, after, dict(TAGS, **{"binary/divmod/r": ["divmod_remainder_zero_grad"]}),
                       {"power": ["Power::vjp"], "divmod": ["DivMod::vjp"]})
    outcome["gate"]["claims"] = [["power", "complex_power_unconjugated"]]
    code, scope, lines = GC.overall(outcome)
    assert scope["claims"] == [("power", "complex_power_unconjugated")]
    assert scope["inferred"] == [("divmod", "divmod_remainder_zero_grad")]
    assert "1 from the series' manifest (power: complex_power_unconjugated); 1 inferred" in lines[0], lines
    assert code == 1 and "changed, not fixed: binary/divmod/r" in lines[1], lines


def test_a_difference_within_the_checks_tolerance_is_no_change():
    """A recompiled unit's last-bit difference does not make a scenario "changed"; a shape
    change, a check only one build ran, and another status do."""
    a = [_rec("s", "fail", {"a": ([1.0, 2.0], False)})]
    assert V.value_changes({"pristine": a, "patched": [_rec("s", "fail", {"a": ([1.0 + 1e-9, 2.0], False)})]}) == {}
    assert V.value_changes({"pristine": a, "patched": [_rec("s", "fail", {"a": ([1.0], False)})]}) == {"s": ["grad:a"]}
    assert V.value_changes({"pristine": a, "patched": [_rec("s", "fail", {"b": ([1.0, 2.0], False)})]}) == \
        {"s": ["grad:a", "grad:b"]}
    assert V.value_changes({"pristine": a, "patched": [_rec("s", "error", {"a": ([1.0, 2.0], False)})]}) == \
        {"s": ["status"]}
    # a scenario that passes on either build is judged by its status, not here
    assert V.value_changes({"pristine": a, "patched": [_rec("s", "pass", {"a": ([9.0, 9.0], True)})]}) == {}


def test_partly_fixed_is_a_check_failing_pristine_and_passing_patched():
    a = _rec("s", "fail", {"a": ([1.0], False), "b": ([2.0], False)})
    assert V.partly_fixed({"pristine": [a], "patched": [_rec("s", "fail", {"a": ([3.0], True), "b": ([2.0], False)})]}) \
        == {"s": ["grad:a"]}
    # a check only the patched build ran (a crash that became a failure) mends nothing
    crashed = {"scenario": "s", "status": "crashed", "checks": []}
    assert V.partly_fixed({"pristine": [crashed], "patched": [a]}) == {}
    assert V.partly_fixed({"pristine": [a], "patched": [_rec("s", "error", {"a": ([9.0], False)})]}) == {}
