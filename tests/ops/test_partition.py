"""partition: the canonical reference (_support/sorting.py) against float64
differences, the fuzz strategy's promise, semantic mutants (plausible wrong
VJPs for Partition) each rejected by the catalog, and the tie_misroute
defect on MLX 0.32.4 with its root cause."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import sorting as S
from helpers import wrong_vjp as W


def test_reference_is_the_canonical_sorted_lane():
    from mlx_vjpcheck.ops import partition
    from mlx_vjpcheck.ops._support import sorting
    info = partition.OPS[0]
    assert info.reference is sorting.reference and info.reference_vjp is sorting.reference_vjp
    x = {"a": np.array([3.0, 1.0, 2.0])}
    assert info.reference(x, {"kth": 1, "axis": -1}).tolist() == [1, 2, 3]
    assert info.reference_vjp(x, np.array([5.0, 7.0, 9.0]), {"kth": -1, "axis": -1})["a"].tolist() == [9, 5, 7]


def test_hand_written_vjp_agrees_with_differences():
    """Every catalog scenario, ties included: with the tie rule's cotangents the
    function is smooth there, so differences must agree too. Complex ones as well
    (distinct real parts, or one cotangent per block of equal real parts); only the
    convention/real_part_tie scenarios sit where the lexicographic order is not
    locally constant, and there differences must refuse to decide."""
    from mlx_vjpcheck.ops import partition
    info = partition.OPS[0]
    got = S.check_against_differences("partition", info)
    assert len(got["agree"]) >= 10 and S.complex_counts(got["agree"]) >= 6, got
    assert got["undecided"] and all("/convention/real_part_tie/" in n for n in got["undecided"]), got


def test_strategy_cases_are_all_judged():
    """Generated ties always come with cotangents the reference can judge; complex64
    draws (distinct real parts, or a cotangent constant over each block of equal real
    parts) sit where differences confirm the hand-written VJP."""
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.fuzz import targets
    seen = set()

    @settings(max_examples=80, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(targets.strategy("partition", ("float32", "bfloat16", "complex64")))
    def check(s):
        exp = expected.expected(s)   # ReferenceUndecided would fail here
        assert np.all(np.isfinite(exp["forward"]))
        seen.add(s.description.split(",")[-2].strip())
        seen.add(s.dtype)
        if s.dtype == "complex64":   # drawn where a complex sort is differentiable: differences agree
            assert S.differentiable_here(s), s.description
            seen.add(f"complex64 {s.description.split(',')[-2].strip()}")
    check()
    assert {"distinct values", "ties values", "complex64 distinct values", "complex64 ties values"} <= seen, seen


# --- semantic mutants --------------------------------------------------------------------------
# A mutant replaces the VJP of the whole call: partition, then the reordering into ascending
# lanes. Its rule sees what Partition::vjp itself receives: MLX's partition of the input
# (in its unspecified order) and the cotangent the reordering's reverse hands to it.

def _partition_view(ctx):
    """(y, g): MLX's partition of the input and the cotangent that reaches it."""
    import mlx.core as mx
    axis = ctx.params.get("axis", -1)
    ax = 0 if axis is None else axis
    a, cot = ctx.operands["a"], ctx.cot
    single = np.complex64 if np.iscomplexobj(a) or np.iscomplexobj(cot) else np.float32
    y = mx.partition(mx.array(a.astype(single)), ctx.params["kth"], axis=axis)

    def reorder(t):
        return mx.take_along_axis(t, mx.argsort(mx.stop_gradient(t), axis=ax), axis=ax)
    _, (g,) = mx.vjp(reorder, [y], [mx.array(cot.astype(single))])
    double = np.complex128 if single is np.complex64 else np.float64
    return np.array(y).astype(double), np.array(g).astype(double)


_positions, _scattered = S.positions, S.scattered


def _lanewise(rule):
    """A wrong Partition VJP built lane by lane: rule(x_lane, y_lane, g_lane) -> dx_lane."""
    return S.lanewise(rule, view=_partition_view)


