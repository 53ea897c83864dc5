"""at_multiply (a.at[key].multiply / divide with int and slice keys, SliceUpdate
Prod): hand-computed reference, the product rule with repeated writes, semantic
mutants rejected by the catalog, and the pinned MLX facts: a clean catalog, and
no VJP at all for index-array keys (Scatter Prod)."""
from __future__ import annotations

import numpy as np
import pytest

import scatter_slice_mutants as M
from conftest import needs_pinned_mlx


@pytest.fixture
def registry(monkeypatch):
    return M.use_plugins(monkeypatch)


def _ref(params, a, v, g):
    from mlx_vjpcheck.ops import at_multiply as T
    inp = {"a": np.array(a, dtype=float), "v": np.array(v, dtype=float)}
    g = np.array(g, dtype=float)
    return T.reference(inp, None, None, params), T.reference_vjp(inp, g, None, None, params)


def test_strided_slice_by_hand():
    # a.at[0:2, ::2].multiply(v): columns 0 and 2 of both rows
    y, d = _ref({"form": "slice", "updates": "per", "slices": [[0, 2, None], [None, None, 2]]},
                [[1, 2, 3], [4, 5, 6]], [[2, 0], [-1, 3]], [[1, 1, 1], [1, 2, 1]])
    assert y.tolist() == [[2, 2, 0], [-4, 5, 18]]
    assert d["a"].tolist() == [[2, 1, 0], [-1, 2, 3]]
    assert d["v"].tolist() == [[1, 3], [4, 6]]


def test_divide_by_hand():
    y, d = _ref({"form": "slice", "updates": "per", "slices": [0, [None, None, None]], "divide": True},
                [[2, 3]], [0.5, -2], [[1, 2]])
    assert y.tolist() == [[4, -1.5]]
    assert d["a"].tolist() == [[2, -1]]
    assert d["v"].tolist() == [-8, -1.5]       # g a (-1 / v^2)


def test_repeated_writes_get_one_product_term_each():
    """For the day MLX differentiates Scatter Prod: rows [0, 0] multiply twice."""
    from mlx_vjpcheck.ops import at_set as S
    inp = {"a": np.array([[2.0]]), "v": np.array([[3.0], [5.0]])}
    params = {"form": "rows", "updates": "per"}
    assert S.reference_of("prod")(inp, np.array([0, 0]), None, params).tolist() == [[30]]
    d = S.reference_vjp_of("prod")(inp, np.array([[1.0]]), np.array([0, 0]), None, params)
    assert d["a"].tolist() == [[15]] and d["v"].tolist() == [[10], [6]]


def _da_unscaled(ctx):
    return {"a": ctx.cot, "v": ctx.honest()["v"]}


def _dv_without_a(ctx):
    """d v as if out = a + v over the region: the cotangent alone, no factor a."""
    from mlx_vjpcheck.ops import at_set as S
    dv = np.zeros(ctx.operands["v"].size)
    for t, srcs in S.writes(ctx.operands["a"].shape, ctx.operands["v"].shape, None, None,
                            ctx.params).items():
        for s in srcs:
            dv[s] += ctx.cot.ravel()[t]
    return {"a": ctx.honest()["a"], "v": dv.reshape(ctx.operands["v"].shape)}


def _dv_negated(ctx):
    return {"a": ctx.honest()["a"], "v": -np.asarray(ctx.honest()["v"])}


@pytest.mark.parametrize("mutant", [_da_unscaled, _dv_without_a, _dv_negated])
def test_semantic_mutants_are_rejected(registry, monkeypatch, mutant):
    assert M.caught(monkeypatch, "at_multiply", mutant), mutant.__name__


@needs_pinned_mlx()
def test_pinned_mlx_passes_the_catalog(registry):
    got = M.statuses("at_multiply")
    assert len(got) >= 8 and all(st == "pass" for st, _ in got.values())


@needs_pinned_mlx()
def test_pinned_mlx_records_the_missing_rule_for_index_array_keys(registry):
    """at_multiply_indexed (has_vjp=False): forwards with repeats right, VJP refused."""
    got = M.statuses("at_multiply_indexed")
    assert len(got) >= 5 and all(st == "pass" for st, _ in got.values())


@needs_pinned_mlx()
def test_pinned_mlx_has_no_vjp_for_index_array_keys():
    """Recorded as a missing rule, not a defect: Scatter Prod raises in its VJP."""
    import mlx.core as mx
    a, v = mx.array([[1.0, 2.0], [3.0, 4.0]]), mx.array([[2.0, 2.0], [3.0, 3.0]])
    idx = mx.array([1, 1])
    for fn in (lambda a, v: a.at[idx].multiply(v), lambda a, v: a.at[idx].divide(v)):
        mx.eval(fn(a, v))   # the forward works
        with pytest.raises(RuntimeError, match="VJP not implemented for scatter_prod"):
            mx.eval(mx.vjp(fn, [a, v], [mx.ones((2, 2))])[1])
