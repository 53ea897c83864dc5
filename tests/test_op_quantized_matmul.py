"""quantized_matmul: the float64 reference against hand-computed products for both
transpose flags, an independent numpy formulation, semantic mutants (plausible wrong
VJPs for QuantizedMatmul) each rejected by the catalog, and MLX 0.32.4's vector-x
defect."""
from __future__ import annotations

import numpy as np
import pytest

import qmm_conv_mutants as M
from conftest import needs_pinned_mlx

OP = "quantized_matmul"


@pytest.fixture
def registry(monkeypatch):
    return M.load(monkeypatch, OP)


def _mod():
    from mlx_vjpcheck.ops import quantized_matmul
    return quantized_matmul


def _params(transpose, group=32, bits=4):
    return {"bits": bits, "group_size": group, "transpose": transpose, "mode": "affine"}


def _run(inp, g, params):
    m = _mod()
    inp = {k: np.asarray(v, dtype=np.int64 if k == "codes" else np.float64) for k, v in inp.items()}
    return m.reference(inp, None, None, params), m.reference_vjp(inp, np.asarray(g, dtype=np.float64),
                                                                 None, None, params)


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


# --- semantic mutants through mx.custom_function -------------------------------------------

def _ref(inp, g, p):
    return _mod().reference_vjp(inp, g, None, None, p)


def _first_item_only(inp, g, p):
    """dscale, dbias from the first leading batch item alone (a flatten that drops the rest)."""
    g1 = np.array(g, copy=True)
    if g1.ndim >= 3:
        g1[1:] = 0
    return dict(_ref(inp, g, p), scales=_ref(inp, g1, p)["scales"], biases=_ref(inp, g1, p)["biases"])


MUTANTS = {
    # dscale summed like dbias: the code factor forgotten
    "dscales_without_codes": lambda inp, g, p: dict(_ref(inp, g, p), scales=_ref(inp, g, p)["biases"]),
    # the two group gradients returned in each other's place
    "scales_biases_swapped": lambda inp, g, p: dict(_ref(inp, g, p), scales=_ref(inp, g, p)["biases"],
                                                    biases=_ref(inp, g, p)["scales"]),
    # dx through W without its biases
    "dx_without_biases": lambda inp, g, p: dict(_ref(inp, g, p),
                                                x=_ref(dict(inp, biases=0 * inp["biases"]), g, p)["x"]),
    # dx through the raw codes, scales ignored
    "dx_scales_ignored": lambda inp, g, p: dict(_ref(inp, g, p),
                                                x=_ref(dict(inp, scales=0 * inp["scales"] + 1), g, p)["x"]),
    "batch_not_summed": _first_item_only,
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_semantic_mutant_is_rejected(registry, monkeypatch, mutant):
    assert M.rejected_by(monkeypatch, OP, MUTANTS[mutant]), mutant


def test_the_reference_vjp_through_the_same_wrapper_changes_nothing(registry, monkeypatch):
    assert M.honest_wrapper_passes(monkeypatch, OP, _mod().reference_vjp)


# --- MLX 0.32.4 ------------------------------------------------------------------------------

@needs_pinned_mlx()
def test_pinned_mlx_raises_exactly_on_the_vector_x_scenarios(registry):
    from mlx_vjpcheck.running import devices, execute
    devices.select("cpu")
    for s in M.scenarios(OP):
        rec = execute.run(s, "cpu")
        if _mod().VECTOR_X in s.defect_tags:
            assert rec["status"] == "error" and "flatten" in rec["error"], (s.name, rec["error"])
        else:
            assert rec["status"] == "pass", (s.name, rec["status"])


@needs_pinned_mlx()
def test_pinned_mlx_probe_says_present():
    rc, out = M.probe_verdict("quantized_matmul__vector_x.py")
    assert rc == 1 and "VERDICT: defect present" in out, out
