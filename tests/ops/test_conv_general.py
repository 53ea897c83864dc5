"""conv_general: the float64 reference against hand-computed 1-D convolutions (stride,
flip, both dilations, padding, groups), its VJP against float64 differences,
semantic mutants (plausible wrong VJPs for Convolution, planted by
helpers/wrong_vjp.py) each rejected by the catalog, and MLX 0.32.4's three
input-dilation / strided weight-path defects (the catalog verdicts and the
rendered reproducers)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.oracles import FIRST_ORDER
from mlx_vjpcheck.ops import conv_general as conv

OP = "conv_general"


def _y(x, w, **params):
    """1-D, one batch item, one channel: lists in and out."""
    inp = {"x": np.asarray(x, dtype=np.float64).reshape(1, -1, 1),
           "w": np.asarray(w, dtype=np.float64).reshape(1, -1, 1)}
    return conv.reference(inp, params).ravel().tolist()


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
    assert conv.reference(inp, {"groups": 2}).ravel().tolist() == [2, 30]


def test_vjp_by_hand():
    inp = {"x": np.array([1.0, 2, 3]).reshape(1, 3, 1), "w": np.array([1.0, 1]).reshape(1, 2, 1)}
    d = conv.reference_vjp(inp, np.ones((1, 2, 1)), {})
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
    y = conv.reference(inp, params)
    g = rng.randint(-3, 4, y.shape).astype(float)
    by_diff = numeric.vjp_by_differences(lambda z: conv.reference(z, params), inp, g, ("x", "w"))
    d = conv.reference_vjp(inp, g, params)
    assert np.allclose(d["x"], by_diff["x"], atol=1e-8) and np.allclose(d["w"], by_diff["w"], atol=1e-8)


# --- semantic mutants, planted through helpers/wrong_vjp.py ---------------------------------

def _dw_reversed(ctx):
    d = ctx.reference()
    if "w" in d:
        d["w"] = np.flip(d["w"], axis=tuple(range(1, d["w"].ndim - 1)))
    return d


def _dx_groups_rolled(ctx):
    d = ctx.reference()
    if "x" in d:
        d["x"] = np.roll(d["x"], d["x"].shape[-1] // int(ctx.params.get("groups", 1)), axis=-1)
    return d


MUTANTS = {
    "flip_ignored": lambda ctx: ctx.reference(flip=not ctx.params.get("flip", False)),
    "padding_sides_swapped": lambda ctx: ctx.reference(pad_lo=ctx.params.get("pad_hi", 0),
                                                       pad_hi=ctx.params.get("pad_lo", 0)),
    "dw_taps_reversed": _dw_reversed,
    "dx_groups_rolled": _dx_groups_rolled,
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_semantic_mutant_is_rejected(mutant):
    assert W.caught(OP, MUTANTS[mutant], first_only=True), mutant


def test_the_reference_vjp_through_the_same_wrapper_changes_nothing():
    assert W.honest_control(OP)


# --- MLX 0.32.4 ------------------------------------------------------------------------------

@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_tagged_scenarios_each_in_its_way():
    from mlx_vjpcheck.running import devices, execute
    devices.select("cpu")
    for s in W.scenarios(OP):
        if not s.expects_defect_under(FIRST_ORDER):   # a transform-only class: first order passes
            assert W.honest(OP)[s.name] == "pass", (s.name, W.honest(OP)[s.name])
            continue
        rec = execute.run(s, "cpu")
        bad = {c["name"] for c in rec["checks"] if not c["passed"]}
        if conv.VJP_RAISES in s.defect_tags:
            assert rec["status"] == "error" and "[conv]" in rec["error"], s.name
        elif conv.DX_SHAPE in s.defect_tags:
            assert rec["status"] == "fail" and "grad:x" in bad and "forward" not in bad, s.name
        else:
            assert conv.DW_SHAPE in s.defect_tags, s.name
            assert rec["status"] == "fail" and "grad:w" in bad and "forward" not in bad, s.name


def _reproduce(s, tmp_path):
    """(exit code, output) of the scenario's rendered reproducer on the CPU."""
    from mlx_vjpcheck.cases import reproducer
    script = tmp_path / "repro.py"
    script.write_text(reproducer.render(s, title=s.name))
    proc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                          timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


@needs_pinned_mlx()
@pytest.mark.parametrize("name, verdict", [
    (f"{conv.DX_SHAPE}/1d", "VERDICT: defect present (grad:x differ"),
    (f"{conv.DW_SHAPE}/1d_input_dilation", "VERDICT: defect present (grad:w differ"),
    (f"{conv.VJP_RAISES}/1d", "VERDICT: defect present (the VJP raised ValueError: [conv]"),
    ("1d/everything", "VERDICT: defect absent"),
])
def test_pinned_mlx_reproducer_says(name, verdict, tmp_path):
    """The defect report's scripts (probes/findings/conv_general__*.py) in the rendered form."""
    s = {s.name: s for s in W.scenarios(OP)}[f"{OP}/{name}"]
    rc, out = _reproduce(s, tmp_path)
    assert rc == (0 if verdict.endswith("absent") else 1) and verdict in out, out
