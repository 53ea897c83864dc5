"""Checks shared by the tests of the issue-20 op modules (reductions, shapes, matmul,
addmm, fft, search and sort indices, full, depends, custom_function).

* `against_differences(op)`: every catalog scenario's hand-written reference VJP
  against core/numeric.py's float64 differences of the reference forward (where
  those decide: at ties and kinks they refuse, and the scenario is left out).
* `first_order_caught(op, mutant)` and `first_order_control(op)`: a wrong VJP
  planted with helpers/wrong_vjp.py (the one way), judged on the checks a planted
  rule can be judged on today, the first-order reference checks (forward and
  every gradient) and the record's error: a rule computed in numpy inside
  mx.custom_function cannot be vmapped or differentiated again, so the transform
  oracles fail for any planted rule, the true one included; and it holds real
  values, so scenarios with complex operands or outputs are left out.
* mutant makers: MLX's own gradient, scaled where a predicate on the scenario
  holds (a 0-d operand, a zero-size one, a strided view, a dtype).
"""
from __future__ import annotations

import numpy as np

from helpers import wrong_vjp as W
from mlx_vjpcheck.cases import expected
from mlx_vjpcheck.core import layout, numeric
from mlx_vjpcheck.running import devices, execute


def against_differences(op: str, limit: int = 400) -> tuple:
    """(number compared, [names whose hand-written VJP differs]) over the op's float32 and
    complex64 catalog scenarios of at most `limit` input elements (tagged ones too: the
    reference knows nothing of MLX's defects)."""
    compared, wrong = 0, []
    for s in W.scenarios(op):
        inputs = expected.logical_inputs(s)
        if s.dtype not in ("float32", "complex64") or sum(np.size(inputs[n]) for n in s.wrt) > limit:
            continue
        y = s.info.reference(inputs, s.params)
        finite = np.isfinite(y)   # an infinite output is constant here (an empty window): left out
        g = np.where(finite, expected.cotangent(s, y), 0)
        try:
            want = numeric.vjp_by_differences(lambda x: np.where(finite, s.info.reference(x, s.params), 0),
                                              inputs, g, s.wrt)
            got = s.info.reference_vjp(inputs, g, s.params)
        except numeric.ReferenceUndecided:
            continue
        compared += 1
        if not all(np.shape(got[n]) == np.shape(want[n]) and np.allclose(got[n], want[n], atol=1e-7, rtol=1e-7)
                   for n in s.wrt):
            wrong.append(s.name)
    return compared, wrong


def _first_order_failed(rec) -> bool:
    return rec.get("error") is not None or any(not c["passed"] for c in rec["checks"] if c["kind"] == "reference")


def _planted(s, backward) -> dict:
    devices.select("cpu")
    return execute.run(W.plant(s, backward), "cpu")


def _plantable(op: str, untagged: bool = False) -> list:
    """The op's catalog scenarios a rule can be planted in: wrong_vjp's context holds float64
    numpy values, so complex operands and complex outputs are left out."""
    return [s for s in W.scenarios(op, untagged) if all(t.dtype != "complex64" for t in s.operands.values())
            and not np.iscomplexobj(s.info.reference(expected.logical_inputs(s), s.params))]


def first_order_caught(op: str, backward, first_only: bool = False) -> list:
    """Scenarios that pass with MLX's own VJP whose first-order checks fail with `backward`."""
    out = []
    for s in _plantable(op):
        if W.honest(op)[s.name] == "pass" and _first_order_failed(_planted(s, backward)):
            out.append(s.name)
            if first_only:
                break
    return out


def first_order_control(op: str) -> list:
    """Untagged scenarios whose first-order checks fail with the float64 reference VJP
    planted: the mechanism itself (must be none)."""
    return [s.name for s in _plantable(op, untagged=True)
            if W.honest(op)[s.name] == "pass" and _first_order_failed(_planted(s, lambda ctx: ctx.reference()))]


def scaled_where(predicate, factor: float = 2.0):
    """MLX's own gradients, times `factor` where predicate(scenario, operand name) holds."""
    def backward(ctx):
        return {n: g * (factor if predicate(ctx.s, n) else 1.0) for n, g in ctx.honest().items()}
    return backward


def wrong_shape_where(predicate):
    """MLX's own gradients, but a (1,)-shaped zero where predicate(scenario, operand name) holds."""
    def backward(ctx):
        return {n: (np.zeros(1) if predicate(ctx.s, n) else g) for n, g in ctx.honest().items()}
    return backward


def rank0(s, name) -> bool:
    return len(layout.logical(s.operands[name]).shape) == 0


def zero_size(s, name) -> bool:
    return layout.logical(s.operands[name]).size == 0


def strided(s, name) -> bool:
    """A view of the operand that steps over elements (a step other than 1)."""
    return any(v["op"] == "slice" and any(len(spec) > 2 and spec[2] not in (None, 1) for spec in v["index"])
               for v in s.operands[name].views)


def in_dtype(dtype: str):
    return lambda s, name: s.operands[name].dtype == dtype


def pinned_verdicts(op: str) -> tuple:
    """(names that do not pass, names with defect tags) of the op's catalog on this MLX."""
    st = W.pinned(op)
    return ({n for n, v in st.items() if v != "pass"}, {s.name for s in W.scenarios(op) if s.expects_defect})
