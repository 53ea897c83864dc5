"""at_set (out[idx] = v, Scatter without reduction): the reference against
hand-computed values, its refusals where no derivative exists, the strategy's
promises, semantic mutants rejected by the catalog, and the pinned MLX verdicts."""
from __future__ import annotations

import numpy as np
import pytest

import scatter_slice_mutants as M
from conftest import needs_pinned_mlx


@pytest.fixture
def registry(monkeypatch):
    return M.use_plugins(monkeypatch)


def _ref(params, a, v, lhs, rhs=None, g=None):
    from mlx_vjpcheck.ops import at_set
    inp = {"a": np.array(a, dtype=float), "v": np.array(v, dtype=float)}
    lhs = np.array(lhs)
    rhs = None if rhs is None else np.array(rhs)
    y = at_set.OPS[0].reference(inp, lhs, rhs, params)
    info = at_set.OPS[0]
    grads = None if g is None else info.reference_vjp(inp, np.array(g, dtype=float), lhs, rhs, params)
    return y, grads


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
    y, d = _ref({"form": "cols", "updates": "broadcast"}, [[1, 2, 3], [4, 5, 6]], [[5], [6]], [2, 0, 2],
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


def test_repro_snippet_matches_on_the_hand_examples():
    """The reproducer's second writing of the maths, run on the same inputs."""
    from mlx_vjpcheck.ops import at_set
    ns = {"np": np}
    exec(at_set.REPRO, ns)
    inp = {"a": np.array(A, float), "v": np.array([[7.0, 8.0], [9.0, 10.0]])}
    for params, lhs in (({"form": "rows", "updates": "shared"}, [1, 1, 0]),
                        ({"form": "rows", "updates": "per"}, [2, 0])):
        ours = _ref(params, inp["a"], inp["v"], lhs, g=G)
        y = ns["ref_forward"](inp, np.array(lhs), None, params)
        d = ns["ref_vjp"](inp, np.array(G, float), np.array(lhs), None, params)
        assert y.tolist() == ours[0].tolist()
        assert all(d[k].tolist() == ours[1][k].tolist() for k in ("a", "v"))


# --- the strategy's promises ------------------------------------------------------------------

def test_strategy_never_claims_an_undefined_gradient(registry):
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.fuzz import targets

    @settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(targets.strategy("at_set", ("float32",)))
    def check(s):
        exp = expected.expected(s)
        assert all(np.isfinite(exp[f"grad:{n}"]).all() for n in s.wrt), s.description
    check()


# --- semantic mutants -------------------------------------------------------------------------

def _sum_rule(ctx):
    """Overwritten positions keep their gradient (the scatter-add rule)."""
    return {"a": ctx.cot, "v": ctx.honest()["v"]}


def _updates_dropped(ctx):
    return {"a": ctx.honest()["a"], "v": np.zeros(ctx.operands["v"].shape)}


def _occurrences_reversed(ctx):
    """Each update gets the cotangent of another occurrence's target."""
    axis = 1 if ctx.params["form"] == "cols" else 0
    return {"a": ctx.honest()["a"], "v": np.flip(np.asarray(ctx.honest()["v"]), axis=axis)}


@pytest.mark.parametrize("mutant", [_sum_rule, _updates_dropped, _occurrences_reversed])
def test_semantic_mutants_are_rejected(registry, monkeypatch, mutant):
    assert M.caught(monkeypatch, "at_set", mutant), mutant.__name__


@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_tagged_scenarios(registry):
    got = M.statuses("at_set")
    assert {n for n, (st, tags) in got.items() if st != "pass"} == \
        {n for n, (st, tags) in got.items() if {"duplicate_writes", "array_then_slice"} & set(tags)}
    assert {tags for _, tags in got.values()} == {(), ("duplicate_writes",), ("array_then_slice",)}
    assert len(got) >= 10
