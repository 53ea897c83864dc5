"""as_strided: the reference against numpy's as_strided and hand-computed
gradients, out-of-range refusal, the strategy's in-range promise, semantic
mutants (planted by helpers/wrong_vjp.py) rejected by the catalog, and the pinned
MLX verdict (clean)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.ops import as_strided as T

OP = "as_strided"


def _ref(a, shape, strides, offset=0, g=None):
    params = {"shape": shape, "strides": strides, "offset": offset}
    inp = {"a": np.array(a, dtype=float)}
    y = T.reference(inp, params)
    return y, None if g is None else T.reference_vjp(inp, np.array(g, dtype=float), params)["a"]


def test_overlapping_windows_by_hand():
    y, da = _ref([1, 2, 3, 4], [3, 2], [1, 1], g=np.ones((3, 2)))
    assert y.tolist() == [[1, 2], [2, 3], [3, 4]]
    assert da.tolist() == [1, 2, 2, 1]
    _, da = _ref([[1, 2, 3], [4, 5, 6]], [2, 2], [0, 2], offset=1, g=[[1, 2], [3, 4]])
    assert da.tolist() == [[0, 4, 0], [6, 0, 0]]        # stride 0 rows: both read a[0, 1] and a[1, 0]


def test_forward_agrees_with_numpy_as_strided():
    flat = np.arange(12.0)
    for shape, strides, offset in (([4, 3], [1, 1], 0), ([3, 2], [3, 1], 1), ([5], [-2], 10),
                                   ([3, 3], [-3, 1], 6), ([2, 4], [0, 2], 3)):
        want = np.lib.stride_tricks.as_strided(flat[offset:], shape, [s * 8 for s in strides])
        y, _ = _ref(flat.reshape(3, 4), shape, strides, offset)
        assert y.tolist() == want.tolist(), (shape, strides, offset)


def test_out_of_range_reads_are_refused():
    with pytest.raises(ValueError, match="reads positions"):
        _ref([1, 2, 3], [3], [1], offset=1)


def test_strategy_stays_in_range():
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.fuzz import targets

    @settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(targets.strategy(OP, ("float32",)))
    def check(s):
        exp = expected.expected(s)
        assert exp["forward"].shape == tuple(s.params["shape"])
    check()


def _assign_not_add(ctx):
    """Overlapping reads keep one contribution (the last), not their sum."""
    a = ctx.operands["a"]
    da = np.zeros(a.size)
    for k, x in zip(T.addresses(a.size, ctx.params).ravel().tolist(), ctx.cot.ravel().tolist()):
        da[k] = x
    return {"a": da.reshape(a.shape)}


def _offset_ignored(ctx):
    try:
        return ctx.reference(offset=0)
    except ValueError:
        return ctx.honest()


def _stride0_not_summed(ctx):
    """Broadcast (stride 0) axes: only the first copy's cotangent."""
    strides = ctx.params.get("strides")
    if not strides or 0 not in strides:
        return ctx.honest()
    keep = tuple(slice(0, 1) if s == 0 else slice(None) for s in strides)
    cot = np.zeros_like(ctx.cot)
    cot[keep] = ctx.cot[keep]
    return {"a": T.reference_vjp(ctx.operands, cot, ctx.params)["a"]}


@pytest.mark.parametrize("mutant", [_assign_not_add, _offset_ignored, _stride0_not_summed])
def test_semantic_mutants_are_rejected(mutant):
    assert W.caught(OP, mutant, first_only=True), mutant.__name__


def test_the_reference_vjp_through_the_same_wrapper_changes_nothing():
    assert W.honest_control(OP)


@needs_pinned_mlx()
def test_pinned_mlx_passes_the_catalog():
    got = W.honest(OP)
    assert len(got) >= 9 and all(st == "pass" for st in got.values())