def _as_if_sorted(x, y, g):
    """The cotangent routed as if partition's output were fully sorted (argsort
    instead of the forward's own order)."""
    dx = np.zeros(len(x), dtype=np.result_type(x.dtype, g.dtype))
    dx[np.argsort(x, kind="stable")] = g
    return dx


MUTANTS = {
    "routed_as_if_sorted": _as_if_sorted,
    # the forward's gather used as the VJP: dx[j] = g[pos[j]] instead of dx[pos[q]] = g[q]
    "gathered_not_scattered": lambda x, y, g: np.asarray(g)[_positions(x, y)],
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_is_rejected(mutant):
    assert W.caught("partition", _lanewise(MUTANTS[mutant]), first_only=True), mutant


def test_the_true_routing_planted_the_same_way_passes_everything():
    """Control: routing by the forward's own arrangement passes every scenario, the
    tie_misroute ones included: what they demand is reachable by a correct rule."""
    st = W.statuses("partition", _lanewise(_scattered))
    assert st and set(st.values()) == {"pass"}, st



# --- complex64: mutants that differ from the truth only on complex input -----------------------

@pytest.mark.parametrize("mutant", sorted(S.COMPLEX_MUTANTS))
def test_complex_mutant_is_rejected_by_complex_scenarios_only(mutant):
    """A conjugated cotangent, a dropped imaginary part, and routing by the real parts
    alone are each rejected, and only by complex scenarios (on real input each is the
    true rule). The real-part order differs from MLX's lexicographic one only inside
    a block of equal real parts carrying different cotangents: exactly the
    convention/real_part_tie scenarios reject it."""
    S.assert_complex_only("partition", mutant, view=_partition_view)


# --- MLX 0.32.4: clean except the tie_misroute scenarios, whose probe says "present" -----------

@needs_pinned_mlx()
def test_catalog_on_pinned_mlx():
    tagged = {s.name for s in W.scenarios("partition") if s.defect_tags}
    st = W.honest("partition")
    assert st and {v for n, v in st.items() if n not in tagged} == {"pass"}, st
    assert tagged and {st[n] for n in tagged} <= {"fail"}, st


@needs_pinned_mlx()
def test_tie_misroute_root_cause():
    """partition and argpartition arrange a lane with ties differently (argpartition
    breaks ties by index), so the argpartition Partition::vjp uses is not the
    forward's arrangement: the untied 1 sits in slot 2 but its gradient is slot 3's."""
    import mlx.core as mx
    x = mx.array([0.0, 0.0, 1.0, 0.0])
    assert np.array(mx.partition(x, 0)).tolist() == [0, 0, 1, 0]
    assert np.array(mx.take(x, mx.argpartition(x, 0))).tolist() == [0, 0, 0, 1]
    _, (dx,) = mx.vjp(lambda a: mx.partition(a, 0), [x], [mx.array([1.0, 2.0, 3.0, 4.0])])
    assert np.array(dx)[2] == 4.0   # the true value is 3.0, the cotangent of slot 2


@needs_pinned_mlx()
def test_tie_misroute_probe_says_present():
    probe = Path(__file__).resolve().parents[2] / "probes" / "findings" / "partition__tie_misroute.py"
    proc = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "VERDICT: defect present" in proc.stdout


@needs_pinned_mlx()
@pytest.mark.parametrize("name,code,verdict", [
    ("partition/defect/tie_misroute/minimal", 1, "defect present"),
    ("partition/defect/tie_misroute/fuzz_seed1", 1, "defect present"),
    ("partition/kth5/wide_lane", 0, "defect absent"),
])
def test_reproducer_verdict(tmp_path, name, code, verdict):
    from mlx_vjpcheck.cases import reproducer
    s = next(s for s in W.scenarios("partition") if s.name == name)
    script = tmp_path / "repro.py"
    script.write_text(reproducer.render(s, title=s.name))
    proc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == code and f"VERDICT: {verdict}" in proc.stdout, proc.stdout + proc.stderr
