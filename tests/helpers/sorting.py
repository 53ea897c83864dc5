"""Shared by the sort, topk and partition tests: the hand-written reference VJP
against float64 differences over a whole catalog (complex scenarios included),
and complex-aware lane rules for planted wrong VJPs.

Complex lanes are ordered lexicographically (MLX's order, ops/_support/sorting.py).
Where a block of equal real parts carries different cotangents (the catalog's
`convention/real_part_tie` scenarios) the order is not locally constant, <g, f(x)>
jumps under a real perturbation, and differences must refuse to decide: the test
asserts that, so such a scenario can never pass the comparison by accident and no
other scenario is excused."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import wrong_vjp as W
from mlx_vjpcheck.ops._support import lanes as L

CONVENTION = "/convention/real_part_tie"


def check_against_differences(op, info) -> dict:
    """Every catalog scenario of `op`: the hand-written VJP equals differences of the
    reference forward, except at a convention scenario, where differences are
    undecided. Returns {"agree": [...], "undecided": [...]} by scenario name."""
    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.core import numeric
    out = {"agree": [], "undecided": []}
    for s in W.scenarios(op):
        inputs = expected.logical_inputs(s)
        g = expected.cotangent(s, info.reference(inputs, s.params))
        hand = info.reference_vjp(inputs, g, s.params)["a"]

        def diff():
            return numeric.vjp_by_differences(lambda v: info.reference(v, s.params), inputs, g, ("a",))["a"]
        if CONVENTION in s.name:
            with pytest.raises(numeric.ReferenceUndecided):
                diff()
            out["undecided"].append(s.name)
            continue
        assert np.allclose(hand, diff(), rtol=0, atol=1e-8), s.name
        out["agree"].append(s.name)
    return out


def differentiable_here(s) -> bool:
    """The hand-written VJP of a bound scenario equals float64 differences of the
    reference forward (raises ReferenceUndecided where differences cannot decide)."""
    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.core import numeric
    info, inputs = s.info, expected.logical_inputs(s)
    g = expected.cotangent(s, info.reference(inputs, s.params))
    hand = info.reference_vjp(inputs, g, s.params)["a"]
    diff = numeric.vjp_by_differences(lambda v: info.reference(v, s.params), inputs, g, ("a",))["a"]
    return bool(np.allclose(hand, diff, rtol=0, atol=1e-8))


def complex_counts(names) -> int:
    return sum(n.endswith("/complex64") for n in names)


def positions(x_lane, y_lane) -> list:
    """Where each output value came from (first unused equal input)."""
    used, out = set(), []
    for v in y_lane:
        j = next(j for j in range(len(x_lane)) if x_lane[j] == v and j not in used)
        used.add(j)
        out.append(j)
    return out


def lanewise(rule, view=None):
    """A wrong VJP built lane by lane: rule(x_lane, y_lane, g_lane) -> dx_lane, in
    complex128 where the operand or the cotangent is complex. `view(ctx)` -> (y, g)
    replaces the reference output and the call's cotangent (partition: what
    Partition::vjp itself receives)."""
    def backward(ctx):
        axis, x = ctx.params.get("axis", -1), ctx.operands["a"]
        y, g = view(ctx) if view is not None else (ctx.s.info.reference(ctx.operands, ctx.params), ctx.cot)
        xl, yl, gl = L.to_lanes(x, axis), L.to_lanes(y, axis), L.to_lanes(g, axis)
        dx = np.zeros(xl.shape, dtype=np.result_type(xl.dtype, gl.dtype))
        for lane in np.ndindex(xl.shape[:-1]):
            dx[lane] = rule(xl[lane], yl[lane], gl[lane])
        return {"a": L.lanes_to_input(dx, x.shape, axis)}
    return backward


def scattered(x, y, g):
    """The true routing: each output's cotangent to the input that holds its value."""
    dx = np.zeros(len(x), dtype=np.result_type(np.asarray(x).dtype, np.asarray(g).dtype))
    dx[positions(x, y)] = g
    return dx


