"""addmm (harness/ops/addmm.py): alpha (a @ b) + beta c against float64
differences and by hand, planted wrong rules (alpha or beta ignored, c's
broadcast not summed, wrong only for a 0-d c) caught by the catalog, and the
pinned MLX verdicts: every float32 call with alpha or beta other than 1 fails
forward mode alone (AddMM::jvp ignores them), and the K = 0 forward with beta != 1
and a strided c reads beta through strides a 0-d array does not have: with that
memory fixed (param stale_stride) it is wrong every time, its controls never."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from mlx_vjpcheck.ops import addmm as A


def test_rule_by_hand():
    inp = {"c": np.array([1.0, 2.0]), "a": np.array([[1.0, 2.0]]), "b": np.array([[1.0, 0.0], [0.0, 1.0]])}
    p = {"alpha": 2.0, "beta": 0.5}
    assert A.reference(inp, p).tolist() == [[2.5, 5.0]]
    d = A.reference_vjp(inp, np.array([[1.0, -1.0]]), p)
    assert d["c"].tolist() == [0.5, -0.5] and d["a"].tolist() == [[2, -2]]
    assert d["b"].tolist() == [[2, -2], [4, -4]]


def test_reference_vjp_agrees_with_differences():
    compared, wrong = B.against_differences("addmm")
    assert compared >= 8 and wrong == [], (compared, wrong)


MUTANTS = {
    "alpha_ignored": lambda ctx: ctx.reference(alpha=1.0),
    "beta_ignored": lambda ctx: ctx.reference(beta=1.0),
    "c_broadcast_not_summed": lambda ctx: dict(ctx.honest(), c=ctx.params.get("beta", 1.0) * ctx.cot),
    "wrong_only_for_rank0_c": B.scaled_where(B.rank0, 3.0),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(name):
    assert B.first_order_caught("addmm", MUTANTS[name], first_only=True), name


def test_the_true_rule_planted_the_same_way_passes():
    assert B.first_order_control("addmm") == []


@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_scaled_calls():
    failing, tagged = B.pinned_verdicts("addmm")
    assert failing == tagged == {"addmm/scaled", "addmm/negative_alpha_zero_beta", "addmm/scaled_c_row",
                                 "addmm/zero_inner_strided_c/stale_stride",
                                 "addmm/zero_inner_contiguous_c/stale_stride"}, failing


@needs_pinned_mlx()
def test_pinned_mlx_forward_mode_ignores_alpha():
    import mlx.core as mx
    f = lambda a: mx.addmm(mx.array([[0.0]]), a, mx.array([[3.0]]), alpha=2.0, beta=1.0)   # noqa: E731
    _, (t,) = mx.jvp(f, [mx.array([[1.0]])], [mx.array([[1.0]])])
    _, (v,) = mx.vjp(f, [mx.array([[1.0]])], [mx.array([[1.0]])])
    assert t.item() == 3.0 and v.item() == 6.0   # the tangent misses alpha; the VJP has it


# --- K = 0: beta read through strides that are not there (ZERO_K) -------------------------------

def _primed():
    return {s.name.split("/")[1]: s for s in B.W.scenarios("addmm") if "stale_stride" in s.params}


def test_the_stale_stride_is_the_harness_input_not_the_rule():
    """The param changes what the call does before MLX's addmm, never the float64 rule,
    and the one-expression form (the reproducer's) does the same first."""
    inp = {"c": np.array([[1.0], [-2.0]]), "a": np.zeros((2, 0)), "b": np.zeros((0, 1))}
    p = {"alpha": 1.0, "beta": 2.0}
    assert A.reference(inp, dict(p, stale_stride=-1)).tolist() == A.reference(inp, p).tolist() == [[2.0], [-4.0]]
    plain = A.call_expression(p, {"c": "c", "a": "a", "b": "b"})
    primed = A.call_expression(dict(p, stale_stride=-1), {"c": "c", "a": "a", "b": "b"})
    assert plain == "mx.addmm(c, a, b, alpha=1.0, beta=2.0)"
    assert primed.startswith("(mx.eval(") and "(-1, -1), 32)" in primed and primed.endswith(f", {plain})[1]")
    assert {n: (s.defect_tags, s.params["beta"]) for n, s in _primed().items()} == {
        "zero_inner_strided_c": ((A.ZERO_K,) + A.JVP_SCALE, 2.0),
        "zero_inner_strided_c_beta1": ((), 1.0),
        "zero_inner_contiguous_c": (A.JVP_SCALE, 2.0)}


def _forward_check(s) -> dict:
    from mlx_vjpcheck.running import execute
    rec = execute.measure(s, "cpu")[0]
    return next(c for c in rec["checks"] if c["name"] == "forward")


@needs_pinned_mlx()
def test_pinned_mlx_k0_forward_is_wrong_with_the_stride_fixed_and_its_controls_are_not():
    """Every time, between other calls: the defect's forward fails with the same values, the
    same memory with beta 1 (a copy) or a contiguous c (a scalar multiply) stays right."""
    from mlx_vjpcheck.running import devices, execute
    devices.select("cpu")
    primed = _primed()
    between = [s for s in B.W.scenarios("addmm") if not s.defect_tags and "stale_stride" not in s.params]
    seen = set()
    for k in range(12):
        execute.measure(between[k % len(between)], "cpu")
        fwd = {n: _forward_check(s) for n, s in primed.items()}
        assert not fwd["zero_inner_strided_c"]["passed"]
        assert fwd["zero_inner_strided_c_beta1"]["passed"] and fwd["zero_inner_contiguous_c"]["passed"]
        seen.add(str(fwd["zero_inner_strided_c"]["observed"]))
    assert seen == {"[[2.0], [-0.0]]"}, seen   # beta read 4 bytes before its buffer: 0


@needs_pinned_mlx()
def test_pinned_mlx_k0_forward_reads_the_stride_left_behind():
    """The mechanism, in MLX alone: the stride a previous general-path multiply left decides
    where beta is read (0: on it, by luck); a contiguous c never reads it."""
    import mlx.core as mx
    from mlx_vjpcheck.ops.repro import addmm as call

    def k0(c, s):
        call.leave_stride(s)
        return np.array(mx.addmm(c, mx.zeros((2, 0)), mx.zeros((0, 1)), beta=2.0)).ravel().tolist()

    backing = mx.array([[3.0, 50.0], [3.0, 50.0]])
    mx.eval(backing)
    assert k0(backing[:, ::2], 0) == [6.0, 6.0]
    assert k0(backing[:, ::2], -1) == [6.0, 0.0]
    assert k0(mx.contiguous(backing[:, ::2]), -1) == [6.0, 6.0]
