"""block_masked_mm: the float64 reference against hand-counted tile products, an
independent loop formulation, semantic mutants (plausible wrong VJPs for
BlockMaskedMM) each rejected by the catalog, and MLX 0.32.4's broadcast-operand
mask defect."""
from __future__ import annotations

import numpy as np
import pytest

import qmm_conv_mutants as M
from conftest import needs_pinned_mlx

OP = "block_masked_mm"


@pytest.fixture
def registry(monkeypatch):
    return M.load(monkeypatch, OP)


def _mod():
    from mlx_vjpcheck.ops import block_masked_mm
    return block_masked_mm


def _inputs(a, b, out=None, lhs=None, rhs=None):
    ones = np.ones((1, 1), dtype=np.int64)
    masks = {"mask_out": out, "mask_lhs": lhs, "mask_rhs": rhs}
    used = [n for n, m in masks.items() if m is not None]
    inp = {"a": np.asarray(a, dtype=np.float64), "b": np.asarray(b, dtype=np.float64)}
    inp.update({n: ones if m is None else np.asarray(m, dtype=np.int64) for n, m in masks.items()})
    return inp, {"block_size": 32, "masks": used}


def test_tiles_by_hand():
    """33 x 33 ones: tiles of 32 and 1. An lhs mask that drops tile (0, 1) leaves rows
    0..31 summing 32 ones; an out mask keeps the diagonal tiles."""
    inp, p = _inputs(np.ones((33, 33)), np.ones((33, 33)), lhs=[[1, 0], [1, 1]])
    y = _mod().reference(inp, None, None, p)
    assert set(y[:32].ravel()) == {32.0} and set(y[32].ravel()) == {33.0}
    inp, p = _inputs(np.ones((33, 33)), np.ones((33, 33)), out=[[1, 0], [0, 1]])
    y = _mod().reference(inp, None, None, p)
    assert y[0, 0] == 33 and y[0, 32] == 0 and y[32, 0] == 0 and y[32, 32] == 33
    d = _mod().reference_vjp(inp, np.ones((33, 33)), None, None, p)
    # dA[i, k] = sum of g over the kept columns of row i: 32 in the first row tile, 1 in the last
    assert set(d["a"][:32].ravel()) == {32.0} and set(d["a"][32].ravel()) == {1.0}


def test_vector_a_drops_the_row_axis():
    inp, p = _inputs(np.arange(36.0) % 3, np.ones((36, 2)), out=[1], lhs=[1, 0])
    y = _mod().reference(inp, None, None, p)
    assert y.shape == (2,) and y.tolist() == [float(sum(k % 3 for k in range(32)))] * 2
    d = _mod().reference_vjp(inp, np.ones(2), None, None, p)
    assert d["a"].shape == (36,) and d["a"][:32].tolist() == [2.0] * 32 and d["a"][32:].tolist() == [0.0] * 4


