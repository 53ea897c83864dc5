"""block_masked_mm: the float64 reference against hand-counted tile products, an
independent loop formulation, semantic mutants (plausible wrong VJPs for
BlockMaskedMM, planted by helpers/wrong_vjp.py) each rejected by the catalog, and
MLX 0.32.4's broadcast-operand mask defect (the catalog, the mechanism, the probe,
the rendered reproducer)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, needs_pinned_mlx
from helpers import wrong_vjp as W

OP = "block_masked_mm"


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
    y = _mod().reference(inp, p)
    assert set(y[:32].ravel()) == {32.0} and set(y[32].ravel()) == {33.0}
    inp, p = _inputs(np.ones((33, 33)), np.ones((33, 33)), out=[[1, 0], [0, 1]])
    y = _mod().reference(inp, p)
    assert y[0, 0] == 33 and y[0, 32] == 0 and y[32, 0] == 0 and y[32, 32] == 33
    d = _mod().reference_vjp(inp, np.ones((33, 33)), p)
    # dA[i, k] = sum of g over the kept columns of row i: 32 in the first row tile, 1 in the last
    assert set(d["a"][:32].ravel()) == {32.0} and set(d["a"][32].ravel()) == {1.0}


def test_vector_a_drops_the_row_axis():
    inp, p = _inputs(np.arange(36.0) % 3, np.ones((36, 2)), out=[1], lhs=[1, 0])
    y = _mod().reference(inp, p)
    assert y.shape == (2,) and y.tolist() == [float(sum(k % 3 for k in range(32)))] * 2
    d = _mod().reference_vjp(inp, np.ones(2), p)
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
    d = _mod().reference_vjp(inp, g, p)
    assert np.array_equal(_mod().reference(inp, p), y)
    assert np.array_equal(d["a"], da) and np.array_equal(d["b"], db)


# --- semantic mutants, planted through helpers/wrong_vjp.py ---------------------------------

def _ref(ctx, operands=None, **params):
    """The float64 VJP of both operands, under changed operands or params."""
    return _mod().reference_vjp(dict(ctx.operands, **(operands or {})), ctx.cot, dict(ctx.params, **params))


def _without(ctx, name):
    return {"masks": [n for n in ctx.params["masks"] if n != name]}


def _first_item_masks(ctx):
    """Every batch item masked with item 0's masks."""
    first = {n: (ctx.operands[n][:1] if ctx.operands[n].ndim > 2 else ctx.operands[n]) for n in _mod().MASKS}
    return _ref(ctx, first)


def _partial_tile_dropped(ctx):
    """dA without its last, partial row tile (a padding bug)."""
    d = _ref(ctx)
    a, bs = ctx.operands["a"], ctx.params["block_size"]
    rows = a.shape[-2] if a.ndim > 1 else 0
    if rows % bs:
        d["a"][..., rows - rows % bs:, :] = 0
    return d


MUTANTS = {
    "out_mask_ignored": lambda ctx: _ref(ctx, **_without(ctx, "mask_out")),
    "da_not_masked": lambda ctx: dict(_ref(ctx), a=_ref(ctx, **_without(ctx, "mask_lhs"))["a"]),
    "db_not_masked": lambda ctx: dict(_ref(ctx), b=_ref(ctx, **_without(ctx, "mask_rhs"))["b"]),
    "first_item_masks": _first_item_masks,
    "partial_tile_dropped": _partial_tile_dropped,
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_semantic_mutant_is_rejected(mutant):
    assert W.caught(OP, MUTANTS[mutant], first_only=True), mutant


def test_the_reference_vjp_through_the_same_wrapper_changes_nothing():
    assert W.honest_control(OP)


# --- MLX 0.32.4 ------------------------------------------------------------------------------

@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_broadcast_operand_mask_scenarios():
    for name, status in W.honest(OP).items():
        s = next(s for s in W.scenarios(OP) if s.name == name)
        assert (status == "fail") == (_mod().SHARED_MASKED in s.defect_tags), (name, status)


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


def _run_script(path):
    proc = subprocess.run([sys.executable, str(path), "--device", "cpu"], capture_output=True, text=True,
                          timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


@needs_pinned_mlx()
def test_pinned_mlx_probe_says_present():
    rc, out = _run_script(ROOT / "probes" / "findings" / "block_masked_mm__broadcast_operand_mask.py")
    assert rc == 1 and "VERDICT: defect present" in out, out


@needs_pinned_mlx()
def test_pinned_mlx_reproducer_says_present_for_the_shared_operand_only(tmp_path):
    """The rendered reproducers of the defect and of its control (operand masks shared too)."""
    from mlx_vjpcheck.cases import reproducer
    cat = {s.name: s for s in W.scenarios(OP)}
    for name, want in ((f"block_masked_mm/{_mod().SHARED_MASKED}/a", 1),
                       ("block_masked_mm/broadcast_a/shared_operand_masks", 0)):
        script = tmp_path / "repro.py"
        script.write_text(reproducer.render(cat[name], title=name))
        rc, out = _run_script(script)
        assert rc == want and ("VERDICT: defect present" in out) == (want == 1), (name, out)
