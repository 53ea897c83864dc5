"""at_max and at_min (a.at[idx].maximum / minimum(v), Scatter / SliceUpdate Max /
Min), both declared in ops/at_max.py: the reference against hand-computed values,
its refusal at ties, the strategy's no-tie promise, semantic mutants (planted by
helpers/wrong_vjp.py) rejected by the catalog of each op, and the pinned MLX
verdicts."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.ops import at_max
from mlx_vjpcheck.ops._support import scatter as S

OPS = ("at_max", "at_min")
RECORDS = {info.name: info for info in at_max.OPS}


def test_at_min_is_declared_after_at_max():
    assert tuple(RECORDS) == OPS


def extremal(op, params, a, v, rows=None, cols=None, g=None):
    info = RECORDS[op]
    inp = {"a": np.array(a, dtype=float), "v": np.array(v, dtype=float)}
    inp.update({n: np.array(x) for n, x in zip(S.INDEX_OPERANDS, (rows, cols)) if x is not None})
    y = info.reference(inp, params)
    return y, None if g is None else info.reference_vjp(inp, np.array(g, dtype=float), params)


def test_rows_with_repeats_by_hand():
    # row 0 written by v[0] and v[1], row 1 by v[2]
    y, d = extremal("at_max", {"form": "rows", "updates": "per"}, [[1, 8], [5, 0]],
                    [[4, 12], [9, 4], [-4, 2]], [0, 0, 1], g=[[1, 2], [3, 4]])
    assert y.tolist() == [[9, 12], [5, 2]]
    assert d["a"].tolist() == [[0, 0], [3, 0]]
    assert d["v"].tolist() == [[0, 2], [1, 0], [0, 4]]


def test_shared_value_winning_twice_counts_once():
    y, d = extremal("at_max", {"form": "rows", "updates": "shared"}, [[1, 8]], [[6, -1]], [0, 0],
                    g=[[3, 5]])
    assert y.tolist() == [[6, 8]]
    assert d["a"].tolist() == [[0, 5]] and d["v"].tolist() == [[3, 0]]


def test_slice_form_by_hand():
    # a.at[::-2, 1:3].maximum(v) on a 3x3: rows 2, 0 and columns 1, 2
    y, d = extremal("at_max", {"form": "slice", "updates": "per", "slices": [[None, None, -2], [1, 3, None]]},
                    [[0, 4, 8], [1, 5, 9], [2, 6, 10]], [[7, 3], [12, -8]], g=np.arange(9).reshape(3, 3) + 1)
    assert y.tolist() == [[0, 12, 8], [1, 5, 9], [2, 7, 10]]
    assert d["a"].tolist() == [[1, 0, 3], [4, 5, 6], [7, 0, 9]]
    assert d["v"].tolist() == [[8, 0], [2, 0]]


def test_a_tie_between_distinct_inputs_has_no_gradient():
    _, d = extremal("at_max", {"form": "rows", "updates": "per"}, [[4, 1]], [[4, 0]], [0], g=[[1, 1]])
    assert np.isnan(d["a"][0, 0]) and np.isnan(d["v"][0, 0])
    assert d["a"][0, 1] == 1 and d["v"][0, 1] == 0


def test_min_cols_with_repeats_by_hand():
    # a[:, [1, 1]] .minimum: column 1 gets min(a, v[:, 0], v[:, 1]) row by row
    y, d = extremal("at_min", {"form": "cols", "updates": "per"}, [[0, 4], [8, -4]],
                    [[-8, 12], [16, 20]], cols=[1, 1], g=[[1, 2], [3, 4]])
    assert y.tolist() == [[0, -8], [8, -4]]
    assert d["a"].tolist() == [[1, 0], [3, 4]]
    assert d["v"].tolist() == [[2, 0], [0, 0]]


def test_min_broadcast_value_written_twice_counts_once():
    y, d = extremal("at_min", {"form": "points", "updates": "broadcast"}, [[4, 0]], [-4], [0, 0], [0, 0],
                    g=[[3, 5]])
    assert y.tolist() == [[-4, 0]]
    assert d["a"].tolist() == [[0, 5]] and d["v"].tolist() == [3]


# --- strategy: no ties, and values far apart --------------------------------------------------

@pytest.mark.parametrize("op", OPS)
def test_strategy_keeps_competitors_apart(op):
    """Every drawn case: finite expected gradients, and the distinct values competing
    for one position at least 4 apart (the FD oracle moves each by at most 1.5)."""
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.fuzz import targets

    @settings(max_examples=120, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(targets.strategy(op, ("float32",)))
    def check(s):
        exp = expected.expected(s)
        assert all(np.isfinite(exp[f"grad:{n}"]).all() for n in s.wrt)
        inp = expected.logical_inputs(s)
        a, v = inp["a"].ravel(), inp["v"].ravel()
        for t, srcs in S.writes(inp["a"].shape, inp["v"].shape, *S.indices_of(inp), s.params).items():
            vals = sorted([a[t]] + [v[k] for k in set(srcs)])
            assert all(y - x >= 4 for x, y in zip(vals, vals[1:])), s.description
    check()


# --- semantic mutants, for both ops -------------------------------------------------------------

def _ungated_writes(ctx):
    """Every write of v gets its target's cotangent (the set/add rule, no comparison)."""
    a, v = ctx.operands["a"], ctx.operands["v"]
    dv, g = np.zeros(v.size), ctx.cot.ravel()
    for t, srcs in S.writes(a.shape, v.shape, *S.indices_of(ctx.operands), ctx.params).items():
        for s in srcs:
            dv[s] += g[t]
    return dv.reshape(v.shape)


def sum_rule(ctx):
    return dict(ctx.honest(), a=ctx.cot, v=_ungated_writes(ctx))


def dv_ungated(ctx):
    return dict(ctx.honest(), v=_ungated_writes(ctx))


def mask_inverted(ctx):
    """a's gradient where a lost instead of where it won."""
    y = ctx.s.info.reference(ctx.operands, ctx.params)
    return dict(ctx.honest(), a=np.where(y == ctx.operands["a"], 0.0, ctx.cot))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("mutant", [sum_rule, dv_ungated, mask_inverted])
def test_semantic_mutants_are_rejected(op, mutant):
    assert W.caught(op, mutant, first_only=True), (op, mutant.__name__)


@pytest.mark.parametrize("op", OPS)
def test_the_reference_vjp_through_the_same_wrapper_changes_nothing(op):
    assert W.honest_control(op)


@needs_pinned_mlx()
@pytest.mark.parametrize("op", OPS)
def test_pinned_mlx_fails_exactly_the_tagged_scenarios(op):
    got = {s.name: (W.honest(op)[s.name], s.defect_tags) for s in W.scenarios(op)}
    assert {n for n, (st, _) in got.items() if st != "pass"} == {n for n, (_, tags) in got.items() if tags}
    assert {tags for _, tags in got.values()} == {(), ("tied_duplicates",), ("array_then_slice",)}