def _loops(inp, g, p):
    """Element loops: every product a[m, k] b[k, n] counted when its three tiles are on."""
    bs, used = p["block_size"], set(p["masks"])
    a, b = inp["a"], inp["b"]
    on = lambda name, i, j: name not in used or inp[name][i // bs, j // bs] != 0  # noqa: E731
    M_, K, N = a.shape[0], a.shape[1], b.shape[1]
    y, da, db = np.zeros((M_, N)), np.zeros(a.shape), np.zeros(b.shape)
    for m in range(M_):
        for n in range(N):
            if not on("mask_out", m, n):
                continue
            for k in range(K):
                if on("mask_lhs", m, k) and on("mask_rhs", k, n):
                    y[m, n] += a[m, k] * b[k, n]
                    da[m, k] += g[m, n] * b[k, n]
                    db[k, n] += a[m, k] * g[m, n]
    return y, da, db


@pytest.mark.parametrize("seed", range(4))
def test_reference_agrees_with_element_loops(seed):
    rng = np.random.RandomState(seed)
    M_, K, N = rng.choice([5, 33, 40], 3)
    t = lambda n: -(-n // 32)  # noqa: E731
    inp, p = _inputs(rng.randint(-3, 4, (M_, K)), rng.randint(-3, 4, (K, N)),
                     out=rng.randint(0, 2, (t(M_), t(N))), lhs=rng.randint(0, 2, (t(M_), t(K))),
                     rhs=rng.randint(0, 2, (t(K), t(N))))
    g = rng.randint(-3, 4, (M_, N)).astype(float)
    y, da, db = _loops(inp, g, p)
    d = _mod().reference_vjp(inp, g, None, None, p)
    assert np.array_equal(_mod().reference(inp, None, None, p), y)
    assert np.array_equal(d["a"], da) and np.array_equal(d["b"], db)


# --- semantic mutants through mx.custom_function -------------------------------------------

def _ref(inp, g, p):
    return _mod().reference_vjp(inp, g, None, None, p)


def _without(p, name):
    return dict(p, masks=[n for n in p["masks"] if n != name])


def _first_item_masks(inp, g, p):
    """Every batch item masked with item 0's masks."""
    first = {n: (inp[n][:1] if inp[n].ndim > 2 else inp[n]) for n in _mod().MASKS}
    return _ref(dict(inp, **first), g, p)


def _partial_tile_dropped(inp, g, p):
    """dA without its last, partial row tile (a padding bug)."""
    d = _ref(inp, g, p)
    rows, bs = inp["a"].shape[-2], p["block_size"]
    if inp["a"].ndim > 1 and rows % bs:
        d["a"][..., rows - rows % bs:, :] = 0
    return d


MUTANTS = {
    "out_mask_ignored": lambda inp, g, p: _ref(inp, g, _without(p, "mask_out")),
    "da_not_masked": lambda inp, g, p: dict(_ref(inp, g, p), a=_ref(inp, g, _without(p, "mask_lhs"))["a"]),
    "db_not_masked": lambda inp, g, p: dict(_ref(inp, g, p), b=_ref(inp, g, _without(p, "mask_rhs"))["b"]),
    "first_item_masks": _first_item_masks,
    "partial_tile_dropped": _partial_tile_dropped,
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_semantic_mutant_is_rejected(registry, monkeypatch, mutant):
    assert M.rejected_by(monkeypatch, OP, MUTANTS[mutant]), mutant


def test_the_reference_vjp_through_the_same_wrapper_changes_nothing(registry, monkeypatch):
    assert M.honest_wrapper_passes(monkeypatch, OP, _mod().reference_vjp)


# --- MLX 0.32.4 ------------------------------------------------------------------------------

@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_broadcast_operand_mask_scenarios(registry):
    from mlx_vjpcheck.running import devices, execute
    devices.select("cpu")
    for s in M.scenarios(OP):
        status = execute.run(s, "cpu")["status"]
        assert (status == "fail") == (_mod().SHARED_MASKED in s.defect_tags), (s.name, status)


@needs_pinned_mlx()
def test_pinned_mlx_leaks_one_items_mask_into_a_shared_operand():
    """The mechanism: a shared a, item 0 masks a's only tile, item 1 keeps it; the same
    values stored once per item give the right answer."""
    import mlx.core as mx
    a, b = mx.ones((2, 2)), mx.ones((2, 2, 2))
    keep = mx.array([[[False]], [[True]]])
    y = mx.block_masked_mm(a, b, 32, None, keep, None)
    assert np.array(y).tolist() == [[[0, 0], [0, 0]], [[0, 0], [0, 0]]]   # item 1 should be all 2s
    y_copy = mx.block_masked_mm(mx.array(np.ones((2, 2, 2), dtype=np.float32)), b, 32, None, keep, None)
    assert np.array(y_copy)[1].tolist() == [[2, 2], [2, 2]]


@needs_pinned_mlx()
def test_pinned_mlx_probe_says_present():
    rc, out = M.probe_verdict("block_masked_mm__broadcast_operand_mask.py")
    assert rc == 1 and "VERDICT: defect present" in out, out
