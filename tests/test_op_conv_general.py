"""conv_general: the float64 reference against hand-computed 1-D convolutions (stride,
flip, both dilations, padding, groups), its VJP against float64 differences,
semantic mutants (plausible wrong VJPs for Convolution) each rejected by the catalog,
and MLX 0.32.4's three input-dilation / strided weight-path defects."""
from __future__ import annotations

import numpy as np
import pytest

import qmm_conv_mutants as M
from conftest import needs_pinned_mlx

OP = "conv_general"


@pytest.fixture
def registry(monkeypatch):
    return M.load(monkeypatch, OP)


def _mod():
    from mlx_vjpcheck.ops import conv_general
    return conv_general


def _y(x, w, **params):
    """1-D, one batch item, one channel: lists in and out."""
    inp = {"x": np.asarray(x, dtype=np.float64).reshape(1, -1, 1),
           "w": np.asarray(w, dtype=np.float64).reshape(1, -1, 1)}
    return _mod().reference(inp, None, None, params).ravel().tolist()


def test_one_d_by_hand():
    assert _y([1, 2, 3], [1, 1]) == [3, 5]
    assert _y([1, 2, 3, 4, 5], [1, 1], stride=2) == [3, 7]
    assert _y([1, 2, 3], [1, 2]) == [5, 8]                       # correlation
    assert _y([1, 2, 3], [1, 2], flip=True) == [4, 7]            # convolution: taps reversed
    assert _y([1, 2, 3, 4], [1, 1], kernel_dilation=2) == [4, 6]
    assert _y([1, 2, 3], [1, 1], input_dilation=2) == [1, 2, 2, 3]   # over [1, 0, 2, 0, 3]
    assert _y([1, 2, 3], [1, 1], pad_lo=1, pad_hi=0) == [1, 3, 5]
    assert _y([1, 2, 3], [1, 1], pad_lo=0, pad_hi=2) == [3, 5, 3, 0]


def test_groups_by_hand():
    inp = {"x": np.array([1.0, 10.0]).reshape(1, 1, 2), "w": np.array([2.0, 3.0]).reshape(2, 1, 1)}
    assert _mod().reference(inp, None, None, {"groups": 2}).ravel().tolist() == [2, 30]


def test_vjp_by_hand():
    inp = {"x": np.array([1.0, 2, 3]).reshape(1, 3, 1), "w": np.array([1.0, 1]).reshape(1, 2, 1)}
    d = _mod().reference_vjp(inp, np.ones((1, 2, 1)), None, None, {})
    assert d["x"].ravel().tolist() == [1, 2, 1] and d["w"].ravel().tolist() == [3, 5]


CONFIGS = [
    dict(stride=2, pad_lo=1, pad_hi=2),
    dict(flip=True, groups=2, kernel_dilation=2),
    dict(input_dilation=2, pad_lo=2, pad_hi=0, stride=3, flip=True),
    dict(stride=[2, 1], pad_lo=[0, 2], pad_hi=[1, 0], kernel_dilation=[1, 2], input_dilation=[2, 1], groups=2),
]


@pytest.mark.parametrize("params", CONFIGS)
def test_reference_vjp_agrees_with_float64_differences(params):
    from mlx_vjpcheck.core import numeric
    dims = 2 if any(isinstance(v, list) for v in params.values()) else 1
    rng = np.random.RandomState(len(params))
    inp = {"x": rng.randint(-3, 4, (2,) + (4,) * dims + (4,)).astype(float),
           "w": rng.randint(-3, 4, (2,) + (2,) * dims + (4 // params.get("groups", 1),)).astype(float)}
    y = _mod().reference(inp, None, None, params)
    g = rng.randint(-3, 4, y.shape).astype(float)
    by_diff = numeric.vjp_by_differences(lambda z: _mod().reference(z, None, None, params), inp, g, ("x", "w"))
    d = _mod().reference_vjp(inp, g, None, None, params)
    assert np.allclose(d["x"], by_diff["x"], atol=1e-8) and np.allclose(d["w"], by_diff["w"], atol=1e-8)


# --- semantic mutants through mx.custom_function -------------------------------------------

def _ref(inp, g, p):
    return _mod().reference_vjp(inp, g, None, None, p)


def _dw_reversed(inp, g, p):
    d = _ref(inp, g, p)
    spatial = tuple(range(1, d["w"].ndim - 1))
    return dict(d, w=np.flip(d["w"], axis=spatial))


def _dx_groups_rolled(inp, g, p):
    d = _ref(inp, g, p)
    return dict(d, x=np.roll(d["x"], inp["x"].shape[-1] // int(p.get("groups", 1)), axis=-1))


MUTANTS = {
    "flip_ignored": lambda inp, g, p: _ref(inp, g, dict(p, flip=not p.get("flip", False))),
    "padding_sides_swapped": lambda inp, g, p: _ref(inp, g, dict(p, pad_lo=p.get("pad_hi", 0),
                                                                  pad_hi=p.get("pad_lo", 0))),
    "dw_taps_reversed": _dw_reversed,
    "dx_groups_rolled": _dx_groups_rolled,
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_semantic_mutant_is_rejected(registry, monkeypatch, mutant):
    assert M.rejected_by(monkeypatch, OP, MUTANTS[mutant]), mutant


def test_the_reference_vjp_through_the_same_wrapper_changes_nothing(registry, monkeypatch):
    assert M.honest_wrapper_passes(monkeypatch, OP, _mod().reference_vjp)


# --- MLX 0.32.4 ------------------------------------------------------------------------------

@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_tagged_scenarios_each_in_its_way(registry):
    from mlx_vjpcheck.running import devices, execute
    m = _mod()
    devices.select("cpu")
    for s in M.scenarios(OP):
        rec = execute.run(s, "cpu")
        bad = {c["name"] for c in rec["checks"] if not c["passed"]}
        if m.VJP_RAISES in s.defect_tags:
            assert rec["status"] == "error" and "[conv]" in rec["error"], s.name
        elif m.DX_SHAPE in s.defect_tags:
            assert rec["status"] == "fail" and "grad:x" in bad and "forward" not in bad, s.name
        elif m.DW_SHAPE in s.defect_tags:
            assert rec["status"] == "fail" and "grad:w" in bad and "forward" not in bad, s.name
        else:
            assert rec["status"] == "pass", (s.name, rec["status"])


@needs_pinned_mlx()
@pytest.mark.parametrize("probe", ["conv_general__dilated_input_dx_shape.py", "conv_general__strided_dw_shape.py",
                                   "conv_general__dilated_input_vjp_raises.py"])
def test_pinned_mlx_probe_says_present(probe):
    rc, out = M.probe_verdict(probe)
    assert rc == 1 and "VERDICT: defect present" in out, out
