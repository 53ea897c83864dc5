"""at_set (out[idx] = v, Scatter without reduction): the reference against
hand-computed values, its refusals where no derivative exists, the rendered
reproducer carrying those values, the strategy's promises, semantic mutants
(planted by helpers/wrong_vjp.py) rejected by the catalog, and the pinned MLX
verdicts."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.ops import at_set
from mlx_vjpcheck.ops._support import scatter as S

OP = "at_set"
INFO = at_set.OPS[0]


def _inputs(a, v, rows=None, cols=None) -> dict:
    inp = {"a": np.array(a, dtype=float), "v": np.array(v, dtype=float)}
    inp.update({n: np.array(x) for n, x in zip(S.INDEX_OPERANDS, (rows, cols)) if x is not None})
    return inp


def _ref(params, a, v, rows=None, cols=None, g=None):
    inp = _inputs(a, v, rows, cols)
    y = INFO.reference(inp, params)
    return y, None if g is None else INFO.reference_vjp(inp, np.array(g, dtype=float), params)


G = [[1, 2], [3, 4], [5, 6]]
A = [[1, 2], [3, 4], [5, 6]]


def test_rows_unique_by_hand():
    y, d = _ref({"form": "rows", "updates": "per"}, A, [[7, 8], [9, 10]], [2, 0], g=G)
    assert y.tolist() == [[9, 10], [3, 4], [7, 8]]
    assert d["a"].tolist() == [[0, 0], [3, 4], [0, 0]]
    assert d["v"].tolist() == [[5, 6], [1, 2]]


def test_shared_value_written_twice_counts_once():
    # idx [1, 1, 0]: slot 0 -> row 1 (twice), slot 1 -> row 0
    y, d = _ref({"form": "rows", "updates": "shared"}, A, [[7, 8], [9, 10]], [1, 1, 0], g=G)
    assert y.tolist() == [[9, 10], [7, 8], [5, 6]]
    assert d["a"].tolist() == [[0, 0], [0, 0], [5, 6]]
    assert d["v"].tolist() == [[3, 4], [1, 2]]


def test_cols_broadcast_by_hand():
    y, d = _ref({"form": "cols", "updates": "broadcast"}, [[1, 2, 3], [4, 5, 6]], [[5], [6]], cols=[2, 0, 2],
                g=[[1, 2, 3], [4, 5, 6]])
    assert y.tolist() == [[5, 2, 5], [6, 5, 6]]
    assert d["a"].tolist() == [[0, 2, 0], [0, 5, 0]]
    assert d["v"].tolist() == [[4], [10]]


def test_points_by_hand():
    y, d = _ref({"form": "points", "updates": "per"}, A, [7, 8], [0, 2], [1, 0], g=G)
    assert y.tolist() == [[1, 7], [3, 4], [8, 6]]
    assert d["a"].tolist() == [[1, 0], [3, 4], [0, 6]]
    assert d["v"].tolist() == [2, 5]


def test_index_array_then_slice_by_hand():
    # a[[2, 0], 1:] = v on a 3x2: column 1 of rows 2 and 0
    y, d = _ref({"form": "rows_slice", "updates": "per", "cols": [1, None, None]}, A, [[7], [8]], [2, 0], g=G)
    assert y.tolist() == [[1, 8], [3, 4], [5, 7]]
    assert d["a"].tolist() == [[1, 0], [3, 4], [5, 0]]
    assert d["v"].tolist() == [[6], [2]]


def test_per_occurrence_repeats_have_no_dv_and_unequal_writes_no_forward():
    from mlx_vjpcheck.core.numeric import ReferenceUndecided
    y, d = _ref({"form": "rows", "updates": "per"}, A, [[7, 8], [7, 8]], [1, 1], g=G)
    assert y.tolist() == [[1, 2], [7, 8], [5, 6]]
    assert d["a"].tolist() == [[1, 2], [0, 0], [5, 6]]
    assert np.isnan(d["v"]).all()          # which write counted is MLX's order: undefined
    with pytest.raises(ReferenceUndecided):
        _ref({"form": "rows", "updates": "per"}, A, [[7, 8], [9, 8]], [1, 1])


# --- the rendered reproducer, on the hand examples -----------------------------------------------

HAND = {   # updates mode -> (rows, forward, d a, d v) with v = [[7, 8], [9, 10]] and cotangent G
    "per": ([2, 0], [[9, 10], [3, 4], [7, 8]], [[0, 0], [3, 4], [0, 0]], [[5, 6], [1, 2]]),
    "shared": ([1, 1, 0], [[9, 10], [7, 8], [5, 6]], [[0, 0], [0, 0], [5, 6]], [[3, 4], [1, 2]]),
}


def _reproducer(mode, tmp_path):
    """(exit code, the float64 values the script compares MLX with) for a hand example."""
    from mlx_vjpcheck.cases import bind, reproducer
    from mlx_vjpcheck.core.scenario import Scenario
    from mlx_vjpcheck.core.tensors import tensor
    s = bind(Scenario(name=f"at_set/hand/{mode}", op=OP,
                      operands={"a": tensor(A), "v": tensor([[7, 8], [9, 10]]), **S.index_operands(HAND[mode][0])},
                      wrt=("a", "v"), params={"form": "rows", "updates": mode}, cotangent=tensor(G)))
    text = reproducer.render(s, title=s.name)
    want = {"np": np}
    exec(next(line for line in text.splitlines() if line.startswith("want = ")), want)
    script = tmp_path / f"{mode}.py"
    script.write_text(text)
    rc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, timeout=300).returncode
    return rc, {k: w.tolist() for k, w in want["want"].items()}


@pytest.mark.parametrize("mode", sorted(HAND))
def test_reproducer_carries_the_hand_values(mode, tmp_path):
    pytest.importorskip("mlx.core")
    _, want = _reproducer(mode, tmp_path)
    _, y, da, dv = HAND[mode]
    assert want == {"forward": y, "grad:a": da, "grad:v": dv}


@needs_pinned_mlx()
def test_pinned_mlx_reproducer_exit_codes(tmp_path):
    """Distinct rows: MLX agrees (0); a shared row written twice: duplicate_writes (1)."""
    assert _reproducer("per", tmp_path)[0] == 0
    assert _reproducer("shared", tmp_path)[0] == 1


# --- the strategy's promises ------------------------------------------------------------------

def test_strategy_never_claims_an_undefined_gradient():
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.fuzz import targets

    @settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(targets.strategy(OP, ("float32",)))
    def check(s):
        exp = expected.expected(s)
        assert all(np.isfinite(exp[f"grad:{n}"]).all() for n in s.wrt), s.description
    check()


# --- semantic mutants -------------------------------------------------------------------------

def _sum_rule(ctx):
    """Overwritten positions keep their gradient (the scatter-add rule)."""
    return dict(ctx.honest(), a=ctx.cot)


def _updates_dropped(ctx):
    return dict(ctx.honest(), v=np.zeros(ctx.operands["v"].shape))


def _occurrences_reversed(ctx):
    """Each update gets the cotangent of another occurrence's target."""
    axis = 1 if ctx.params["form"] == "cols" else 0
    honest = ctx.honest()
    return dict(honest, **({"v": np.flip(honest["v"], axis=axis)} if "v" in honest else {}))


@pytest.mark.parametrize("mutant", [_sum_rule, _updates_dropped, _occurrences_reversed])
def test_semantic_mutants_are_rejected(mutant):
    assert W.caught(OP, mutant, first_only=True), mutant.__name__


def test_the_reference_vjp_through_the_same_wrapper_changes_nothing():
    assert W.honest_control(OP)


@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_tagged_scenarios():
    got = {s.name: (W.honest(OP)[s.name], s.defect_tags) for s in W.scenarios(OP)}
    assert {n for n, (st, tags) in got.items() if st != "pass"} == \
        {n for n, (st, tags) in got.items() if {"duplicate_writes", "array_then_slice"} & set(tags)}
    assert {tags for _, tags in got.values()} == {(), ("duplicate_writes",), ("array_then_slice",)}
    assert len(got) >= 10
