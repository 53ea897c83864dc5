"""The reductions (harness/ops/reduce.py): hand-written VJPs against float64
differences and by hand (MLX's tie convention for max and min, zeros in prod),
planted wrong rules (ties not split, the group size of mean, a rule wrong only
for a 0-d or a strided operand or in float16) caught by the catalog, and the
pinned MLX verdicts: only prod fails, where tagged: its complex second order
(cumprod's VJP takes no conjugate) and the VJP over several axes of a zero-size
operand (raises). Complex max, min and std: MLX's lexicographic order and tie split by
hand, differences refusing exactly the convention rows, the strategies' complex64
draws, and complex-only mutants (conjugated, imaginary part dropped, masked by real
parts alone) rejected by complex scenarios only."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from mlx_vjpcheck import ops
from mlx_vjpcheck.ops import reduce as R

NAMES = [r.name for r in R.TABLE]


def _vjp(name, a, g, **params):
    info = ops.get(name)
    inp = {"a": np.asarray(a, dtype=float)}
    return info.reference(inp, params), info.reference_vjp(inp, np.asarray(g, dtype=float), params)["a"]


def test_rules_by_hand():
    y, d = _vjp("max", [[3, 1, 3], [2, 2, 2]], [6, 3], axis=1)
    assert y.tolist() == [3, 2] and d.tolist() == [[3, 0, 3], [1, 1, 1]]      # ties share g (MLX's convention)
    y, d = _vjp("prod", [[2, 0, 3], [0, 5, 0]], [1, 1], axis=-1)
    assert y.tolist() == [0, 0] and d.tolist() == [[0, 6, 0], [0, 0, 0]]
    y, d = _vjp("sum", [[1, 2], [3, 4]], [[5], [7]], axis=1, keepdims=True)
    assert y.tolist() == [[3], [7]] and d.tolist() == [[5, 5], [7, 7]]
    y, d = _vjp("var", [1, 2, 3, 6], 1.0, axis=0, ddof=1)
    assert y == pytest.approx(14 / 3) and d.tolist() == pytest.approx([2 * (x - 3) / 3 for x in (1, 2, 3, 6)])
    _, d = _vjp("mean", np.ones((2, 3, 4)), np.ones(3), axis=[0, 2])
    assert np.all(d == 1 / 8)


@pytest.mark.parametrize("name", NAMES)
def test_reference_vjp_agrees_with_differences(name):
    compared, wrong = B.against_differences(name)
    assert compared >= 8 and wrong == [], (compared, wrong)


def test_std_refuses_a_group_without_spread():
    from mlx_vjpcheck.core.numeric import ReferenceUndecided
    with pytest.raises(ReferenceUndecided):
        _vjp("std", [[1, 1], [1, 2]], [1, 1], axis=1)


# --- planted wrong rules -----------------------------------------------------------------------------

def _ties_not_split(ctx):
    """g to every tied extreme, undivided."""
    a, axes = ctx.operands["a"], R._axes(ctx.operands["a"], ctx.params)
    mask = a == np.max(a, axis=axes, keepdims=True)
    return {"a": R._back(ctx.cot, a, ctx.params) * mask}


MUTANTS = {
    ("max", "ties_not_split"): _ties_not_split,
    ("mean", "whole_size_not_group_size"): lambda ctx: {
        "a": R._back(ctx.cot, ctx.operands["a"], ctx.params) / max(ctx.operands["a"].size, 1)},
    ("sum", "wrong_only_for_rank0"): B.scaled_where(B.rank0),
    ("prod", "wrong_only_for_strided"): B.scaled_where(B.strided),
    ("var", "wrong_only_in_float16"): B.scaled_where(B.in_dtype("float16"), 1.5),
    ("std", "ddof_ignored"): lambda ctx: ctx.reference(ddof=0),
    ("min", "plain"): B.scaled_where(lambda s, n: True, -1.0),
}


@pytest.mark.parametrize("key", sorted(MUTANTS))
def test_mutant_is_caught(key):
    assert B.first_order_caught(key[0], MUTANTS[key], first_only=True), key


@pytest.mark.parametrize("op", ["max", "prod"])
def test_the_true_rule_planted_the_same_way_passes(op):
    assert B.first_order_control(op) == []


@needs_pinned_mlx()
@pytest.mark.parametrize("name", NAMES)
def test_pinned_mlx_fails_exactly_the_tagged_scenarios(name):
    failing, tagged = B.pinned_verdicts(name)
    want = {"prod/complex", "prod/defect/empty_several_axes_vjp"}
    assert failing == tagged and tagged == (want if name == "prod" else set()), (failing, tagged)


# --- complex64 max, min and std ---------------------------------------------------------------------

def _complex_vjp(name, a, g, **params):
    info = ops.get(name)
    inp = {"a": np.asarray(a, dtype=complex)}
    return info.reference(inp, params), info.reference_vjp(inp, np.asarray(g, dtype=complex), params)["a"]


def test_complex_extremes_by_hand():
    """MLX's lexicographic order (real part, then imaginary part; -0.0 and 0.0 are equal
    real parts), g unconjugated to the extreme; exact ties share g."""
    y, d = _complex_vjp("max", [1 + 2j, 1 + 3j, 9j, -2], 2 + 1j, axis=0)
    assert y == 1 + 3j and d.tolist() == [0, 2 + 1j, 0, 0]
    y, d = _complex_vjp("min", [1 + 2j, 1 + 3j, 9j, -2 + 4j, -2 - 1j], 2 + 1j, axis=0)
    assert y == -2 - 1j and d.tolist() == [0, 0, 0, 0, 2 + 1j]
    y, d = _complex_vjp("max", [[complex(-0.0, 3), 0 - 2j], [3 - 1j, 3 - 1j]], [1 - 1j, 4 + 2j], axis=1)
    assert y.tolist() == [complex(0, 3), 3 - 1j] and d.tolist() == [[1 - 1j, 0], [2 + 1j, 2 + 1j]]


def _extreme_rule(transform=None, by_real=False):
    """A reverse rule for max/min from the operands and the cotangent (numpy, complex
    aware): Reduce::vjp's mask of the elements equal to the output, g split among them;
    `by_real` compares real parts only, `transform` changes the result."""
    def backward(ctx):
        a, p, name = ctx.operands["a"], ctx.params, ctx.s.op
        axes = R._axes(a, p)
        out = (np.max if name == "max" else np.min)(a, axis=axes, keepdims=True)
        mask = (np.real(a) == np.real(out)) if by_real else (a == out)
        mask = mask.astype(np.float64)
        d = R._back(ctx.cot, a, p) * mask / np.sum(mask, axis=axes, keepdims=True)
        return {"a": transform(d) if transform else d}
    return backward


COMPLEX_MUTANTS = {"conjugated": _extreme_rule(np.conj), "imaginary_dropped": _extreme_rule(np.real),
                   "by_real_part": _extreme_rule(by_real=True)}


def _rejected(op, backward) -> list:
    from helpers import wrong_vjp as W
    return [s.name for s in W.scenarios(op) if W.honest(op)[s.name] == "pass" and W._judge(s, backward) != "pass"]


@pytest.mark.parametrize("op", ["max", "min"])
def test_the_true_extreme_rule_planted_passes_every_scenario(op):
    """The control: the rule the mutants bend, planted the same way, passes every scenario
    (real and complex) that MLX's own VJP passes."""
    assert _rejected(op, _extreme_rule()) == []


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("mutant", sorted(COMPLEX_MUTANTS))
def test_complex_mutant_is_rejected_by_complex_scenarios_only(op, mutant):
    """A conjugated cotangent, a dropped imaginary part, and a mask by real parts alone
    are each the true rule on real input, so only complex scenarios may reject them;
    real parts alone differ from MLX's order only where real parts tie with different
    imaginary parts: exactly the convention/real_part_tie scenarios."""
    rejected = _rejected(op, COMPLEX_MUTANTS[mutant])
    assert rejected and all(n.endswith("/complex64") or n.endswith("/complex") for n in rejected), rejected
    if mutant == "by_real_part":
        assert set(rejected) == {f"{op}/convention/real_part_tie/complex64",
                                 f"{op}/convention/real_part_tie/all_axes/complex64"}, rejected
    else:
        assert len(rejected) >= 8, rejected


