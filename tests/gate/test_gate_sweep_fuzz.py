"""The sweep's registered reproducers in the gate (exit 1 -> 0 fixed, 0 -> 1 a regression),
--fuzz over every op of the patch's scope, and the gather corner that left a broken fix
alive. No MLX build: recorded exit codes, campaign stats and the real catalog."""
from __future__ import annotations

from types import SimpleNamespace

from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.cli import gate as cli
from mlx_vjpcheck.gate import compare as GC
from mlx_vjpcheck.gate import pyfuzz
from mlx_vjpcheck.gate import suites
from mlx_vjpcheck.judging import gate_verdict as V

from test_gate_inferred import CPP


def _sweep(*pairs):
    return {"rows": [{"reproducer": f"r{i}", "pristine": a, "patched": b, "change": V.sweep_change(a, b)}
                     for i, (a, b) in enumerate(pairs)]}


def test_sweep_changes_read_from_exit_codes():
    assert [V.sweep_change(a, b) for a, b in ((1, 0), (0, 1), (1, 1), (0, 0), (0, -11), (125, 0), (1, -9))] == \
        ["fixed", "regression", "pre-existing", "", "regression", "not judged", "not judged"]


def test_a_sweep_regression_fails_the_gate_and_a_fix_counts_as_a_change():
    rows = [{"scenario": "s", "op": "sign", "device": "cpu", "pristine": "pass", "patched": "pass",
             "expects_defect": False, "source": "catalog", "in_scope": True}]
    fixed = {"comparison": {"rows": rows}, "gate": {"sweep_reproducers": _sweep((1, 0), (1, 1), (0, 0))}}
    code, _, lines = GC.overall(fixed)
    assert code == 0, lines   # the fix is a change: no "changes nothing"
    assert "3 registered; 1 fixed (exit 1 -> 0), 0 regressions" in lines[-1], lines
    broken = {"comparison": {"rows": rows}, "gate": {"sweep_reproducers": _sweep((1, 0), (0, 1))}}
    code, _, lines = GC.overall(broken)
    assert code == 1 and lines[-1].endswith("regressed: r1"), lines
    # negative control: no reproducer changed and no scenario either: the patch changes nothing
    code, _, lines = GC.overall({"comparison": {"rows": rows}, "gate": {"sweep_reproducers": _sweep((1, 1))}})
    assert code == 1 and "changes no scenario" in lines[-1], lines


def test_the_gate_runs_every_registered_sweep_reproducer():
    """The folder is the declarations' set (tests/sweep/test_known.py holds them equal)."""
    from mlx_vjpcheck.sweep import known
    assert {p.stem for p in suites.sweep_reproducers()} == \
        {k.id for k in known.KNOWN if not k.catalog and not k.limitation}
    assert cli.parser().parse_args(["--mlx-source", "a", "--mlx-build", "b", "--no-sweep"]).no_sweep


def _gate(touched=None, claims=None):
    return SimpleNamespace(touched=touched or {}, claims=claims)


def test_fuzz_plans_every_op_of_the_patch_scope():
    """Manifest claims and the ops the diff's functions reach, both gather ops once one is;
    --fixes names them itself; nothing reached: every op (the campaign's default)."""
    edit = {"mlx/primitives.cpp": (CPP, CPP.replace("return {zeros_like(primals[0], stream())};",
                                                    "return {cotangents[1]};"))}
    ops, how = pyfuzz.planned_ops(_gate(edit, [("pad", "constant_value_grad"), ("gather_mm", "left_selection")]), None)
    assert ops == ["divmod", "gather_mm", "gather_qmm", "pad"], (ops, how)
    assert pyfuzz.planned_ops(_gate(), ["sign", "pad"])[0] == ["pad", "sign"]
    assert pyfuzz.planned_ops(_gate(edit), "none")[0] == []
    assert pyfuzz.planned_ops(_gate(), None)[0] == []


def test_fuzz_fails_when_an_op_of_the_scope_got_no_case():
    camp = lambda per: {"stats": {"cases": 9, "cases_per_s": 1, "per_op": per}}  # noqa: E731
    summary = {"rows": [], "scope": ["pad"], "planned": ["divmod", "pad"]}
    both = {v: camp({"divmod": {"cases": 4}, "pad": {"cases": 5}}) for v in ("pristine", "patched")}
    code, line = pyfuzz.verdict(summary, both)
    assert code == 0 and "fuzzed 2/2 ops of the patch's scope" in line, line
    half = dict(both, patched=camp({"pad": {"cases": 9}}))
    code, line = pyfuzz.verdict(summary, half)
    assert code == 1 and "1 ops of the patch's scope got no fuzz case on a build (divmod)" in line, line


def test_the_rank0_right_index_with_a_2d_left_operand_is_a_catalog_scenario():
    """The corner a broken gather fix survived: the right-sorted path, a 0-d right index, a
    left operand without batch axes; expected to fail on the pinned MLX (it raises there)."""
    by = {s.name: s for s in catalog.catalog()}
    for name, left in (("gmm/grid/rank0/rhs/left2d/sorted", "a"), ("qmm4/grid/rank0/rhs/x2d/sorted", "x")):
        s = by[name]
        assert s.params["sorted_indices"] is True and s.expects_defect, name
        assert s.operands["rhs_indices"].shape == () and len(s.operands[left].shape) == 2, name
        assert "lhs_indices" not in s.operands, name
