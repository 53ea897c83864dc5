"""Expected values of a scenario, from the float64 references alone (no mlx).

Keys are shared with the executor's observations: "forward", "grad:<operand>",
"loss", "hvp:<operand>". The runner, the fuzzer and the validator all call
`expected` on bound scenarios. The inputs as MLX holds them, the cotangent, the
reference VJP and the transform and precision references live in
core/references.py (the validator's re-checks need them too); they are named
here as well, where the rest of the harness looks for them.
"""
from __future__ import annotations

import numpy as np

from ..core import objectives
from ..core.references import (COUNT_CALLS, accumulation, cotangent, directional, hvp,  # noqa: F401
                               logical_inputs, reference_vjp, strict_complex)

NO_VJP = "no_vjp"   # check of an op without a VJP: 1 when asking for one raises


def _hvp_ones(info, inputs, y, params, wrt):
    """H @ 1 for the pair loss, using linearity of the op in one operand.

    J v = f(x + v) - f(x) exactly, since f is affine in each single operand.
    """
    bumped = dict(inputs, **{wrt: inputs[wrt] + 1.0})
    jv = info.reference(bumped, params) - y
    return reference_vjp(info, inputs, objectives.pair_loss_cotangent(jv), params, (wrt,))[wrt]


def expected(s) -> dict:
    """The float64 values of every check the reference decides (none for an error
    input: the forward must refuse it, so there is nothing to compute)."""
    if s.must_refuse:
        return {}
    with strict_complex():
        return _expected(s)


def _expected(s) -> dict:
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
