"""topk: the reference against hand-computed values and float64 differences,
the tie rule at the selection boundary, the fuzz strategy's promise, semantic
mutants (plausible wrong VJPs for Partition behind a slice) each rejected by
the catalog, and the tie_misroute defect on MLX 0.32.4."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import sorting as S
from helpers import wrong_vjp as W


def _info():
    from mlx_vjpcheck.ops import topk
    return topk.OPS[0]


# --- reference: hand-computed, and the tie rule -----------------------------------------------

def test_reference_by_hand():
    info = _info()
    x = {"a": np.array([3.0, 1.0, 2.0])}
    assert info.reference(x, {"k": 2, "axis": -1}).tolist() == [2, 3]
    assert info.reference_vjp(x, np.array([5.0, 7.0]), {"k": 2, "axis": -1})["a"].tolist() == [7, 0, 5]
    assert info.reference_vjp(x, np.zeros(0), {"k": 0, "axis": -1})["a"].tolist() == [0, 0, 0]


def test_tie_rule():
    """A tied block the top-k selection cuts is judged only with zero cotangent;
    one it keeps whole, with equal cotangents."""
    from mlx_vjpcheck.core.numeric import ReferenceUndecided
    x = {"a": np.array([6.0, 2.0, 6.0])}
    vjp = _info().reference_vjp
    with pytest.raises(ReferenceUndecided):
        vjp(x, np.array([1.0]), {"k": 1, "axis": -1})
    assert vjp(x, np.array([0.0]), {"k": 1, "axis": -1})["a"].tolist() == [0, 0, 0]
    assert vjp(x, np.array([3.0, 3.0]), {"k": 2, "axis": -1})["a"].tolist() == [3, 0, 3]


def test_hand_written_vjp_agrees_with_differences():
    """Every catalog scenario, ties included: with the tie rule's cotangents the
    function is smooth there, so differences must agree too. Complex ones as well
    (distinct real parts, or one cotangent per block of equal real parts); only the
    convention/real_part_tie scenarios sit where the lexicographic order is not
    locally constant, and there differences must refuse to decide."""
    info = _info()
    got = S.check_against_differences("topk", info)
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
    @given(targets.strategy("topk", ("float32", "bfloat16", "complex64")))
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
# A mutant replaces the VJP of the whole call: topk, then the reordering into ascending
# lanes. Its rule sees the selected values y ascending and their cotangents g in the same
# order (what topk's own VJP receives, put in that order).

_positions, _lanewise, _scattered = S.positions, S.lanewise, S.scattered


def _from_primal(x, y, g):
    """put_along_axis into the primal instead of zeros_like(primal)."""
    dx = np.array(x, dtype=np.result_type(x.dtype, g.dtype))
    dx[_positions(x, y)] = g
    return dx


def _shifted(offset):
    """The cotangents written `offset` sorted places too low (offset None: onto the
    k smallest inputs)."""
    def rule(x, y, g):
        n, k = len(x), len(y)
        start = n - k - (n - k if offset is None else offset)
        dx = np.zeros(n, dtype=np.result_type(x.dtype, g.dtype))
        dx[np.argsort(x, kind="stable")[start:start + k]] = g
        return dx
    return rule


MUTANTS = {
    "from_primal_not_zeros": _from_primal,
    "k_smallest": _shifted(None),
    "boundary_off_by_one": _shifted(1),
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_is_rejected(mutant):
    assert W.caught("topk", _lanewise(MUTANTS[mutant]), first_only=True), mutant


def test_the_true_routing_planted_the_same_way_passes_everything():
    """Control: the true routing through the same wrapper passes every scenario, the
    tie_misroute ones included: what they demand is reachable by a correct rule."""
    st = W.statuses("topk", _lanewise(_scattered))
    assert st and set(st.values()) == {"pass"}, st



# --- complex64: mutants that differ from the truth only on complex input -----------------------

@pytest.mark.parametrize("mutant", sorted(S.COMPLEX_MUTANTS))
def test_complex_mutant_is_rejected_by_complex_scenarios_only(mutant):
    """A conjugated cotangent, a dropped imaginary part, and routing by the real parts
    alone are each rejected, and only by complex scenarios (on real input each is the
    true rule). The real-part order differs from MLX's lexicographic one only inside
    a block of equal real parts carrying different cotangents: exactly the
    convention/real_part_tie scenarios reject it."""
    S.assert_complex_only("topk", mutant)


# --- MLX 0.32.4: clean except the tie_misroute scenarios, whose probe says "present" -----------

@needs_pinned_mlx()
def test_catalog_on_pinned_mlx():
    tagged = {s.name for s in W.scenarios("topk") if s.defect_tags}
    st = W.honest("topk")
    assert st and {v for n, v in st.items() if n not in tagged} == {"pass"}, st
    assert tagged and {st[n] for n in tagged} <= {"fail"}, st


@needs_pinned_mlx()
def test_tie_misroute_probe_says_present():
    probe = Path(__file__).resolve().parents[2] / "probes" / "findings" / "topk__tie_misroute.py"
    proc = subprocess.run([sys.executable, str(probe)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "VERDICT: defect present" in proc.stdout


@needs_pinned_mlx()
@pytest.mark.parametrize("name,code,verdict", [
    ("topk/defect/tie_misroute/minimal", 1, "defect present"),
    ("topk/defect/tie_misroute/fuzz_seed1", 1, "defect present"),
    ("topk/k3/axis_none", 0, "defect absent"),
])
def test_reproducer_verdict(tmp_path, name, code, verdict):
    from mlx_vjpcheck.cases import reproducer
    s = next(s for s in W.scenarios("topk") if s.name == name)
    script = tmp_path / "repro.py"
    script.write_text(reproducer.render(s, title=s.name))
    proc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == code and f"VERDICT: {verdict}" in proc.stdout, proc.stdout + proc.stderr
