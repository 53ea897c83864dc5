"""masked_scatter (a[mask] = v, MaskedScatter): the reference against hand-computed
values and against numpy's own boolean assignment, semantic mutants (planted by
helpers/wrong_vjp.py) rejected by the catalog, and the pinned MLX verdict (clean)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.ops import masked_scatter as T

OP = "masked_scatter"


def _ref(a, mask, v, g):
    inp = {"a": np.array(a, dtype=float), "mask": np.array(mask), "v": np.array(v, dtype=float)}
    return T.reference(inp, {}), T.reference_vjp(inp, np.array(g, dtype=float), {})


def test_full_mask_with_extra_source_by_hand():
    y, d = _ref([[1, 2, 3], [4, 5, 6]], [[1, 0, 1], [0, 1, 0]], [7, 8, 9, 10], [[1, 2, 3], [4, 5, 6]])
    assert y.tolist() == [[7, 2, 8], [4, 9, 6]]
    assert d["a"].tolist() == [[0, 2, 0], [4, 0, 6]]
    assert d["v"].tolist() == [1, 3, 5, 0]      # the fourth source value is never used


def test_row_mask_with_broadcast_row_by_hand():
    y, d = _ref([[1, 2], [3, 4], [5, 6]], [1, 0, 1], [7, 8], [[1, 2], [3, 4], [5, 6]])
    assert y.tolist() == [[7, 8], [3, 4], [7, 8]]
    assert d["a"].tolist() == [[0, 0], [3, 4], [0, 0]]
    assert d["v"].tolist() == [6, 8]


def test_scalar_source_sums_every_selected_cotangent():
    y, d = _ref([[1, 2], [3, 4]], [[0, 1], [1, 1]], 5, [[1, 2], [3, 4]])
    assert y.tolist() == [[1, 5], [5, 5]]
    assert float(d["v"]) == 9


def test_forward_agrees_with_numpy_boolean_assignment():
    rng = np.random.RandomState(0)
    for shape, k in (((3, 4), 2), ((2, 3, 4), 1), ((2, 3, 4), 2), ((5,), 1)):
        a = rng.randint(-4, 5, size=shape).astype(float)
        mask = rng.randint(0, 2, size=shape[:k])
        n = int(mask.sum())
        v = rng.randint(5, 10, size=(n,) + shape[k:]).astype(float)
        want = a.copy()
        want[mask.astype(bool)] = v
        y, _ = _ref(a, mask, v, np.ones(shape))
        assert y.tolist() == want.tolist(), (shape, k)


def _da_not_zeroed(ctx):
    return dict(ctx.honest(), a=ctx.cot)


def _paired(ctx, shift=0, ignore_mask=False):
    """d v with source k paired with the (k + shift)-th selected position, or with the
    k-th element of a whatever the mask (ignore_mask)."""
    a, v, mask = ctx.operands["a"], ctx.operands["v"], ctx.operands["mask"]
    pos = list(range(a.size)) if ignore_mask else T.selected(a.shape, mask)
    src = T.source_map(a.shape, np.shape(mask), v.shape)
    n = len(T.selected(a.shape, mask))
    dv, g = np.zeros(v.size), ctx.cot.ravel()
    for k in range(n):
        if k + shift < len(pos):
            dv[src[k]] += g[pos[k + shift]]
    return dict(ctx.honest(), v=dv.reshape(v.shape))


MUTANTS = {
    "da_not_zeroed": _da_not_zeroed,
    "inclusive_cumsum": lambda ctx: _paired(ctx, shift=1),   # off by one in the source position
    "mask_ignored_for_dv": lambda ctx: _paired(ctx, ignore_mask=True),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_semantic_mutants_are_rejected(name):
    assert W.caught(OP, MUTANTS[name], first_only=True), name


def test_the_reference_vjp_through_the_same_wrapper_changes_nothing():
    assert W.honest_control(OP)


@needs_pinned_mlx()
def test_pinned_mlx_passes_the_catalog():
    got = W.honest(OP)
    assert len(got) >= 10 and all(st == "pass" for st in got.values())
