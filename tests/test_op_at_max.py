"""at_max (a.at[idx].maximum(v), Scatter / SliceUpdate Max): the reference against
hand-computed values, its refusal at ties, the strategy's no-tie promise, semantic
mutants rejected by the catalog, and the pinned MLX verdicts. The mutants and
the strategy check are shared with tests/test_op_at_min.py."""
from __future__ import annotations

import numpy as np
import pytest

import scatter_slice_mutants as M
from conftest import needs_pinned_mlx


@pytest.fixture
def registry(monkeypatch):
    return M.use_plugins(monkeypatch)


def extremal(op, params, a, v, lhs=None, rhs=None, g=None):
    from mlx_vjpcheck import ops
    info = ops.get(op)
    inp = {"a": np.array(a, dtype=float), "v": np.array(v, dtype=float)}
    lhs = None if lhs is None else np.array(lhs)
    rhs = None if rhs is None else np.array(rhs)
    y = info.reference(inp, lhs, rhs, params)
    return y, None if g is None else info.reference_vjp(inp, np.array(g, dtype=float), lhs, rhs, params)


def test_rows_with_repeats_by_hand(registry):
    # row 0 written by v[0] and v[1], row 1 by v[2]
    y, d = extremal("at_max", {"form": "rows", "updates": "per"}, [[1, 8], [5, 0]],
                    [[4, 12], [9, 4], [-4, 2]], [0, 0, 1], g=[[1, 2], [3, 4]])
    assert y.tolist() == [[9, 12], [5, 2]]
    assert d["a"].tolist() == [[0, 0], [3, 0]]
    assert d["v"].tolist() == [[0, 2], [1, 0], [0, 4]]


def test_shared_value_winning_twice_counts_once(registry):
    y, d = extremal("at_max", {"form": "rows", "updates": "shared"}, [[1, 8]], [[6, -1]], [0, 0],
                    g=[[3, 5]])
    assert y.tolist() == [[6, 8]]
    assert d["a"].tolist() == [[0, 5]] and d["v"].tolist() == [[3, 0]]


def test_slice_form_by_hand(registry):
    # a.at[::-2, 1:3].maximum(v) on a 3x3: rows 2, 0 and columns 1, 2
    y, d = extremal("at_max", {"form": "slice", "updates": "per", "slices": [[None, None, -2], [1, 3, None]]},
                    [[0, 4, 8], [1, 5, 9], [2, 6, 10]], [[7, 3], [12, -8]], g=np.arange(9).reshape(3, 3) + 1)
    assert y.tolist() == [[0, 12, 8], [1, 5, 9], [2, 7, 10]]
    assert d["a"].tolist() == [[1, 0, 3], [4, 5, 6], [7, 0, 9]]
    assert d["v"].tolist() == [[8, 0], [2, 0]]


def test_a_tie_between_distinct_inputs_has_no_gradient(registry):
    _, d = extremal("at_max", {"form": "rows", "updates": "per"}, [[4, 1]], [[4, 0]], [0], g=[[1, 1]])
    assert np.isnan(d["a"][0, 0]) and np.isnan(d["v"][0, 0])
    assert d["a"][0, 1] == 1 and d["v"][0, 1] == 0


# --- strategy: no ties, and values far apart --------------------------------------------------

def competitors_apart(op, count=120):
    """Every drawn case: finite expected gradients, and the distinct values competing
    for one position at least 4 apart (the FD oracle moves each by at most 1.5)."""
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.fuzz import targets
    from mlx_vjpcheck.ops import at_set as S

    @settings(max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(targets.strategy(op, ("float32",)))
    def check(s):
        exp = expected.expected(s)
        assert all(np.isfinite(exp[f"grad:{n}"]).all() for n in s.wrt)
        inp, (lhs, rhs) = expected.logical_inputs(s), expected.indices(s)
        a, v = inp["a"].ravel(), inp["v"].ravel()
        for t, srcs in S.writes(inp["a"].shape, inp["v"].shape, lhs, rhs, s.params).items():
            vals = sorted([a[t]] + [v[k] for k in set(srcs)])
            assert all(y - x >= 4 for x, y in zip(vals, vals[1:])), s.description
    check()


def test_strategy_keeps_competitors_apart(registry):
    competitors_apart("at_max")


# --- semantic mutants (shared with at_min) ------------------------------------------------------

def _ungated_writes(ctx):
    """Every write of v gets its target's cotangent (the set/add rule, no comparison)."""
    from mlx_vjpcheck.ops import at_set as S
    dv = np.zeros(ctx.operands["v"].size)
    g = ctx.cot.ravel()
    for t, srcs in S.writes(ctx.operands["a"].shape, ctx.operands["v"].shape, ctx.lhs, ctx.rhs,
                            ctx.params).items():
        for s in srcs:
            dv[s] += g[t]
    return dv.reshape(ctx.operands["v"].shape)


def sum_rule(ctx):
    return {"a": ctx.cot, "v": _ungated_writes(ctx)}


def dv_ungated(ctx):
    return {"a": ctx.honest()["a"], "v": _ungated_writes(ctx)}


def mask_inverted(ctx):
    """a's gradient where a lost instead of where it won."""
    from mlx_vjpcheck import ops
    y = ops.get(ctx.op).reference(ctx.operands, ctx.lhs, ctx.rhs, ctx.params)
    return {"a": np.where(y == ctx.operands["a"], 0.0, ctx.cot), "v": ctx.honest()["v"]}


MUTANTS = [sum_rule, dv_ungated, mask_inverted]


@pytest.mark.parametrize("mutant", MUTANTS)
def test_semantic_mutants_are_rejected(registry, monkeypatch, mutant):
    assert M.caught(monkeypatch, "at_max", mutant), mutant.__name__


@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_tagged_scenarios(registry):
    got = M.statuses("at_max")
    assert {n for n, (st, _) in got.items() if st != "pass"} == {n for n, (_, tags) in got.items() if tags}
    assert {tags for _, tags in got.values()} == {(), ("tied_duplicates",), ("array_then_slice",)}