def test_complex_catalog_rows():
    """max and min: the generic complex row, six twins of plain rows (distinct real parts) and
    four convention rows; std: the generic row and two twins, with real cotangents (its
    output is real)."""
    from helpers import wrong_vjp as W
    for op in ("max", "min"):
        names = [s.name for s in W.scenarios(op) if s.dtype == "complex64"]
        assert len(names) == 11 and sum("/convention/" in n for n in names) == 4, names
    std = [s for s in W.scenarios("std") if s.dtype == "complex64"]
    assert len(std) == 3 and all(s.cotangent is None or s.cotangent.dtype == "float32" for s in std), std


@needs_pinned_mlx()
def test_complex_extremes_on_pinned_mlx():
    """What the complex max/min references rest on (MLX documents no order for complex
    values): MLX 0.32.4 reduces lexicographically, masks the elements equal to the output
    (exact ties share g) and returns g unconjugated. NaN (not judged): a NaN real part
    propagates as nan+0j with NaN gradients everywhere, as a real NaN does; a NaN only in
    an imaginary part is skipped by max but turned into nan+0j by min (numpy returns the
    NaN element itself for both)."""
    import mlx.core as mx

    def run(fn, vals, g=2 + 1j):
        x = mx.array(np.array(vals, dtype=np.complex64))
        (y,), (d,) = mx.vjp(fn, [x], [mx.array(np.complex64(g))])
        return complex(np.array(y)), np.array(d).tolist()
    assert run(mx.max, [1 + 2j, 1 + 3j, 9j, -2]) == (1 + 3j, [0, 2 + 1j, 0, 0])
    assert run(mx.min, [1 + 2j, 1 + 3j, 9j, -2]) == (-2, [0, 0, 0, 2 + 1j])
    assert run(mx.max, [1 + 2j, 1 + 2j, 0, -1]) == (1 + 2j, [1 + 0.5j, 1 + 0.5j, 0, 0])
    assert run(mx.max, [complex(-0.0, 1), 1j, -1]) == (1j, [1 + 0.5j, 1 + 0.5j, 0])
    y, d = run(mx.max, [1, complex(np.nan, 0), 2])
    assert np.isnan(y.real) and np.all(np.isnan(d))
    assert run(mx.max, [1, complex(0, np.nan), 2]) == (2, [0, 0, 2 + 1j])
    y, d = run(mx.min, [1, complex(0, np.nan), 2])
    assert np.isnan(y.real) and y.imag == 0 and np.all(np.isnan(d))


