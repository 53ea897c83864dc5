"""rope (mx.fast.rope): the float64 reference against rotations worked out by hand,
its VJP as the transpose of the (linear) forward and against float64 differences,
wrong VJPs (the forward rotation, the offset or scale or freqs ignored, the
pairing flipped, the pass-through tail dropped) planted by helpers/wrong_vjp.py,
each rejected by the catalog scenarios written for it, and on the pinned MLX every
catalog scenario passing on CPU."""
from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.cases import expected
from mlx_vjpcheck.core import numeric
from mlx_vjpcheck.ops import rope as R

OP = "rope"


def _params(dims, traditional, scale=1.0):
    return {"dims": dims, "traditional": traditional, "base": None, "scale": scale, "offset_form": "int"}


def test_by_hand():
    x = np.array([0.0, 0, 0, 0, 1, 2, 3, 4]).reshape(1, 1, 2, 4)   # positions 0 and 1
    inp = {"x": x, "freqs": np.array([2 / math.pi, 1 / math.pi]), "offset": np.array(0)}
    # position 1 turns pair 0 by pi/2 ((a, c) -> (-c, a)) and pair 1 by pi ((a, c) -> (-a, -c))
    halves = R.reference(inp, _params(4, False))   # pairs (0, 2), (1, 3)
    assert np.allclose(halves[0, 0, 1], [-3.0, -2.0, 1.0, -4.0]) and np.allclose(halves[0, 0, 0], 0.0)
    trad = R.reference(inp, _params(4, True))      # pairs (0, 1), (2, 3)
    assert np.allclose(trad[0, 0, 1], [-2.0, 1.0, -3.0, -4.0])
    part = R.reference(dict(inp, freqs=np.array([2 / math.pi])), _params(2, False))
    assert np.allclose(part[0, 0, 1], [-2.0, 1.0, 3.0, 4.0])        # features 2, 3 pass through
    # offset 1 and scale 1/2: position 1 sits at (1 + 1) / 2 = 1 as before
    shifted = R.reference(dict(inp, offset=np.array(1)), _params(4, False, 0.5))
    assert np.allclose(shifted[0, 0, 1], halves[0, 0, 1])


@pytest.mark.parametrize("traditional", [False, True])
def test_vjp_is_the_transpose_of_the_forward(traditional):
    """The op is linear in x: its Jacobian's columns are the forward of unit vectors."""
    shape = (2, 1, 3, 6)
    inp = {"x": np.zeros(shape), "offset": np.array([1, -2])}   # a base: no freqs operand
    p = {"dims": 4, "traditional": traditional, "base": 10.0, "scale": 0.5, "offset_form": "vector"}
    cols = []
    for i in range(int(np.prod(shape))):
        e = np.zeros(int(np.prod(shape)))
        e[i] = 1.0
        cols.append(R.reference(dict(inp, x=e.reshape(shape)), p).ravel())
    jac = np.array(cols).T
    g = np.random.RandomState(0).randn(*shape)
    assert np.allclose(R.reference_vjp(inp, g, p)["x"].ravel(), jac.T @ g.ravel())


def test_hand_written_vjp_agrees_with_float64_differences():
    """Where differences can decide, they agree with the hand-written reference VJP
    to the stated bound."""
    scenarios, decided = W.scenarios(OP), 0
    for s in scenarios:
        inp = expected.logical_inputs(s)
        g = expected.cotangent(s, R.reference(inp, s.params))
        try:
            num = numeric.vjp_by_differences(lambda x: R.reference(x, s.params), inp, g, s.wrt)
        except numeric.ReferenceUndecided:
            continue
        hand = R.reference_vjp(inp, g, s.params)
        for n in s.wrt:
            assert np.allclose(hand[n], num[n], rtol=0, atol=1e-7 * (1 + np.abs(num[n]).max())), (s.name, n)
        decided += 1
    assert decided >= len(scenarios) - 2


# --- wrong VJPs, planted through helpers/wrong_vjp.py ------------------------------------------

def _reference_with(ctx, **operands):
    """The float64 VJP of the call with some operands changed: a wrong rule, exactly."""
    return R.reference_vjp(dict(ctx.operands, **operands), ctx.cot, ctx.params)


def forward_rotation(ctx):
    return {"x": R.reference(dict(ctx.operands, x=ctx.cot), ctx.params)}   # `forward` not flipped


def offset_ignored(ctx):
    return _reference_with(ctx, offset=np.zeros_like(ctx.operands["offset"]))


def first_offset_for_all(ctx):
    offset = ctx.operands["offset"]
    return _reference_with(ctx, offset=np.full_like(offset, np.ravel(offset)[0]))


def pairing_flipped(ctx):
    return ctx.true(traditional=not ctx.params["traditional"])


def scale_ignored(ctx):
    return ctx.true(scale=1.0)


def freqs_ignored(ctx):
    return ctx.reference(base=10000.0)   # the reference reads a base before any freqs


def tail_dropped(ctx):
    dx = ctx.honest()["x"]
    dx[..., ctx.params["dims"]:] = 0.0
    return {"x": dx}


# mutant, catalog scenarios that must each reject it
MUTANTS = [
    (forward_rotation, ["rope/halves/base", "rope/traditional/base"]),
    (offset_ignored, ["rope/halves/base", "rope/offset_array_scalar"]),
    (first_offset_for_all, ["rope/halves/offset_vector", "rope/rank5"]),
    (pairing_flipped, ["rope/halves/base", "rope/traditional/freqs"]),
    (scale_ignored, ["rope/scale_half"]),
    (freqs_ignored, ["rope/halves/freqs", "rope/partial_freqs"]),
    (tail_dropped, ["rope/halves/partial_dims", "rope/traditional/partial_dims"]),
]


@pytest.mark.parametrize("mutant, catchers", MUTANTS, ids=[m.__name__ for m, _ in MUTANTS])
def test_a_wrong_vjp_is_rejected_by_its_scenarios(mutant, catchers):
    assert {n: W.honest(OP)[n] for n in catchers} == {n: "pass" for n in catchers}
    verdicts = W.statuses(OP, mutant)
    assert {n: verdicts[n] for n in catchers} == {n: "fail" for n in catchers}


def test_the_wrapper_around_a_true_vjp_changes_nothing():
    """Controls for the mutants: the same machinery with MLX's own VJP, and with the
    float64 reference VJP, changes no verdict."""
    assert W.statuses(OP, lambda ctx: ctx.true()) == W.honest(OP)
    assert W.honest_control(OP)


@needs_pinned_mlx()
def test_every_catalog_scenario_passes_on_the_pinned_mlx_cpu():
    """No defect in the CPU gradients on MLX 0.32.4: no scenario is tagged, all pass."""
    scenarios = W.scenarios(OP)
    assert scenarios and not any(s.defect_tags for s in scenarios)
    assert W.honest(OP) == {s.name: "pass" for s in scenarios}