# --- complex-only mutants: each differs from the truth only on complex input -----------------------

def conjugated(x, y, g):
    """The cotangent routed right but conjugated (a holomorphic-style convention
    applied to a permutation)."""
    return np.conj(scattered(x, y, g))


def imaginary_dropped(x, y, g):
    """The cotangent's imaginary part lost (a real-only backward on complex input)."""
    return np.real(scattered(x, y, g))


def by_real_part(x, y, g):
    """Routed by an order of the real parts alone (stable) instead of MLX's
    lexicographic one: the output that holds the input of lexicographic rank r sends
    its cotangent to the input of rank r in the real-part order. The two orders
    differ only inside a block of equal real parts of a complex lane."""
    x = np.asarray(x)
    lex = np.lexsort((np.imag(x), np.real(x)))
    by_re = np.argsort(np.real(x), kind="stable")
    rank = np.empty(len(x), dtype=np.int64)
    rank[lex] = np.arange(len(x))
    dx = np.zeros(len(x), dtype=np.result_type(x.dtype, np.asarray(g).dtype))
    for p, j in enumerate(positions(x, y)):
        dx[by_re[rank[j]]] = g[p]
    return dx


COMPLEX_MUTANTS = {"conjugated": conjugated, "imaginary_dropped": imaginary_dropped, "by_real_part": by_real_part}


def rejected_by(op, mutant, view=None) -> list:
    """Names of the catalog scenarios MLX's own VJP passes and the planted lane rule
    does not (every scenario judged, not only up to the first)."""
    rule = lanewise(mutant, view)
    return [s.name for s in W.scenarios(op) if W.honest(op)[s.name] == "pass" and W._judge(s, rule) != "pass"]


# --- integer-output ops (argsort, argpartition, argmax, argmin) on complex input ---------------

def assert_complex_only(op, mutant: str, view=None) -> None:
    """COMPLEX_MUTANTS[mutant] is rejected, and only by complex scenarios; routing by the
    real parts alone (MLX's lexicographic order differs from it only inside a block of
    equal real parts carrying different cotangents) exactly by the convention ones."""
    rejected = rejected_by(op, COMPLEX_MUTANTS[mutant], view=view)
    assert rejected and all(n.endswith("/complex64") for n in rejected), rejected
    if mutant == "by_real_part":
        convention = {s.name for s in W.scenarios(op) if CONVENTION in s.name}
        assert convention and set(rejected) == convention, rejected


def rejected_by_rule(op, backward) -> list:
    """Names of the catalog scenarios MLX's own VJP passes and `backward` (a ctx rule,
    helpers/wrong_vjp.py) does not: complex scenarios included."""
    return [s.name for s in W.scenarios(op) if W.honest(op)[s.name] == "pass" and W._judge(s, backward) != "pass"]


def conjugated_vjp(ctx) -> dict:
    """MLX's own gradient, conjugated: the same rule on real input."""
    return {n: np.conj(g) for n, g in ctx.honest().items()}


def weighted_by(index_of_real):
    """The weighted form's gradient g * idx with idx taken from the real parts alone
    (index_of_real(real part, params)); MLX's own gradient in the indices form."""
    def backward(ctx):
        if ctx.params.get("form", "indices") != "weighted":
            return ctx.honest()
        idx = np.asarray(index_of_real(np.real(ctx.operands["a"]), ctx.params), dtype=np.float64)
        return {"a": ctx.cot * np.broadcast_to(idx, np.shape(ctx.cot))}
    return backward


def strategy_draws_complex(op, n=60) -> set:
    """The dtypes the op's strategy draws over float32 and complex64 (derandomized),
    every case's reference decided."""
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.fuzz import targets
    seen = set()

    @settings(max_examples=n, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(targets.strategy(op, ("float32", "complex64")))
    def check(s):
        exp = expected.expected(s)   # ReferenceUndecided would fail here
        assert all(np.all(np.isfinite(v)) for v in exp.values())
        seen.add(s.dtype)
    check()
    return seen
