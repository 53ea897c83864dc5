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
from helpers import sorting as S
from helpers import wrong_vjp as W


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
    function is smooth there, so differences must agree too. Complex ones as well
    (distinct real parts, or one cotangent per block of equal real parts); only the
    convention/real_part_tie scenarios sit where the lexicographic order is not
    locally constant, and there differences must refuse to decide."""
    from mlx_vjpcheck.ops import sort
    info = sort.OPS[0]
    got = S.check_against_differences("sort", info)
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
    @given(targets.strategy("sort", ("float32", "bfloat16", "complex64")))
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

_positions, _lanewise, _scattered = S.positions, S.lanewise, S.scattered


def _descending(x, y, g):
    dx = np.zeros(len(x), dtype=np.result_type(x.dtype, g.dtype))
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



# --- complex64: mutants that differ from the truth only on complex input -----------------------

@pytest.mark.parametrize("mutant", sorted(S.COMPLEX_MUTANTS))
def test_complex_mutant_is_rejected_by_complex_scenarios_only(mutant):
    """A conjugated cotangent, a dropped imaginary part, and routing by the real parts
    alone are each rejected, and only by complex scenarios (on real input each is the
    true rule). The real-part order differs from MLX's lexicographic one only inside
    a block of equal real parts carrying different cotangents: exactly the
    convention/real_part_tie scenarios reject it."""
    S.assert_complex_only("sort", mutant)


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


@needs_pinned_mlx()
def test_complex_order_and_convention_on_pinned_mlx():
    """What the complex references rest on (MLX documents neither): MLX 0.32.4 sorts
    complex values lexicographically (equal real parts, -0.0 and 0.0 included, ordered
    by the imaginary part), stably, with every value that has a NaN part last in input
    order (numpy's complex order differs there); the reference's order is the same.
    Its VJP is the transposed permutation of the cotangent, unconjugated."""
    import mlx.core as mx
    from mlx_vjpcheck.ops._support import sorting
    lane = np.array([1 + 2j, complex(np.nan, 0), 1 - 1j, complex(-0.0, 3), 0 - 2j, complex(0, np.nan), -1 + 5j,
                     1 - 1j], dtype=np.complex64)
    order = np.array(mx.argsort(mx.array(lane))).tolist()
    assert order == [6, 4, 3, 2, 7, 0, 1, 5] == sorting.ascending(lane.astype(np.complex128)).tolist()
    assert np.argsort(lane, kind="stable").tolist() != order   # numpy puts nan+0j after 0+nanj
    assert np.array_equal(np.array(mx.sort(mx.array(lane))), lane[order], equal_nan=True)
    finite = lane[[0, 2, 3, 4, 6]]
    g = np.array([1 + 1j, 2 - 1j, 3 + 2j, -1 - 3j, 5 + 0j], dtype=np.complex64)
    _, (dx,) = mx.vjp(lambda a: mx.sort(a), [mx.array(finite)], [mx.array(g)])
    want = np.zeros(5, dtype=np.complex64)
    want[sorting.ascending(finite.astype(np.complex128))] = g
    assert np.array_equal(np.array(dx), want) and not np.array_equal(np.array(dx), np.conj(want))