@pytest.mark.parametrize("op", ["max", "min", "std"])
def test_complex_differences_refuse_exactly_the_convention_scenarios(op):
    """On complex input the hand-written VJP equals float64 differences of the reference
    wherever real parts are distinct; at the convention rows (real parts tie, or exact
    ties) the extreme jumps or kinks and differences must refuse to decide."""
    from helpers import wrong_vjp as W
    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.core import numeric
    agree, undecided = [], []
    for s in (s for s in W.scenarios(op) if s.dtype == "complex64"):
        inputs = expected.logical_inputs(s)
        g = expected.cotangent(s, s.info.reference(inputs, s.params))
        hand = s.info.reference_vjp(inputs, g, s.params)["a"]
        try:
            diff = numeric.vjp_by_differences(lambda v: s.info.reference(v, s.params), inputs, g, ("a",))["a"]
        except numeric.ReferenceUndecided:
            undecided.append(s.name)
            continue
        assert np.allclose(hand, diff, rtol=0, atol=1e-8), s.name
        agree.append(s.name)
    assert len(agree) >= (7 if op != "std" else 3), agree
    assert all("/convention/" in n for n in undecided) and len(undecided) == (4 if op != "std" else 0), undecided


@pytest.mark.parametrize("op", ["max", "min", "std"])
def test_strategy_draws_judgeable_complex64(op):
    """The strategies draw complex64 (distinct real parts: the extreme is locally
    constant, std has spread), every draw judged and confirmed by differences."""
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.core import numeric
    from mlx_vjpcheck.fuzz import targets
    seen = set()

    @settings(max_examples=40, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(targets.strategy(op, ("float32", "complex64")))
    def check(s):
        seen.add(s.dtype)
        if s.dtype != "complex64":
            return
        inputs = expected.logical_inputs(s)
        y = s.info.reference(inputs, s.params)
        g = expected.cotangent(s, y)
        hand = s.info.reference_vjp(inputs, g, s.params)["a"]
        diff = numeric.vjp_by_differences(lambda v: s.info.reference(v, s.params), inputs, g, ("a",))["a"]
        assert np.allclose(hand, diff, rtol=0, atol=1e-8), s.description
    check()
    assert seen == {"float32", "complex64"}, seen
