"""Expected values of a scenario, from the float64 references alone (no mlx).

Keys are shared with the executor's observations: "forward", "grad:<operand>",
"loss", "hvp:<operand>". The runner, the fuzzer and the validator all call
`expected` on bound scenarios.
"""
from __future__ import annotations

import numpy as np

from ..core import layout, numeric, objectives

NO_VJP = "no_vjp"   # check of an op without a VJP: 1 when asking for one raises


def logical_inputs(s) -> dict:
    """Every present operand's logical value (integer operands as int64)."""
    ints = s.info.integer_operands
    return {name: layout.logical(t, np.int64 if name in ints else np.float64)
            for name, t in s.operands.items()}


def cotangent(s, y) -> np.ndarray:
    if s.objective == "pair_loss":
        return objectives.pair_loss_cotangent(y)
    if s.cotangent is None:
        return np.ones_like(y)
    g = layout.logical(s.cotangent)
    if g.shape != y.shape:
        raise ValueError(f"cotangent shape {g.shape} != output shape {y.shape}")
    return g


def reference_vjp(info, inputs, g, params, wrt) -> dict:
    """The op's hand-written float64 VJP, or its reference differentiated
    (core/numeric.py; raises numeric.ReferenceUndecided beyond the error bound)."""
    if info.reference_vjp is not None:
        return info.reference_vjp(inputs, g, params)
    return numeric.vjp_by_differences(lambda x: info.reference(x, params), inputs, g, wrt,
                                      analytic=info.analytic)


def _hvp_ones(info, inputs, y, params, wrt):
    """H @ 1 for the pair loss, using linearity of the op in one operand.

    J v = f(x + v) - f(x) exactly, since f is affine in each single operand.
    """
    bumped = dict(inputs, **{wrt: inputs[wrt] + 1.0})
    jv = info.reference(bumped, params) - y
    return reference_vjp(info, inputs, objectives.pair_loss_cotangent(jv), params, (wrt,))[wrt]


def expected(s) -> dict:
    info = s.info
    inputs = logical_inputs(s)
    y = info.reference(inputs, s.params)
    if not info.has_vjp:
        return {"forward": y, NO_VJP: np.array(1.0)}
    g = cotangent(s, y)
    grads = reference_vjp(info, inputs, g, s.params, s.wrt)
    out = {"forward": y}
    out.update({f"grad:{name}": grads[name] for name in s.wrt})
    if s.objective == "pair_loss":
        out["loss"] = np.array(objectives.pair_loss(y))
        for name in s.wrt:
            out[f"hvp:{name}"] = _hvp_ones(info, inputs, y, s.params, name)
    return out
