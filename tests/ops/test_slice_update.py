"""slice_update and dynamic_slice: references against hand-computed values and
numpy slicing, MLX's update-shape rule, refusal of out-of-range starts, semantic
mutants (planted by helpers/wrong_vjp.py) rejected by the catalog, and the pinned
MLX verdicts (clean)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.ops import slice_update as T

A = np.arange(20.0).reshape(4, 5)
G = np.arange(20.0).reshape(4, 5) + 100


def _upd(params, u, start=None, a=A, g=G):
    inp = {"a": np.array(a, float), "u": np.array(u, float)}
    if start is not None:
        inp[T.START] = np.array(start)
    return T.reference(inp, params), T.reference_vjp(inp, np.array(g, float), params)


def test_dynamic_update_with_reversed_axes_by_hand():
    # axes (1, 0): start[0] = 3 is the column, start[1] = 1 the row
    y, d = _upd({"form": "dynamic", "axes": [1, 0]}, [[-1, -2], [-3, -4]], [3, 1])
    assert y[1:3, 3:5].tolist() == [[-1, -2], [-3, -4]]
    assert (y[0] == A[0]).all() and (y[:, :3] == A[:, :3]).all()
    assert d["u"].tolist() == [[108, 109], [113, 114]]
    assert (d["a"][1:3, 3:5] == 0).all() and d["a"].sum() == G.sum() - 108 - 109 - 113 - 114


def test_dynamic_lower_rank_update_spans_every_row():
    """MLX's rule: u (2,) against a (4, 5) with axes (1,) covers all four rows."""
    assert T.dynamic_extent((4, 5), (2,), [1]) == (4, 2)
    assert T.dynamic_extent((4, 5), (2,), [0]) == (1, 2)     # a listed missing axis: extent 1
    y, d = _upd({"form": "dynamic", "axes": [1]}, [7, 8], [2])
    assert (y[:, 2:4] == [7, 8]).all()
    assert d["u"].tolist() == [G[:, 2].sum(), G[:, 3].sum()]


def test_static_forms_agree_with_numpy_slicing():
    rng = np.random.RandomState(0)
    for slices in ([[None, None, -2], [1, 4, None]], [2, [None, None, None]], [[1, 3, None], 4],
                   [[None, None, None], [None, None, -1]]):
        key = tuple(s if isinstance(s, int) else slice(*s) for s in slices)
        shape = A[key].shape
        u = rng.randint(-4, 5, size=shape).astype(float)
        want = A.copy()
        want[key] = u
        y, d = _upd({"form": "static", "slices": slices}, u)
        assert y.tolist() == want.tolist(), slices
        assert d["u"].tolist() == G[key].tolist()
        added, d_add = _upd({"form": "static_add", "slices": slices}, u)
        want_add = A.copy()
        want_add[key] += u
        assert added.tolist() == want_add.tolist() and d_add["a"].tolist() == G.tolist()


def test_dynamic_slice_by_hand_and_out_of_range_refused():
    params = {"axes": [0], "size": [2, 3]}
    inp = {"a": A, T.START: np.array([1])}
    assert T.slice_reference(inp, params).tolist() == A[1:3, 0:3].tolist()
    da = T.slice_reference_vjp(inp, np.ones((2, 3)), params)["a"]
    assert da.sum() == 6 and (da[1:3, 0:3] == 1).all()
    with pytest.raises(ValueError, match="does not clamp"):
        T.slice_reference(dict(inp, **{T.START: np.array([3])}), params)


# --- semantic mutants ---------------------------------------------------------------------------

def _with_start(ctx, start=None, **params):
    """The reference VJP at another start or params; MLX's own where that is invalid."""
    operands = ctx.operands
    if start is not None and T.START in operands:
        operands = dict(operands, **{T.START: start(operands[T.START])})
    try:
        grads = ctx.s.info.reference_vjp(operands, ctx.cot, dict(ctx.params, **params))
    except ValueError:
        return ctx.honest()
    return {n: grads[n] for n in ctx.names}


def _axes_reversed(ctx):
    return _with_start(ctx, axes=ctx.params["axes"][::-1]) if "axes" in ctx.params else ctx.honest()


def _steps_unsigned(ctx):
    """A negative slice step read as positive."""
    if "slices" not in ctx.params:
        return ctx.honest()
    flip = [s if isinstance(s, int) or s[2] is None else [s[0], s[1], abs(s[2])]
            for s in ctx.params["slices"]]
    return _with_start(ctx, slices=flip)


UPDATE_MUTANTS = {
    "da_not_zeroed": lambda ctx: dict(ctx.honest(), a=ctx.cot),
    "start_ignored": lambda ctx: _with_start(ctx, start=np.zeros_like),
    "axes_reversed": _axes_reversed,
    "negative_step_ignored": _steps_unsigned,
}
SLICE_MUTANTS = {
    "placed_at_origin": lambda ctx: _with_start(ctx, start=np.zeros_like),
    "axes_reversed": _axes_reversed,
}


@pytest.mark.parametrize("name", sorted(UPDATE_MUTANTS))
def test_slice_update_mutants_are_rejected(name):
    assert W.caught("slice_update", UPDATE_MUTANTS[name], first_only=True), name


@pytest.mark.parametrize("name", sorted(SLICE_MUTANTS))
def test_dynamic_slice_mutants_are_rejected(name):
    assert W.caught("dynamic_slice", SLICE_MUTANTS[name], first_only=True), name


@pytest.mark.parametrize("op", ["slice_update", "dynamic_slice"])
def test_the_reference_vjp_through_the_same_wrapper_changes_nothing(op):
    assert W.honest_control(op)


@needs_pinned_mlx()
def test_pinned_mlx_passes_both_catalogs():
    for op, least in (("slice_update", 15), ("dynamic_slice", 7)):
        got = W.honest(op)
        assert len(got) >= least and all(st == "pass" for st in got.values()), op
