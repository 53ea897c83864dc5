"""Expected values of a scenario, from the float64 references alone (no mlx).

Keys are shared with the executor's observations: "forward", "grad:<operand>",
"loss", "hvp:<operand>". The runner, the fuzzer and the validator all call
`expected`.
"""
from __future__ import annotations

import numpy as np

from .. import ops
from ..core import layout, numeric, objectives


def logical_inputs(s) -> dict:
    """Every operand's logical value (integer operands as int64)."""
    info = ops.get(s.op)
    return {name: layout.logical(s.operands[name],
                                 np.int64 if name in info.integer_operands else np.float64)
            for name in info.operands}


def indices(s):
    idx = lambda t: None if t is None else layout.logical(t, np.int64)  # noqa: E731
    return idx(s.lhs_indices), idx(s.rhs_indices)


def cotangent(s, y) -> np.ndarray:
    if s.objective == "pair_loss":
        return objectives.pair_loss_cotangent(y)
    if s.cotangent is None:
        return np.ones_like(y)
    g = layout.logical(s.cotangent)
    if g.shape != y.shape:
        raise ValueError(f"cotangent shape {g.shape} != output shape {y.shape}")
    return g


def reference_vjp(info, inputs, g, lhs, rhs, params, wrt) -> dict:
    """The op's hand-written float64 VJP, or its reference differentiated
    (core/numeric.py; raises numeric.ReferenceUndecided beyond the error bound)."""
    if info.reference_vjp is not None:
        return info.reference_vjp(inputs, g, lhs, rhs, params)
    return numeric.vjp_by_differences(lambda x: info.reference(x, lhs, rhs, params), inputs, g, wrt,
                                      analytic=info.analytic)


def _hvp_ones(info, inputs, y, lhs, rhs, params, wrt):
    """H @ 1 for the pair loss, using linearity of the op in one operand.

    J v = f(x + v) - f(x) exactly, since f is affine in each single operand.
    """
    bumped = dict(inputs, **{wrt: inputs[wrt] + 1.0})
    jv = info.reference(bumped, lhs, rhs, params) - y
    return reference_vjp(info, inputs, objectives.pair_loss_cotangent(jv), lhs, rhs, params, (wrt,))[wrt]


NO_VJP = "no_vjp"   # check of an op without a VJP: 1 when asking for one raises


def expected(s) -> dict:
    info = ops.get(s.op)
    inputs, (lhs, rhs) = logical_inputs(s), indices(s)
    y = info.reference(inputs, lhs, rhs, s.params)
    if not info.has_vjp:
        return {"forward": y, NO_VJP: np.array(1.0)}
    g = cotangent(s, y)
    grads = reference_vjp(info, inputs, g, lhs, rhs, s.params, s.wrt)
    out = {"forward": y}
    out.update({f"grad:{name}": grads[name] for name in s.wrt})
    if s.objective == "pair_loss":
        out["loss"] = np.array(objectives.pair_loss(y))
        for name in s.wrt:
            out[f"hvp:{name}"] = _hvp_ones(info, inputs, y, lhs, rhs, s.params, name)
    return out
