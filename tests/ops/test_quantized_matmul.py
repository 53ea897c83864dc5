"""quantized_matmul: the float64 reference against hand-computed products for both
transpose flags, an independent numpy formulation, semantic mutants (plausible wrong
VJPs for QuantizedMatmul, planted by helpers/wrong_vjp.py) each rejected by the
catalog, and MLX 0.32.4's vector-x defect (the catalog, the probe, the rendered
reproducer)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, needs_pinned_mlx
from helpers import wrong_vjp as W

OP = "quantized_matmul"


def _mod():
    from mlx_vjpcheck.ops import quantized_matmul
    return quantized_matmul


def _params(transpose, group=32, bits=4):
    return {"bits": bits, "group_size": group, "transpose": transpose, "mode": "affine"}


def _run(inp, g, params):
    m = _mod()
    inp = {k: np.asarray(v, dtype=np.int64 if k == "codes" else np.float64) for k, v in inp.items()}
    return m.reference(inp, params), m.reference_vjp(inp, np.asarray(g, dtype=np.float64), params)


def test_transposed_by_hand():
    """W (1, 32) = 0.5 * (k % 4) - 1; x all ones: y = 0.5 * 48 - 32."""
    inp = {"x": np.ones((1, 32)), "codes": (np.arange(32) % 4).reshape(1, 32),
           "scales": [[0.5]], "biases": [[-1.0]]}
    y, d = _run(inp, [[1.0]], _params(True))
    assert y.tolist() == [[-8.0]]
    assert d["x"].tolist() == [[0.5 * (k % 4) - 1 for k in range(32)]]
    assert d["scales"].tolist() == [[48.0]] and d["biases"].tolist() == [[32.0]]


def test_untransposed_by_hand():
    """W stored (K=2, N=32), groups along N: rows of ones and twos; x = [1, 2]."""
    inp = {"x": [[1.0, 2.0]], "codes": np.ones((2, 32)), "scales": [[1.0], [2.0]], "biases": [[0.0], [0.0]]}
    y, d = _run(inp, np.ones((1, 32)), _params(False))
    assert y.tolist() == [[5.0] * 32]
    assert d["x"].tolist() == [[32.0, 64.0]]
    assert d["scales"].tolist() == [[32.0], [64.0]] and d["biases"].tolist() == [[32.0], [64.0]]


def test_vector_x_is_one_row():
    inp = {"x": np.arange(32.0) % 3, "codes": np.ones((2, 32)), "scales": [[1.0], [2.0]],
           "biases": [[1.0], [0.0]]}
    y, d = _run(inp, [1.0, -1.0], _params(True))
    y2, d2 = _run(dict(inp, x=inp["x"][None]), [[1.0, -1.0]], _params(True))
    assert y.shape == (2,) and np.array_equal(y, y2[0])
    assert d["x"].shape == (32,) and np.array_equal(d["x"], d2["x"][0])
    assert np.array_equal(d["scales"], d2["scales"]) and np.array_equal(d["biases"], d2["biases"])


def _numpy_formulation(inp, g, params):
    """The same maths with whole-array numpy products (W 2-D, shared by the batch)."""
    gs = params["group_size"]
    w = inp["codes"] * np.repeat(inp["scales"], gs, -1) + np.repeat(inp["biases"], gs, -1)
    wkn = np.swapaxes(w, -1, -2) if params["transpose"] else w
    y = np.matmul(inp["x"], wkn)
    dx = np.matmul(g, np.swapaxes(wkn, -1, -2))
    dw = np.einsum("...mk,...mn->...kn", inp["x"], g)
    while dw.ndim > w.ndim:   # W is shared by every leading batch item
        dw = dw.sum(0)
    dw = np.swapaxes(dw, -1, -2) if params["transpose"] else dw
    grouped = dw.shape[:-1] + (-1, gs)
    return y, dx, (dw.reshape(grouped) * inp["codes"].reshape(grouped)).sum(-1), dw.reshape(grouped).sum(-1)


@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("group", [32, 64])
def test_reference_agrees_with_a_numpy_formulation(transpose, group):
    rng = np.random.RandomState(group + transpose)
    K, N = (2 * group, 3) if transpose else (3, 2 * group)
    stored = (N, K) if transpose else (K, N)
    inp = {"x": rng.randint(-2, 3, (4, 2, K)).astype(float), "codes": rng.randint(0, 16, stored),
           "scales": rng.choice([0.5, 2.0, -1.0], stored[:-1] + (2,)), "biases": rng.randint(-3, 4, stored[:-1] + (2,))}
    g = rng.randint(-3, 4, (4, 2, N)).astype(float)
    y, d = _run(inp, g, _params(transpose, group))
    y2, dx2, ds2, db2 = _numpy_formulation(inp, g, _params(transpose, group))
    assert np.array_equal(y, y2) and np.array_equal(d["x"], dx2)
    assert np.array_equal(d["scales"], ds2) and np.array_equal(d["biases"], db2)


# --- semantic mutants, planted through helpers/wrong_vjp.py ---------------------------------

def _ref(ctx, **operands):
    """The float64 VJP of every differentiable operand, some operands changed."""
    return _mod().reference_vjp(dict(ctx.operands, **operands), ctx.cot, ctx.params)


def _first_item_only(ctx):
    """dscale, dbias from the first leading batch item alone (a flatten that drops the rest)."""
    g1 = np.array(ctx.cot, copy=True)
    if g1.ndim >= 3:
        g1[1:] = 0
    cut = _mod().reference_vjp(ctx.operands, g1, ctx.params)
    return dict(_ref(ctx), scales=cut["scales"], biases=cut["biases"])


MUTANTS = {
    # dscale summed like dbias: the code factor forgotten
    "dscales_without_codes": lambda ctx: dict(_ref(ctx), scales=_ref(ctx)["biases"]),
    # the two group gradients returned in each other's place
    "scales_biases_swapped": lambda ctx: dict(_ref(ctx), scales=_ref(ctx)["biases"], biases=_ref(ctx)["scales"]),
    # dx through W without its biases
    "dx_without_biases": lambda ctx: dict(_ref(ctx), x=_ref(ctx, biases=0 * ctx.operands["biases"])["x"]),
    # dx through the raw codes, scales ignored
    "dx_scales_ignored": lambda ctx: dict(_ref(ctx), x=_ref(ctx, scales=0 * ctx.operands["scales"] + 1)["x"]),
    "batch_not_summed": _first_item_only,
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_semantic_mutant_is_rejected(mutant):
    assert W.caught(OP, MUTANTS[mutant], first_only=True), mutant


def test_the_reference_vjp_through_the_same_wrapper_changes_nothing():
    assert W.honest_control(OP)


# --- MLX 0.32.4 ------------------------------------------------------------------------------

@needs_pinned_mlx()
def test_pinned_mlx_raises_exactly_on_the_vector_x_scenarios():
    from mlx_vjpcheck.running import devices, execute
    devices.select("cpu")
    for s in W.scenarios(OP):
        if _mod().VECTOR_X in s.defect_tags:
            rec = execute.run(s, "cpu")
            assert rec["status"] == "error" and "flatten" in rec["error"], (s.name, rec["error"])
        else:
            assert W.honest(OP)[s.name] == "pass", (s.name, W.honest(OP)[s.name])


def _run_script(path):
    proc = subprocess.run([sys.executable, str(path), "--device", "cpu"], capture_output=True, text=True,
                          timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


@needs_pinned_mlx()
def test_pinned_mlx_probe_says_present():
    rc, out = _run_script(ROOT / "probes" / "findings" / "quantized_matmul__vector_x.py")
    assert rc == 1 and "VERDICT: defect present" in out, out


def _reproducer(s, tmp_path):
    from mlx_vjpcheck.cases import reproducer
    script = tmp_path / "repro.py"
    script.write_text(reproducer.render(s, title=s.name))
    return _run_script(script)


@needs_pinned_mlx()
def test_pinned_mlx_reproducer_says_present_for_vector_x_only(tmp_path):
    """The rendered reproducer of a 1-D x: the scales VJP raises; dx alone is fine."""
    cat = {s.name: s for s in W.scenarios(OP)}
    rc, out = _reproducer(cat[f"quantized_matmul/{_mod().VECTOR_X}/joint/t"], tmp_path)
    assert rc == 1 and "VERDICT: defect present (the VJP raised" in out, out
    rc, out = _reproducer(cat["quantized_matmul/vector/wrt_x/t"], tmp_path)
    assert rc == 0 and "VERDICT: defect absent" in out, out


def test_the_call_files_own_pack_is_the_harness_pack():
    pytest.importorskip("mlx.core")
    from mlx_vjpcheck.core import quant
    from mlx_vjpcheck.ops.repro import quantized_matmul as call
    codes = np.random.RandomState(1).randint(0, 256, (2, 3, 64))
    for bits in (4, 8):
        c = codes % (1 << bits)
        assert np.array_equal(call.pack(c, bits), quant.pack(c, bits))
