"""sort: the canonical reference (_support/sorting.py, shared with topk and
partition) against hand-computed values and float64 differences, the tie
rule, the fuzz strategy's promise, and semantic mutants (plausible wrong VJPs
for Sort) each rejected by the catalog."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.ops._support import lanes as L


# --- reference: hand-computed, and the tie rule -----------------------------------------------

def test_reference_by_hand():
    from mlx_vjpcheck.ops import sort
    x = {"a": np.array([[3.0, 1.0, 2.0], [0.0, 5.0, -1.0]])}
    g = np.array([[10.0, 20.0, 30.0], [1.0, 2.0, 3.0]])
    assert sort.reference(x, {"axis": -1}).tolist() == [[1, 2, 3], [-1, 0, 5]]
    # output p holds input order[p]: the cotangent goes back there (a scatter)
    assert sort.reference_vjp(x, g, {"axis": -1})["a"].tolist() == [[30, 10, 20], [2, 3, 1]]
    assert sort.reference(x, {"axis": 0}).tolist() == [[0, 1, -1], [3, 5, 2]]
    assert sort.reference_vjp(x, g, {"axis": 0})["a"].tolist() == [[1, 20, 3], [10, 2, 30]]
    assert sort.reference(x, {"axis": None}).tolist() == [-1, 0, 1, 2, 3, 5]


def test_tie_rule():
    """Ties are judged only with equal cotangents on the tied block."""
    from mlx_vjpcheck.core.numeric import ReferenceUndecided
    from mlx_vjpcheck.ops import sort
    x = {"a": np.array([6.0, 2.0, 6.0])}
    with pytest.raises(ReferenceUndecided):
        sort.reference_vjp(x, np.array([1.0, 2.0, 3.0]), {"axis": -1})
    assert sort.reference_vjp(x, np.array([1.0, 4.0, 4.0]), {"axis": -1})["a"].tolist() == [4, 1, 4]


def test_hand_written_vjp_agrees_with_differences():
    """Every catalog scenario, ties included: with the tie rule's cotangents the
    function is smooth there, so differences must agree too."""
    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.core import numeric
    from mlx_vjpcheck.ops import sort
    info = sort.OPS[0]
    scenarios = W.scenarios("sort")
    for s in scenarios:
        inputs = expected.logical_inputs(s)
        g = expected.cotangent(s, info.reference(inputs, s.params))
        hand = info.reference_vjp(inputs, g, s.params)["a"]
        diff = numeric.vjp_by_differences(lambda v: info.reference(v, s.params), inputs, g, ("a",))
        assert np.allclose(hand, diff["a"], rtol=0, atol=1e-8), s.name
    assert len(scenarios) >= 10


def test_strategy_cases_are_all_judged():
    """Generated ties always come with cotangents the reference can judge."""
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.fuzz import targets
    seen = set()

    @settings(max_examples=80, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(targets.strategy("sort", ("float32", "bfloat16")))
    def check(s):
        exp = expected.expected(s)   # ReferenceUndecided would fail here
        assert np.all(np.isfinite(exp["forward"]))
        seen.add(s.description.split(",")[-2].strip())
    check()
    assert {"distinct values", "ties values"} <= seen, seen


# --- semantic mutants --------------------------------------------------------------------------

def _positions(x_lane, y_lane) -> list:
    """Where each output value came from (first unused equal input)."""
    used, out = set(), []
    for v in y_lane:
        j = next(j for j in range(len(x_lane)) if x_lane[j] == v and j not in used)
        used.add(j)
        out.append(j)
    return out


def _lanewise(rule):
    """A wrong VJP built lane by lane from the input x, the sorted output y and the
    cotangent g: rule(x_lane, y_lane, g_lane) -> dx_lane."""
    def backward(ctx):
        axis, x = ctx.params.get("axis", -1), ctx.operands["a"]
        y = ctx.s.info.reference(ctx.operands, ctx.params)
        xl, yl, gl = L.to_lanes(x, axis), L.to_lanes(y, axis), L.to_lanes(ctx.cot, axis)
        dx = np.zeros(xl.shape)
        for lane in np.ndindex(xl.shape[:-1]):
            dx[lane] = rule(xl[lane], yl[lane], gl[lane])
        return {"a": L.lanes_to_input(dx, x.shape, axis)}
    return backward


def _scattered(x, y, g):
    """The true routing: each output's cotangent to the input that holds its value."""
    dx = np.zeros(len(x))
    dx[_positions(x, y)] = g
    return dx


def _descending(x, y, g):
    dx = np.zeros(len(x))
    dx[np.argsort(x, kind="stable")[::-1]] = g
    return dx


MUTANTS = {
    # the forward's gather used as the VJP: dx[j] = g[pos[j]] instead of dx[pos[q]] = g[q]
    "gathered_not_scattered": lambda x, y, g: np.asarray(g)[_positions(x, y)],
    "descending_order": _descending,
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_is_rejected(mutant):
    assert W.caught("sort", _lanewise(MUTANTS[mutant]), first_only=True), mutant


def test_the_true_routing_planted_the_same_way_passes_everything():
    """Control: the true routing through the same wrapper passes every scenario."""
    st = W.statuses("sort", _lanewise(_scattered))
    assert st and set(st.values()) == {"pass"}, st


# --- MLX 0.32.4: clean ------------------------------------------------------------------------------

@needs_pinned_mlx()
def test_catalog_passes_on_pinned_mlx():
    st = W.honest("sort")
    assert st and set(st.values()) == {"pass"}, st
    assert not any(s.defect_tags for s in W.scenarios("sort"))


@needs_pinned_mlx()
def test_reproducer_says_absent(tmp_path):
    from mlx_vjpcheck.cases import reproducer
    s = next(s for s in W.scenarios("sort") if s.name == "sort/ties/axis0")
    script = tmp_path / "repro.py"
    script.write_text(reproducer.render(s, title=s.name))
    proc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and "VERDICT: defect absent" in proc.stdout, proc.stdout + proc.stderr
